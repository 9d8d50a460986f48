// test-sampler.cpp: the sampler: greedy is argmax, temperature 0 is greedy, top-k and top-p
// keep the right sets (top-p: the smallest most-likely set with mass >= p), the same seed
// gives the same tokens, and many draws follow the intended distribution.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "engine-error.h"
#include "sampler.h"

namespace kvarena {
namespace {

std::vector<float> logits_of(const std::vector<double>& probs) {
  std::vector<float> l;
  for (double p : probs) l.push_back(float(std::log(p)));
  return l;
}

std::vector<int32_t> ids_of(const std::vector<token_prob>& c) {
  std::vector<int32_t> ids;
  for (const auto& t : c) ids.push_back(t.id);
  return ids;
}

TEST(Sampler, GreedyIsArgmax) {
  std::mt19937 rng(1);
  std::normal_distribution<float> nd(0.0f, 3.0f);
  sampler s;  // default: greedy
  for (int trial = 0; trial < 50; ++trial) {
    std::vector<float> l(1000);
    for (auto& x : l) x = nd(rng);
    int32_t best = 0;
    for (int32_t i = 1; i < 1000; ++i) {
      if (l[size_t(i)] > l[size_t(best)]) best = i;
    }
    EXPECT_EQ(s.sample(l.data(), 1000), best);
  }
  const std::vector<float> ties = {1.0f, 3.0f, 3.0f, 2.0f};
  EXPECT_EQ(argmax(ties.data(), 4), 1);  // first of equal maxima
}

TEST(Sampler, TemperatureZeroIsGreedyWhateverTheOtherOptions) {
  const auto l = logits_of({0.1, 0.2, 0.4, 0.3});
  for (uint64_t seed : {0ull, 1ull, 99ull}) {
    sampler s({0.0f, 0.5f, 2, seed});
    for (int i = 0; i < 20; ++i) EXPECT_EQ(s.sample(l.data(), 4), 2);
  }
}

TEST(Sampler, SameSeedSameTokens) {
  std::mt19937 rng(5);
  std::normal_distribution<float> nd(0.0f, 1.0f);
  std::vector<float> l(500);
  for (auto& x : l) x = nd(rng);
  for (const sampler_options& o : {sampler_options{0.8f, 1.0f, 0, 7}, sampler_options{1.0f, 0.9f, 0, 7},
                                   sampler_options{1.2f, 0.95f, 40, 7}}) {
    sampler a(o), b(o);
    sampler_options other = o;
    other.seed = 8;
    sampler c(other);
    std::vector<int32_t> ta, tb, tc;
    for (int i = 0; i < 200; ++i) {
      ta.push_back(a.sample(l.data(), 500));
      tb.push_back(b.sample(l.data(), 500));
      tc.push_back(c.sample(l.data(), 500));
    }
    EXPECT_EQ(ta, tb);
    EXPECT_NE(ta, tc);
  }
}

TEST(Sampler, TopPKeepsSmallestSetReachingP) {
  // Probabilities 0.4 0.25 0.15 0.1 0.06 0.04, shuffled over the ids.
  const auto l = logits_of({0.06, 0.4, 0.1, 0.25, 0.04, 0.15});
  struct want {
    float top_p;
    std::vector<int32_t> ids;
  };
  for (const auto& w : {want{0.3f, {1}}, want{0.39f, {1}}, want{0.6f, {1, 3}}, want{0.66f, {1, 3, 5}},
                        want{0.85f, {1, 3, 5, 2}}, want{0.91f, {1, 3, 5, 2, 0}}, want{1.0f, {1, 3, 5, 2, 0, 4}}}) {
    sampler s({1.0f, w.top_p, 0, 1});
    const auto& c = s.candidates(l.data(), 6);
    EXPECT_EQ(ids_of(c), w.ids) << "top_p " << w.top_p;
    double sum = 0;
    for (const auto& t : c) sum += t.p;
    EXPECT_NEAR(sum, 1.0, 1e-6);
  }
  // Renormalised: with top_p 0.6 the two kept tokens have 0.4/0.65 and 0.25/0.65.
  sampler s({1.0f, 0.6f, 0, 1});
  const auto& c = s.candidates(l.data(), 6);
  ASSERT_EQ(c.size(), 2u);
  EXPECT_NEAR(c[0].p, 0.4 / 0.65, 1e-6);
  EXPECT_NEAR(c[1].p, 0.25 / 0.65, 1e-6);
}

TEST(Sampler, TopPWithTinyP) {
  // p so small that the "only sort the likely ones" shortcut finds nothing: still the top token.
  const auto l = logits_of({0.55, 0.45});
  sampler s({1.0f, 0.01f, 0, 1});
  EXPECT_EQ(ids_of(s.candidates(l.data(), 2)), std::vector<int32_t>({0}));
  for (int i = 0; i < 20; ++i) EXPECT_EQ(s.sample(l.data(), 2), 0);
}

TEST(Sampler, TopKKeepsKMostLikely) {
  const auto l = logits_of({0.06, 0.4, 0.1, 0.25, 0.04, 0.15});
  sampler s({1.0f, 1.0f, 3, 1});
  EXPECT_EQ(ids_of(s.candidates(l.data(), 6)), std::vector<int32_t>({1, 3, 5}));
  sampler both({1.0f, 0.6f, 3, 1});  // top-k first, then top-p over the renormalised three
  EXPECT_EQ(ids_of(both.candidates(l.data(), 6)), std::vector<int32_t>({1, 3}));
}

// Draw n times and compare the frequencies with `want` (per id): |f - p| <= 5 sigma.
void check_distribution(sampler& s, const std::vector<float>& l, const std::vector<double>& want) {
  const int n = 200000;
  std::vector<int> count(l.size());
  for (int i = 0; i < n; ++i) count[size_t(s.sample(l.data(), int64_t(l.size())))]++;
  for (size_t i = 0; i < l.size(); ++i) {
    const double f = double(count[i]) / n;
    const double sigma = std::sqrt(std::max(want[i] * (1 - want[i]), 1e-12) / n);
    EXPECT_NEAR(f, want[i], 5 * sigma + 1e-9) << "token " << i;
  }
}

TEST(Sampler, DrawsFollowTheDistribution) {
  const std::vector<double> p = {0.5, 0.3, 0.15, 0.05};
  const auto l = logits_of(p);
  {
    sampler s({1.0f, 1.0f, 0, 123});
    check_distribution(s, l, p);
  }
  {
    // Temperature 2: probabilities proportional to p^(1/2).
    std::vector<double> q;
    double z = 0;
    for (double x : p) z += std::sqrt(x);
    for (double x : p) q.push_back(std::sqrt(x) / z);
    sampler s({2.0f, 1.0f, 0, 321});
    check_distribution(s, l, q);
  }
  {
    // Top-p 0.75: only the first two, renormalised.
    sampler s({1.0f, 0.75f, 0, 5});
    check_distribution(s, l, {0.5 / 0.8, 0.3 / 0.8, 0.0, 0.0});
  }
}

TEST(Sampler, BadOptionsThrow) {
  EXPECT_THROW(sampler({-1.0f, 1.0f, 0, 0}), engine_error);
  EXPECT_THROW(sampler({1.0f, 0.0f, 0, 0}), engine_error);
  EXPECT_THROW(sampler({1.0f, 1.5f, 0, 0}), engine_error);
  EXPECT_THROW(sampler({1.0f, 1.0f, -2, 0}), engine_error);
  try {
    sampler({1.0f, 1.5f, 0, 0});
  } catch (const engine_error& e) {
    EXPECT_NE(std::string(e.what()).find("top_p"), std::string::npos);
  }
}

}  // namespace
}  // namespace kvarena
