// results-report.h: `kvarena report`: per-policy metrics of one run, computed from the task,
// steps and kv_trace rows (never from stored averages), and their forms: a text table, JSON,
// and (report-html.h) a self-contained HTML page with SVG plots.
//
// Definitions (README.md repeats them for users):
//   success rate   successes / task rows; error and timeout rows count as failures
//   retained       success rate / full's success rate ("n/a" without a full row or at 0)
//   success 95% CI Wilson score interval of the success rate (z = 1.96)
//   retained / KV med/full 95% CI: percentile bootstrap over tasks (report-stats.h)
//   template mean  unweighted mean of the per-template success rates (intent_template_id)
//   peak KV        median and max of peak_kv_logical_bytes (the policy's logical KV bytes)
//                  over rows that ran to an end (done or timeout); KV/full = this median /
//                  full's median; also the medians of peak_kv_bytes (allocated) and of
//                  peak_process_bytes (the process's resident high-water)
//   step latency   median of steps.latency_ms over those same items
//   mean steps     mean of task_results.steps over those same items
// The "oracle" policy (a scripted agent, no model) is the upper bound: no memory columns.
// Not here: HTML (report-html.h).
#pragma once
#include <cstdint>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "report-stats.h"
#include "results-db.h"

namespace kvarena::results {

struct report_options {
  std::string run_name = "";    // "" = the file's latest run
  std::string trace_task = "";  // task of the KV-over-tokens plot; "" = the longest kv_trace
};

inline constexpr double no_value = std::numeric_limits<double>::quiet_NaN();

// Shown for a memory figure an agent endpoint did not report (NULL columns), with the note.
inline constexpr const char* k_not_reported = "n/r";
inline constexpr const char* k_not_reported_note =
    "not reported by the endpoint (run --agent-url: the endpoint's usage has no such figure; "
    "the columns are NULL)";

struct policy_metrics {
  std::string policy;
  int64_t planned = 0;         // work items planned (0: the run stored no plan)
  int64_t items = 0;           // task rows
  int64_t done = 0, errors = 0, timeouts = 0;
  int64_t successes = 0;
  double success_rate = no_value;
  double success_ci_low = no_value, success_ci_high = no_value;  // Wilson 95%
  int64_t n_tasks = 0, n_seeds = 0;  // distinct tasks and seeds behind the figures
  double retained_ci_low = no_value, retained_ci_high = no_value;          // bootstrap 95% over tasks
  double memory_ratio_ci_low = no_value, memory_ratio_ci_high = no_value;  // of KV med/full, likewise
  std::vector<std::pair<int64_t, double>> per_template;  // (intent_template_id, success rate)
  double template_mean = no_value;   // unweighted mean of per_template
  std::vector<item_outcome> outcomes;  // the rows behind it all
  double retained_vs_full = no_value;
  double peak_kv_logical_median = no_value, peak_kv_logical_max = no_value;
  double peak_kv_bytes_median = no_value, peak_kv_bytes_max = no_value;  // allocated
  double peak_process_bytes_median = no_value;
  double peak_kv_median_vs_full = no_value;
  double peak_kv_host_bytes_median = no_value;
  double step_ms_median = no_value;
  double mean_steps = no_value;
  bool memory_not_reported = false;  // some item's memory columns are NULL (an agent endpoint's)
};

// One policy's kv_trace for the plotted item.
struct trace_line {
  std::string policy;
  std::vector<kv_sample> samples;
};

struct run_report {
  std::string file;
  run_row run;
  int64_t runs_in_file = 0;
  std::vector<policy_metrics> policies;  // full, window, h2o, confkv, confkv-l, freekv, others by name, oracle
  int64_t planned = 0;                   // planned items of the run (0: no plan stored)
  int64_t not_done = 0;                  // planned items without a done row
  std::string trace_task;                // "" when the run has no kv_trace rows
  int64_t trace_seed = 0;
  std::vector<trace_line> traces;        // in policy order; only policies with samples
};

// Reads the run (opt.run_name, else the latest) from `path` and computes everything.
// Throws results_error for a bad file, an unknown run name, or a --task without a trace.
run_report build_report(const std::string& path, const report_options& opt = {});

// Median of `v` (mean of the two middle values for an even count); NaN when empty.
double median(std::vector<double> v);

// The table shared by text and HTML: a header row, then one row per policy.
std::vector<std::vector<std::string>> report_table(const run_report& r);

std::string report_text(const run_report& r);
// Whether some policy's memory figures were not reported (k_not_reported_note applies).
bool any_memory_not_reported(const run_report& r);
// {"file", "run": {...}, "planned_items", "not_done_items", "complete", "policies": [{"policy",
// "planned_items", "items", "done", "errors", "timeouts", "successes", "success_rate",
// "success_ci95", "success_retained_vs_full", "peak_kv_logical_bytes_median",
// "peak_kv_logical_bytes_max", "peak_process_bytes_median", "peak_kv_bytes_median", "peak_kv_bytes_max",
// "peak_kv_median_vs_full", "peak_kv_host_bytes_median", "step_ms_median", "mean_steps"}]};
// null where a metric has no value; "memory_not_reported": true where the endpoint reported none.
// benchmarks_json: a JSON array (report-bench.h) added as "benchmarks" when not empty.
std::string report_json(const run_report& r, const std::string& benchmarks_json = "");

}  // namespace kvarena::results
