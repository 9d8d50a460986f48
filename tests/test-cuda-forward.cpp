// test-cuda-forward.cpp: the CUDA forward pass and the device KV store (engine/cuda/), label
// `gpu`; every test needs a device (GTEST_SKIP without one). The CUDA forward's logits
// against the CPU forward on random-weight llama, qwen2, qwen3, phi3 and gpt2 models (single sequence,
// chunked prefill, batched decode, user errors; qwen3's q/k norm, a head width other than
// dim / n_heads, Llama 3 rope_freqs and linear RoPE scaling); cuda_kv_store against kv_store byte for byte
// (appends, per-head evictions, INT8 blocking); KV policies in the CUDA session against the
// CPU session, and batched policy decode against single sequences. gpt2's batch and position
// limit: test-cuda-gpt2.cpp; FreeKV: test-cuda-freekv.cpp. Shared helpers: cuda-test-util.h.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <iterator>
#include <memory>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "cuda-check.h"
#include "cuda-forward.h"
#include "cuda-kv-store.h"
#include "cuda-memory.h"
#include "cuda-quant-test-util.h"
#include "cuda-test-util.h"
#include "ggml-types.h"
#include "kv/kv-store.h"
#include "model-forward.h"
#include "model-random.h"
#include "sampler.h"
#include "session.h"
#include "test-util.h"

using namespace kvarena;
using namespace kvarena::test;

// ======================= GPU: the forward pass =======================

namespace {

struct model_case {
  const char* name;
  random_model_spec spec;
};

random_model_spec spec_of(model_arch a, int64_t dim, int64_t heads, int64_t kv_heads, int64_t ffn, ggml_type t,
                          bool tied, uint64_t seed) {
  random_model_spec s;
  s.arch = a, s.dim = dim, s.n_layers = 3, s.n_heads = heads, s.n_kv_heads = kv_heads, s.ffn_dim = ffn;
  s.n_vocab = 512, s.n_ctx = 1024, s.type = t, s.seed = seed, s.tie_output = tied, s.output_scale = 3.f;
  s.with_tokenizer = false;
  return s;
}

std::vector<model_case> model_cases() {
  return {{"llama-gqa-f16", spec_of(model_arch::llama, 256, 8, 2, 512, ggml_type::f16, false, 1)},
          {"llama-mha-q8", spec_of(model_arch::llama, 128, 2, 2, 384, ggml_type::q8_0, false, 2)},
          {"qwen2-tied-f32", spec_of(model_arch::qwen2, 192, 6, 2, 320, ggml_type::f32, true, 3)},
          // gpt2: learned positions, LayerNorm with bias, fused QKV with bias, GELU FFN
          {"gpt2-tied-f32", spec_of(model_arch::gpt2, 128, 4, 4, 256, ggml_type::f32, true, 4)}};
}

// Logits agree when F16 activations are involved: relative to the logits' spread.
void expect_logits_close(const std::vector<float>& got, const float* want, int64_t V, const std::string& what) {
  float spread = 0;
  for (int64_t i = 0; i < V; ++i) spread = std::max(spread, std::fabs(want[i]));
  std::vector<float> w(want, want + V);
  expect_close(got, w, 2e-2f * std::max(spread, 1.f), 0.f, what);
}

}  // namespace

