// test-kv-runtime.cpp: the conformance suite every KV policy runs through a real session
// (small random models, llama with GQA and gpt2):
//   - `full` equals a plain forward pass (the plain F32 cache with K/V rounded through FP16,
//     i.e. the independent attention path over the same values), and stays within a stated
//     bound of the unrounded F32 pass;
//   - budgets are never exceeded at any step or layer; protected / recent windows and sinks
//     are always kept; results are deterministic for a seed;
//   - freekv with a budget >= the sequence equals full; it corrects every head on every step
//     with tau = 1 and never with tau = -1; device tokens stay within its budget and the
//     host pool holds the whole sequence;
//   - INT8 storage keeps logits within a stated bound of FP16 storage;
//   - hand-computed kept sets for window (with sinks) and confkv budgets through the
//     runtime (H2O by hand: test-kv-policies.cpp, with scripted attention mass).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <numeric>
#include <string>
#include <vector>

#include "engine-error.h"
#include "model-random.h"
#include "model.h"
#include "sampler.h"
#include "session.h"
#include "test-util.h"

namespace kvarena {
namespace {

std::unique_ptr<model> make_model(model_arch arch, int64_t n_kv_heads, const std::string& name) {
  random_model_spec s;
  s.arch = arch;
  s.dim = 128;
  s.n_layers = 3;
  s.n_heads = 4;
  s.n_kv_heads = arch == model_arch::gpt2 ? 4 : n_kv_heads;
  s.ffn_dim = 256;
  s.n_vocab = 512;
  s.n_ctx = 1024;
  s.type = ggml_type::f32;
  s.seed = 7;
  s.with_tokenizer = false;
  const std::string path = (test::temp_dir("kv-runtime") / (name + ".gguf")).string();
  write_random_model(s, path);
  return load_model(path);
}

std::vector<int32_t> tokens(int64_t n, uint64_t seed, int64_t vocab) {
  std::vector<int32_t> t(static_cast<size_t>(n));
  uint64_t x = seed * 0x9E3779B97F4A7C15ull + 1;
  for (auto& v : t) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    v = int32_t(x % uint64_t(vocab));
  }
  return t;
}

// The largest |logit| (at least 1): tolerances are relative to it.
float logit_scale(const std::vector<float>& logits) {
  float s = 1.f;
  for (float x : logits) s = std::max(s, std::fabs(x));
  return s;
}

float max_abs_diff(const float* a, const float* b, int64_t n) {
  float d = 0;
  for (int64_t i = 0; i < n; ++i) d = std::max(d, std::fabs(a[i] - b[i]));
  return d;
}

// Runs `prompt` as prefill (in chunks of `chunk`) and then teacher-forces `forced` one
// decode step at a time; returns the logits after every decode step: (steps, n_vocab).
std::vector<float> run(session& s, const std::vector<int32_t>& prompt, const std::vector<int32_t>& forced) {
  s.append(prompt);
  std::vector<float> out;
  for (int32_t t : forced) {
    s.append_decode(t);
    out.insert(out.end(), s.logits(), s.logits() + s.n_vocab());
  }
  return out;
}

session_options opts(const std::string& policy, int64_t chunk = 64) {
  session_options o;
  o.n_threads = 2;
  o.prefill_chunk = chunk;
  o.kv_policy = policy;
  return o;
}

class KvRuntime : public ::testing::TestWithParam<model_arch> {
 protected:
  void SetUp() override {
    const bool gpt2 = GetParam() == model_arch::gpt2;
    m_ = make_model(GetParam(), 2, gpt2 ? "gpt2" : "llama");
    prompt_ = tokens(150, 1, m_->config.n_vocab);
    forced_ = tokens(40, 2, m_->config.n_vocab);
  }
  std::unique_ptr<model> m_;
  std::vector<int32_t> prompt_, forced_;
};

TEST_P(KvRuntime, PlainF32MatchesItsReferenceAndFullFp16StaysWithinFp16) {
  // The plain cache (no policy: `full` over an F32 store) with the optimised kernels, the
  // same with the plain-loop references (ref matmuls, ref::kv_attend in double), and `full`
  // over the FP16 store.
  session_options ref_opts = opts("");
  ref_opts.reference = true;
  session ref(*m_, ref_opts);
  session f32(*m_, opts(""));
  session full(*m_, opts("full"));
  const auto a = run(ref, prompt_, forced_), b = run(f32, prompt_, forced_), c = run(full, prompt_, forced_);
  const int64_t n = int64_t(a.size());
  const float scale = logit_scale(a);
  const float same = max_abs_diff(a.data(), b.data(), n), f16 = max_abs_diff(b.data(), c.data(), n);
  std::printf("plain F32 vs its reference: %.3g; full FP16 vs plain F32: %.3g; max |logit| %.3g\n", same, f16, scale);
  // Same values, two implementations: only summation order differs.
  EXPECT_LT(same, 5e-6f * scale);
  // FP16 storage against the F32 pass: the stated bound for FP16 KV, and not zero (the
  // two stores do differ).
  EXPECT_LT(f16, 1e-3f * scale);
  EXPECT_GT(f16, 0.f);
  EXPECT_EQ(full.memory().kv_host_bytes, 0u);
  // The plain cache reports its F32 bytes: 2 * head_dim * 4 per token, layer and KV head.
  const model_config& mc = m_->config;
  EXPECT_EQ(f32.memory().kv_logical_bytes,
            size_t(f32.n_past() * mc.n_layers * mc.n_kv_heads * 2 * mc.head_dim * 4));
  EXPECT_EQ(f32.policy(), nullptr);
}

// Budgets per policy, small enough that every one of them evicts on this sequence.
struct policy_case {
  std::string name;
  kv_policy_options o;
};
std::vector<policy_case> evicting_cases() {
  std::vector<policy_case> c;
  kv_policy_options w;
  w.window = 48, w.sinks = 4;
  c.push_back({"window", w});
  kv_policy_options h;
  h.heavy = 24, h.recent = 16;
  c.push_back({"h2o", h});
  kv_policy_options k;
  k.n_high = 40, k.n_low = 72, k.protect = 16, k.tau = 0.3f;
  c.push_back({"confkv", k});
  k.int8 = true, k.int8_window = 32;
  c.push_back({"confkv", k});
  kv_policy_options kl = k;
  c.push_back({"confkv-l", kl});
  kv_policy_options f;
  f.budget = 160, f.sinks = 32, f.window = 32, f.page = 32;
  c.push_back({"freekv", f});
  return c;
}

TEST_P(KvRuntime, BudgetsAndProtectedWindowsHoldAtEveryStep) {
  for (const policy_case& pc : evicting_cases()) {
    SCOPED_TRACE(pc.name + (pc.o.int8 ? " int8" : ""));
    session_options so = opts(pc.name, 48);
    so.kv = pc.o;
    session s(*m_, so);
    const kv_runtime& rt = *s.kv();
    const int64_t L = m_->config.n_layers, G = m_->config.n_kv_heads;
    int64_t steps = 0, evicted_steps = 0;
    s.on_step([&](const kv_step_stats& st) {
      ++steps;
      for (int64_t l = 0; l < L; ++l) {
        const int64_t b = rt.policy().budget(l, st.seq_len);
        ASSERT_GE(b, 0);
        // freekv: window + resident pages <= B; others: kept <= the step's budget.
        ASSERT_LE(st.kept[l], b) << "layer " << l << " step " << st.step;
        if (st.kept[l] < st.seq_len) ++evicted_steps;
        for (int64_t g = 0; g < G; ++g) {
          const std::vector<int32_t> pos = rt.store().kept_positions(l, g);
          ASSERT_TRUE(std::is_sorted(pos.begin(), pos.end()));
          int64_t must_recent = 0;  // the newest tokens every policy keeps in the store
          if (pc.name == "window") must_recent = std::min<int64_t>(pc.o.window, st.seq_len);
          if (pc.name == "h2o") must_recent = std::min<int64_t>(pc.o.recent, st.seq_len);
          if (pc.name == "confkv" || pc.name == "confkv-l") must_recent = std::min<int64_t>(pc.o.protect, st.seq_len);
          if (pc.name == "freekv") must_recent = std::min<int64_t>(pc.o.window - pc.o.page + 1, st.seq_len);
          for (int64_t p = st.seq_len - must_recent; p < st.seq_len; ++p)
            ASSERT_TRUE(std::binary_search(pos.begin(), pos.end(), int32_t(p)))
                << "recent position " << p << " missing at step " << st.step << " layer " << l;
          if (pc.name == "window") {
            for (int32_t p = 0; p < std::min<int64_t>(pc.o.sinks, st.seq_len); ++p) {
              ASSERT_TRUE(std::binary_search(pos.begin(), pos.end(), p)) << "sink " << p;
            }
          }
        }
      }
      if (pc.name == "freekv") {
        // Device: at most B tokens' worth of FP16 store rows per layer and KV head.
        const size_t per_token = rt.store().fp16_token_bytes();
        ASSERT_LE(st.kv_device_bytes, size_t(pc.o.budget) * per_token * size_t(L * G));
        ASSERT_GT(st.kv_host_bytes, 0u);
      }
    });
    run(s, prompt_, forced_);
    EXPECT_GT(steps, 40);
    EXPECT_GT(evicted_steps, 0) << "the case must evict to test anything";
    if (pc.name == "freekv") {
      // Host pool: every full page of the sequence (head-major fp16 K and V).
      const int64_t pages = s.n_past() / pc.o.page;
      EXPECT_GE(s.memory().kv_host_bytes, size_t(pages * pc.o.page * 2 * m_->config.head_dim * 2 * L * G));
    }
  }
}

TEST_P(KvRuntime, DeterministicForASeed) {
  for (const policy_case& pc : evicting_cases()) {
    SCOPED_TRACE(pc.name);
    std::vector<std::vector<int32_t>> outs;
    std::vector<std::vector<int64_t>> kept;
    for (int rep = 0; rep < 2; ++rep) {
      session_options so = opts(pc.name, 48);
      so.kv = pc.o;
      session s(*m_, so);
      sampler_options sp;
      sp.temperature = 0.9f;
      sp.seed = 42;
      sampler smp(sp);
      s.append(prompt_);
      std::vector<int32_t> out;
      for (int i = 0; i < 30; ++i) out.push_back(s.decode_next(smp));
      outs.push_back(out);
      kept.push_back(s.last_step().kept);
    }
    EXPECT_EQ(outs[0], outs[1]);
    EXPECT_EQ(kept[0], kept[1]);
  }
}

TEST_P(KvRuntime, FreekvWithBudgetOverSequenceEqualsFull) {
  session full(*m_, opts("full"));
  session_options so = opts("freekv");
  so.kv.budget = 512, so.kv.sinks = 64, so.kv.window = 64, so.kv.page = 32;  // 150 + 40 tokens fit
  session fk(*m_, so);
  const auto a = run(full, prompt_, forced_), b = run(fk, prompt_, forced_);
  EXPECT_LT(max_abs_diff(a.data(), b.data(), int64_t(a.size())), 2e-5f);
  EXPECT_GT(fk.memory().kv_host_bytes, 0u);
}

TEST_P(KvRuntime, FreekvCorrectsAlwaysWithTauOneNeverWithTauMinusOne) {
  for (float tau : {1.0f, -1.0f}) {
    SCOPED_TRACE(tau);
    session_options so = opts("freekv");
    so.kv.budget = 160, so.kv.sinks = 32, so.kv.window = 32, so.kv.page = 32, so.kv.tau = tau;
    session s(*m_, so);
    int64_t corrected = 0, checked = 0, decode_steps = 0;
    s.on_step([&](const kv_step_stats& st) {
      if (!st.decode) return;
      ++decode_steps;
      corrected += st.corrected_heads;
      checked += st.checked_heads;
      EXPECT_EQ(st.checked_heads, m_->config.n_layers * m_->config.n_kv_heads);
      if (tau == 1.0f) {
        EXPECT_EQ(st.corrected_heads, st.checked_heads);
      } else {
        EXPECT_EQ(st.corrected_heads, 0);
      }
    });
    run(s, prompt_, forced_);
    EXPECT_EQ(decode_steps, int64_t(forced_.size()));
    EXPECT_GT(checked, 0);
  }
}

TEST_P(KvRuntime, FreekvOverlapDoesNotChangeResults) {
  std::vector<std::vector<float>> outs;
  for (bool overlap : {true, false}) {
    session_options so = opts("freekv");
    so.kv.budget = 160, so.kv.sinks = 32, so.kv.window = 32, so.kv.page = 32;
    so.kv_overlap = overlap;
    session s(*m_, so);
    outs.push_back(run(s, prompt_, forced_));
  }
  EXPECT_EQ(outs[0], outs[1]);
}

// A reset (history mode last starts every step's prompt anew) after sequences that end in a
// prefetch, a decode step's and a long prefill's: the next sequence runs as in a fresh
// session, at one thread and two, with and without overlap. The first sequence is longer
// than the budget (19 pages, 5 kept) so its decode steps recall pages and the last one's
// prefetch is still queued at the reset: with the reset's old order (the host pool replaced
// before those copies were waited for) the gpt2 case aborts in kv_host_pool::page_data, as
// `kvarena run --suite tasks/long-horizon --policies freekv --history last` did. (The first
// version kept the first sequence within the budget, recalled nothing, and passed either way.)
TEST_P(KvRuntime, FreekvResetRunsTheNextSequenceAsAFreshSession) {
  for (int threads : {1, 2})
  for (bool overlap : {true, false}) {
    SCOPED_TRACE(std::to_string(threads) + " thread(s), overlap " + std::to_string(overlap));
    session_options so = opts("freekv");
    so.n_threads = threads;
    so.kv.budget = 160, so.kv.sinks = 32, so.kv.window = 32, so.kv.page = 32;
    so.kv_overlap = overlap;
    const std::vector<int32_t> prompt2 = tokens(120, 3, m_->config.n_vocab), forced2 = tokens(20, 4, m_->config.n_vocab);
    session reused(*m_, so);
    run(reused, tokens(600, 6, m_->config.n_vocab), forced_);  // 19 pages, 5 kept: decode recalls
    reused.reset();
    reused.append(tokens(600, 5, m_->config.n_vocab));
    reused.reset();
    session fresh(*m_, so);
    EXPECT_EQ(run(reused, prompt2, forced2), run(fresh, prompt2, forced2));
  }
}

// A prefill chunk of many pages runs page by page inside each layer: the same pages are
// chosen and the same keys attended as when every forward call carries one page. Only the
// projections' GEMMs see more rows at once, so logits agree to float rounding.
TEST_P(KvRuntime, FreekvManyPageChunksMatchOnePagePerCall) {
  std::vector<std::vector<float>> outs;
  std::vector<std::vector<std::vector<int64_t>>> kept;  // (run, decode step, layer)
  for (int64_t chunk : {32, 150}) {  // 150: the whole prompt in one call (4 full pages + 22)
    session_options so = opts("freekv", chunk);
    so.kv.budget = 160, so.kv.sinks = 32, so.kv.window = 32, so.kv.page = 32;
    session s(*m_, so);
    kept.emplace_back();
    s.on_step([&](const kv_step_stats& st) {
      if (st.decode) kept.back().push_back(st.kept);
    });
    outs.push_back(run(s, prompt_, forced_));
  }
  EXPECT_EQ(kept[0], kept[1]);
  const float scale = logit_scale(outs[0]);
  const float d = max_abs_diff(outs[0].data(), outs[1].data(), int64_t(outs[0].size()));
  std::printf("freekv, 150-token chunk vs 32-token calls: max |logit diff| %.3g (max |logit| %.3g)\n", d, scale);
  EXPECT_LT(d, 1e-4f * scale);
}

TEST_P(KvRuntime, Int8StaysWithinBoundOfFp16) {
  // Budgets large enough that nothing is evicted: only the storage precision differs.
  std::vector<std::vector<float>> outs;
  for (bool int8 : {false, true}) {
    session_options so = opts("confkv");
    so.kv.n_high = so.kv.n_low = 512, so.kv.int8 = int8, so.kv.int8_window = 32;
    session s(*m_, so);
    outs.push_back(run(s, prompt_, forced_));
  }
  const float d = max_abs_diff(outs[0].data(), outs[1].data(), int64_t(outs[0].size()));
  std::printf("INT8 vs FP16 storage: max |logit diff| %.3g\n", d);
  // Logits of these models spread over a few units; INT8 (per-channel, 32-token blocks)
  // keeps them within 0.015: about twice the measured difference (7.3e-3 llama, 5.2e-3
  // gpt2), so a quantiser that loses a bit of precision fails here.
  EXPECT_LT(d, 0.015f);
  EXPECT_GT(d, 0.0f) << "INT8 must actually be in use";
}

// ---- fidelity to the papers (specs/kv-policies.md, "Changes") -------------------------------

// Score columns of every layer and KV head, concatenated.
std::vector<float> all_scores(const session& s) {
  std::vector<float> out;
  const kv_store& st = s.kv()->store();
  for (int64_t l = 0; l < st.config().n_layers; ++l)
    for (int64_t g = 0; g < st.config().n_kv_heads; ++g) {
      const std::vector<float> c = st.kept_scores(l, g);
      out.insert(out.end(), c.begin(), c.end());
    }
  return out;
}

TEST_P(KvRuntime, ScoresAfterAPromptDoNotDependOnTheChunking) {
  // Nothing evicted (budgets over the prompt): a token's score is the same whether the
  // prompt came as 150 one-token calls, chunks of 32 or one chunk. confkv: the EMA advances
  // once per token (decay^R and per-row weights); h2o: the plain sum.
  // The plain-loop path (reference: row-wise matmuls, attention in double) computes every
  // row alike whatever the chunk, so only the EMA's own arithmetic can differ: every score
  // within 1e-5 relative. The optimised kernels sum in other orders per chunk size (h2o's
  // plain sums differ by ~5e-6 there), so the same check is looser; the old per-call EMA
  // differed by orders more.
  for (const bool reference : {true, false}) {
    for (const std::string policy : {"confkv", "h2o"}) {
      SCOPED_TRACE(policy + (reference ? " (reference)" : " (kernels)"));
      std::vector<std::vector<float>> scores;
      for (int64_t chunk : {1, 32, 512}) {
        session_options so = opts(policy, chunk);
        so.reference = reference;
        so.kv.n_high = so.kv.n_low = 512, so.kv.heavy = so.kv.recent = 256;
        session s(*m_, so);
        s.append(prompt_);
        scores.push_back(all_scores(s));
      }
      ASSERT_EQ(scores[0].size(), size_t(prompt_.size()) * m_->config.n_layers * m_->config.n_kv_heads);
      double top = 0, worst = 0, worst_elem = 0;  // relative differences to the one-token calls
      for (size_t c = 1; c < scores.size(); ++c) {
        double diff2 = 0, norm2 = 0;
        for (size_t i = 0; i < scores[0].size(); ++i) {
          const double a = scores[0][i], b = scores[c][i];
          top = std::max(top, std::fabs(a));
          diff2 += (a - b) * (a - b), norm2 += a * a;
          worst_elem = std::max(worst_elem, std::fabs(a - b) / std::max(std::fabs(a), 1e-30));
        }
        worst = std::max(worst, std::sqrt(diff2 / norm2));
      }
      std::printf("%s%s scores, chunks 32 and 512 vs 1: relative L2 diff %.3g, largest of one score %.3g (max %.3g)\n",
                  policy.c_str(), reference ? " (reference)" : "", worst, worst_elem, top);
      EXPECT_GT(top, 0.0);
      if (reference) {
        EXPECT_LT(worst_elem, 1e-5);  // every score, relative
      } else {
        EXPECT_LT(worst, 1e-4);  // the scores as a vector (the kernels' summation orders)
      }
    }
  }
}

TEST_P(KvRuntime, ConfkvPrefillAfterAConfidentStepRunsAtNLow) {
  // tau = 0: every decode step is confident and trims to n_high; the observation appended
  // after it is prefill, which runs at n_low (the gate governs decode steps only).
  session_options so = opts("confkv", 32);
  so.kv.n_high = 24, so.kv.n_low = 64, so.kv.protect = 8, so.kv.tau = 0.0f;
  session s(*m_, so);
  s.append(std::vector<int32_t>(prompt_.begin(), prompt_.begin() + 100));
  s.append_decode(5);
  EXPECT_EQ(s.kv()->store().n_kept(0, 0), 24);
  s.append(forced_);  // 40 new tokens, prefill
  EXPECT_FALSE(s.last_step().decode);
  EXPECT_EQ(s.last_step().budget, 64);
  for (int64_t l = 0; l < m_->config.n_layers; ++l) EXPECT_EQ(s.kv()->store().n_kept(l, 0), 64) << "layer " << l;
}

TEST_P(KvRuntime, Int8ChunkAttendsToItsOwnRowsInFp16) {
  // One 150-token chunk, nothing evicted: with INT8 on, no row is INT8 while the chunk
  // attends (blocks are frozen after the forward call), so the prompt's logits are the
  // FP16 store's exactly; INT8 blocks exist afterwards.
  std::vector<std::vector<float>> logits;
  for (bool int8 : {false, true}) {
    session_options so = opts("confkv", 512);
    so.kv.n_high = so.kv.n_low = 512, so.kv.int8 = int8, so.kv.int8_window = 32;
    session s(*m_, so);
    s.append(prompt_);
    logits.emplace_back(s.logits(), s.logits() + s.n_vocab());
    if (int8) {
      EXPECT_GE(s.kv()->store().counts(0, 0).int8, 96) << "the old tokens went INT8 after the call";
    }
  }
  EXPECT_EQ(max_abs_diff(logits[0].data(), logits[1].data(), int64_t(logits[0].size())), 0.f);
}

TEST_P(KvRuntime, FreekvPromptLogitsEqualFullBelowItsBudget) {
  // Device budget 96 tokens (one sink page, one retrieval slot, the 32-token window) for a
  // 150-token prompt: the prefill is dense (every page read from the host pool), so the
  // prompt's last logits are full KV's up to summation order; a decode step then is sparse.
  std::vector<std::vector<float>> logits;
  for (const std::string policy : {"full", "freekv"}) {
    session_options so = opts(policy, 64);
    so.kv.budget = 96, so.kv.sinks = 32, so.kv.window = 32, so.kv.page = 32;
    session s(*m_, so);
    s.append(prompt_);
    logits.emplace_back(s.logits(), s.logits() + s.n_vocab());
    if (policy == "freekv") {
      EXPECT_LE(s.last_step().kept[1], 96);  // the device budget holds
      EXPECT_LT(s.last_step().kept[1], int64_t(prompt_.size()));
    }
  }
  const float scale = logit_scale(logits[0]);
  const float d = max_abs_diff(logits[0].data(), logits[1].data(), int64_t(logits[0].size()));
  std::printf("freekv (budget 96) vs full, 150-token prompt: max |logit diff| %.3g (max |logit| %.3g)\n", d, scale);
  EXPECT_LT(d, 1e-5f * scale);
}

TEST_P(KvRuntime, ConfkvRandomRankEvictsAsManyOtherTokens) {
  // The paper's ablation: the same gate and budgets (tau = 0: every decode step trims to
  // n_high, so the kept counts are equal at every step), other tokens beyond the protected
  // window; the same seed, the same draw.
  auto kept_trace = [&](double random_rank, double seed, std::vector<std::vector<int32_t>>* sets) {
    session_options so = opts("confkv", 48);
    so.kv.n_high = 40, so.kv.n_low = 72, so.kv.protect = 16, so.kv.tau = 0.0f;
    so.kv.extra["random-rank"] = random_rank, so.kv.extra["rank-seed"] = seed;
    session s(*m_, so);
    s.append(prompt_);
    std::vector<int64_t> counts;
    for (int32_t t : forced_) {
      s.append_decode(t);
      counts.push_back(s.kv()->store().n_kept(1, 0));
    }
    sets->push_back(s.kv()->store().kept_positions(1, 0));
    return counts;
  };
  std::vector<std::vector<int32_t>> sets;
  const std::vector<int64_t> ema = kept_trace(0, 1, &sets), r1 = kept_trace(1, 1, &sets), r1b = kept_trace(1, 1, &sets),
                             r2 = kept_trace(1, 2, &sets);
  EXPECT_EQ(ema, r1);  // the same budgets at the same steps ...
  EXPECT_NE(sets[0], sets[1]);   // ... but other tokens are kept
  EXPECT_EQ(sets[1], sets[2]);   // seeded
  EXPECT_NE(sets[1], sets[3]);
}

INSTANTIATE_TEST_SUITE_P(Archs, KvRuntime, ::testing::Values(model_arch::llama, model_arch::gpt2),
                         [](const auto& i) { return i.param == model_arch::gpt2 ? "gpt2" : "llama"; });

// Hand-computed kept sets through the runtime (one model, one layer checked per case).
class KvRuntimeHand : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { m_ = make_model(model_arch::llama, 2, "hand").release(); }
  static void TearDownTestSuite() { delete m_; }
  static model* m_;
};
model* KvRuntimeHand::m_ = nullptr;

