// kv-policy.cpp: the top-k base every eviction policy shares, the pyramid budgets, and
// make_kv_policy with its option checks (errors a user can cause: they name the option,
// the value and the valid range).
#include "kv-policy.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>

#include "engine-error.h"

namespace kvarena {

keep_decision kv_policy_topk::select(int64_t layer, const kv_layer_meta& meta) {
  update_scores(layer, meta);
  keep_decision d;
  d.fp16_window = fp16_window();
  const int64_t B = budget_for(layer, meta.seq_len);
  bool over = false;
  for (const kv_head_meta& h : meta.heads) over |= B >= 0 && h.n > B;
  if (!over) return d;
  d.keep_all = false;
  d.keep.resize(meta.heads.size());
  const int64_t S = sinks(layer), R = recent(layer, meta.seq_len);
  for (size_t g = 0; g < meta.heads.size(); ++g) {
    const kv_head_meta& h = meta.heads[g];
    std::vector<int32_t>& out = d.keep[g];
    if (h.n <= B) {
      out.resize(size_t(h.n));
      std::iota(out.begin(), out.end(), 0);
      continue;
    }
    std::vector<char>& kept = kept_;
    kept.assign(size_t(h.n), 0);
    int64_t count = 0;
    for (int64_t i = std::max<int64_t>(0, h.n - R); i < h.n && count < B; ++i) kept[i] = 1, ++count;
    for (int64_t i = 0; i < h.n && h.pos[i] < S && count < B; ++i)
      if (!kept[i]) kept[i] = 1, ++count;
    // Candidates for the remaining budget with their rank, computed once each; the best
    // `take` of them (ties: the newer wins, so the order is total and the choice unique).
    std::vector<std::pair<float, int32_t>>& rest = rest_;
    rest.clear();
    for (int64_t i = 0; i < h.n; ++i)
      if (!kept[i]) rest.push_back({rank(meta, h, i), int32_t(i)});
    const int64_t take = std::min<int64_t>(B - count, int64_t(rest.size()));
    std::nth_element(rest.begin(), rest.begin() + take, rest.end(), [](const auto& a, const auto& b) {
      return a.first != b.first ? a.first > b.first : a.second > b.second;
    });
    for (int64_t j = 0; j < take; ++j) kept[rest[j].second] = 1;
    for (int64_t i = 0; i < h.n; ++i)
      if (kept[i]) out.push_back(int32_t(i));
  }
  return d;
}

std::vector<int64_t> pyramid_budgets(int64_t budget, int64_t protect, int64_t n_layers) {
  KV_ASSERT(n_layers > 0 && budget >= protect && protect >= 0);
  if (n_layers == 1) return {budget};
  const double span = double(budget - protect);
  const double mn = span / 20, mx = 2 * span - mn;
  std::vector<int64_t> b(static_cast<size_t>(n_layers));
  int64_t sum = 0;
  for (int64_t l = 0; l < n_layers; ++l) {
    b[l] = protect + int64_t(std::floor(mx - (mx - mn) * double(l) / double(n_layers - 1)));
    sum += b[l];
  }
  // Flooring lost less than one token per layer; give it back to the first layers so the
  // total is exact and the shape stays non-increasing.
  for (int64_t l = 0; sum < n_layers * budget; ++l, ++sum) b[l] += 1;
  return b;
}

namespace {
[[noreturn]] void bad(const std::string& policy, const std::string& what) {
  throw engine_error("kv policy '" + policy + "': " + what);
}
std::string num(double x) {
  char s[32];
  std::snprintf(s, sizeof s, "%g", x);
  return s;
}
}  // namespace

void check_kv_policy_needs(const kv_policy& policy, const kv_policy_needs& provided) {
  const kv_policy_needs n = policy.needs();
  std::string missing;
  auto need = [&](bool wanted, bool have, const char* what) {
    if (wanted && !have) missing += std::string(missing.empty() ? "" : ", ") + what;
  };
  need(n.attention_mass, provided.attention_mass, "attention mass");
  need(n.queries, provided.queries, "queries");
  need(n.host_offload, provided.host_offload, "host offload");
  need(n.logits_confidence, provided.logits_confidence, "logits confidence");
  if (!missing.empty())
    throw engine_error(std::string("kv policy '") + policy.name() + "' needs " + missing +
                       ", which this engine/backend does not provide (choose another policy or backend)");
}

std::unique_ptr<kv_policy> make_kv_policy(const std::string& name, const kv_policy_options& o) {
  static const char* valid = "full, window, h2o, confkv, confkv-l, freekv";
  const bool known = name == "full" || name == "window" || name == "h2o" || name == "confkv" ||
                     name == "confkv-l" || name == "freekv";
  if (!known) throw engine_error("unknown policy '" + name + "' (valid: " + valid + ")");
  if (o.n_layers <= 0 || o.n_heads <= 0 || o.n_kv_heads <= 0 || o.head_dim <= 0 ||
      o.n_heads % o.n_kv_heads != 0)
    bad(name, "model shape missing or inconsistent (n_layers, n_heads, n_kv_heads, head_dim must be > 0, "
              "n_heads a multiple of n_kv_heads)");
  if (name == "full") return make_kv_policy_full(o);
  if (name == "window") {
    if (o.window < 1) bad(name, "window must be >= 1 token (got " + num(o.window) + ")");
    if (o.sinks < -1) bad(name, "sinks must be >= 0 tokens (got " + num(o.sinks) + ")");
    return make_kv_policy_window(o);
  }
  if (name == "h2o") {
    if (o.heavy < 0 || o.recent < 0)
      bad(name, "heavy and recent must be >= 0 tokens, 0 = 10% of the sequence (got heavy=" +
                    num(o.heavy) + ", recent=" + num(o.recent) + ")");
    if ((o.heavy == 0) != (o.recent == 0))
      bad(name, "give both heavy and recent in tokens, or neither (10% each)");
    return make_kv_policy_h2o(o);
  }
  if (name == "confkv" || name == "confkv-l") {
    const float tau = o.tau == -2.f ? 0.6f : o.tau;
    if (!(tau >= 0.f && tau <= 1.f)) bad(name, "tau must be in [0,1] (got " + num(tau) + ")");
    if (o.protect < 0) bad(name, "protect must be >= 0 tokens (got " + num(o.protect) + ")");
    if (o.n_high > o.n_low)
      bad(name, "n_high (" + num(o.n_high) + ") must be <= n_low (" + num(o.n_low) + ")");
    if (o.n_high < o.protect)
      bad(name, "budget n_high=" + num(o.n_high) + " is smaller than the protected window " +
                    "protect=" + num(o.protect));
    if (!(o.ema_decay >= 0.f && o.ema_decay < 1.f))
      bad(name, "ema_decay must be in [0,1) (got " + num(o.ema_decay) + ")");
    if (!(o.beta >= 0.f)) bad(name, "beta must be >= 0 (got " + num(o.beta) + ")");
    if (o.int8 && o.head_dim % kv_int8_block != 0)
      bad(name, "--kv-int8 needs a head size that is a multiple of " + num(kv_int8_block) +
                    " (got head_dim=" + num(o.head_dim) + ")");
    if (o.int8 && o.int8_window < 0)
      bad(name, "int8_window must be >= 0 tokens (got " + num(o.int8_window) + ")");
    return make_kv_policy_confkv(o, name == "confkv-l");
  }
  // freekv
  const float tau = o.tau == -2.f ? 0.9f : o.tau;
  if (!(tau >= -1.f && tau <= 1.f)) bad(name, "tau must be in [-1,1] (got " + num(tau) + ")");
  if (o.page < 1) bad(name, "page must be >= 1 token (got " + num(o.page) + ")");
  const int64_t S = o.sinks < 0 ? 512 : o.sinks;
  if (S % o.page || o.window % o.page || o.budget % o.page || o.window < 0)
    bad(name, "budget, sinks and window must be multiples of the page (" + num(o.page) +
                  " tokens) (got budget=" + num(o.budget) + ", sinks=" + num(S) +
                  ", window=" + num(o.window) + ")");
  if (o.budget < S + o.window + o.page)
    bad(name, "budget " + num(o.budget) + " is smaller than sinks + window + one page of new tokens (" +
                  num(S) + " + " + num(o.window) + " + " + num(o.page) + ")");
  return make_kv_policy_freekv(o);
}

}  // namespace kvarena