namespace {

// Prompt of 40 in chunks of 32 and 8, then 30 decode steps, each step's logits against the
// CPU forward's (within 2% of the logit range).
void expect_cuda_logits_match_cpu(const model_case& mc, const std::filesystem::path& dir) {
  SCOPED_TRACE(mc.name);
  const std::string path = (dir / (std::string(mc.name) + ".gguf")).string();
  write_random_model(mc.spec, path);
  auto m = load_model(path);
  const int64_t V = m->config.n_vocab;
  std::mt19937 rng(5);
  std::vector<int32_t> toks(70);
  for (auto& t : toks) t = int32_t(rng() % uint32_t(V));
  const std::vector<float> want = cpu_logits_all(*m, toks);

  cuda_engine_options eo;
  eo.max_chunk = 32, eo.max_batch = 4;
  cuda_engine e(*m, eo);
  cuda_session_options so;
  so.n_ctx = 128, so.prefill_chunk = 32;
  cuda_session s(e, so);
  s.append(std::span<const int32_t>(toks.data(), 40));
  expect_logits_close(s.logits(), &want[size_t(39 * V)], V, "after the prompt");
  for (int64_t i = 40; i < 70; ++i) {
    s.append_decode(toks[size_t(i)]);
    expect_logits_close(s.logits(), &want[size_t(i * V)], V, "decode position " + std::to_string(i));
  }
  const memory_stats ms = s.memory();
  EXPECT_GT(ms.weights_bytes, 0u);
  EXPECT_EQ(ms.kv_bytes, size_t(2 * m->config.n_layers * m->config.kv_dim() * 128 * 2));
}

// Files the CUDA backend refused before: qwen3 (per-head q/k RMSNorm, NEOX RoPE) with a head
// width other than dim / n_heads, Llama 3's rope_freqs.weight with linear scaling, and a
// llama with a wide head (q_dim 2x dim).
std::vector<model_case> scaled_model_cases() {
  random_model_spec q3 = spec_of(model_arch::qwen3, 192, 4, 2, 320, ggml_type::f16, false, 6);
  q3.head_dim = 64;  // q_dim 256 != 192
  random_model_spec l3 = spec_of(model_arch::llama, 256, 4, 2, 512, ggml_type::q8_0, true, 7);
  l3.rope_freqs = true, l3.rope_scale_linear = 4.f;
  random_model_spec wide = spec_of(model_arch::llama, 128, 4, 4, 256, ggml_type::f32, false, 8);
  wide.head_dim = 64, wide.rope_scale_linear = 2.f;
  return {{"qwen3-hd64-f16", q3}, {"llama3-rope-freqs-q8", l3}, {"llama-wide-head-f32", wide}};
}

}  // namespace

TEST(CudaForward, LogitsMatchTheCpuForward) {
  REQUIRE_GPU();
  const auto dir = test::temp_dir("models");
  for (const model_case& mc : model_cases()) expect_cuda_logits_match_cpu(mc, dir);
}

// phi3: the fused attn_qkv and gate|up ffn_up (row views on the CPU) uploaded as the llama
// matrices; Q8_0 kept quantized (one part per fused tensor's views), and F32.
TEST(CudaForward, Phi3LogitsMatchTheCpuForward) {
  REQUIRE_GPU();
  const auto dir = test::temp_dir("models");
  expect_cuda_logits_match_cpu({"phi3-q8", spec_of(model_arch::phi3, 256, 8, 4, 512, ggml_type::q8_0, false, 12)},
                               dir);
  expect_cuda_logits_match_cpu({"phi3-f32-tied", spec_of(model_arch::phi3, 128, 4, 2, 256, ggml_type::f32, true, 13)},
                               dir);
}

TEST(CudaForward, Qwen3AndScaledRopeLogitsMatchTheCpuForward) {
  REQUIRE_GPU();
  const auto dir = test::temp_dir("models");
  for (const model_case& mc : scaled_model_cases()) expect_cuda_logits_match_cpu(mc, dir);
}

namespace {

// The random llama's matrices replaced by random quantized blocks scaled to the generator's
// standard deviation of each, with types mixed as llama.cpp's Q4_K_M mixes them (q/k Q4_K
// and v Q6_K: three parts; gate Q3_K and up Q2_K: two parts; q/k/v all Q4_0 in layer 1: one
// part), wo Q5_K, down Q8_0, output Q6_K.
std::unique_ptr<model> quantized_model(const std::filesystem::path& dir) {
  const random_model_spec spec = spec_of(model_arch::llama, 256, 4, 2, 512, ggml_type::f32, false, 11);
  const std::string path = (dir / "kquant-base.gguf").string();
  write_random_model(spec, path);
  auto m = load_model(path);
  std::mt19937 rng(3);
  const auto swap = [&](tensor_view& t, ggml_type type) {
    const auto* v = reinterpret_cast<const float*>(t.data);
    double ss = 0;
    for (int64_t i = 0; i < t.n_elements(); ++i) ss += double(v[i]) * v[i];
    const float sd = float(std::sqrt(ss / double(t.n_elements())));
    m->owned.push_back(scaled_random_blocks(type, t.rows(), t.ne[0], sd, rng));
    t.type = type, t.data = m->owned.back().data(), t.nbytes = m->owned.back().size();
  };
  for (size_t l = 0; l < m->layers.size(); ++l) {
    layer_weights& L = m->layers[l];
    const bool q40 = l == 1;
    swap(L.wq, q40 ? ggml_type::q4_0 : ggml_type::q4_k);
    swap(L.wk, q40 ? ggml_type::q4_0 : ggml_type::q4_k);
    swap(L.wv, q40 ? ggml_type::q4_0 : ggml_type::q6_k);
    swap(L.wo, ggml_type::q5_k);
    swap(L.w_gate, ggml_type::q3_k);
    swap(L.w_up, ggml_type::q2_k);
    swap(L.w_down, ggml_type::q8_0);
  }
  swap(m->output, ggml_type::q6_k);
  return m;
}

}  // namespace

