// bench-results-db.cpp: the bench_results table over the SQLite C API (bench-results-db.h).
#include "bench-results-db.h"

#include <sqlite3.h>

#include <stdexcept>

namespace kvarena::results {

namespace {

const char* const kCreate =
    "CREATE TABLE IF NOT EXISTS bench_results ("
    " id INTEGER PRIMARY KEY AUTOINCREMENT,"
    " created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),"
    " bench TEXT NOT NULL, model TEXT NOT NULL, policy TEXT NOT NULL,"
    " options_json TEXT NOT NULL, config_json TEXT NOT NULL, metrics_json TEXT NOT NULL)";

// One connection; closes on scope exit, and every failure names the file.
class connection {
 public:
  connection(const std::string& path, bool create) : path_(path) {
    const int flags = create ? SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE : SQLITE_OPEN_READONLY;
    if (sqlite3_open_v2(path.c_str(), &db_, flags, nullptr) != SQLITE_OK) fail("cannot open");
    sqlite3_busy_timeout(db_, 10000);  // another writer of the same file: wait, don't fail
  }
  ~connection() { sqlite3_close(db_); }
  connection(const connection&) = delete;
  connection& operator=(const connection&) = delete;

  [[noreturn]] void fail(const std::string& what) const {
    throw std::runtime_error(path_ + ": " + what + ": " + (db_ ? sqlite3_errmsg(db_) : "out of memory") +
                             " (bench_results; check the path and that it is an SQLite file)");
  }
  void exec(const char* sql) {
    if (sqlite3_exec(db_, sql, nullptr, nullptr, nullptr) != SQLITE_OK) fail(std::string("'") + sql + "' failed");
  }
  sqlite3* get() const { return db_; }

 private:
  std::string path_;
  sqlite3* db_ = nullptr;
};

class statement {
 public:
  statement(connection& c, const char* sql) : c_(c) {
    if (sqlite3_prepare_v2(c.get(), sql, -1, &st_, nullptr) != SQLITE_OK) c.fail("cannot prepare a statement");
  }
  ~statement() { sqlite3_finalize(st_); }
  statement(const statement&) = delete;
  statement& operator=(const statement&) = delete;
  void text(int i, const std::string& v) {
    if (sqlite3_bind_text(st_, i, v.data(), int(v.size()), SQLITE_TRANSIENT) != SQLITE_OK) c_.fail("cannot bind");
  }
  bool step() {
    const int rc = sqlite3_step(st_);
    if (rc == SQLITE_ROW) return true;
    if (rc != SQLITE_DONE) c_.fail("a statement failed");
    return false;
  }
  void reset() {
    sqlite3_reset(st_);
    sqlite3_clear_bindings(st_);
  }
  std::string col(int i) const {
    const auto* p = reinterpret_cast<const char*>(sqlite3_column_text(st_, i));
    return p ? std::string(p, size_t(sqlite3_column_bytes(st_, i))) : std::string();
  }
  long long col_int(int i) const { return sqlite3_column_int64(st_, i); }

 private:
  connection& c_;
  sqlite3_stmt* st_ = nullptr;
};

}  // namespace

void append_bench_results(const std::string& db_path, const std::vector<bench_result_row>& rows) {
  connection c(db_path, true);
  c.exec(kCreate);
  c.exec("BEGIN IMMEDIATE");
  try {
    statement ins(c,
                  "INSERT INTO bench_results (bench, model, policy, options_json, config_json, metrics_json) "
                  "VALUES (?1, ?2, ?3, ?4, ?5, ?6)");
    for (const bench_result_row& r : rows) {
      ins.text(1, r.bench);
      ins.text(2, r.model);
      ins.text(3, r.policy);
      ins.text(4, r.options_json);
      ins.text(5, r.config_json);
      ins.text(6, r.metrics_json);
      ins.step();
      ins.reset();
    }
  } catch (...) {
    sqlite3_exec(c.get(), "ROLLBACK", nullptr, nullptr, nullptr);
    throw;
  }
  c.exec("COMMIT");
}

std::vector<bench_result_row> read_bench_results(const std::string& db_path) {
  connection c(db_path, false);
  statement q(c,
              "SELECT id, created_at, bench, model, policy, options_json, config_json, metrics_json "
              "FROM bench_results ORDER BY id");
  std::vector<bench_result_row> out;
  while (q.step()) {
    bench_result_row r;
    r.id = q.col_int(0);
    r.created_at = q.col(1);
    r.bench = q.col(2);
    r.model = q.col(3);
    r.policy = q.col(4);
    r.options_json = q.col(5);
    r.config_json = q.col(6);
    r.metrics_json = q.col(7);
    out.push_back(std::move(r));
  }
  return out;
}

}  // namespace kvarena::results
