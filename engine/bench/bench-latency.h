// bench-latency.h: `kvarena bench latency`: decode step latency per policy at several
// context lengths. For each context, every policy gets its own session prefilled with the
// same seeded random tokens; decode steps are then interleaved round robin across the
// policies (A, B, C, A, B, C, ...) so that the ratios between policies are measured side by
// side under the same machine noise.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "bench-common.h"

namespace kvarena {

class tokenizer;

struct bench_latency_config {
  std::vector<int64_t> contexts = {1024, 8192};
  int64_t steps = 32;  // decode steps per policy per context
};

struct bench_latency_result {
  size_t policy = 0;     // index into the policies given
  int64_t context = 0;
  double step_ms_median = 0, step_ms_p10 = 0, step_ms_p90 = 0;
  double prefill_ms = 0;
  size_t peak_kv_bytes = 0;
  size_t kv_device_bytes = 0;  // after the last step
  size_t kv_host_bytes = 0;
  double recalled_bytes_per_step_mean = 0;
  double correction_rate = 0;  // freekv: corrected / checked (layer, KV head) selections
};

// One result per (context, policy), contexts outer, in the order given.
std::vector<bench_latency_result> run_bench_latency(const model& m, const tokenizer& tok,
                                                    const std::vector<kv_policy_spec>& policies,
                                                    const bench_common& common, const bench_latency_config& cfg);

}  // namespace kvarena