// Quantized weights kept as blocks on the device (decode: cu::qmatvec; prefill chunks of 32:
// F16 tiles + cuBLAS) and the same model widened to F16 (keep_quantized = false, what
// KVARENA_CUDA_WEIGHTS=f16 selects): both against the CPU forward at every step; the kept
// blocks take less than half the F16 bytes.
TEST(CudaForward, QuantizedWeightsOnTheDeviceMatchTheCpuForward) {
  REQUIRE_GPU();
  const auto dir = test::temp_dir("models");
  auto m = quantized_model(dir);
  const int64_t V = m->config.n_vocab;
  std::mt19937 rng(15);
  std::vector<int32_t> toks(60);
  for (auto& t : toks) t = int32_t(rng() % uint32_t(V));
  const std::vector<float> want = cpu_logits_all(*m, toks);
  size_t bytes[2] = {0, 0};
  for (bool keep : {true, false}) {
    SCOPED_TRACE(keep ? "quantized on the device" : "widened to f16");
    cuda_engine_options eo;
    eo.max_chunk = 32, eo.max_batch = 2, eo.keep_quantized = keep;
    cuda_engine e(*m, eo);
    bytes[keep ? 0 : 1] = e.weight_bytes();
    cuda_session_options so;
    so.n_ctx = 64, so.prefill_chunk = 32;
    cuda_session s(e, so);
    s.append(std::span<const int32_t>(toks.data(), 40));  // chunks of 32 (tiles) and 8 (matvec)
    expect_logits_close(s.logits(), &want[size_t(39 * V)], V, "after the prompt");
    for (int64_t i = 40; i < 60; ++i) {
      s.append_decode(toks[size_t(i)]);
      expect_logits_close(s.logits(), &want[size_t(i * V)], V, "decode position " + std::to_string(i));
    }
  }
  EXPECT_LT(bytes[0] * 2, bytes[1]) << bytes[0] << " quantized vs " << bytes[1] << " f16";
}

// The qwen3 file with the wide head through forward_batch (one GEMM per weight, the span
// attention for 3 sequences at different positions): each row's logits vs the CPU forward.
TEST(CudaForward, Qwen3BatchedDecodeMatchesSingleSequences) {
  REQUIRE_GPU();
  const auto dir = test::temp_dir("models");
  const model_case mc = scaled_model_cases()[0];
  const std::string path = (dir / "q3-batch.gguf").string();
  write_random_model(mc.spec, path);
  auto m = load_model(path);
  const int64_t V = m->config.n_vocab;
  cuda_engine_options eo;
  eo.max_chunk = 16, eo.max_batch = 3;
  cuda_engine e(*m, eo);
  std::mt19937 rng(9);
  std::vector<std::unique_ptr<cuda_sequence>> seqs;
  std::vector<std::vector<int32_t>> toks(3);
  for (int b = 0; b < 3; ++b) {
    seqs.push_back(std::make_unique<cuda_sequence>(e, 64));
    toks[size_t(b)].resize(size_t(5 + 3 * b));
    for (auto& t : toks[size_t(b)]) t = int32_t(rng() % uint32_t(V));
    e.forward(*seqs.back(), toks[size_t(b)].data(), int64_t(toks[size_t(b)].size()), false);
  }
  const std::vector<int32_t> next = {3, 77, 301};
  e.forward_batch({seqs[0].get(), seqs[1].get(), seqs[2].get()}, next.data(), true);
  std::vector<float> got(size_t(3 * V));
  for (int b = 0; b < 3; ++b) e.logits(b, &got[size_t(b * V)]);
  for (int b = 0; b < 3; ++b) {
    std::vector<int32_t> all = toks[size_t(b)];
    all.push_back(next[size_t(b)]);
    const std::vector<float> want = cpu_logits_all(*m, all);
    expect_logits_close(std::vector<float>(got.begin() + b * V, got.begin() + (b + 1) * V),
                        &want[size_t((int64_t(all.size()) - 1) * V)], V, "sequence " + std::to_string(b));
  }
}

