// test-cuda-freekv.cpp: FreeKV on the CUDA backend (engine/cuda/cuda-freekv*.{h,cpp}),
// label `gpu`; every test skips (GTEST_SKIP) without a CUDA device. The host-side planning
// it relies on is tested without a GPU in test-cuda-freekv-plan.cpp.
//   - a budget that holds the whole sequence: FreeKV's logits equal the plain cache's;
//   - a tight budget: the CUDA session against the CPU session on the same tokens, with
//     tau = -1 (never corrects) and tau = 1 (corrects every checked head): tokens on the
//     device per layer, the window's positions and the correction counts equal at every
//     step, logits within 2% of the logit range on at least 90% of the steps (the page
//     choice may flip on a near-tie of page scores: the queries come from F16 GEMMs);
//     device KV bytes within the budget;
//   - batched decode of FreeKV sequences against the same sequences one at a time (same
//     pages on at least 90% of the rows, logits close wherever they are the same).
//   - the speculative prefetch (overlap) on and off: the same pages and bit-identical logits.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "cuda-check.h"
#include "cuda-test-util.h"
#include "cuda-forward.h"
#include "model-random.h"
#include "session.h"
#include "test-util.h"

using namespace kvarena;

namespace {

// llama GQA, F16, head_dim 32 (as test-cuda-forward.cpp's first model case).
std::unique_ptr<model> random_llama(const std::string& name) {
  random_model_spec s;
  s.arch = model_arch::llama, s.dim = 256, s.n_layers = 3, s.n_heads = 8, s.n_kv_heads = 2, s.ffn_dim = 512;
  s.n_vocab = 512, s.n_ctx = 1024, s.type = ggml_type::f16, s.seed = 1, s.tie_output = false, s.output_scale = 3.f;
  s.with_tokenizer = false;
  const std::string path = (test::temp_dir("models") / (name + ".gguf")).string();
  write_random_model(s, path);
  return load_model(path);
}

// |got - want| <= 2% of want's largest magnitude (at least 1), everywhere.
bool logits_close(const float* got, const float* want, int64_t V, float frac = 2e-2f) {
  float spread = 1.f;
  for (int64_t i = 0; i < V; ++i) spread = std::max(spread, std::fabs(want[i]));
  for (int64_t i = 0; i < V; ++i)
    if (!(std::fabs(got[i] - want[i]) <= frac * spread)) return false;
  return true;
}

std::vector<int32_t> random_tokens(int64_t n, int64_t V, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<int32_t> t(static_cast<size_t>(n));
  for (auto& x : t) x = int32_t(rng() % uint32_t(V));
  return t;
}

}  // namespace

TEST(CudaFreekv, BudgetOverTheSequenceEqualsTheFullCache) {
  REQUIRE_GPU();
  auto m = random_llama("freekv-full");
  const int64_t V = m->config.n_vocab;
  cuda_engine_options eo;
  eo.max_chunk = 32, eo.max_batch = 2;
  cuda_engine e(*m, eo);
  const std::vector<int32_t> toks = random_tokens(200, V, 4);
  kv_policy_options o;
  o.budget = 512, o.sinks = 64, o.window = 64, o.page = 32;  // 13 slots: every page fits
  cuda_session_options fo;
  fo.n_ctx = 256, fo.prefill_chunk = 32, fo.kv_policy = "freekv", fo.kv = o;
  cuda_session f(e, fo);
  cuda_session_options po;
  po.n_ctx = 256, po.prefill_chunk = 32;
  cuda_session plain(e, po);
  const std::span<const int32_t> prompt(toks.data(), 150);
  f.append(prompt);
  plain.append(prompt);
  for (int64_t i = 150; i < int64_t(toks.size()); ++i) {
    f.append_decode(toks[size_t(i)]);
    plain.append_decode(toks[size_t(i)]);
    const std::vector<float> want = plain.logits();
    // Same tokens, same F16 values: only the summation order of the spans differs.
    EXPECT_TRUE(logits_close(f.logits().data(), want.data(), V, 2e-3f)) << "position " << i;
    const kv_step_stats* st = f.last_step();
    ASSERT_NE(st, nullptr);
    for (int64_t l = 0; l < m->config.n_layers; ++l) EXPECT_EQ(st->kept[size_t(l)], i + 1) << "layer " << l;
  }
}

