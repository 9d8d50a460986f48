// results-schema.cpp: the DDL and the version check of results-schema.h.
#include "results-schema.h"

#include <filesystem>

namespace kvarena::results {

#define KVARENA_TASK_RESULT_COLUMNS_V3                                                                 \
  "task_id, policy, seed, status, success, score, steps, answer, final_url, prompt_tokens, "          \
  "generated_tokens, peak_kv_bytes, peak_kv_host_bytes, peak_device_bytes, wall_ms, prefill_ms, "      \
  "decode_ms, error, finished_at, peak_kv_logical_bytes, peak_process_bytes, template_id, eval_detail"
#define KVARENA_STEP_COLUMNS_V3                                                                   \
  "task_id, policy, seed, step, action, action_error, kv_tokens, kv_bytes, confidence, budget, " \
  "latency_ms, prompt_tokens, generated_tokens, kv_logical_bytes, process_bytes, observation, output"
const char* const task_result_columns = KVARENA_TASK_RESULT_COLUMNS_V3 ", model_calls, model_retries";
const char* const step_columns = KVARENA_STEP_COLUMNS_V3 ", model_retries, model_retry_log";
const char* const task_result_columns_v3 = KVARENA_TASK_RESULT_COLUMNS_V3;
const char* const step_columns_v3 = KVARENA_STEP_COLUMNS_V3;
const char* const kv_trace_columns = "task_id, policy, seed, sample, token_index, kv_bytes, budget, confidence, kv_logical_bytes";
const char* const step_screenshot_columns = "task_id, policy, seed, step, path";

namespace {

// The two tables schema 4 changed (memory and token columns may be NULL: not reported by
// an agent endpoint; the endpoint's calls and retries): also what migrate_3_to_4 builds.
constexpr const char* task_results_table = R"sql(CREATE TABLE task_results (
  run_id             INTEGER NOT NULL,
  task_id            TEXT NOT NULL,
  policy             TEXT NOT NULL,
  seed               INTEGER NOT NULL,
  status             TEXT NOT NULL CHECK (status IN ('done', 'error', 'timeout')),
  success            INTEGER NOT NULL CHECK (success IN (0, 1)),
  score              REAL NOT NULL,
  steps              INTEGER NOT NULL CHECK (steps >= 0),
  answer             TEXT NOT NULL,
  final_url          TEXT NOT NULL,
  prompt_tokens      INTEGER,
  generated_tokens   INTEGER,
  peak_kv_bytes      INTEGER,
  peak_kv_host_bytes INTEGER,
  peak_device_bytes  INTEGER,
  wall_ms            REAL NOT NULL,
  prefill_ms         REAL NOT NULL,
  decode_ms          REAL NOT NULL,
  error              TEXT,
  finished_at        TEXT NOT NULL,
  peak_kv_logical_bytes INTEGER,
  peak_process_bytes    INTEGER,
  template_id        INTEGER,
  eval_detail        TEXT NOT NULL,
  model_calls        INTEGER,
  model_retries      INTEGER,
  PRIMARY KEY (run_id, task_id, policy, seed)
);
)sql";
constexpr const char* steps_table = R"sql(CREATE TABLE steps (
  run_id           INTEGER NOT NULL,
  task_id          TEXT NOT NULL,
  policy           TEXT NOT NULL,
  seed             INTEGER NOT NULL,
  step             INTEGER NOT NULL CHECK (step >= 0),
  action           TEXT NOT NULL,
  action_error     TEXT,
  kv_tokens        INTEGER,
  kv_bytes         INTEGER,
  confidence       REAL,
  budget           INTEGER,
  latency_ms       REAL NOT NULL,
  prompt_tokens    INTEGER,
  generated_tokens INTEGER,
  kv_logical_bytes INTEGER,
  process_bytes    INTEGER,
  observation      TEXT NOT NULL,
  output           TEXT NOT NULL,
  model_retries    INTEGER,
  model_retry_log  TEXT,
  PRIMARY KEY (run_id, task_id, policy, seed, step)
) WITHOUT ROWID;
)sql";
constexpr const char* task_results_index = "CREATE INDEX task_results_by_policy ON task_results (run_id, policy);\n";

