// report-stats.h: the statistics `kvarena report` gives per policy beside its point figures:
// the Wilson score interval of a success rate; percentile-bootstrap intervals, over tasks,
// of the ratios to full (success retained, median logical KV peak); per-template success
// means (CONF-KV's and WebArena-Verified's practice: a template with many instances does not
// outweigh the others). Plain functions over one policy's item outcomes.
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace kvarena::results {

// One task row as the statistics see it.
struct item_outcome {
  std::string task;
  int64_t seed = 0;
  bool success = false;
  bool ended = false;         // done or timeout: its memory counts (error rows only fail)
  double logical_peak = 0;    // peak_kv_logical_bytes
  int64_t template_id = -1;   // < 0: unknown
};

// The Wilson score interval (95%, z = 1.96) of k successes in n trials: {low, high};
// NaN when n = 0.
std::pair<double, double> wilson_interval(int64_t k, int64_t n);

struct bootstrap_ci {
  double low, high;  // NaN when no resample defined the ratio
};
struct bootstrap_options {
  int resamples = 2000;
  uint64_t seed = 1;  // the same intervals on every machine for the same rows
};

// Percentile bootstrap (2.5%, 97.5%) of success rate(policy) / success rate(full): each
// resample draws the tasks of `full` with replacement; a drawn task brings all its rows
// (every seed) of both policies.
bootstrap_ci bootstrap_retained(const std::vector<item_outcome>& policy, const std::vector<item_outcome>& full,
                                const bootstrap_options& o = {});
// The same for median logical peak(policy) / median logical peak(full), over ended rows.
bootstrap_ci bootstrap_memory_ratio(const std::vector<item_outcome>& policy, const std::vector<item_outcome>& full,
                                    const bootstrap_options& o = {});

// Success rate per template (ascending ids; rows without a template left out) and their
// unweighted mean (NaN without templates).
std::vector<std::pair<int64_t, double>> template_success(const std::vector<item_outcome>& rows);
double template_mean(const std::vector<std::pair<int64_t, double>>& per_template);

}  // namespace kvarena::results
