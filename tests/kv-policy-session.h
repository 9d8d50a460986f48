// kv-policy-session.h: the session every "EveryKvPolicyRuns" test runs per registered KV
// policy (test-qwen3, test-arch): a 64-token prompt in chunks of 16, then 32 teacher-forced
// decode steps, with budgets small enough that every policy evicts.
#pragma once
#include <string>
#include <vector>

#include "session.h"

namespace kvarena::test {

// The 32 teacher-forced decode tokens: prompt[i * 7 % 64] for i < 32 (prompt: (64,)).
inline std::vector<int32_t> kv_policy_forced_tokens(const std::vector<int32_t>& prompt) {
  std::vector<int32_t> forced;
  for (int i = 0; i < 32; ++i) forced.push_back(prompt[size_t(i * 7 % 64)]);
  return forced;
}

// Session options for `policy`: context 128, prefill chunks of 16, 2 threads; budgets below
// the 64-token prompt so that each policy evicts.
inline session_options kv_policy_session_options(const std::string& policy) {
  session_options o;
  o.n_threads = 2;
  o.prefill_chunk = 16;
  o.n_ctx = 128;
  o.kv_policy = policy;
  o.kv.window = 16;
  o.kv.sinks = 8;  // freekv: budget, sinks and window multiples of its page
  o.kv.heavy = 8;
  o.kv.recent = 8;
  o.kv.n_high = 16;
  o.kv.n_low = 32;
  o.kv.protect = 4;
  o.kv.int8_window = 8;
  o.kv.budget = 32;
  o.kv.page = 8;
  return o;
}

}  // namespace kvarena::test
