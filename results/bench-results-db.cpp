// bench-results-db.cpp: the bench_results table (bench-results-db.h) over sqlite-util.h.
#include "bench-results-db.h"

#include "sqlite-util.h"

namespace kvarena::results {

namespace {

const char* const kCreate =
    "CREATE TABLE IF NOT EXISTS bench_results ("
    " id INTEGER PRIMARY KEY AUTOINCREMENT,"
    " created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),"
    " bench TEXT NOT NULL, model TEXT NOT NULL, policy TEXT NOT NULL,"
    " options_json TEXT NOT NULL, config_json TEXT NOT NULL, metrics_json TEXT NOT NULL)";

}  // namespace

void append_bench_results(const std::string& db_path, const std::vector<bench_result_row>& rows) {
  sql_db db = sql_db::open(db_path, true, false, 10000);  // another writer of the file: wait, don't fail
  db.exec(kCreate);
  sql_transaction tx(db);  // all rows or none
  sql_stmt ins = db.prepare(
      "INSERT INTO bench_results (bench, model, policy, options_json, config_json, metrics_json) "
      "VALUES (?1, ?2, ?3, ?4, ?5, ?6)");
  for (const bench_result_row& r : rows) {
    ins.bind_text(1, r.bench).bind_text(2, r.model).bind_text(3, r.policy);
    ins.bind_text(4, r.options_json).bind_text(5, r.config_json).bind_text(6, r.metrics_json);
    ins.step();
    ins.reset();
  }
  tx.commit();
}

std::vector<bench_result_row> read_bench_results(const std::string& db_path) {
  sql_db db = sql_db::open(db_path, false, true, 10000);
  sql_stmt q = db.prepare(
      "SELECT id, created_at, bench, model, policy, options_json, config_json, metrics_json "
      "FROM bench_results ORDER BY id");
  std::vector<bench_result_row> out;
  while (q.step()) {
    bench_result_row r;
    r.id = q.int64(0);
    r.created_at = q.text(1);
    r.bench = q.text(2);
    r.model = q.text(3);
    r.policy = q.text(4);
    r.options_json = q.text(5);
    r.config_json = q.text(6);
    r.metrics_json = q.text(7);
    out.push_back(std::move(r));
  }
  return out;
}

}  // namespace kvarena::results
