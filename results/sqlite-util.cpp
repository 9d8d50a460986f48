// sqlite-util.cpp: the RAII wrappers of sqlite-util.h.
#include "sqlite-util.h"

#include <utility>

#include <sqlite3.h>

namespace kvarena::results {
namespace {

[[noreturn]] void fail(sqlite3* db, std::string_view what, std::string_view sql) {
  std::string msg = std::string(what) + ": " + (db ? sqlite3_errmsg(db) : "out of memory");
  if (db) {
    if (const char* f = sqlite3_db_filename(db, "main"); f && *f) msg += " (file " + std::string(f) + ")";
  }
  if (!sql.empty()) msg += " (SQL: " + std::string(sql.substr(0, 160)) + ")";
  throw results_error(msg);
}

}  // namespace

sql_stmt::~sql_stmt() {
  if (stmt_) sqlite3_finalize(stmt_);
}

sql_stmt::sql_stmt(sql_stmt&& o) noexcept : db_(o.db_), stmt_(std::exchange(o.stmt_, nullptr)), sql_(std::move(o.sql_)) {}

sql_stmt& sql_stmt::bind_int(int index, int64_t v) {
  if (sqlite3_bind_int64(stmt_, index, v) != SQLITE_OK) fail(db_, "cannot bind parameter " + std::to_string(index), sql_);
  return *this;
}

sql_stmt& sql_stmt::bind_real(int index, double v) {
  if (sqlite3_bind_double(stmt_, index, v) != SQLITE_OK) fail(db_, "cannot bind parameter " + std::to_string(index), sql_);
  return *this;
}

sql_stmt& sql_stmt::bind_text(int index, std::string_view v) {
  if (sqlite3_bind_text64(stmt_, index, v.data(), v.size(), SQLITE_TRANSIENT, SQLITE_UTF8) != SQLITE_OK)
    fail(db_, "cannot bind parameter " + std::to_string(index), sql_);
  return *this;
}

sql_stmt& sql_stmt::bind_null(int index) {
  if (sqlite3_bind_null(stmt_, index) != SQLITE_OK) fail(db_, "cannot bind parameter " + std::to_string(index), sql_);
  return *this;
}

bool sql_stmt::step() {
  int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  fail(db_, "SQL failed", sql_);
}

void sql_stmt::reset() {
  sqlite3_reset(stmt_);
  sqlite3_clear_bindings(stmt_);
}

bool sql_stmt::is_null(int i) const { return sqlite3_column_type(stmt_, i) == SQLITE_NULL; }
int64_t sql_stmt::int64(int i) const { return sqlite3_column_int64(stmt_, i); }
double sql_stmt::real(int i) const { return sqlite3_column_double(stmt_, i); }

std::string sql_stmt::text(int i) const {
  auto* p = sqlite3_column_text(stmt_, i);
  return p ? std::string(reinterpret_cast<const char*>(p), size_t(sqlite3_column_bytes(stmt_, i))) : std::string();
}

sql_db::~sql_db() {
  if (db_) sqlite3_close_v2(db_);
}

sql_db::sql_db(sql_db&& o) noexcept : db_(std::exchange(o.db_, nullptr)), path_(std::move(o.path_)) {}

sql_db& sql_db::operator=(sql_db&& o) noexcept {
  if (this != &o) {
    if (db_) sqlite3_close_v2(db_);
    db_ = std::exchange(o.db_, nullptr);
    path_ = std::move(o.path_);
  }
  return *this;
}

sql_db sql_db::open(const std::string& path, bool create, bool readonly, int busy_timeout_ms) {
  int flags = readonly ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | (create ? SQLITE_OPEN_CREATE : 0);
  sqlite3* db = nullptr;
  // URIs on (ATTACH of a shard read-only needs them); a plain path that happens to start
  // with "file:" stays a path.
  const std::string open_path = path.rfind("file:", 0) == 0 ? "./" + path : path;
  int rc = sqlite3_open_v2(open_path.c_str(), &db, flags | SQLITE_OPEN_FULLMUTEX | SQLITE_OPEN_URI, nullptr);
  sql_db out;
  out.db_ = db;  // closes it on every path
  out.path_ = path;
  if (rc != SQLITE_OK)
    throw results_error("cannot open results file " + path + ": " + (db ? sqlite3_errmsg(db) : "out of memory"));
  sqlite3_busy_timeout(db, busy_timeout_ms);
  sqlite3_extended_result_codes(db, 1);
  // Results files (shards above all) come from elsewhere: their schema must not be able
  // to corrupt the file (defensive mode refuses writable_schema and the like) nor run
  // functions with side effects from views and triggers (trusted_schema off). Attached
  // files get the same.
  sqlite3_db_config(db, SQLITE_DBCONFIG_DEFENSIVE, 1, nullptr);
  sqlite3_db_config(db, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, nullptr);
  out.exec("PRAGMA trusted_schema = OFF");
  return out;
}

std::string readonly_uri(const std::string& path) {
  std::string uri = "file:";
  static const char* hex = "0123456789ABCDEF";
  for (unsigned char c : path) {
    if (c == '%' || c == '?' || c == '#' || c < 0x21 || c >= 0x7f) {
      uri += '%';
      uri += hex[c >> 4];
      uri += hex[c & 15];
    } else {
      uri += static_cast<char>(c);
    }
  }
  return uri + "?mode=ro";
}

void sql_db::exec(std::string_view sql) {
  char* err = nullptr;
  std::string s(sql);
  if (sqlite3_exec(db_, s.c_str(), nullptr, nullptr, &err) != SQLITE_OK) {
    std::string msg = err ? err : sqlite3_errmsg(db_);
    sqlite3_free(err);
    throw results_error("SQL failed on " + path_ + ": " + msg + " (SQL: " + s.substr(0, 160) + ")");
  }
}

sql_stmt sql_db::prepare(std::string_view sql) {
  sqlite3_stmt* stmt = nullptr;
  if (sqlite3_prepare_v2(db_, sql.data(), int(sql.size()), &stmt, nullptr) != SQLITE_OK)
    fail(db_, "cannot prepare SQL", sql);
  return sql_stmt(db_, stmt, std::string(sql));
}

int64_t sql_db::query_int(std::string_view sql, int64_t fallback) {
  auto st = prepare(sql);
  return st.step() && !st.is_null(0) ? st.int64(0) : fallback;
}

std::string sql_db::query_text(std::string_view sql, const std::string& fallback) {
  auto st = prepare(sql);
  return st.step() && !st.is_null(0) ? st.text(0) : fallback;
}

int64_t sql_db::last_insert_rowid() const { return sqlite3_last_insert_rowid(db_); }
int sql_db::changes() const { return sqlite3_changes(db_); }

sql_transaction::sql_transaction(sql_db& db) : db_(db) { db_.exec("BEGIN IMMEDIATE"); }

sql_transaction::~sql_transaction() {
  if (done_) return;
  try {
    db_.exec("ROLLBACK");
  } catch (...) {
    // A failed statement may already have rolled the transaction back; nothing to undo.
  }
}

void sql_transaction::commit() {
  db_.exec("COMMIT");
  done_ = true;
}

}  // namespace kvarena::results
