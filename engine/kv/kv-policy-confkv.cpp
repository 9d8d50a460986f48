// kv-policy-confkv.cpp: CONF-KV (kvarena's definitions, specs/kv-policies.md). Each decode
// step's confidence c picks the budget: n_high (tight) when c >= tau, else n_low; prefill
// chunks run at n_low (the gate governs decode steps only). Over budget: keep the
// protected P newest, then the top by rank = ema + beta * recency, ema the moving average
// (decay 0.9 per token processed) of the attention mass per KV head (mean over the group),
// recency = pos / (seq_len - 1). Forward-only: evicted tokens never return. With int8 the W newest kept
// tokens stay FP16 and older ones go INT8 (the store freezes blocks of 32). confkv-l splits
// the step budget across layers as a pyramid (pyramid_budgets) with the same total.
#include <algorithm>
#include <cmath>
#include <cstdint>

#include "kv-policy-registry.h"
#include "splitmix64.h"

namespace kvarena {

namespace {
class kv_policy_confkv final : public kv_policy_topk {
 public:
  kv_policy_confkv(const kv_policy_options& o, bool pyramid)
      : tau_(o.tau), n_high_(o.n_high), n_low_(o.n_low), protect_(o.protect),
        decay_(o.ema_decay), beta_(o.beta), int8_(o.int8), int8_window_(o.int8_window),
        n_layers_(o.n_layers), pyramid_(pyramid), step_budget_(o.n_low),
        random_rank_(o.extra.at("random-rank") != 0), rank_seed_(uint64_t(o.extra.at("rank-seed"))) {
    if (pyramid_) {
      high_ = pyramid_budgets(n_high_, protect_, n_layers_);
      low_ = pyramid_budgets(n_low_, protect_, n_layers_);
    }
  }
  const char* name() const override { return pyramid_ ? "confkv-l" : "confkv"; }
  kv_policy_needs needs() const override {
    return {.attention_mass = true, .logits_confidence = true};
  }
  // A decode step's confidence picks the budget of the trim after it; a prefill chunk (a
  // prompt, a new observation) has no logits of its own and runs at the loose budget.
  void on_step(const step_signals& s) override {
    step_budget_ = s.decode && s.confidence >= tau_ ? n_high_ : n_low_;
  }
  float mass_decay() const override { return decay_; }
  int64_t step_budget() const { return step_budget_; }

 protected:
  // The EMA advances once per token processed: a chunk of R rows decays the old score R
  // times, and the kernel weighed row i's mass decay^(R-1-i) (mass_decay()), so the score is
  // what R one-token steps give: the chunking does not change it.
  void update_scores(int64_t, const kv_layer_meta& meta) override {
    const float w = (1.f - decay_) / float(meta.group);
    const float old = std::pow(decay_, float(meta.rows));
    for (const kv_head_meta& h : meta.heads)
      if (h.mass)
        for (int64_t i = 0; i < h.n; ++i) h.score[i] = old * h.score[i] + w * h.mass[i];
  }
  float rank(const kv_layer_meta& meta, const kv_head_meta& h, int64_t i) const override {
    if (random_rank_) return random_priority(meta.layer, &h - meta.heads.data(), h.pos[i]);
    const float recency = float(h.pos[i]) / float(std::max<int64_t>(1, meta.seq_len - 1));
    return h.score[i] + beta_ * recency;
  }
  int64_t recent(int64_t, int64_t) const override { return protect_; }
  int64_t budget_for(int64_t layer, int64_t) const override {
    if (!pyramid_) return step_budget_;
    return (step_budget_ == n_high_ ? high_ : low_)[size_t(layer)];
  }
  int64_t fp16_window() const override { return int8_ ? int8_window_ : -1; }

