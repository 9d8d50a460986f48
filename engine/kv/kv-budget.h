// kv-budget.h: comparisons at equal memory. `--kv-budget 512t` gives every policy 512
// tokens per layer and KV head at its loosest (the registry's spend_budget says how each
// spends them: window sinks + window, h2o heavy + recent, confkv n_low with n_high a
// quarter of it, confkv-l the same total as a pyramid, freekv device tokens + page
// digests); logical peaks (kv-logical-bytes.h) are then equal up to the policies' per-token
// state, and INT8 keeps the same tokens in fewer bytes. `--kv-budget 8MiB` gives every
// policy the most tokens whose logical peak, as kv_logical_peak_bound predicts it, fits in
// that many bytes (INT8 then keeps more tokens). A list sweeps (256t,512t,1024t).
// `full` takes no budget: it is the reference every row is compared with.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "kv-policy-registry.h"

namespace kvarena {

struct kv_budget {
  std::string text;    // as given: "512t", "8MiB"
  int64_t tokens = 0;  // > 0: tokens per layer and KV head
  size_t bytes = 0;    // > 0: logical bytes of the whole cache
};

// "512t" (tokens), "1048576" or "1048576b" (bytes), "64KiB", "8MiB", "1GiB" (also KB/MB/GB
// as powers of 1000). Throws engine_error naming the text and the forms.
kv_budget parse_kv_budget(const std::string& text);
std::vector<kv_budget> parse_kv_budgets(const std::string& list);  // comma-separated

// The most logical bytes the policy's cache can hold over a sequence of seq_len tokens:
// per layer min(seq_len, its budget at its loosest), with INT8 at most int8_window + 31
// tokens FP16 and the rest in full blocks, plus its per-token score and freekv's digests.
// o: resolved options with the shape filled in.
size_t kv_logical_peak_bound(const std::string& policy, const kv_policy_options& o, int64_t seq_len);

// p with its size options set from budget b for sequences of up to seq_len tokens (shape:
// n_layers, n_heads, n_kv_heads, head_dim; p resolved or not). `full` is returned as is.
// Throws engine_error when the budget is too small for the policy.
kv_policy_spec apply_kv_budget(const kv_policy_spec& p, const kv_budget& b, const kv_policy_options& shape,
                               int64_t seq_len);

}  // namespace kvarena
