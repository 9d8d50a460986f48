// test-kv-mutations.cpp: hand-computed cases, each built so that one plausible way of
// breaking a policy changes its answer (issue 13's six mutations, each applied to the code
// and seen to fail the test named after it; the closing note lists them):
//   confkv: the attention EMA replaced by a plain sum; the group mean's division dropped;
//   freekv: the page score from the first query head only; no softmax before the mean over
//           the group; the correction cosine from the first query head only;
//   h2o:    its automatic sizes (10% of the sequence each for heavy and recent) or its
//           heavy hitters lost.
// Every expected value is worked out in the comment above it.
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "kv/kv-host-pool.h"
#include "kv/kv-policy.h"
#include "kv/kv-store.h"

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
    pol->set_digests(0, pool.digests(0));
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

}  // namespace