 private:
  float tau_;
  int64_t n_high_, n_low_, protect_;
  float decay_, beta_;
  bool int8_;
  int64_t int8_window_, n_layers_;
  bool pyramid_;
  int64_t step_budget_;
  std::vector<int64_t> high_, low_;  // (n_layers,) pyramid budgets for n_high / n_low
  // The paper's ablation (random-rank=1): the same steps, budgets and protected window, but
  // the tokens kept beyond it are drawn at random: each token gets a fixed priority in
  // [0,1) from (seed, layer, KV head, position), so every trim keeps a uniformly random
  // subset of the candidates and an evicted token never returns.
  bool random_rank_;
  uint64_t rank_seed_;
  float random_priority(int64_t layer, int64_t head, int32_t pos) const {
    const uint64_t x =
        splitmix64(rank_seed_ ^ (uint64_t(layer) << 48) ^ (uint64_t(head) << 32) ^ uint64_t(uint32_t(pos)));
    return float(x >> 40) / float(1ull << 24);
  }
};

// confkv and confkv-l: the same options and rules; confkv-l splits the budget as a pyramid.
kv_policy_desc describe_confkv_family(bool pyramid) {
  kv_policy_desc d;
  d.summary = pyramid ? "confkv with the step budget split across layers as a pyramid (PyramidKV)"
                      : "a tight budget (n-high) on confident steps, a loose one (n-low) otherwise";
  d.options = {
      real_option("tau", &kv_policy_options::tau, "confidence threshold")
          .in(0, 1)
          .automatic_default([](const kv_policy_options&) { return 0.6f; }),
      int_option("n-high", &kv_policy_options::n_high, "budget when confident (tokens per layer)"),
      int_option("n-low", &kv_policy_options::n_low, "budget when unsure (tokens per layer)"),
      int_option("protect", &kv_policy_options::protect, "protected recent tokens").at_least(0, "tokens"),
      real_option("ema-decay", &kv_policy_options::ema_decay, "decay of the attention-mass EMA").in(0, 1, true),
      real_option("beta", &kv_policy_options::beta, "weight of recency in the rank").at_least(0),
      flag_option("kv-int8", &kv_policy_options::int8, "older tokens in INT8, the --int8-window newest FP16"),
      int_option("int8-window", &kv_policy_options::int8_window, "newest tokens kept FP16 with --kv-int8")
          .at_least(0, "tokens")
          .needs("kv-int8"),
      // Reported (options JSON, a run's config) only when on: a plain confkv run's config
      // stays what it was, so its results still resume and compare.
      extra_option("random-rank", kv_option_type::flag, 0,
                   "the paper's ablation: evict at the same steps and budgets, tokens picked at random")
          .needs("random-rank"),
      extra_option("rank-seed", kv_option_type::integer, 1, "seed of random-rank's draw")
          .at_least(0)
          .needs("random-rank"),
  };
  d.int8 = true;
  d.confidence_option = "tau";
  d.check = [](const std::string& name, const kv_policy_options& o) {
    if (o.n_high > o.n_low)
      kv_policy_error(name, "n_high (" + kv_num(double(o.n_high)) + ") must be <= n_low (" + kv_num(double(o.n_low)) +
                                ")");
    if (o.n_high < o.protect)
      kv_policy_error(name, "budget n_high=" + kv_num(double(o.n_high)) + " is smaller than the protected window " +
                                "protect=" + kv_num(double(o.protect)));
    if (o.int8 && o.head_dim % kv_int8_block != 0)
      kv_policy_error(name, "--kv-int8 needs a head size that is a multiple of " + kv_num(double(kv_int8_block)) +
                                " (got head_dim=" + kv_num(double(o.head_dim)) + ")");
  };
  // The budget is the loose one (n_low: the peak); the tight one a quarter of it, the
  // ratio of the spec's defaults (256 / 1024), never under the protected window. confkv-l
  // spends the same total over its pyramid, so its mean over layers is the budget.
  d.spend_budget = [pyramid](kv_policy_options& o, int64_t tokens, int64_t) {
    const char* name = pyramid ? "confkv-l" : "confkv";
    if (tokens < 1) kv_policy_error(name, "a budget needs at least 1 token");
    o.protect = std::min(o.protect, tokens);
    o.n_low = tokens;
    o.n_high = std::max(tokens / 4, o.protect);
  };
  d.make = [pyramid](const kv_policy_options& o) { return std::make_unique<kv_policy_confkv>(o, pyramid); };
  return d;
}

}  // namespace

kv_policy_desc describe_confkv() { return describe_confkv_family(false); }
kv_policy_desc describe_confkv_l() { return describe_confkv_family(true); }

}  // namespace kvarena
