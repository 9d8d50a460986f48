// bench-memory.h: `kvarena bench memory`: KV memory over a long greedy generation under a
// policy: a prompt of seeded random token ids, then exactly n_gen decode steps (EOS is not
// a stop: decode_next in a loop). Peaks, the final size, kept tokens, the confidence each
// step saw, and a trace every trace_every steps (the "sawtooth" of confkv).
#pragma once
#include <cstdint>
#include <optional>
#include <vector>

#include "bench-common.h"

namespace kvarena {

class tokenizer;

struct bench_memory_config {
  int64_t n_prompt = 64;
  int64_t n_gen = 2048;
  int64_t trace_every = 16;
};

struct bench_memory_point {
  int64_t step = 0;       // decode steps so far
  int64_t seq_len = 0;    // tokens seen
  size_t kv_bytes = 0;    // device KV bytes after the step
  size_t kv_logical_bytes = 0;  // logical KV bytes after the step
  int64_t budget = -1;    // tokens per layer per KV head the policy allowed (-1: unbounded)
  float confidence = -1;  // of the logits that gated the step
};

struct bench_memory_result {
  size_t peak_kv_bytes = 0;
  size_t peak_kv_host_bytes = 0;
  size_t peak_kv_logical_bytes = 0;  // kv-logical-bytes.h: the most after any forward call
  size_t peak_process_bytes = 0;     // process_peak_bytes over this policy's run
  size_t final_kv_bytes = 0;
  int64_t kept_tokens_max = 0;             // over steps and layers
  double confidence_mean = 0;
  std::optional<double> confident_fraction;  // confkv: steps with c >= tau
  std::vector<bench_memory_point> trace;
};

bench_memory_result run_bench_memory(const model& m, const tokenizer& tok, const kv_policy_spec& policy,
                                     const bench_common& common, const bench_memory_config& cfg);

}  // namespace kvarena
