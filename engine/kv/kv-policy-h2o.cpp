// kv-policy-h2o.cpp: Heavy-Hitter Oracle. A token's score is the attention probability it
// has received since it entered the cache, per KV head (mean over the group's query heads).
// When over budget: keep the `recent` newest plus the `heavy` highest-scored of the rest.
// Sizes in tokens, or (both 0) 10% of the sequence seen so far each, at least 1.
#include <algorithm>

#include "kv-policy-registry.h"

namespace kvarena {

namespace {
class kv_policy_h2o final : public kv_policy_topk {
 public:
  explicit kv_policy_h2o(const kv_policy_options& o) : heavy_(o.heavy), recent_(o.recent) {}
  const char* name() const override { return "h2o"; }
  kv_policy_needs needs() const override { return {.attention_mass = true}; }

 protected:
  void update_scores(int64_t, const kv_layer_meta& meta) override {
    const float inv = 1.f / float(meta.group);
    for (const kv_head_meta& h : meta.heads)
      if (h.mass)
        for (int64_t i = 0; i < h.n; ++i) h.score[i] += h.mass[i] * inv;
  }
  int64_t tenth(int64_t seq_len) const { return std::max<int64_t>(1, seq_len / 10); }
  int64_t recent(int64_t, int64_t seq_len) const override {
    return recent_ > 0 ? recent_ : tenth(seq_len);
  }
  int64_t budget_for(int64_t, int64_t seq_len) const override {
    return heavy_ > 0 ? heavy_ + recent_ : 2 * tenth(seq_len);
  }

 private:
  int64_t heavy_, recent_;
};
}  // namespace

kv_policy_desc describe_h2o() {
  kv_policy_desc d;
  d.summary = "the recent tokens plus the heavy hitters (most attention received)";
  d.options = {
      int_option("heavy", &kv_policy_options::heavy, "heavy-hitter tokens, 0 with --recent 0: 10% of the sequence")
          .at_least(0, "tokens"),
      int_option("recent", &kv_policy_options::recent, "recent tokens, 0 with --heavy 0: 10% of the sequence")
          .at_least(0, "tokens"),
  };
  // One message for both sizes (before the ranges): they are given together.
  d.check = [](const std::string& name, const kv_policy_options& o) {
    if (o.heavy < 0 || o.recent < 0)
      kv_policy_error(name, "heavy and recent must be >= 0 tokens, 0 = 10% of the sequence (got heavy=" +
                                kv_num(double(o.heavy)) + ", recent=" + kv_num(double(o.recent)) + ")");
    if ((o.heavy == 0) != (o.recent == 0))
      kv_policy_error(name, "give both heavy and recent in tokens, or neither (10% each)");
  };
  // Without sizes it keeps 10% of the sequence as heavy hitters and 10% as recent.
  d.report = [](const kv_policy_options& o) -> std::vector<std::pair<std::string, double>> {
    if (o.heavy == 0 && o.recent == 0) return {{"heavy_recent_fraction", 0.1}};
    return {};
  };
  d.spend_budget = [](kv_policy_options& o, int64_t tokens, int64_t) {  // the reference's even split
    if (tokens < 2) kv_policy_error("h2o", "a budget needs at least 2 tokens (1 heavy + 1 recent)");
    o.heavy = tokens / 2;
    o.recent = tokens - o.heavy;
  };
  d.make = [](const kv_policy_options& o) { return std::make_unique<kv_policy_h2o>(o); };
  return d;
}

}  // namespace kvarena