TEST(CudaForward, BatchedDecodeMatchesSingleSequences) {
  REQUIRE_GPU();
  const auto dir = test::temp_dir("models");
  const model_case mc = model_cases()[0];
  const std::string path = (dir / "batch.gguf").string();
  write_random_model(mc.spec, path);
  auto m = load_model(path);
  const int64_t V = m->config.n_vocab, B = 3;
  cuda_engine_options eo;
  eo.max_chunk = 64, eo.max_batch = 4;
  cuda_engine e(*m, eo);
  std::mt19937 rng(6);
  std::vector<std::vector<int32_t>> prompts = {std::vector<int32_t>(10), std::vector<int32_t>(37), std::vector<int32_t>(5)};
  for (auto& p : prompts)
    for (auto& t : p) t = int32_t(rng() % uint32_t(V));
  std::vector<std::unique_ptr<cuda_sequence>> seqs;
  std::vector<cuda_sequence*> ptrs;
  for (int64_t b = 0; b < B; ++b) {
    seqs.push_back(std::make_unique<cuda_sequence>(e, 64));
    e.forward(*seqs.back(), prompts[size_t(b)].data(), int64_t(prompts[size_t(b)].size()), false);
    ptrs.push_back(seqs.back().get());
  }
  const std::vector<int32_t> next = {1, 2, 3};
  e.forward_batch(ptrs, next.data(), true);
  std::vector<std::vector<float>> batched(static_cast<size_t>(B), std::vector<float>(static_cast<size_t>(V)));
  for (int64_t b = 0; b < B; ++b) e.logits(b, batched[size_t(b)].data());
  const std::vector<int32_t> greedy = e.argmax(B);
  for (int64_t b = 0; b < B; ++b) {
    std::vector<int32_t> all = prompts[size_t(b)];
    all.push_back(next[size_t(b)]);
    const std::vector<float> want = cpu_logits_all(*m, all);
    expect_logits_close(batched[size_t(b)], &want[size_t((all.size() - 1) * size_t(V))], V,
                        "batch row " + std::to_string(b));
    EXPECT_EQ(greedy[size_t(b)], argmax(batched[size_t(b)].data(), V));
  }
}

TEST(CudaForward, UserErrorsAreEngineErrors) {
  REQUIRE_GPU();
  const auto dir = test::temp_dir("models");
  const model_case mc = model_cases()[0];
  const std::string path = (dir / "errors.gguf").string();
  write_random_model(mc.spec, path);
  auto m = load_model(path);
  cuda_engine e(*m);
  cuda_session_options so;
  so.n_ctx = 8;
  cuda_session s(e, so);
  const std::vector<int32_t> bad = {1, int32_t(m->config.n_vocab)};
  EXPECT_THROW(s.append(bad), engine_error);
  const std::vector<int32_t> many(9, 1);
  EXPECT_THROW(s.append(many), engine_error);
  EXPECT_THROW(s.logits(), engine_error);  // nothing appended yet
}

// ======================= GPU: the device KV store and policies =======================

