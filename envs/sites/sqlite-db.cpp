// sqlite-db.cpp: SQLite RAII wrappers and the content hash (see sqlite-db.h).
#include "sqlite-db.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <utility>

#include <sqlite3.h>

namespace kvarena::sites {
namespace {

[[noreturn]] void fail(sqlite3* db, std::string_view what, std::string_view sql) {
  std::string msg = std::string(what) + ": " + (db ? sqlite3_errmsg(db) : "out of memory");
  if (!sql.empty()) msg += " (SQL: " + std::string(sql.substr(0, 200)) + ")";
  throw sqlite_error(msg);
}

// FNV-1a 64: tiny, deterministic across platforms; enough to compare snapshots.
struct fnv1a64 {
  uint64_t h = 1469598103934665603ull;
  void add(const void* data, size_t n) {
    auto* p = static_cast<const unsigned char*>(data);
    for (size_t i = 0; i < n; ++i) h = (h ^ p[i]) * 1099511628211ull;
  }
  void add_tagged(char tag, const void* data, size_t n) {
    uint64_t len = n;
    add(&tag, 1);
    add(&len, sizeof len);
    add(data, n);
  }
};

std::string quote_ident(std::string_view name) {
  std::string q = "\"";
  for (char c : name) q += c == '"' ? std::string("\"\"") : std::string(1, c);
  return q + "\"";
}

}  // namespace

sqlite_stmt::~sqlite_stmt() {
  if (stmt_) sqlite3_finalize(stmt_);
}

sqlite_stmt::sqlite_stmt(sqlite_stmt&& o) noexcept : db_(o.db_), stmt_(o.stmt_), sql_(std::move(o.sql_)) {
  o.stmt_ = nullptr;
}

sqlite_stmt& sqlite_stmt::bind(int index, const sql_value& v) {
  int rc = SQLITE_OK;
  if (std::holds_alternative<std::nullptr_t>(v)) rc = sqlite3_bind_null(stmt_, index);
  else if (auto* i = std::get_if<int64_t>(&v)) rc = sqlite3_bind_int64(stmt_, index, *i);
  else if (auto* d = std::get_if<double>(&v)) rc = sqlite3_bind_double(stmt_, index, *d);
  else if (auto* s = std::get_if<std::string>(&v))
    rc = sqlite3_bind_text64(stmt_, index, s->data(), s->size(), SQLITE_TRANSIENT, SQLITE_UTF8);
  if (rc != SQLITE_OK) fail(db_, "cannot bind parameter " + std::to_string(index), sql_);
  return *this;
}

sqlite_stmt& sqlite_stmt::bind_all(const std::vector<sql_value>& values) {
  for (size_t i = 0; i < values.size(); ++i) bind(int(i) + 1, values[i]);
  return *this;
}

bool sqlite_stmt::step() {
  int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  fail(db_, "SQL step failed", sql_);
}

void sqlite_stmt::reset() {
  sqlite3_reset(stmt_);
  sqlite3_clear_bindings(stmt_);
}

int sqlite_stmt::columns() const { return sqlite3_column_count(stmt_); }
std::string sqlite_stmt::column_name(int i) const { return sqlite3_column_name(stmt_, i); }
bool sqlite_stmt::is_null(int i) const { return sqlite3_column_type(stmt_, i) == SQLITE_NULL; }
int64_t sqlite_stmt::int64(int i) const { return sqlite3_column_int64(stmt_, i); }
double sqlite_stmt::real(int i) const { return sqlite3_column_double(stmt_, i); }
bool sqlite_stmt::readonly() const { return sqlite3_stmt_readonly(stmt_) != 0; }

std::string sqlite_stmt::text(int i) const {
  auto* p = sqlite3_column_text(stmt_, i);
  return p ? std::string(reinterpret_cast<const char*>(p), size_t(sqlite3_column_bytes(stmt_, i))) : std::string();
}

sql_value sqlite_stmt::value(int i) const {
  switch (sqlite3_column_type(stmt_, i)) {
    case SQLITE_INTEGER: return int64(i);
    case SQLITE_FLOAT: return real(i);
    case SQLITE_NULL: return nullptr;
    default: return text(i);  // TEXT and BLOB
  }
}

sqlite_db::~sqlite_db() {
  if (db_) sqlite3_close_v2(db_);
}

sqlite_db& sqlite_db::operator=(sqlite_db&& o) noexcept {
  if (this != &o) {
    if (db_) sqlite3_close_v2(db_);
    db_ = std::exchange(o.db_, nullptr);
  }
  return *this;
}

sqlite_db sqlite_db::open_memory() {
  sqlite3* db = nullptr;
  if (sqlite3_open_v2(":memory:", &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr) != SQLITE_OK) {
    sqlite_db owner(db);  // closes it
    fail(db, "cannot open an in-memory SQLite database", "");
  }
  sqlite_db out(db);
  out.exec("PRAGMA foreign_keys = ON");
  return out;
}

sqlite_db sqlite_db::from_image(const std::vector<unsigned char>& image) {
  sqlite_db out = open_memory();
  // SQLite owns and may grow the buffer, so it must come from sqlite3_malloc64.
  auto* buf = static_cast<unsigned char*>(sqlite3_malloc64(image.size()));
  if (!buf) throw sqlite_error("out of memory copying a " + std::to_string(image.size()) + "-byte snapshot");
  std::memcpy(buf, image.data(), image.size());
  int rc = sqlite3_deserialize(out.db_, "main", buf, sqlite3_int64(image.size()), sqlite3_int64(image.size()),
                               SQLITE_DESERIALIZE_FREEONCLOSE | SQLITE_DESERIALIZE_RESIZEABLE);
  if (rc != SQLITE_OK) fail(out.db_, "cannot load the site snapshot", "");
  return out;
}

std::vector<unsigned char> sqlite_db::serialize() const {
  sqlite3_int64 size = 0;
  unsigned char* p = sqlite3_serialize(db_, "main", &size, 0);
  if (!p) fail(db_, "cannot serialize the database", "");
  std::vector<unsigned char> out(p, p + size);
  sqlite3_free(p);
  return out;
}

void sqlite_db::exec(std::string_view sql) {
  char* err = nullptr;
  std::string s(sql);
  if (sqlite3_exec(db_, s.c_str(), nullptr, nullptr, &err) != SQLITE_OK) {
    std::string msg = err ? err : "unknown error";
    sqlite3_free(err);
    throw sqlite_error("SQL failed: " + msg + " (SQL: " + s.substr(0, 200) + ")");
  }
}

sqlite_stmt sqlite_db::prepare(std::string_view sql) {
  sqlite3_stmt* stmt = nullptr;
  if (sqlite3_prepare_v2(db_, sql.data(), int(sql.size()), &stmt, nullptr) != SQLITE_OK)
    fail(db_, "cannot prepare SQL", sql);
  if (!stmt) throw sqlite_error("empty SQL statement");
  return sqlite_stmt(db_, stmt, std::string(sql));
}

std::vector<std::vector<sql_value>> sqlite_db::query(std::string_view sql, const std::vector<sql_value>& params) {
  auto st = prepare(sql);
  st.bind_all(params);
  std::vector<std::vector<sql_value>> rows;
  while (st.step()) {
    auto& row = rows.emplace_back();
    for (int i = 0; i < st.columns(); ++i) row.push_back(st.value(i));
  }
  return rows;
}

int64_t sqlite_db::query_int(std::string_view sql, const std::vector<sql_value>& params, int64_t fallback) {
  auto st = prepare(sql);
  st.bind_all(params);
  return st.step() && !st.is_null(0) ? st.int64(0) : fallback;
}

int64_t sqlite_db::last_insert_rowid() const { return sqlite3_last_insert_rowid(db_); }
int sqlite_db::changes() const { return sqlite3_changes(db_); }

std::string sqlite_db::content_hash() {
  fnv1a64 h;
  auto tables = prepare("SELECT name FROM sqlite_schema WHERE type = 'table' ORDER BY name");
  while (tables.step()) {
    std::string table = tables.text(0);
    // Primary-key columns in key order; rowid for tables without one.
    std::vector<std::pair<int64_t, std::string>> pk;
    auto info = prepare("SELECT name, pk FROM pragma_table_info(?1) WHERE pk > 0");
    info.bind(1, table);
    while (info.step()) pk.emplace_back(info.int64(1), quote_ident(info.text(0)));
    std::sort(pk.begin(), pk.end());
    std::string order;
    for (auto& [i, col] : pk) order += (order.empty() ? "" : ", ") + col;
    if (order.empty()) order = "rowid";
    h.add_tagged('T', table.data(), table.size());
    auto rows = prepare("SELECT * FROM " + quote_ident(table) + " ORDER BY " + order);
    while (rows.step()) {
      h.add("R", 1);
      for (int c = 0; c < rows.columns(); ++c) {
        sql_value v = rows.value(c);
        if (auto* i = std::get_if<int64_t>(&v)) h.add_tagged('i', i, sizeof *i);
        else if (auto* d = std::get_if<double>(&v)) h.add_tagged('d', d, sizeof *d);
        else if (auto* s = std::get_if<std::string>(&v)) h.add_tagged('s', s->data(), s->size());
        else h.add_tagged('n', nullptr, 0);
      }
    }
  }
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(h.h));
  return hex;
}

sqlite_transaction::~sqlite_transaction() {
  if (!done_) {
    try {
      db_.exec("ROLLBACK");
    } catch (...) {  // nothing more to do: the connection reports the next error itself
    }
  }
}

void sqlite_transaction::commit() {
  db_.exec("COMMIT");
  done_ = true;
}

}  // namespace kvarena::sites
