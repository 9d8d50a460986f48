// bench-results-db.h: the `bench_results` table that `kvarena bench ... --db FILE` appends
// to: one row per (benchmark, policy) result, the options, the bench's config and the
// metrics as JSON text, so plain sqlite3 (and its json_extract) can read them:
//   CREATE TABLE bench_results (id INTEGER PRIMARY KEY AUTOINCREMENT,
//     created_at TEXT (UTC, ISO 8601), bench TEXT, model TEXT, policy TEXT,
//     options_json TEXT, config_json TEXT, metrics_json TEXT)
// Not here: the task results schema of the runner (the other tables of the results DB).
#pragma once
#include <string>
#include <vector>

namespace kvarena::results {

struct bench_result_row {
  std::string bench;         // ppl, niah, memory, latency, confidence-kl
  std::string model;         // model path as given
  std::string policy;        // full, window, ...
  std::string options_json;  // the policy's effective options
  std::string config_json;   // the benchmark's parameters
  std::string metrics_json;  // the result without policy and options; "spec": the policy as given
  std::string created_at;    // filled by read_bench_results
  long long id = 0;          // filled by read_bench_results
};

// Creates the file and the table when missing, then inserts all rows in one transaction
// (no rows: only checks that the file can take them).
// Throws results_error (a std::runtime_error) naming the file and what failed.
void append_bench_results(const std::string& db_path, const std::vector<bench_result_row>& rows);

// Every row, in id order (tests, tools). Throws std::runtime_error like append.
std::vector<bench_result_row> read_bench_results(const std::string& db_path);

}  // namespace kvarena::results