TEST(CudaKvStore, MatchesKvStoreByteForByte) {
  REQUIRE_GPU();
  gpu_ctx g;
  const int64_t d = 64, n_kv = 2, L = 2;
  kv_store_config sc;
  sc.n_layers = L, sc.n_kv_heads = n_kv, sc.head_dim = d, sc.int8 = true, sc.fp16_window = 40;
  kv_store cpu(sc);
  cuda_kv_store dev(sc, g.alloc, g.st);
  std::mt19937 rng(23);
  int64_t pos = 0;
  for (int round = 0; round < 8; ++round) {
    const int64_t n = 1 + (round * 29) % 70;
    const std::vector<float> k = uniform(rng, n * n_kv * d, -2.f, 2.f), v = uniform(rng, n * n_kv * d, -1.f, 1.f);
    auto dk = g.up(k), dv = g.up(v);
    for (int64_t l = 0; l < L; ++l) {
      cpu.append(l, pos, n, k.data(), v.data(), n_kv * d);
      dev.append(l, pos, n, dk.data(), dv.data(), n_kv * d);
      if (round % 2 == 1) {  // evict in odd rounds, differently per head
        keep_decision kd;
        kd.keep_all = false;
        for (int64_t h = 0; h < n_kv; ++h) kd.keep.push_back(random_keep(rng, cpu.n_kept(l, h), 0.5 + 0.2 * double(h)));
        cpu.apply(l, kd);
        dev.apply(l, kd);
      }
      for (int64_t h = 0; h < n_kv; ++h) {
        const host_head want = copy_head(cpu, l, h);
        const cuda_kv_head_data got = dev.download(l, h);
        host_head gh;
        gh.d = d, gh.n8 = got.n_int8, gh.n16 = got.n_fp16, gh.nb = got.n_blocks;
        gh.kq = got.kq, gh.vq = got.vq, gh.block = got.block, gh.pos = got.pos;
        gh.ks = got.k_scale, gh.vs = got.v_scale, gh.k16 = got.k16, gh.v16 = got.v16;
        // kv_store keeps unused scale blocks after the last INT8 row only transiently: compare
        // the blocks the rows use.
        expect_same_head(gh, want, "round " + std::to_string(round) + " layer " + std::to_string(l) + " head " +
                                       std::to_string(h));
      }
    }
    pos += n;
  }
  EXPECT_GT(dev.peak_device_bytes(), 0u);
}

namespace {

// Kept positions of every (layer, head) of a CPU session / a CUDA session.
std::vector<std::vector<int32_t>> kept_cpu(const session& s, int64_t L, int64_t H) {
  std::vector<std::vector<int32_t>> k;
  for (int64_t l = 0; l < L; ++l)
    for (int64_t g = 0; g < H; ++g) k.push_back(s.kv()->store().kept_positions(l, g));
  return k;
}
std::vector<std::vector<int32_t>> kept_cuda(const cuda_session& s, int64_t L, int64_t H) {
  std::vector<std::vector<int32_t>> k;
  for (int64_t l = 0; l < L; ++l)
    for (int64_t g = 0; g < H; ++g) k.push_back(s.sequence().kv()->store().kept_positions(l, g));
  return k;
}

}  // namespace

TEST(CudaForward, PoliciesMatchTheCpuSession) {
  REQUIRE_GPU();
  const auto dir = test::temp_dir("models");
  const model_case mc = model_cases()[0];  // llama GQA F16, head_dim 32
  const std::string path = (dir / "policies.gguf").string();
  write_random_model(mc.spec, path);
  auto m = load_model(path);
  const int64_t L = m->config.n_layers, H = m->config.n_kv_heads, V = m->config.n_vocab;
  cuda_engine_options eo;
  eo.max_chunk = 32, eo.max_batch = 2;
  cuda_engine e(*m, eo);
  struct pcase {
    std::string name;
    kv_policy_options o;
    bool exact;  // decisions do not depend on attention mass: kept sets must match every step
  };
  std::vector<pcase> cases;
  {
    kv_policy_options o;
    cases.push_back({"full", o, true});
    o.window = 48, o.sinks = 4;
    cases.push_back({"window", o, true});
    kv_policy_options h;
    h.heavy = 24, h.recent = 24;
    cases.push_back({"h2o", h, false});
    kv_policy_options c;
    // tau 0: every step is "confident" (budget n_high), so the budget never hangs on a
    // confidence that F16 activations move by 1e-3 across the threshold.
    c.n_high = 40, c.n_low = 72, c.protect = 16, c.int8 = true, c.int8_window = 32, c.tau = 0.f;
    cases.push_back({"confkv", c, false});
    cases.push_back({"confkv-l", c, false});
  }
  std::mt19937 rng(31);
  std::vector<int32_t> toks(130);
  for (auto& t : toks) t = int32_t(rng() % uint32_t(V));
  for (const pcase& pc : cases) {
    SCOPED_TRACE(pc.name);
    session_options so;
    so.n_ctx = 256, so.prefill_chunk = 32, so.kv_policy = pc.name, so.kv = pc.o;
    session cs(*m, so);
    cuda_session_options co;
    co.n_ctx = 256, co.prefill_chunk = 32, co.kv_policy = pc.name, co.kv = pc.o;
    cuda_session gs(e, co);
    const std::span<const int32_t> prompt(toks.data(), 80);
    cs.append(prompt);
    gs.append(prompt);
    int64_t steps = 0, same = 0;
    double overlap_sum = 0;
    for (int64_t i = 80; i < int64_t(toks.size()); ++i) {
      cs.append_decode(toks[size_t(i)]);
      gs.append_decode(toks[size_t(i)]);
      ++steps;
      const auto kc = kept_cpu(cs, L, H), kg = kept_cuda(gs, L, H);
      // Mean Jaccard overlap of the kept sets over (layer, head).
      double ov = 0;
      for (size_t j = 0; j < kc.size(); ++j) {
        std::vector<int32_t> both;
        std::set_intersection(kc[j].begin(), kc[j].end(), kg[j].begin(), kg[j].end(), std::back_inserter(both));
        const double uni = double(kc[j].size() + kg[j].size() - both.size());
        ov += uni > 0 ? double(both.size()) / uni : 1.0;
      }
      overlap_sum += ov / double(kc.size());
      EXPECT_EQ(gs.last_step()->kept, cs.kv()->last().kept) << "tokens per layer after position " << i;
      if (pc.exact) {
        EXPECT_TRUE(kc == kg) << "kept positions after position " << i;
      }
      if (kc != kg) continue;
      ++same;
      std::vector<float> want(cs.logits(), cs.logits() + V);
      expect_logits_close(gs.logits(), want.data(), V, "position " + std::to_string(i));
    }
    // Mass-ranked policies may break near-ties differently (F32 sums in another order, F16
    // activations), and an evicted token never returns: the sets stay close, not equal.
    EXPECT_GE(overlap_sum / double(steps), 0.9) << same << " of " << steps << " steps with identical kept sets";
  }
}

