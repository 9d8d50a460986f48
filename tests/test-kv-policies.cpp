// test-kv-policies.cpp: one conformance suite run over every policy (budget never exceeded,
// protected windows kept, deterministic for a seed) on a simulated long sequence with random
// attention mass and queries, driving the real kv_store (and host pool for freekv); then
// small hand-computed cases per policy, confidence_from_logits against hand values, the
// pyramid budgets, and the option errors.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "engine-error.h"
#include "kv/kv-confidence.h"
#include "kv/kv-host-pool.h"
#include "kv/kv-policy.h"
#include "kv/kv-store.h"

using namespace kvarena;

namespace {

kv_policy_options shape(int64_t layers = 3, int64_t heads = 4, int64_t kv = 2, int64_t d = 32) {
  kv_policy_options o;
  o.n_layers = layers, o.n_heads = heads, o.n_kv_heads = kv, o.head_dim = d;
  return o;
}

struct conformance_case {
  std::string label, policy;
  kv_policy_options opt;
  int64_t prompt = 40, steps = 300;
};
void PrintTo(const conformance_case& c, std::ostream* os) { *os << c.label; }

// What happened at each step of a simulation, for the checks and the determinism test.
struct sim_trace {
  std::vector<std::vector<int32_t>> kept_pos;  // per (step, layer, head): kept positions then pages
  int64_t corrected = 0;  // freekv: (step, layer, head) flagged for correction
  int64_t max_int8 = 0;   // most INT8 tokens any head held (confkv --kv-int8)
};

// Drives a policy over prompt + steps tokens: append to store (+ host pool), random mass that
// sums to `group` per KV head (each query head's softmax sums to 1), random queries with
// correlated steps, random confidence; select; compact; check the invariants every step.
sim_trace simulate(const conformance_case& cc, uint64_t seed) {
  const kv_policy_options& o = cc.opt;
  auto pol = make_kv_policy(cc.policy, o);
  const kv_policy_needs needs = pol->needs();
  const int64_t d = o.head_dim, kv = o.n_kv_heads, L = o.n_layers, group = o.n_heads / kv;
  kv_store_config sc;
  sc.n_layers = L, sc.n_kv_heads = kv, sc.head_dim = d, sc.group = group;
  sc.int8 = o.int8, sc.fp16_window = o.int8_window;
  kv_store store(sc);
  kv_host_pool pool;
  if (needs.host_offload) pool = kv_host_pool(L, kv, d, o.page);
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> u(0.f, 1.f), s(-1.f, 1.f);
  std::vector<std::vector<float>> q(size_t(L), std::vector<float>(size_t(o.n_heads * d)));
  for (auto& ql : q)
    for (float& x : ql) x = s(rng);
  sim_trace tr;
  int64_t pos = 0;
  for (int64_t step = 0; step <= cc.steps; ++step) {
    const int64_t n = step == 0 ? cc.prompt : 1;
    std::vector<float> k(size_t(n * kv * d)), v(k.size());
    for (float& x : k) x = s(rng);
    for (float& x : v) x = s(rng);
    step_signals sig;
    sig.decode = step > 0;
    sig.confidence = u(rng);
    for (auto& ql : q) {
      for (float& x : ql) x = 0.8f * x + 0.6f * s(rng);  // adjacent queries mostly similar
      sig.queries.push_back(ql.data());
    }
    pol->on_step(sig);
    for (int64_t l = 0; l < L; ++l) {
      store.append(l, pos, n, k.data(), v.data(), kv * d);
      if (needs.host_offload) {
        pool.append(l, n, k.data(), v.data(), kv * d);
        as_retrieval(*pol)->set_digests(l, pool.digests(l));
      }
      store.clear_mass(l);
      for (int64_t g = 0; g < kv; ++g) {
        kv_head_view hv = store.head_view(l, g);
        double z = 0;
        std::vector<double> w(static_cast<size_t>(hv.n()));
        for (double& x : w) z += (x = std::pow(u(rng), 4.0));  // a few heavy hitters
        for (int64_t t = 0; t < hv.n(); ++t) hv.mass[t] = float(w[t] / z * double(group));
      }
      kv_layer_meta meta = store.layer_meta(l);
      keep_decision dec = pol->select(l, meta);
      store.apply(l, dec);
      const int64_t B = pol->budget(l, pos + n);
      for (int64_t g = 0; g < kv; ++g) {
        kv_head_view hv = store.head_view(l, g);
        const int64_t paged = dec.pages.empty() ? 0 : int64_t(dec.pages[g].size()) * o.page;
        if (B >= 0) {
          EXPECT_LE(hv.n() + paged, B) << cc.label << " step " << step << " layer " << l;
        }
        tr.max_int8 = std::max(tr.max_int8, hv.n_int8);
        std::vector<int32_t> rec(hv.pos, hv.pos + hv.n());
        if (!dec.pages.empty()) {
          rec.push_back(-1);
          rec.insert(rec.end(), dec.pages[g].begin(), dec.pages[g].end());
          // Pages and the window never overlap: pages end before the first kept token.
          if (!dec.pages[g].empty() && hv.n() > 0) {
            EXPECT_LE((dec.pages[g].back() + 1) * o.page, hv.pos[0]) << cc.label;
          }
        }
        tr.kept_pos.push_back(rec);
        if (!dec.corrected.empty()) tr.corrected += dec.corrected[g];
      }
    }
    pos += n;
  }
  return tr;
}

// The newest `r` positions of a sequence of length seq_len, and positions < sinks, must be kept.
void expect_protected(const std::vector<int32_t>& kept, int64_t seq_len, int64_t r, int64_t sinks,
                      const std::string& label) {
  std::set<int32_t> k(kept.begin(), kept.end());
  for (int64_t p = std::max<int64_t>(0, seq_len - r); p < seq_len; ++p)
    EXPECT_TRUE(k.count(int32_t(p))) << label << ": recent position " << p << " evicted";
  for (int64_t p = 0; p < std::min(sinks, seq_len); ++p)
    EXPECT_TRUE(k.count(int32_t(p))) << label << ": sink position " << p << " evicted";
}

std::vector<conformance_case> all_cases() {
  std::vector<conformance_case> c;
  c.push_back({"full", "full", shape()});
  {
    auto o = shape();
    o.window = 48, o.sinks = 4;
    c.push_back({"window", "window", o});
  }
  {
    auto o = shape();
    o.heavy = 24, o.recent = 16;
    c.push_back({"h2o", "h2o", o});
  }
  c.push_back({"h2o_fractions", "h2o", shape()});
  {
    auto o = shape();
    o.n_high = 40, o.n_low = 96, o.protect = 16;
    c.push_back({"confkv", "confkv", o});
    o.int8 = true, o.int8_window = 8;  // FP16 holds 8..39 tokens: INT8 blocks form under n_high = 40
    c.push_back({"confkv_int8", "confkv", o});
    o.int8 = false;
    c.push_back({"confkv_l", "confkv-l", o});
  }
  {
    auto o = shape();
    o.budget = 128, o.sinks = 32, o.window = 32, o.page = 16;
    c.push_back({"freekv", "freekv", o});
  }
  return c;
}

class KvPolicyConformance : public ::testing::TestWithParam<conformance_case> {};

TEST_P(KvPolicyConformance, BudgetRespectedAndProtectedKeptEveryStep) {
  const conformance_case& cc = GetParam();
  sim_trace tr = simulate(cc, 42);
  ASSERT_FALSE(HasFailure());
  EXPECT_EQ(tr.max_int8 > 0, cc.opt.int8) << "INT8 segment used iff --kv-int8";
  // Protected tokens, per policy, from the trace (layer-major, head-minor per step).
  const int64_t L = cc.opt.n_layers, kv = cc.opt.n_kv_heads;
  size_t at = 0;
  for (int64_t step = 0; step <= cc.steps; ++step) {
    const int64_t seq = cc.prompt + step;
    for (int64_t i = 0; i < L * kv; ++i, ++at) {
      std::vector<int32_t> kept;
      for (int32_t p : tr.kept_pos[at]) {
        if (p < 0) break;
        kept.push_back(p);
      }
      if (cc.policy == "full") {
        EXPECT_EQ(int64_t(kept.size()), seq);
      } else if (step == cc.steps) {  // the others did evict: the budget checks were not vacuous
        int64_t covered = 0;
        bool pages = false;
        for (int32_t p : tr.kept_pos[at]) {
          if (p < 0) pages = true;
          else covered += pages ? cc.opt.page : 1;
        }
        EXPECT_LT(covered, seq) << cc.label;
      }
      if (cc.policy == "window") expect_protected(kept, seq, cc.opt.window, cc.opt.sinks, cc.label);
      if (cc.policy == "h2o")
        expect_protected(kept, seq, cc.opt.recent ? cc.opt.recent : std::max<int64_t>(1, seq / 10), 0,
                         cc.label);
      if (cc.policy.rfind("confkv", 0) == 0) expect_protected(kept, seq, cc.opt.protect, 0, cc.label);
      // freekv: the window start is page-aligned from above, so W - page + 1 newest always stay.
      if (cc.policy == "freekv")
        expect_protected(kept, seq, cc.opt.window - cc.opt.page + 1, 0, cc.label);
    }
  }
}

TEST_P(KvPolicyConformance, DeterministicForASeed) {
  const conformance_case& cc = GetParam();
  EXPECT_EQ(simulate(cc, 7).kept_pos, simulate(cc, 7).kept_pos);
}

INSTANTIATE_TEST_SUITE_P(AllPolicies, KvPolicyConformance, ::testing::ValuesIn(all_cases()),
                         [](const auto& info) { return info.param.label; });

TEST(KvPolicyFreekv, BudgetAtLeastSequenceKeepsEverything) {
  auto o = shape();
  o.budget = 512, o.sinks = 32, o.window = 64, o.page = 16;
  conformance_case cc{"freekv_big", "freekv", o, 40, 400};  // 441 tokens <= 512
  sim_trace tr = simulate(cc, 1);
  const int64_t L = o.n_layers, kv = o.n_kv_heads;
  size_t at = 0;
  for (int64_t step = 0; step <= cc.steps; ++step)
    for (int64_t i = 0; i < L * kv; ++i, ++at) {
      int64_t tokens = 0;
      bool pages = false;
      for (int32_t p : tr.kept_pos[at]) {
        if (p < 0) pages = true;
        else tokens += pages ? o.page : 1;
      }
      EXPECT_EQ(tokens, cc.prompt + step) << "step " << step;
    }
}

TEST(KvPolicyFreekv, CorrectsEveryStepWithTauOneNeverWithTauMinusOne) {
  auto o = shape();
  o.budget = 96, o.sinks = 16, o.window = 32, o.page = 16;
  o.tau = 1.f;
  conformance_case cc{"freekv_tau", "freekv", o, 40, 200};
  sim_trace all = simulate(cc, 3);
  // From step 1 on (step 0 has no previous query), every head of every layer is flagged:
  // random queries never have cosine 1.
  EXPECT_EQ(all.corrected, int64_t(200) * o.n_layers * o.n_kv_heads);
  cc.opt.tau = -1.f;
  EXPECT_EQ(simulate(cc, 3).corrected, 0);
}

// ---- hand-computed cases (one layer, one KV head unless said) ----

struct hand_sim {
  std::unique_ptr<kv_policy> pol;
  kv_store store;
  int64_t pos = 0;
  hand_sim(const std::string& name, const kv_policy_options& o, int64_t group)
      : pol(make_kv_policy(name, o)), store([&] {
          kv_store_config c;
          c.n_layers = 1, c.n_kv_heads = 1, c.head_dim = o.head_dim, c.group = group;
          return c;
        }()) {}
  // Appends n tokens, writes `mass` (summed over the group) over the kept tokens, selects,
  // compacts; returns the kept positions.
  std::vector<int32_t> step(int64_t n, const std::vector<float>& mass, bool decode, float conf) {
    std::vector<float> kv(size_t(n * store.config().head_dim), 0.5f);
    store.append(0, pos, n, kv.data(), kv.data(), store.config().head_dim);
    pos += n;
    step_signals s;
    s.decode = decode, s.confidence = conf;
    pol->on_step(s);
    kv_head_view hv = store.head_view(0, 0);
    EXPECT_EQ(size_t(hv.n()), mass.size());
    for (int64_t t = 0; t < hv.n(); ++t) hv.mass[t] = mass[t];
    keep_decision d = pol->select(0, store.layer_meta(0));
    if (!d.keep_all) store.compact(0, d.keep);
    hv = store.head_view(0, 0);
    return std::vector<int32_t>(hv.pos, hv.pos + hv.n());
  }
};

TEST(KvPolicyHand, WindowKeepsSinksAndLastWindow) {
  auto o = shape(1, 1, 1, 32);
  o.sinks = 2, o.window = 3;
  hand_sim h("window", o, 1);
  // 8 tokens, budget 2 + 3: sinks 0,1 and the last three 5,6,7.
  EXPECT_EQ(h.step(8, std::vector<float>(8, 0.f), false, 0.f), (std::vector<int32_t>{0, 1, 5, 6, 7}));
  // One more: the window slides to 6,7,8; the sinks stay.
  EXPECT_EQ(h.step(1, std::vector<float>(6, 0.f), true, 0.f), (std::vector<int32_t>{0, 1, 6, 7, 8}));
}

TEST(KvPolicyHand, H2oAccumulatesMassAndKeepsHeavyPlusRecent) {
  auto o = shape(1, 2, 1, 32);  // group of 2 query heads: score = mass / 2
  o.heavy = 2, o.recent = 2;
  hand_sim h("h2o", o, 2);
  // Step 1: 4 tokens, mass [1.0 .2 .2 .6] -> scores [.5 .1 .1 .3]; 4 <= budget 4: all kept.
  EXPECT_EQ(h.step(4, {1.0f, 0.2f, 0.2f, 0.6f}, false, 0.f), (std::vector<int32_t>{0, 1, 2, 3}));
  // Step 2: 2 more, mass [0 1.0 .2 0 .6 .2] -> scores [.5 .6 .2 .3 .3 .1]. Recent: 4, 5.
  // Heavy among 0..3: token 1 (.6) and token 0 (.5); token 3 led after step 1 but is passed.
  EXPECT_EQ(h.step(2, {0.f, 1.0f, 0.2f, 0.f, 0.6f, 0.2f}, true, 0.f),
            (std::vector<int32_t>{0, 1, 4, 5}));
}

TEST(KvPolicyHand, ConfkvRanksEmaPlusRecencyAndGatesBudgetOnConfidence) {
  auto o = shape(1, 1, 1, 32);
  o.protect = 2, o.n_high = 4, o.n_low = 6;  // tau 0.6, decay 0.9, beta 0.1
  hand_sim h("confkv", o, 1);
  // Prefill of 8 (budget n_low = 6). ema = 0.1*mass = [.05 0 0 .03 0 0 .01 .01];
  // rank = ema + 0.1*pos/7: [.05 .0143 .0286 .0729 .0571 .0714 | protected 6, 7].
  // Top 4 of 0..5: 3, 5, 4, 0 -> keep {0,3,4,5,6,7}.
  EXPECT_EQ(h.step(8, {0.5f, 0.f, 0.f, 0.3f, 0.f, 0.f, 0.1f, 0.1f}, false, 0.f),
            (std::vector<int32_t>{0, 3, 4, 5, 6, 7}));
  // Decode, c = 0.9 >= 0.6: budget n_high = 4. Token 8 appended, no mass: ema decays to
  // [.045(0) .027(3) 0(4) 0(5) .009(6) .009(7) 0(8)]; recency = pos/8; protected 7, 8.
  // rank: 0 -> .045, 3 -> .0645, 4 -> .05, 5 -> .0625, 6 -> .084: keep 6 and 3.
  EXPECT_EQ(h.step(1, std::vector<float>(7, 0.f), true, 0.9f), (std::vector<int32_t>{3, 6, 7, 8}));
  // Decode, c = 0.3 < tau: budget n_low = 6 again; 5 tokens fit; evicted ones never return.
  EXPECT_EQ(h.step(1, std::vector<float>(5, 0.f), true, 0.3f), (std::vector<int32_t>{3, 6, 7, 8, 9}));
}

// FreeKV by hand: 1 layer, 1 KV head, 2 query heads, page 16, sinks 16 (page 0), window 16,
// budget 80: (80 - 16 - 16) / 16 = 3 page slots, the sink page and k = 2 retrieved. Every
// key of page j is val[j] * e_0, so the Quest bound of page j for q = a*e_0
// is max(a*val[j]*1, ...) = a*val[j] (min = max per channel).
std::vector<std::vector<int32_t>> freekv_hand(float tau) {
  auto o = shape(1, 2, 1, 32);
  o.page = 16, o.sinks = 16, o.window = 16, o.budget = 80, o.tau = tau;
  auto pol = make_kv_policy("freekv", o);
  kv_store_config sc;
  sc.n_layers = 1, sc.n_kv_heads = 1, sc.head_dim = 32, sc.group = 2;
  kv_store store(sc);
  kv_host_pool pool(1, 1, 32, 16);
  const float val[] = {0.f, 0.1f, 0.9f, -0.5f, 0.5f, 0.f};
  auto append = [&](int64_t pos0, int64_t n) {
    std::vector<float> k(size_t(n * 32), 0.f), v(k.size(), 1.f);
    for (int64_t t = 0; t < n; ++t) k[t * 32] = val[std::min<int64_t>((pos0 + t) / 16, 5)];
    store.append(0, pos0, n, k.data(), v.data(), 32);
    pool.append(0, n, k.data(), v.data(), 32);
    as_retrieval(*pol)->set_digests(0, pool.digests(0));
  };
  std::vector<std::vector<int32_t>> out;
  auto step = [&](float a, bool decode) {
    std::vector<float> q(64, 0.f);
    q[0] = q[32] = a;
    step_signals s;
    s.decode = decode;
    s.queries = {q.data()};
    pol->on_step(s);
    keep_decision d = pol->select(0, store.layer_meta(0));
    store.apply(0, d);
    out.push_back(d.pages[0]);
    kv_head_view hv = store.head_view(0, 0);
    out.push_back({hv.pos[0], int32_t(hv.n())});  // window: first position, size
  };
  append(0, 96);
  step(-10.f, false);
  append(96, 1);
  step(10.f, true);
  return out;
}

TEST(KvPolicyHand, FreekvQuestBoundSpeculationAndCorrection) {
  // Step 1 (96 tokens, q = -10 e_0): window = positions 80..95 (16); candidates pages 1..4,
  // k = 3 slots - 1 sink page = 2; bounds -10*val = [-1 -9 5 -5]: pages 3 and 1, plus sink 0.
  // Step 2 (97 tokens, q = +10 e_0, cosine -1 with the last query): window = 96 (1 token),
  // candidates 1..5, k = 2.
  //  tau 0.9: corrected, chosen with q_t: 10*val = [1 9 -5 5 0] -> pages 2, 4.
  //  tau -1: never corrected, chosen with q_{t-1}: [-1 -9 5 -5 0] -> pages 3, 5.
  using v = std::vector<int32_t>;
  EXPECT_EQ(freekv_hand(0.9f), (std::vector<v>{{0, 1, 3}, {80, 16}, {0, 2, 4}, {96, 1}}));
  EXPECT_EQ(freekv_hand(-1.f), (std::vector<v>{{0, 1, 3}, {80, 16}, {0, 3, 5}, {96, 1}}));
}

TEST(KvConfidence, HandValues) {
  // Uniform over 2: H_hat = 1, m = 0 (sigmoid .5), p1 = .5: c = 0 + .15 + .15 = .3.
  const float a[] = {0.f, 0.f};
  EXPECT_NEAR(confidence_from_logits(a, 2), 0.3f, 1e-6f);
  // p = [1/2 1/4 1/8 1/8]: H = 1.75 ln2, H_hat = 1.75 ln2 / ln4 = .875; m = ln2 (sigmoid 2/3);
  // p1 = .5: c = .4*.125 + .3*(2/3) + .3*.5 = .05 + .2 + .15 = .4.
  const float b[] = {std::log(0.5f), std::log(0.25f), std::log(0.125f), std::log(0.125f)};
  confidence_parts pb = confidence_parts_from_logits(b, 4);
  EXPECT_NEAR(pb.entropy_norm, 0.875f, 1e-6f);
  EXPECT_NEAR(pb.margin, std::log(2.f), 1e-6f);
  EXPECT_NEAR(pb.p1, 0.5f, 1e-6f);
  EXPECT_NEAR(pb.c, 0.4f, 1e-6f);
  // Shifting all logits changes nothing (order of the top two from the end too).
  const float b2[] = {std::log(0.125f) + 5, std::log(0.125f) + 5, std::log(0.25f) + 5, std::log(0.5f) + 5};
  EXPECT_NEAR(confidence_from_logits(b2, 4), 0.4f, 1e-6f);
  // One-hot: H_hat ~ 0, sigmoid(100) ~ 1, p1 ~ 1: c ~ 1.
  const float c[] = {100.f, 0.f, 0.f};
  EXPECT_NEAR(confidence_from_logits(c, 3), 1.f, 1e-6f);
}

TEST(KvPyramid, BudgetsSumAndShape) {
  // B = 1024, P = 64, 8 layers: min = 960/20 = 48, max = 1920 - 48 = 1872, layer l gets
  // 64 + floor(1872 - 1824*l/7) = 1936 1675 1414 1154 893 633 372 112 (sum 8189); the 3
  // tokens lost to flooring go to layers 0..2.
  EXPECT_EQ(pyramid_budgets(1024, 64, 8),
            (std::vector<int64_t>{1937, 1676, 1415, 1154, 893, 633, 372, 112}));
  for (int64_t L : {1, 2, 5, 12, 32}) {
    auto b = pyramid_budgets(256, 64, L);
    int64_t sum = 0;
    for (size_t i = 0; i < b.size(); ++i) {
      sum += b[i];
      EXPECT_GE(b[i], 64);
      if (i) {
        EXPECT_LE(b[i], b[i - 1]);
      }
    }
    EXPECT_EQ(sum, 256 * L);
  }
}

void expect_error(const std::string& name, const kv_policy_options& o, const std::string& part) {
  try {
    make_kv_policy(name, o);
    ADD_FAILURE() << name << ": no error, wanted '" << part << "'";
  } catch (const engine_error& e) {
    EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
  }
}

TEST(KvPolicyFactory, BadOptionsNameTheProblem) {
  expect_error("foo", shape(), "unknown policy 'foo' (valid: full, window, h2o, confkv, confkv-l, freekv)");
  expect_error("full", shape(0), "model shape");
  auto o = shape();
  o.window = 0;
  expect_error("window", o, "window must be >= 1");
  o = shape();
  o.n_high = 32;
  expect_error("confkv", o, "budget n_high=32 is smaller than the protected window protect=64");
  o = shape();
  o.tau = 1.5f;
  expect_error("confkv", o, "tau must be in [0,1] (got 1.5)");
  expect_error("freekv", o, "tau must be in [-1,1] (got 1.5)");
  o.tau = -0.5f;
  expect_error("confkv-l", o, "tau must be in [0,1]");
  o = shape(3, 4, 2, 48);
  o.int8 = true;
  expect_error("confkv", o, "--kv-int8 needs a head size that is a multiple of 32 (got head_dim=48)");
  o = shape();
  o.budget = 768;
  expect_error("freekv", o, "budget 768 is smaller than sinks + window + one page of new tokens (512 + 512 + 32)");
  o.budget = 2050;
  expect_error("freekv", o, "multiples of the page");
  o = shape();
  o.heavy = -1;
  expect_error("h2o", o, "heavy and recent must be >= 0");
  for (const char* ok : {"full", "window", "h2o", "confkv", "confkv-l", "freekv"})
    EXPECT_STREQ(make_kv_policy(ok, shape())->name(), ok);
}

TEST(KvPolicyFactory, MissingSignalsFailFast) {
  kv_policy_needs none;
  EXPECT_NO_THROW(check_kv_policy_needs(*make_kv_policy("window", shape()), none));
  try {
    check_kv_policy_needs(*make_kv_policy("confkv", shape()), none);
    ADD_FAILURE() << "no error";
  } catch (const engine_error& e) {
    EXPECT_NE(std::string(e.what()).find("kv policy 'confkv' needs attention mass, logits confidence"),
              std::string::npos)
        << e.what();
  }
}

TEST(KvPolicyFactory, NeedsDeclared) {
  EXPECT_FALSE(make_kv_policy("full", shape())->needs().attention_mass);
  EXPECT_FALSE(make_kv_policy("window", shape())->needs().attention_mass);
  EXPECT_TRUE(make_kv_policy("h2o", shape())->needs().attention_mass);
  auto c = make_kv_policy("confkv", shape())->needs();
  EXPECT_TRUE(c.attention_mass && c.logits_confidence && !c.host_offload);
  auto f = make_kv_policy("freekv", shape())->needs();
  EXPECT_TRUE(f.queries && f.host_offload && !f.attention_mass);
}

}  // namespace
