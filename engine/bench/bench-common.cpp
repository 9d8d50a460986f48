// bench-common.cpp: session options per policy, seeded prompts, statistics.
#include "bench-common.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstddef>

#include "engine-error.h"
#include "splitmix64.h"
#include "tokenizer.h"

namespace kvarena {

session_options bench_session_options(const kv_policy_spec& p, const bench_common& common, int64_t n_ctx,
                                      bool track_confidence) {
  session_options so;
  so.n_threads = common.threads;
  so.prefill_chunk = common.prefill_chunk;
  so.n_ctx = n_ctx;
  so.kv_policy = p.name;
  so.kv = p.options;
  so.kv_overlap = p.overlap;
  so.track_confidence = track_confidence;
  return so;
}

bool policy_uses_confidence(const kv_policy_spec& p) { return policy_confidence_threshold(p).has_value(); }

std::optional<float> policy_confidence_threshold(const kv_policy_spec& p) {
  const kv_policy_desc* d = find_kv_policy(p.name);
  if (!d || d->confidence_option.empty()) return std::nullopt;
  return float(d->option(d->confidence_option)->get(resolve_kv_spec(p)));
}

std::vector<int32_t> seeded_prompt_tokens(const tokenizer& tok, int64_t n_vocab, int64_t n, uint64_t seed) {
  if (n_vocab < 2) throw engine_error("benchmark prompt: the vocabulary has fewer than 2 tokens");
  splitmix64_stream rng{seed * k_splitmix64_gamma + 0xD1B54A32D192ED03ull};
  const int64_t V = std::min<int64_t>(n_vocab, tok.n_vocab());
  std::vector<int32_t> out;
  out.reserve(size_t(std::max<int64_t>(n, 0)));
  int64_t tries = 0;
  while (int64_t(out.size()) < n) {
    const int32_t id = int32_t(rng.next() % uint64_t(V));
    if (++tries > 1000 * (n + 10))
      throw engine_error("benchmark prompt: the vocabulary has (almost) only control tokens");
    if (tok.is_control(id) || id == tok.eos_id() || id == tok.bos_id()) continue;
    out.push_back(id);
  }
  return out;
}

double stat_mean(const std::vector<double>& v) {
  if (v.empty()) return 0.0;
  double s = 0;
  for (double x : v) s += x;
  return s / double(v.size());
}

double stat_percentile(std::vector<double> v, double q) {
  if (v.empty()) return 0.0;
  std::sort(v.begin(), v.end());
  const double pos = std::clamp(q, 0.0, 1.0) * double(v.size() - 1);
  const size_t i = size_t(pos);
  if (i + 1 >= v.size()) return v.back();
  const double f = pos - double(i);
  return v[i] * (1 - f) + v[i + 1] * f;
}

double stat_pearson(const std::vector<double>& x, const std::vector<double>& y) {
  const size_t n = std::min(x.size(), y.size());
  if (n < 2) return 0.0;
  double mx = 0, my = 0;
  for (size_t i = 0; i < n; ++i) mx += x[i], my += y[i];
  mx /= double(n), my /= double(n);
  double sxy = 0, sxx = 0, syy = 0;
  for (size_t i = 0; i < n; ++i) {
    const double dx = x[i] - mx, dy = y[i] - my;
    sxy += dx * dy, sxx += dx * dx, syy += dy * dy;
  }
  if (sxx <= 0 || syy <= 0) return 0.0;
  return sxy / std::sqrt(sxx * syy);
}

std::vector<double> stat_ranks(const std::vector<double>& v) {
  std::vector<size_t> order(v.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return v[a] < v[b]; });
  std::vector<double> rank(v.size());
  for (size_t i = 0; i < order.size();) {
    size_t j = i + 1;  // [i, j): one run of equal values, sorted positions i..j-1
    while (j < order.size() && v[order[j]] == v[order[i]]) ++j;
    const double avg = 0.5 * double(i + 1 + j);  // mean of the 1-based ranks i+1 .. j
    for (size_t k = i; k < j; ++k) rank[order[k]] = avg;
    i = j;
  }
  return rank;
}

double stat_spearman(const std::vector<double>& x, const std::vector<double>& y) {
  const size_t n = std::min(x.size(), y.size());
  if (n < 2) return 0.0;
  return stat_pearson(stat_ranks(std::vector<double>(x.begin(), x.begin() + ptrdiff_t(n))),
                      stat_ranks(std::vector<double>(y.begin(), y.begin() + ptrdiff_t(n))));
}

namespace {
// log sum exp of logits (n,) in double.
double log_sum_exp(const float* x, int64_t n) {
  double mx = -INFINITY;
  for (int64_t i = 0; i < n; ++i) mx = std::max(mx, double(x[i]));
  double s = 0;
  for (int64_t i = 0; i < n; ++i) s += std::exp(double(x[i]) - mx);
  return mx + std::log(s);
}
}  // namespace

double log_softmax_at(const float* logits, int64_t n_vocab, int32_t id) {
  KV_ASSERT(id >= 0 && id < n_vocab);
  return double(logits[id]) - log_sum_exp(logits, n_vocab);
}

double kl_divergence_logits(const float* p_logits, const float* q_logits, int64_t n_vocab) {
  const double lp = log_sum_exp(p_logits, n_vocab), lq = log_sum_exp(q_logits, n_vocab);
  double kl = 0;
  for (int64_t i = 0; i < n_vocab; ++i) {
    const double a = double(p_logits[i]) - lp, b = double(q_logits[i]) - lq;
    kl += std::exp(a) * (a - b);
  }
  return std::max(kl, 0.0);
}

double bench_now_ms() {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace kvarena