// Keys are (run_id, task_id, policy, seed) throughout: the work item within its run.
// Sizes in bytes, times in milliseconds, token counts in tokens. README.md is the
// user-facing description of every column; keep the two in step.
constexpr const char* schema_head = R"sql(
CREATE TABLE meta (
  schema_version INTEGER NOT NULL,
  created_by     TEXT NOT NULL,
  created_at     TEXT NOT NULL
);
CREATE TABLE runs (
  run_id     INTEGER PRIMARY KEY,
  name       TEXT NOT NULL UNIQUE,
  created_at TEXT NOT NULL,
  model      TEXT NOT NULL,
  suite      TEXT NOT NULL,
  policies   TEXT NOT NULL,
  seeds      TEXT NOT NULL,
  version    TEXT NOT NULL,
  config     TEXT NOT NULL
);
CREATE TABLE work_items (
  run_id  INTEGER NOT NULL,
  task_id TEXT NOT NULL,
  policy  TEXT NOT NULL,
  seed    INTEGER NOT NULL,
  shard   INTEGER NOT NULL CHECK (shard >= 0),
  PRIMARY KEY (run_id, task_id, policy, seed)
) WITHOUT ROWID;
)sql";
constexpr const char* schema_tail = R"sql(CREATE TABLE kv_trace (
  run_id      INTEGER NOT NULL,
  task_id     TEXT NOT NULL,
  policy      TEXT NOT NULL,
  seed        INTEGER NOT NULL,
  sample      INTEGER NOT NULL CHECK (sample >= 0),
  token_index INTEGER NOT NULL CHECK (token_index >= 0),
  kv_bytes    INTEGER NOT NULL,
  budget      INTEGER,
  confidence  REAL,
  kv_logical_bytes INTEGER NOT NULL,
  PRIMARY KEY (run_id, task_id, policy, seed, sample)
) WITHOUT ROWID;
CREATE TABLE step_screenshots (
  run_id  INTEGER NOT NULL,
  task_id TEXT NOT NULL,
  policy  TEXT NOT NULL,
  seed    INTEGER NOT NULL,
  step    INTEGER NOT NULL CHECK (step >= 0),
  path    TEXT NOT NULL,
  PRIMARY KEY (run_id, task_id, policy, seed, step)
) WITHOUT ROWID;
)sql";

std::string schema_sql() {
  return std::string(schema_head) + task_results_table + task_results_index + steps_table + schema_tail;
}

// Tables whose presence without our version marks a file as someone else's.
bool has_our_tables(sql_db& db) {
  return db.query_int(
             "SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name IN "
             "('meta', 'runs', 'work_items', 'task_results', 'steps', 'kv_trace', 'step_screenshots')") > 0;
}

[[noreturn]] void refuse_version(const std::string& path, int64_t v) {
  throw results_error("results file " + path + " has schema version " + std::to_string(v) +
                      "; this kvarena reads versions " + std::to_string(k_oldest_migrated_version) + " to " +
                      std::to_string(results_schema_version) +
                      ": open it with the kvarena that wrote it, or write a new results file");
}

void check_version(sql_db& db, const std::string& path) {
  int64_t v = db.query_int("PRAGMA user_version");
  if (v == 0) {
    if (has_our_tables(db))
      throw results_error("results file " + path + " has kvarena tables but no schema version: "
                          "it was not written by kvarena or was edited; write a new results file");
    throw results_error(path + " is not a kvarena results file (no schema version); "
                        "pass a file written by `kvarena run` or `kvarena merge`");
  }
  if (v != results_schema_version && v != k_oldest_migrated_version) refuse_version(path, v);
  int64_t meta_v = db.query_int("SELECT schema_version FROM meta LIMIT 1", -1);
  if (meta_v != v)
    throw results_error("results file " + path + " has user_version " + std::to_string(v) +
                        " but meta.schema_version " + std::to_string(meta_v) + ": the file was edited by hand; "
                        "write a new results file");
}

