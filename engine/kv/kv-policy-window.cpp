// kv-policy-window.cpp: sliding window with optional attention sinks (StreamingLLM): the
// first `sinks` tokens (default 0) and the last `window` (default 512), the same tokens in
// every layer and head. Evicts as soon as the cache is over sinks + window, prefill chunks
// included. Needs no signals: the base's top-k never has a free slot to rank.
#include "kv-policy-registry.h"

namespace kvarena {

namespace {
class kv_policy_window final : public kv_policy_topk {
 public:
  explicit kv_policy_window(const kv_policy_options& o)
      : window_(o.window), sinks_(o.sinks) {}
  const char* name() const override { return "window"; }
  kv_policy_needs needs() const override { return {}; }

 protected:
  int64_t sinks(int64_t) const override { return sinks_; }
  int64_t recent(int64_t, int64_t) const override { return window_; }
  int64_t budget_for(int64_t, int64_t) const override { return sinks_ + window_; }

 private:
  int64_t window_, sinks_;
};
}  // namespace

kv_policy_desc describe_window() {
  kv_policy_desc d;
  d.summary = "the first `sinks` tokens and the last `window` (StreamingLLM)";
  d.options = {
      int_option("window", &kv_policy_options::window, "recent tokens kept").at_least(1, "tokens"),
      int_option("sinks", &kv_policy_options::sinks, "attention-sink tokens kept")
          .at_least(0, "tokens")
          .automatic_default([](const kv_policy_options&) { return 0.0; }),
  };
  d.spend_budget = [](kv_policy_options& o, int64_t tokens, int64_t) {
    if (tokens <= o.sinks)
      kv_policy_error("window", "a budget of " + kv_num(double(tokens)) + " tokens leaves no window after " +
                                    kv_num(double(o.sinks)) + " sinks");
    o.window = tokens - o.sinks;  // sinks + window
  };
  d.make = [](const kv_policy_options& o) { return std::make_unique<kv_policy_window>(o); };
  return d;
}

}  // namespace kvarena
