// report-bench.h: the benchmark part of `kvarena report`: the rows that `kvarena bench
// ppl|niah|confidence-kl|memory|latency --db FILE` appended to FILE's bench_results table
// (bench-results-db.h), one table per benchmark invocation (same bench, model and config),
// one row per policy spec, in insertion order. What each bench's table shows:
//   ppl            perplexity, ppl / full's, peak logical KV, KV / full, allocated KV, tok/s
//   niah           accuracy, correct/total per length, peak logical KV, KV / full
//   confidence-kl  Pearson r of step confidence vs KL shift, samples, mean confidence, mean KL
//   other benches  every numeric top-level metric, and KV / full where the peak is there
// "full" is the group's first row of policy full: the reference of the ratios ("-" without
// one). The HTML form adds, for ppl and niah, the metric against peak logical KV, one point
// per row, one colour per policy (the equal-memory comparisons of a --kv-budget sweep).
// Not here: the run's per-policy report (results-report.h), the bench runs (cli/cmd-bench-*).
#pragma once
#include <string>
#include <vector>

namespace kvarena::results {

// One policy's point on the metric-vs-memory plot of a group.
struct bench_point {
  std::string policy;  // the series: the spec without its budget (window, confkv:kv-int8=1, ...)
  std::string spec;    // window@512t (the point's label)
  double peak_kv_logical = 0;
  double value = 0;    // ppl or accuracy
};

struct bench_group {
  std::string bench;    // ppl, niah, ...
  std::string model;
  std::string title;    // "ppl · models/x.gguf · text /tmp/t.txt, max_tokens 2048, kv_budget 512t"
  std::string config_json;
  std::vector<std::string> columns;             // header; the first is "policy"
  std::vector<std::vector<std::string>> rows;   // formatted cells, one row per result
  std::string plot_value;                       // "perplexity", "NIAH accuracy", or "" (no plot)
  std::vector<bench_point> points;
  std::vector<std::string> row_json;            // per row: {policy, spec, options, metrics, ratios}
};

struct bench_report {
  std::vector<bench_group> groups;  // in the order of each group's first row
  size_t n_rows = 0;                // bench_results rows read
};

// Every bench_results row of `path` grouped as above; empty when the file is missing, not
// SQLite or has no such table. Throws results_error when a row's JSON is not an object.
bench_report build_bench_report(const std::string& path);

// Plain-text tables (for `kvarena report`), "" when empty.
std::string bench_report_text(const bench_report& b);
// JSON array of groups: {bench, model, config, rows: [{policy, spec, options, metrics...,
// ratios}]}; "[]" when empty.
std::string bench_report_json(const bench_report& b);
// HTML section (<h2> and tables, SVG plots), "" when empty.
std::string bench_report_html(const bench_report& b);
// {"file": FILE, "benchmarks": [...]} for a file that holds only benchmark rows.
std::string bench_only_json(const bench_report& b, const std::string& file);
// A whole page for a file that holds only benchmark rows.
std::string bench_report_page(const bench_report& b, const std::string& file);

}  // namespace kvarena::results