// Schema 3 -> 4, in the caller's transaction: task_results and steps rebuilt (SQLite cannot
// drop a NOT NULL) with the columns of 4; the old rows keep their values, the new columns
// are NULL (no agent endpoint).
void migrate_3_to_4(sql_db& db) {
  db.exec("DROP INDEX task_results_by_policy; "
          "ALTER TABLE task_results RENAME TO task_results_v3; ALTER TABLE steps RENAME TO steps_v3;");
  db.exec(std::string(task_results_table) + task_results_index + steps_table);
  db.exec("INSERT INTO task_results (run_id, " KVARENA_TASK_RESULT_COLUMNS_V3 ") SELECT run_id, "
          KVARENA_TASK_RESULT_COLUMNS_V3 " FROM task_results_v3; "
          "INSERT INTO steps (run_id, " KVARENA_STEP_COLUMNS_V3 ") SELECT run_id, " KVARENA_STEP_COLUMNS_V3
          " FROM steps_v3; DROP TABLE task_results_v3; DROP TABLE steps_v3;");
  db.exec("UPDATE meta SET schema_version = 4; PRAGMA user_version = 4;");
}

// A schema 3 file opened for reading (nothing may be written): temp views of the same names,
// which queries see before the file's tables, add schema 4's columns as NULL.
void view_3_as_4(sql_db& db) {
  db.exec("CREATE TEMP VIEW task_results AS SELECT *, NULL AS model_calls, NULL AS model_retries "
          "FROM main.task_results; "
          "CREATE TEMP VIEW steps AS SELECT *, NULL AS model_retries, NULL AS model_retry_log FROM main.steps;");
}

}  // namespace

sql_db open_results_file(const std::string& path, open_mode mode, int busy_timeout_ms, const std::string& created_by) {
  std::error_code ec;
  bool exists = std::filesystem::exists(path, ec);
  if (mode == open_mode::read && !exists)
    throw results_error("results file " + path + " does not exist");
  if (exists && std::filesystem::is_directory(path, ec))
    throw results_error("results file " + path + " is a directory; pass a .sqlite file");

  // Read mode opens read-write (SQLite falls back to read-only on a write-protected file)
  // and never writes: only a writable connection can roll back the hot journal a killed
  // writer left behind, and a shard killed mid-item must still be readable.
  sql_db db = sql_db::open(path, mode == open_mode::write, false, busy_timeout_ms);
  try {
    // A file that is not SQLite fails on the first read of its header.
    db.query_int("PRAGMA schema_version");
  } catch (const results_error&) {
    throw results_error(path + " is not a SQLite file (so not a kvarena results file)");
  }
  if (mode == open_mode::read) {
    check_version(db, path);
    if (db.query_int("PRAGMA user_version") == 3) view_3_as_4(db);
    return db;
  }

  // Rollback journal, not WAL: WAL needs shared memory that network file systems (where
  // cluster shards write) do not provide. FULL sync: a committed item survives power loss.
  db.exec("PRAGMA journal_mode = DELETE; PRAGMA synchronous = FULL;");
  sql_transaction tx(db);  // two processes creating one file: the second sees the first's tables
  int64_t v = db.query_int("PRAGMA user_version");
  if (v == 0) {
    if (has_our_tables(db))
      throw results_error("results file " + path + " has kvarena tables but no schema version: "
                          "it was not written by kvarena or was edited; write a new results file");
    // `kvarena bench --db` may have made the file first (bench-results-db.h): its table
    // lives beside ours.
    if (db.query_int("SELECT COUNT(*) FROM sqlite_master WHERE name NOT IN ('bench_results', 'sqlite_sequence') "
                     "AND tbl_name NOT IN ('bench_results', 'sqlite_sequence')") > 0)
      throw results_error(path + " is a SQLite file with other tables, not a kvarena results file; "
                          "choose a new file name");
    db.exec(schema_sql());
    auto st = db.prepare(
        "INSERT INTO meta (schema_version, created_by, created_at) "
        "VALUES (?1, ?2, strftime('%Y-%m-%dT%H:%M:%SZ', 'now'))");
    st.bind_int(1, results_schema_version).bind_text(2, created_by);
    st.step();
    db.exec("PRAGMA user_version = " + std::to_string(results_schema_version));
    tx.commit();
    return db;
  }
  check_version(db, path);
  if (v == 3) migrate_3_to_4(db);
  tx.commit();
  return db;
}

}  // namespace kvarena::results