TEST(CudaFreekv, TightBudgetMatchesTheCpuSession) {
  REQUIRE_GPU();
  auto m = random_llama("freekv-tight");
  const int64_t L = m->config.n_layers, H = m->config.n_kv_heads, D = m->config.head_dim, V = m->config.n_vocab;
  cuda_engine_options eo;
  eo.max_chunk = 32, eo.max_batch = 2;
  cuda_engine e(*m, eo);
  const std::vector<int32_t> toks = random_tokens(260, V, 9);
  for (const float tau : {-1.f, 1.f}) {
    SCOPED_TRACE("tau " + std::to_string(tau));
    kv_policy_options o;
    o.budget = 192, o.sinks = 32, o.window = 64, o.page = 32, o.tau = tau;  // 3 slots: sink + 2 pages
    session_options so;
    so.n_ctx = 320, so.prefill_chunk = 32, so.kv_policy = "freekv", so.kv = o;
    session cs(*m, so);
    cuda_session_options co;
    co.n_ctx = 320, co.prefill_chunk = 32, co.kv_policy = "freekv", co.kv = o;
    cuda_session gs(e, co);
    const std::span<const int32_t> prompt(toks.data(), 180);
    cs.append(prompt);
    gs.append(prompt);
    int64_t steps = 0, close = 0, checked = 0, corrected = 0, recalled = 0;
    for (int64_t i = 180; i < int64_t(toks.size()); ++i) {
      cs.append_decode(toks[size_t(i)]);
      gs.append_decode(toks[size_t(i)]);
      ++steps;
      const kv_step_stats &c = cs.kv()->last(), &g = *gs.last_step();
      EXPECT_EQ(g.kept, c.kept) << "tokens on the device per layer, position " << i;
      EXPECT_EQ(g.checked_heads, c.checked_heads) << "position " << i;
      EXPECT_EQ(g.corrected_heads, c.corrected_heads) << "position " << i;
      checked += g.checked_heads, corrected += g.corrected_heads, recalled += int64_t(g.recalled_bytes);
      // Device KV within the budget: B tokens of F16 K and V (+ the window's mass column).
      EXPECT_LE(g.kv_device_bytes, size_t(L * H * o.budget * (4 * D + 4))) << "position " << i;
      const cuda_kv_runtime* r = gs.sequence().kv();
      for (int64_t l = 0; l < L; ++l)
        for (int64_t h = 0; h < H; ++h) {
          EXPECT_EQ(r->store().kept_positions(l, h), cs.kv()->store().kept_positions(l, h))
              << "window of layer " << l << " head " << h << ", position " << i;
          const std::vector<int32_t>& pg = r->freekv()->pages(l)[size_t(h)];
          EXPECT_EQ(int64_t(pg.size()), as_retrieval(cs.kv()->policy())->page_slots());
          EXPECT_TRUE(std::is_sorted(pg.begin(), pg.end()));
          EXPECT_EQ(pg.empty() ? -1 : pg[0], 0) << "the sink page stays";
        }
      std::vector<float> want(cs.logits(), cs.logits() + V);
      close += logits_close(gs.logits().data(), want.data(), V);
    }
    EXPECT_GT(checked, 0);
    EXPECT_EQ(corrected, tau < 0 ? 0 : checked);
    EXPECT_GT(recalled, 0);
    EXPECT_GE(double(close) / double(steps), 0.9) << close << " of " << steps << " steps with close logits";
  }
}