TEST_F(KvRuntimeHand, WindowWithSinksKeepsFirstAndLast) {
  session_options so = opts("window", 32);
  so.kv.window = 16, so.kv.sinks = 4;
  session s(*m_, so);
  s.append(tokens(100, 3, m_->config.n_vocab));
  std::vector<int32_t> want = {0, 1, 2, 3};
  for (int32_t p = 84; p < 100; ++p) want.push_back(p);  // the budget counts sinks too: 4 + 16
  // window keeps the sinks plus the last `window` tokens
  for (int64_t l = 0; l < m_->config.n_layers; ++l)
    for (int64_t g = 0; g < m_->config.n_kv_heads; ++g) EXPECT_EQ(s.kv()->store().kept_positions(l, g), want);
}

TEST_F(KvRuntimeHand, ConfkvBudgetFollowsConfidence) {
  // tau = 0: every decode step is confident -> n_high; tau = 1: never -> n_low.
  for (float tau : {0.0f, 1.0f}) {
    session_options so = opts("confkv", 32);
    so.kv.n_high = 24, so.kv.n_low = 64, so.kv.protect = 8, so.kv.tau = tau;
    session s(*m_, so);
    s.append(tokens(100, 4, m_->config.n_vocab));
    // Prefill runs under n_low (no logits to gate on yet).
    EXPECT_EQ(s.kv()->store().n_kept(0, 0), 64);
    s.append_decode(5);
    EXPECT_GE(s.last_step().confidence, 0.0f);
    EXPECT_LE(s.last_step().confidence, 1.0f);
    EXPECT_EQ(s.last_step().budget, tau == 0.0f ? 24 : 64);
    EXPECT_EQ(s.kv()->store().n_kept(0, 0), tau == 0.0f ? 24 : 64);
  }
}

TEST_F(KvRuntimeHand, BadPolicyOptionsFailAtSessionStart) {
  session_options so = opts("confkv");
  so.kv.n_high = 8, so.kv.protect = 16;
  try {
    session s(*m_, so);
    FAIL() << "expected an error";
  } catch (const engine_error& e) {
    EXPECT_NE(std::string(e.what()).find("smaller than the protected window"), std::string::npos) << e.what();
  }
  so = opts("lru");
  try {
    session s(*m_, so);
    FAIL() << "expected an error";
  } catch (const engine_error& e) {
    EXPECT_NE(std::string(e.what()).find("full, window, h2o, confkv, confkv-l, freekv"), std::string::npos);
  }
}

}  // namespace
}  // namespace kvarena
