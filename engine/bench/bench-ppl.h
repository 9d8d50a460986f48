// bench-ppl.h: `kvarena bench ppl`: teacher-forced streaming perplexity of a text with a KV
// policy active. The first token is appended, then each next token is scored from the
// current logits (-log softmax[tok]) and appended as a decode step, so the policy evicts
// (and confkv gates on confidence) exactly as it would while generating. With
// `--kv-budget` (tokens "512t" or logical bytes "8MiB", kv/kv-budget.h) each policy's
// size options are spent from the budget; the result names the tokens it kept.
#pragma once
#include <cstdint>
#include <vector>

#include "bench-common.h"

namespace kvarena {

struct bench_ppl_result {
  double ppl = 0;               // exp(nll_mean)
  double nll_mean = 0;          // nats per scored token
  int64_t n_tokens = 0;         // scored tokens (all but the first)
  size_t peak_kv_bytes = 0;
  size_t peak_kv_host_bytes = 0;
  size_t peak_kv_logical_bytes = 0;  // kv-logical-bytes.h
  size_t peak_process_bytes = 0;     // process_peak_bytes over this policy's run
  int64_t kept_tokens_max = 0;       // most tokens kept per layer and KV head after any step (device tokens for freekv)
  int64_t kept_tokens_final = 0;     // the same after the last step (max over layers)
  double tok_s = 0;             // scored tokens per second (forward calls included)
};

// tokens: the text's ids (BOS first when the vocabulary adds one), at least 2.
bench_ppl_result run_bench_ppl(const model& m, const std::vector<int32_t>& tokens,
                               const kv_policy_spec& policy, const bench_common& common);

}  // namespace kvarena
