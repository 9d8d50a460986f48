// test-kv-mutations.cpp: hand-computed cases, each built so that one plausible way of
// breaking a policy changes its answer (issue 13's six mutations, each applied to the code
// and seen to fail the test named after it; the closing note lists them):
//   confkv: the attention EMA replaced by a plain sum; the group mean's division dropped;
//   freekv: the page score from the first query head only; no softmax before the mean over
//           the group; the correction cosine from the first query head only;
//   h2o:    its automatic sizes (10% of the sequence each for heavy and recent) or its
//           heavy hitters lost.
// and that confkv's gate trims the cache with the budget of the step whose logits it read.
// Every expected value is worked out in the comment above it.
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "kv/kv-confidence.h"
#include "kv/kv-host-pool.h"
#include "kv/kv-policy.h"
#include "kv/kv-runtime.h"
#include "kv/kv-store.h"
#include "thread-pool.h"

using namespace kvarena;

namespace {

kv_policy_options shape(int64_t heads, int64_t kv, int64_t d = 32) {
  kv_policy_options o;
  o.n_layers = 1, o.n_heads = heads, o.n_kv_heads = kv, o.head_dim = d;
  return o;
}

// One layer, one KV head: append n tokens, write the attention mass (summed over the
// group's query heads) of every kept token, run select, compact; the kept positions.
struct one_head {
  std::unique_ptr<kv_policy> pol;
  kv_store store;
  int64_t pos = 0;
  one_head(const std::string& name, const kv_policy_options& o)
      : pol(make_kv_policy(name, o)), store([&] {
          kv_store_config c;
          c.n_layers = 1, c.n_kv_heads = 1, c.head_dim = o.head_dim, c.group = o.n_heads / o.n_kv_heads;
          return c;
        }()) {}
  std::vector<int32_t> step(int64_t n, const std::vector<float>& mass) {
    std::vector<float> kv(size_t(n * store.config().head_dim), 0.5f);
    store.append(0, pos, n, kv.data(), kv.data(), store.config().head_dim);
    pos += n;
    step_signals s;
    s.decode = n == 1, s.confidence = 0.f;
    pol->on_step(s);
    kv_head_view hv = store.head_view(0, 0);
    EXPECT_EQ(size_t(hv.n()), mass.size());
    for (int64_t t = 0; t < hv.n(); ++t) hv.mass[t] = mass[t];
    const keep_decision d = pol->select(0, store.layer_meta(0));
    if (!d.keep_all) store.compact(0, d.keep);
    hv = store.head_view(0, 0);
    return std::vector<int32_t>(hv.pos, hv.pos + hv.n());
  }
};

using positions = std::vector<int32_t>;

// confkv, decay 0.5, beta 0 (rank = ema alone), protect 1, budget 3 (n_high = n_low).
//   step 1: tokens 0 1 2, mass [1 0 0]: ema = 0.5 * mass = [.5 0 0]; 3 fit.
//   step 2: token 3, mass [0 .6 0 0]: ema [.25 .3 0 0]; 3 protected; top 2 of 0..2: 1, 0.
//   step 3: token 4, mass over 0 1 3 4 = [0 0 .45 0]: ema [.125 .15 .225 0]; 4 protected;
//           top 2 of 0 1 3: 3 (.225), 1 (.15) -> {1 3 4}.
// A plain sum (no decay of the old score) gives 0 .5, 1 .3, 3 .225 and keeps {0 1 4}.
TEST(KvMutations, ConfkvScoreIsAnExponentialMovingAverage) {
  auto o = shape(1, 1);
  o.ema_decay = 0.5f, o.beta = 0.f, o.protect = 1, o.n_high = 3, o.n_low = 3;
  one_head h("confkv", o);
  EXPECT_EQ(h.step(3, {1.f, 0.f, 0.f}), (positions{0, 1, 2}));
  EXPECT_EQ(h.step(1, {0.f, 0.6f, 0.f, 0.f}), (positions{0, 1, 3}));
  EXPECT_EQ(h.step(1, {0.f, 0.f, 0.45f, 0.f}), (positions{1, 3, 4}));
}

// confkv with 2 query heads per KV head: the EMA takes the group *mean* of the mass.
// decay 0.5, beta 0.1, protect 1, budget 2. Tokens 0 1 2 with summed mass [.15 0 0]:
// ema = 0.5 * .15 / 2 = .0375; rank = ema + 0.1 * pos / 2: token 0 .0375, token 1 .05;
// 2 protected; the top 1 of 0, 1 is token 1 -> {1 2}. Without the division ema = .075
// beats .05 and keeps {0 2}.
TEST(KvMutations, ConfkvTakesTheMeanOverTheGroup) {
  auto o = shape(2, 1);
  o.ema_decay = 0.5f, o.beta = 0.1f, o.protect = 1, o.n_high = 2, o.n_low = 2;
  one_head h("confkv", o);
  EXPECT_EQ(h.step(3, {0.15f, 0.f, 0.f}), (positions{1, 2}));
}

// h2o with its automatic sizes: heavy = recent = 10% of the tokens seen (20 -> 2 each).
// Mass on tokens 3 (.9) and 7 (.8), a little on 10 (.1): keep the recent 18 19 and the
// heavy 3 7 -> {3 7 18 19}. Keeping only the recent 10% (no heavy hitters) gives {18 19}.
TEST(KvMutations, H2oKeepsTenPercentRecentPlusTenPercentHeavy) {
  auto o = shape(1, 1);
  o.heavy = 0, o.recent = 0;
  one_head h("h2o", o);
  std::vector<float> mass(20, 0.f);
  mass[3] = 0.9f, mass[7] = 0.8f, mass[10] = 0.1f;
  EXPECT_EQ(h.step(20, mass), (positions{3, 7, 18, 19}));
  // 10 more (30 seen: 3 each). Kept before the step: 3 7 18 19, then 20..29 new; mass .2 on
  // position 18 (kept index 2). Recent: 27 28 29; heavy: the top 3 of the rest by
  // accumulated score, 3 (.9), 7 (.8), 18 (.2) -> {3 7 18 27 28 29}.
  std::vector<float> more(14, 0.f);
  more[2] = 0.2f;
  EXPECT_EQ(h.step(10, more), (positions{3, 7, 18, 27, 28, 29}));
}

// ---- freekv: 1 layer, 1 KV head, 2 query heads, head_dim 32, page 16 ----
// sinks 16 (page 0), window 16, budget 64: (64 - 16 - 16) / 16 = 2 slots = the sink page
// and k = 1 retrieved page. 80 tokens: pages 0..4, the window is page 4 (64..79), the
// candidates pages 1 2 3. Every key of page j is x_j e_0 + y_j e_1; query head 0 is
// sqrt(32) e_0 and head 1 sqrt(32) e_1, so the Quest bounds (scaled by 1/sqrt(32)) are
// exactly u_j = x_j (head 0) and v_j = y_j (head 1).
struct freekv_one_layer {
  std::unique_ptr<kv_policy> pol;
  kv_store store;
  kv_host_pool pool{1, 1, 32, 16};
  explicit freekv_one_layer(float tau) {
    auto o = shape(2, 1);
    o.page = 16, o.sinks = 16, o.window = 16, o.budget = 64, o.tau = tau;
    pol = make_kv_policy("freekv", o);
    kv_store_config sc;
    sc.n_layers = 1, sc.n_kv_heads = 1, sc.head_dim = 32, sc.group = 2;
    store = kv_store(sc);
  }
  // 80 tokens; page j's keys (x[j], y[j]) (page 0 and the window page get zeros).
  void fill(const float (&x)[3], const float (&y)[3]) {
    std::vector<float> k(80 * 32, 0.f), v(k.size(), 1.f);
    for (int64_t t = 16; t < 64; ++t) k[t * 32] = x[t / 16 - 1], k[t * 32 + 1] = y[t / 16 - 1];
    store.append(0, 0, 80, k.data(), v.data(), 32);
    pool.append(0, 80, k.data(), v.data(), 32);
    as_retrieval(*pol)->set_digests(0, pool.digests(0));
  }
  // One select with query heads (a0 e_0 + a1 e_1, b0 e_0 + b1 e_1), times sqrt(32).
  keep_decision select(float a0, float a1, float b0, float b1) {
    const float c = std::sqrt(32.f);
    std::vector<float> q(64, 0.f);
    q[0] = c * a0, q[1] = c * a1, q[32] = c * b0, q[33] = c * b1;
    step_signals s;
    s.decode = true;
    s.queries = {q.data()};
    pol->on_step(s);
    keep_decision d = pol->select(0, store.layer_meta(0));
    store.apply(0, d);
    return d;
  }
};

// Bounds u = [3 1.5 0] (head 0), v = [-3 1.5 0] (head 1). Softmax per head:
//   head 0: e^3, e^1.5, 1 = 20.09, 4.48, 1 -> [.7856 .1753 .0391]
//   head 1: e^-3, e^1.5, 1 = .0498, 4.48, 1 -> [.0090 .8106 .1804]
//   mean -> [.3973 .4930 .1098]: page 2. Head 0 alone would pick page 1.
TEST(KvMutations, FreekvScoresPagesWithEveryQueryHeadOfTheGroup) {
  freekv_one_layer f(0.9f);
  f.fill({3.f, 1.5f, 0.f}, {-3.f, 1.5f, 0.f});
  EXPECT_EQ(f.select(1, 0, 0, 1).pages[0], (positions{0, 2}));
}

// Bounds u = [5 6 0], v = [5 3 6]. Raw means [5 4.5 3] would pick page 1. Softmax:
//   head 0 over (5 6 0): 148.4, 403.4, 1 -> [.2686 .7301 .0018]
//   head 1 over (5 3 6): 148.4, 20.09, 403.4 -> [.2594 .0351 .7053]
//   mean -> [.2640 .3826 .3536]: page 2.
TEST(KvMutations, FreekvTakesTheSoftmaxPerHeadBeforeTheMean) {
  freekv_one_layer f(0.9f);
  f.fill({5.f, 6.f, 0.f}, {5.f, 3.f, 6.f});
  EXPECT_EQ(f.select(1, 0, 0, 1).pages[0], (positions{0, 2}));
}

// Correction: C = mean over the group of cosine(q_t, q_{t-1}). Step 1 heads (e_0, e_1);
// step 2 heads (e_0, -e_1): cosines 1 and -1, C = 0 < tau 0.5: corrected. From head 0
// alone C = 1 and nothing would be corrected. Step 3 repeats step 2: C = 1, not corrected.
TEST(KvMutations, FreekvCorrectionCosineIsTheGroupMean) {
  freekv_one_layer f(0.5f);
  f.fill({3.f, 1.5f, 0.f}, {-3.f, 1.5f, 0.f});
  const keep_decision d1 = f.select(1, 0, 0, 1);
  EXPECT_FALSE(d1.checked);  // no previous query yet
  const keep_decision d2 = f.select(1, 0, 0, -1);
  ASSERT_TRUE(d2.checked);
  EXPECT_TRUE(d2.corrected[0]);
  const keep_decision d3 = f.select(1, 0, 0, -1);
  EXPECT_FALSE(d3.corrected[0]);
}

// ---- confkv's gate reads the step's own logits ----
// A kv_runtime driven by hand (1 layer, 1 KV head of 32, 1 query head), confkv with
// n_high 8, n_low 16, protect 4, tau 0.6, and scripted logits per decode step:
//   uniform over 2  -> c = 0.4*0 + 0.3*sigmoid(0) + 0.3*0.5 = 0.3   (< tau: n_low)
//   {100, 0, 0}     -> c ~ 1                                        (>= tau: n_high)
// Prefill 20 -> 16 kept (n_low before any decode step). Decode 1 (c 0.3): 17 -> 16.
// Decode 2 (c ~1): trimmed to 8 in that same step (the sawtooth turns on the step that
// produced the confident logits, not one later). Decode 3 (c 0.3): budget 16 again, 8 + 1
// = 9 kept (evicted tokens never return).
TEST(KvGate, ConfkvBudgetTurnsOnTheStepWhoseLogitsAreConfident) {
  kv_runtime_config rc;
  rc.policy = "confkv";
  rc.options = shape(1, 1);
  rc.options.n_high = 8, rc.options.n_low = 16, rc.options.protect = 4, rc.options.tau = 0.6f;
  rc.max_chunk = 64;
  const std::unique_ptr<kv_runtime> rp = make_kv_runtime(rc);
  kv_runtime& r = *rp;
  thread_pool pool(1);
  int64_t pos = 0;
  auto forward = [&](int64_t n, bool decode, const std::vector<float>& logits) {
    std::vector<float> kv(size_t(n * 32)), q(size_t(n * 32)), out(size_t(n * 32));
    for (size_t i = 0; i < kv.size(); ++i) kv[i] = float((i * 7 + size_t(pos)) % 11) / 11.f - 0.5f;
    for (size_t i = 0; i < q.size(); ++i) q[i] = float((i * 5 + 3) % 13) / 13.f - 0.5f;
    step_signals s;
    s.decode = decode;
    r.begin_forward(s, pos, n);
    r.append(0, kv.data(), kv.data(), 32);
    r.attend(pool, 0, q.data(), 32, n, 1.f / std::sqrt(32.f), out.data(), 32);
    pos += n;
    const float c = logits.empty() ? -1.f : confidence_from_logits(logits.data(), int64_t(logits.size()));
    const kv_step_stats& st = r.end_forward(0.0, c);
    EXPECT_EQ(st.kept[0], r.store().n_kept(0, 0));
    return std::pair<int64_t, int64_t>{st.budget, r.store().n_kept(0, 0)};
  };
  const std::vector<float> unsure = {0.f, 0.f}, sure = {100.f, 0.f, 0.f};
  EXPECT_EQ(forward(20, false, {}), (std::pair<int64_t, int64_t>{16, 16}));
  EXPECT_EQ(forward(1, true, unsure), (std::pair<int64_t, int64_t>{16, 16}));
  EXPECT_EQ(forward(1, true, sure), (std::pair<int64_t, int64_t>{8, 8}));
  EXPECT_EQ(forward(1, true, unsure), (std::pair<int64_t, int64_t>{16, 9}));
  EXPECT_NEAR(r.last().confidence, 0.3f, 1e-6f);
}

}  // namespace
