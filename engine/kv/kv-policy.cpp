// kv-policy.cpp: the top-k base every eviction policy shares, the pyramid budgets, and the
// needs check. make_kv_policy and the option checks: kv-policy-registry.cpp.
#include "kv-policy.h"

#include <algorithm>
#include <cmath>
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

}  // namespace kvarena