TEST(CudaFreekv, BatchedDecodeMatchesSingleSequences) {
  REQUIRE_GPU();
  auto m = random_llama("freekv-batch");
  const int64_t V = m->config.n_vocab;
  cuda_engine_options eo;
  eo.max_chunk = 32, eo.max_batch = 4;
  cuda_engine e(*m, eo);
  kv_policy_options o;
  o.budget = 160, o.sinks = 32, o.window = 32, o.page = 32;
  std::vector<std::unique_ptr<cuda_sequence>> batch, single;
  std::vector<cuda_sequence*> ptrs;
  for (int b = 0; b < 2; ++b) {
    const std::vector<int32_t> prompt = random_tokens(150 + 30 * b, V, uint32_t(20 + b));
    for (auto* set : {&batch, &single}) {
      set->push_back(std::make_unique<cuda_sequence>(e, 320, "freekv", o));
      for (size_t i = 0; i < prompt.size(); i += 32) {
        const int64_t n = std::min<int64_t>(32, int64_t(prompt.size() - i));
        e.forward(*set->back(), prompt.data() + i, n, false);
      }
    }
    ptrs.push_back(batch.back().get());
  }
  int64_t same_pages = 0, rows = 0;
  for (int step = 0; step < 40; ++step) {
    const std::vector<int32_t> next = {int32_t(step), int32_t(step + 50)};
    e.forward_batch(ptrs, next.data(), true);
    std::vector<std::vector<float>> got(2, std::vector<float>(static_cast<size_t>(V)));
    for (int b = 0; b < 2; ++b) e.logits(b, got[size_t(b)].data());
    for (int b = 0; b < 2; ++b) {
      e.forward(*single[size_t(b)], &next[size_t(b)], 1, true);
      std::vector<float> want(static_cast<size_t>(V));
      e.logits(0, want.data());
      bool same = true;
      for (int64_t l = 0; l < m->config.n_layers; ++l)
        same = same && batch[size_t(b)]->kv()->freekv()->pages(l) == single[size_t(b)]->kv()->freekv()->pages(l);
      ++rows, same_pages += same;
      // A batched GEMM may round a query differently; a near-tie of page scores may then
      // flip one page: logits are compared where the pages agree.
      if (same) {
        EXPECT_TRUE(logits_close(got[size_t(b)].data(), want.data(), V)) << "step " << step << " row " << b;
      }
    }
  }
  EXPECT_GE(double(same_pages) / double(rows), 0.9) << same_pages << " of " << rows << " rows with the same pages";
}

TEST(CudaFreekv, OverlapDoesNotChangeResults) {
  REQUIRE_GPU();
  auto m = random_llama("freekv-overlap");
  const int64_t V = m->config.n_vocab, L = m->config.n_layers;
  cuda_engine_options eo;
  eo.max_chunk = 32, eo.max_batch = 2;
  cuda_engine e(*m, eo);
  const std::vector<int32_t> toks = random_tokens(230, V, 12);
  kv_policy_options o;
  o.budget = 192, o.sinks = 32, o.window = 64, o.page = 32;
  cuda_session_options co;
  co.n_ctx = 256, co.prefill_chunk = 32, co.kv_policy = "freekv", co.kv = o;
  cuda_session on(e, co);
  co.kv_overlap = false;
  cuda_session off(e, co);
  const std::span<const int32_t> prompt(toks.data(), 170);
  on.append(prompt);
  off.append(prompt);
  int64_t prefetched_steps = 0;
  for (int64_t i = 170; i < int64_t(toks.size()); ++i) {
    on.append_decode(toks[size_t(i)]);
    off.append_decode(toks[size_t(i)]);
    // Same pages in the same order: the same spans, so the same logits bit for bit; only
    // when the pages move differs.
    for (int64_t l = 0; l < L; ++l)
      EXPECT_EQ(on.sequence().kv()->freekv()->pages(l), off.sequence().kv()->freekv()->pages(l)) << "position " << i;
    EXPECT_EQ(on.logits(), off.logits()) << "position " << i;
    prefetched_steps += on.last_step()->recalled_bytes > 0;
  }
  EXPECT_GT(prefetched_steps, 0);
}
