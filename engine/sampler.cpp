// sampler.cpp: see sampler.h.
#include "sampler.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "engine-error.h"

namespace kvarena {

int32_t argmax(const float* x, int64_t n) {
  KV_ASSERT(n >= 1);
  int64_t best = 0;
  for (int64_t i = 1; i < n; ++i) {
    if (x[i] > x[best]) best = i;
  }
  return int32_t(best);
}

sampler::sampler(const sampler_options& opt) : opt_(opt), rng_(opt.seed) {
  if (!std::isfinite(opt.temperature) || opt.temperature < 0.0f) {
    throw engine_error("sampler: temperature must be >= 0 (0 = greedy), got " +
                       std::to_string(opt.temperature));
  }
  if (!(opt.top_p > 0.0f && opt.top_p <= 1.0f)) {
    throw engine_error("sampler: top_p must be in (0, 1], got " + std::to_string(opt.top_p));
  }
  if (opt.top_k < 0) {
    throw engine_error("sampler: top_k must be >= 0 (0 = off), got " + std::to_string(opt.top_k));
  }
}

double sampler::uniform() { return double(rng_() >> 11) * 0x1.0p-53; }

namespace {
// Most likely first; equal probabilities by id, so the order never depends on the sort.
bool more_likely(const token_prob& a, const token_prob& b) {
  return a.p > b.p || (a.p == b.p && a.id < b.id);
}
}  // namespace

const std::vector<token_prob>& sampler::candidates(const float* logits, int64_t n_vocab) {
  KV_ASSERT(n_vocab >= 1);
  const float t = opt_.temperature > 0.0f ? opt_.temperature : 1.0f;
  float mx = logits[0];
  for (int64_t i = 1; i < n_vocab; ++i) mx = std::max(mx, logits[i]);
  cand_.resize(size_t(n_vocab));
  double sum = 0.0;
  for (int64_t i = 0; i < n_vocab; ++i) {
    const float p = std::exp((logits[i] - mx) / t);
    cand_[size_t(i)] = {int32_t(i), p};
    sum += p;
  }

  if (opt_.top_k > 0 && opt_.top_k < n_vocab) {
    std::nth_element(cand_.begin(), cand_.begin() + (opt_.top_k - 1), cand_.end(), more_likely);
    cand_.resize(size_t(opt_.top_k));
    sum = 0.0;
    for (const auto& c : cand_) sum += c.p;
  }

  if (opt_.top_p < 1.0f && cand_.size() > 1) {
    // Usually every token of the nucleus has p >= (1 - top_p) / (n - 1) of the mass (the
    // tokens below that bound add up to less than 1 - top_p), so sort only those first;
    // when they do not reach top_p (tiny n or top_p), sort everything.
    const double cutoff = (1.0 - double(opt_.top_p)) / double(cand_.size() - 1) * sum;
    const double target = double(opt_.top_p) * sum;
    auto end = std::partition(cand_.begin(), cand_.end(),
                              [&](const token_prob& c) { return c.p >= cutoff; });
    for (int attempt = 0; attempt < 2; ++attempt) {
      std::sort(cand_.begin(), end, more_likely);
      double cum = 0.0;
      size_t keep = 0;
      while (keep < size_t(end - cand_.begin()) && cum < target) cum += cand_[keep++].p;
      if (cum >= target || end == cand_.end()) {
        cand_.resize(std::max<size_t>(keep, 1));
        sum = 0.0;
        for (const auto& c : cand_) sum += c.p;
        break;
      }
      end = cand_.end();
    }
  } else {
    std::sort(cand_.begin(), cand_.end(), more_likely);
  }

  for (auto& c : cand_) c.p = float(c.p / sum);
  return cand_;
}

int32_t sampler::sample(const float* logits, int64_t n_vocab) {
  if (greedy()) return argmax(logits, n_vocab);
  if (opt_.top_k == 0 && opt_.top_p >= 1.0f) {
    // Plain temperature: draw over the unsorted distribution (no sort per token).
    float mx = logits[0];
    for (int64_t i = 1; i < n_vocab; ++i) mx = std::max(mx, logits[i]);
    double sum = 0.0;
    for (int64_t i = 0; i < n_vocab; ++i) sum += std::exp((logits[i] - mx) / opt_.temperature);
    const double u = uniform() * sum;
    double cum = 0.0;
    for (int64_t i = 0; i < n_vocab; ++i) {
      cum += std::exp((logits[i] - mx) / opt_.temperature);
      if (u < cum) return int32_t(i);
    }
    return argmax(logits, n_vocab);  // u landed in the rounding slack at the end
  }
  const auto& cand = candidates(logits, n_vocab);
  const double u = uniform();
  double cum = 0.0;
  for (const auto& c : cand) {
    cum += c.p;
    if (u < cum) return c.id;
  }
  return cand.front().id;  // u landed in the rounding slack at the end
}

}  // namespace kvarena
