// test-bench-stats.cpp: the statistics the policy benchmarks report (engine/bench/
// bench-common.h: Pearson r, ranks, Spearman rho, KL of two logit vectors, log softmax),
// each against values worked out by hand in the comments (never recomputed here with the
// code's own formula); the span confidence-kl removes (bench-confidence-kl.h) and the
// NIAH codes per trial (bench-niah.h).
#include <gtest/gtest.h>

#include <cmath>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "bench/bench-common.h"
#include "bench/bench-confidence-kl.h"
#include "bench/bench-niah.h"
#include "engine-error.h"

namespace {

using kvarena::stat_pearson;
using kvarena::stat_ranks;
using kvarena::stat_spearman;
using vec = std::vector<double>;

// x = 1..5, y = 2,4,5,4,5: means 3 and 4; dx = -2,-1,0,1,2, dy = -2,0,1,0,1;
// sxy = 4+0+0+0+2 = 6, sxx = 4+1+0+1+4 = 10, syy = 4+0+1+0+1 = 6; r = 6 / sqrt(60) = 0.7745966692.
TEST(BenchStats, PearsonByHand) {
  EXPECT_NEAR(stat_pearson({1, 2, 3, 4, 5}, {2, 4, 5, 4, 5}), 0.7745966692414834, 1e-12);
  // Exactly linear, falling: -1.
  EXPECT_NEAR(stat_pearson({1, 2, 3}, {6, 4, 2}), -1.0, 1e-12);
  // Unequal lengths: the first min(4, 3) = 3 pairs (1,1), (2,2), (3,3): r = 1 (the 100 is ignored;
  // with it, 4 x values against 3 y values would not even be pairs).
  EXPECT_NEAR(stat_pearson({1, 2, 3, 100}, {1, 2, 3}), 1.0, 1e-12);
  // Degenerate: a constant side or fewer than 2 pairs give 0.
  EXPECT_EQ(stat_pearson({1, 2, 3}, {5, 5, 5}), 0.0);
  EXPECT_EQ(stat_pearson({7}, {3}), 0.0);
  EXPECT_EQ(stat_pearson({}, {}), 0.0);
}

TEST(BenchStats, RanksAverageTies) {
  // Sorted: 5 (rank 1), 10 (rank 2), 20 and 20 (ranks 3 and 4, each (3+4)/2 = 3.5).
  EXPECT_EQ(stat_ranks({10, 20, 20, 5}), (vec{2, 3.5, 3.5, 1}));
  // Three equal values share ranks 1, 2, 3: each 2.
  EXPECT_EQ(stat_ranks({3, 3, 3}), (vec{2, 2, 2}));
  // A tie at the top: sorted 1, 2, 40, 40, 40: 1 -> 1, 2 -> 2, the three 40s share ranks
  // 3, 4, 5 -> 4 each.
  EXPECT_EQ(stat_ranks({40, 1, 40, 2, 40}), (vec{4, 1, 4, 2, 4}));
  EXPECT_TRUE(stat_ranks({}).empty());
}

// y = x^3 is monotone but not linear: Spearman 1, Pearson below 1. Pearson by hand:
// x = 1..5, y = 1, 8, 27, 64, 125, mean y = 225/5 = 45; dx = -2,-1,0,1,2,
// dy = -44,-37,-18,19,80; sxy = 88+37+0+19+160 = 304; sxx = 10;
// syy = 1936+1369+324+361+6400 = 10390; r = 304 / sqrt(103900) = 0.9431175138.
TEST(BenchStats, SpearmanOfMonotoneNonLinearIsOne) {
  const vec x = {1, 2, 3, 4, 5}, y = {1, 8, 27, 64, 125};
  EXPECT_NEAR(stat_pearson(x, y), 0.9431175138077005, 1e-12);
  EXPECT_NEAR(stat_spearman(x, y), 1.0, 1e-12);
  // Falling and non-linear: -1 (Pearson of these is not -1).
  EXPECT_NEAR(stat_spearman({1, 2, 3, 4}, {10, 1, 0.1, 0.01}), -1.0, 1e-12);
  EXPECT_GT(stat_pearson({1, 2, 3, 4}, {10, 1, 0.1, 0.01}), -0.9);
}

// Ties: x = 1,2,2,3 ranks 1, 2.5, 2.5, 4; y = 1,3,2,4 ranks 1,3,2,4. Both mean 2.5;
// drx = -1.5,0,0,1.5; dry = -1.5,0.5,-0.5,1.5; sxy = 2.25+0+0+2.25 = 4.5, sxx = 4.5,
// syy = 2.25+0.25+0.25+2.25 = 5; rho = 4.5 / sqrt(22.5) = sqrt(0.9) = 0.9486832981.
// (The no-ties shortcut 1 - 6 sum d^2 / (n (n^2 - 1)) gives 1 - 6*0.5/60 = 0.95 here: wrong.)
TEST(BenchStats, SpearmanWithTiesUsesAverageRanks) {
  EXPECT_NEAR(stat_spearman({1, 2, 2, 3}, {1, 3, 2, 4}), 0.9486832980505138, 1e-12);
  // x = 1,1,2,2 ranks 1.5,1.5,3.5,3.5; y = 1,2,1,2 ranks 1.5,3.5,1.5,3.5: deviations
  // -1,-1,1,1 and -1,1,-1,1, sxy = 1-1-1+1 = 0: rho = 0.
  EXPECT_NEAR(stat_spearman({1, 1, 2, 2}, {1, 2, 1, 2}), 0.0, 1e-12);
  // Ranks of 10, 20, 30 and of 3, 1, 2: 1,2,3 vs 3,1,2; d = -1, 1, 0 around mean 2:
  // sxy = (-1)(1) + 0(-1) + 1(0) = -1, sxx = syy = 2: rho = -0.5.
  EXPECT_NEAR(stat_spearman({10, 20, 30}, {3, 1, 2}), -0.5, 1e-12);
  EXPECT_EQ(stat_spearman({1, 2, 3}, {4, 4, 4}), 0.0);  // constant side
  EXPECT_EQ(stat_spearman({1}, {2}), 0.0);
  // Unequal lengths: the first 3 pairs only (x's 0 would rank first and break the order).
  EXPECT_NEAR(stat_spearman({1, 2, 3, 0}, {1, 8, 27}), 1.0, 1e-12);
}

// 2 tokens. P = softmax(0, 0) = (1/2, 1/2); Q = softmax(0, ln 3) = (1/4, 3/4).
// KL(P||Q) = 1/2 ln((1/2)/(1/4)) + 1/2 ln((1/2)/(3/4)) = 1/2 ln 2 + 1/2 ln(2/3) = 1/2 ln(4/3)
//          = 0.1438410362.
// KL(Q||P) = 1/4 ln((1/4)/(1/2)) + 3/4 ln((3/4)/(1/2)) = -1/4 ln 2 + 3/4 ln(3/2)
//          = 3/4 ln 3 - ln 2 = 0.8239592165 - 0.6931471806 = 0.1308120359.
TEST(BenchStats, KlTwoTokensByHand) {
  const float p[2] = {0.f, 0.f};
  const float q[2] = {0.f, float(std::log(3.0))};  // ln 3 rounded to float: error ~1e-8
  EXPECT_NEAR(kvarena::kl_divergence_logits(p, q, 2), 0.14384103622589042, 1e-6);
  EXPECT_NEAR(kvarena::kl_divergence_logits(q, p, 2), 0.130812035941137, 1e-6);
  EXPECT_NEAR(kvarena::kl_divergence_logits(p, p, 2), 0.0, 1e-12);
  // log softmax(0, ln 3)[1] = ln(3/4) = -0.2876820725; [0] = ln(1/4) = -1.3862943611.
  EXPECT_NEAR(kvarena::log_softmax_at(q, 2, 1), -0.2876820724517809, 1e-6);
  EXPECT_NEAR(kvarena::log_softmax_at(q, 2, 0), -1.3862943611198906, 1e-6);
}

// 3 tokens. P = softmax(0, ln 2, 0) = (1/4, 1/2, 1/4); Q = softmax(0, 0, 0) = (1/3, 1/3, 1/3).
// KL(P||Q) = 1/4 ln(3/4) + 1/2 ln(3/2) + 1/4 ln(3/4) = 1/2 ln(3/4) + 1/2 ln(3/2)
//          = 1/2 ln(9/8) = 1/2 * 0.1177830357 = 0.0588915178.
// Adding 5 to every logit of P changes nothing (softmax is shift-invariant).
TEST(BenchStats, KlThreeTokensByHand) {
  const float p[3] = {0.f, float(std::log(2.0)), 0.f};
  const float p_shift[3] = {5.f, 5.f + float(std::log(2.0)), 5.f};
  const float q[3] = {0.f, 0.f, 0.f};
  EXPECT_NEAR(kvarena::kl_divergence_logits(p, q, 3), 0.05889151782819173, 1e-6);
  EXPECT_NEAR(kvarena::kl_divergence_logits(p_shift, q, 3), 0.05889151782819173, 1e-6);
}

// Large logits must not overflow: P = softmax(1000, 1000) = (1/2, 1/2),
// Q = softmax(1000, 1002) = (1, e^2) / (1 + e^2). KL(P||Q) = 1/2 ln((1+e^2)/2) +
// 1/2 ln((1+e^2)/(2 e^2)) = ln((1+e^2)/2) - 1 = ln(8.3890561/2) - 1 = 1.4337808305 - 1
// = 0.4337808305. (exp(1000) without the max subtracted is inf: NaN.)
TEST(BenchStats, KlLargeLogitsByHand) {
  const float p[2] = {1000.f, 1000.f}, q[2] = {1000.f, 1002.f};
  EXPECT_NEAR(kvarena::kl_divergence_logits(p, q, 2), 0.43378083048302707, 1e-6);
}

// The span confidence-kl removes at position t (bench-confidence-kl.h), by hand.
TEST(BenchStats, ConfidenceKlAblatedSpan) {
  using kvarena::ckl_span;
  kvarena::bench_confidence_kl_config cfg;
  cfg.n_prompt = 16;
  cfg.ablate = 4;
  using span = std::optional<std::pair<int64_t, int64_t>>;
  // recent: [t - 4, t) once t - 4 >= 1.
  EXPECT_EQ(kvarena::confidence_kl_ablated_span(cfg, 4), span());
  EXPECT_EQ(kvarena::confidence_kl_ablated_span(cfg, 5), span({1, 5}));
  EXPECT_EQ(kvarena::confidence_kl_ablated_span(cfg, 20), span({16, 20}));
  // distant: d = max(1, 16 / 4) = 4, span [4, 8), sampled once 8 <= t - 4, i.e. t >= 12.
  cfg.span = ckl_span::distant;
  EXPECT_EQ(kvarena::confidence_kl_distant_start(cfg), 4);
  EXPECT_EQ(kvarena::confidence_kl_ablated_span(cfg, 11), span());
  EXPECT_EQ(kvarena::confidence_kl_ablated_span(cfg, 12), span({4, 8}));
  EXPECT_EQ(kvarena::confidence_kl_ablated_span(cfg, 300), span({4, 8}));
  // A 3-token prompt: 3 / 4 = 0, but the first token stays: d = 1; [1, 5) from t = 9.
  cfg.n_prompt = 3;
  EXPECT_EQ(kvarena::confidence_kl_distant_start(cfg), 1);
  EXPECT_EQ(kvarena::confidence_kl_ablated_span(cfg, 8), span());
  EXPECT_EQ(kvarena::confidence_kl_ablated_span(cfg, 9), span({1, 5}));

  EXPECT_EQ(kvarena::parse_ckl_span("distant"), ckl_span::distant);
  EXPECT_EQ(kvarena::parse_ckl_direction("ablated-full"), kvarena::ckl_direction::ablated_full);
  EXPECT_THROW(kvarena::parse_ckl_span("far"), kvarena::engine_error);
  EXPECT_THROW(kvarena::parse_ckl_direction("full-full"), kvarena::engine_error);
}

// NIAH codes: trial 0 is the code the single-needle bench hid (pinned: seed 0, length 1024,
// depth 0.5 was 65264; seed 7, 4096, 0.25 was 32451), and a cell's trials are distinct
// five-digit codes.
TEST(BenchStats, NiahCodesPerTrial) {
  EXPECT_EQ(kvarena::niah_code(0, 1024, 0.5), "65264");
  EXPECT_EQ(kvarena::niah_code(0, 1024, 0.5, 0), "65264");
  EXPECT_EQ(kvarena::niah_code(7, 4096, 0.25, 0), "32451");
  for (int64_t len : {96, 2048, 8192}) {
    for (double depth : {0.0, 0.5, 1.0}) {
      std::set<std::string> seen;
      for (int64_t trial = 0; trial < 20; ++trial) {
        const std::string c = kvarena::niah_code(3, len, depth, trial);
        EXPECT_EQ(c.size(), 5u) << c;
        EXPECT_NE(c[0], '0') << c;
        EXPECT_TRUE(seen.insert(c).second) << "trial " << trial << " repeats " << c;
        EXPECT_EQ(kvarena::niah_code(3, len, depth, trial), c);  // deterministic
      }
    }
  }
  // Seed 17397, length 96, depth 0 (found by a search over seeds): the first two draws are
  // both 99619, so trial 1 draws again and hides the third draw, 58805.
  EXPECT_EQ(kvarena::niah_code(17397, 96, 0.0, 0), "99619");
  EXPECT_EQ(kvarena::niah_code(17397, 96, 0.0, 1), "58805");
  EXPECT_THROW(kvarena::niah_code(0, 1024, 0.5, -1), kvarena::engine_error);
}

}  // namespace
