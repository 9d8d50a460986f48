// kv-policy-full.cpp: keeps everything. The reference: with `full` a session's logits must
// equal a plain forward pass over the whole sequence. Needs no signals.
#include "kv-policy-registry.h"

namespace kvarena {

namespace {
class kv_policy_full final : public kv_policy {
 public:
  const char* name() const override { return "full"; }
  kv_policy_needs needs() const override { return {}; }
  int64_t budget(int64_t, int64_t) const override { return -1; }
  keep_decision select(int64_t, const kv_layer_meta&) override { return {}; }
};
}  // namespace

kv_policy_desc describe_full() {
  kv_policy_desc d;
  d.summary = "keeps every token (the reference)";
  d.make = [](const kv_policy_options&) { return std::make_unique<kv_policy_full>(); };
  return d;
}

}  // namespace kvarena
