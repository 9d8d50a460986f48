// results-schema.h: the results file's SQLite schema (tables runs, work_items,
// task_results, steps, kv_trace, step_screenshots, meta; README.md documents every
// column) and the one
// function that opens a results file: it creates the tables in a new file, and refuses a
// file of another schema version or one that is not a kvarena results file.
// Not here: writing runs and items (results-db.h), merge, report.
#pragma once
#include <string>

#include "sqlite-util.h"

namespace kvarena::results {

// Bump on any change to the tables. Stored twice: PRAGMA user_version and
// meta.schema_version. Files of k_oldest_migrated_version .. results_schema_version - 1
// are migrated when opened for writing (in one transaction) and viewed as the current
// version when opened for reading (temp views, nothing written); older ones are refused.
// 2: logical KV and process peaks; 3: step_screenshots; 4: memory and token columns
// NULL-able (an agent endpoint that reports none), the endpoint's calls and retries.
inline constexpr int results_schema_version = 4;
inline constexpr int k_oldest_migrated_version = 3;

enum class open_mode {
  read,   // the file must exist; nothing is written (a killed writer's journal is rolled back)
  write,  // created with the tables when absent; rollback journal, synchronous=FULL
};

// `created_by` goes to meta.created_by when the file is made (e.g. "kvarena 0.1.0").
// Throws results_error naming the file: missing (read), not SQLite, not kvarena results,
// or "results file X has schema version N; this kvarena reads version M: ..." (N older
// than k_oldest_migrated_version, or newer than this kvarena).
sql_db open_results_file(const std::string& path, open_mode mode, int busy_timeout_ms = 60000,
                         const std::string& created_by = "kvarena");

// Column lists (without run_id) of the item tables, in table order: one place for the
// writer's inserts and merge's copies.
extern const char* const task_result_columns;  // task_id, policy, seed, status, ...
extern const char* const step_columns;         // task_id, policy, seed, step, ...
extern const char* const kv_trace_columns;     // task_id, policy, seed, sample, ...
extern const char* const step_screenshot_columns;  // task_id, policy, seed, step, path
// The item tables' columns of schema 3 (merge copies a schema 3 shard's rows with them).
extern const char* const task_result_columns_v3;
extern const char* const step_columns_v3;

}  // namespace kvarena::results