TEST(CudaForward, BatchedPolicyDecodeMatchesSingleSequences) {
  REQUIRE_GPU();
  const auto dir = test::temp_dir("models");
  const model_case mc = model_cases()[0];
  const std::string path = (dir / "batch-policy.gguf").string();
  write_random_model(mc.spec, path);
  auto m = load_model(path);
  const int64_t V = m->config.n_vocab;
  cuda_engine_options eo;
  eo.max_chunk = 32, eo.max_batch = 4;
  cuda_engine e(*m, eo);
  kv_policy_options o;
  o.window = 40, o.sinks = 4;
  std::mt19937 rng(8);
  std::vector<std::unique_ptr<cuda_sequence>> batch, single;
  std::vector<cuda_sequence*> ptrs;
  std::vector<std::vector<int32_t>> prompts;
  for (int b = 0; b < 3; ++b) {
    prompts.emplace_back(size_t(30 + 20 * b));
    for (auto& t : prompts.back()) t = int32_t(rng() % uint32_t(V));
    for (auto* set : {&batch, &single}) {
      set->push_back(std::make_unique<cuda_sequence>(e, 128, "window", o));
      for (size_t i = 0; i < prompts.back().size(); i += 32) {
        const int64_t n = std::min<int64_t>(32, int64_t(prompts.back().size() - i));
        e.forward(*set->back(), prompts.back().data() + i, n, false);
      }
    }
    ptrs.push_back(batch.back().get());
  }
  for (int step = 0; step < 20; ++step) {
    const std::vector<int32_t> next = {int32_t(step), int32_t(step + 7), int32_t(step + 100)};
    e.forward_batch(ptrs, next.data(), true);
    std::vector<std::vector<float>> got(3, std::vector<float>(static_cast<size_t>(V)));
    for (int b = 0; b < 3; ++b) e.logits(b, got[size_t(b)].data());
    for (int b = 0; b < 3; ++b) {
      e.forward(*single[size_t(b)], &next[size_t(b)], 1, true);
      std::vector<float> want(static_cast<size_t>(V));
      e.logits(0, want.data());
      expect_logits_close(got[size_t(b)], want.data(), V, "step " + std::to_string(step) + " row " + std::to_string(b));
      for (int64_t l = 0; l < m->config.n_layers; ++l)
        EXPECT_EQ(batch[size_t(b)]->kv()->store().kept_positions(l, 0), single[size_t(b)]->kv()->store().kept_positions(l, 0));
    }
  }
}

// FreeKV on the device: tests/test-cuda-freekv.cpp (GPU) and test-cuda-freekv-plan.cpp (CPU).
