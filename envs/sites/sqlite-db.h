// sqlite-db.h: a thin RAII layer over SQLite for the sites: in-memory connections made
// from a serialized image (how tenants get their private copy in microseconds), prepared
// statements with typed binds and getters, and errors that name the SQL that failed.
// A connection is not shared between threads without a lock (site-store.h holds one per
// tenant and site).
#pragma once
#include <cstdint>
#include <initializer_list>
#include <stdexcept>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

struct sqlite3;
struct sqlite3_stmt;

namespace kvarena::sites {

struct sqlite_error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// A value bound to or read from SQL.
using sql_value = std::variant<std::nullptr_t, int64_t, double, std::string>;

class sqlite_stmt {
 public:
  sqlite_stmt(sqlite3* db, sqlite3_stmt* stmt, std::string sql) : db_(db), stmt_(stmt), sql_(std::move(sql)) {}
  ~sqlite_stmt();
  sqlite_stmt(sqlite_stmt&& o) noexcept;
  sqlite_stmt(const sqlite_stmt&) = delete;
  sqlite_stmt& operator=(const sqlite_stmt&) = delete;
  sqlite_stmt& operator=(sqlite_stmt&&) = delete;

  // 1-based, as in SQL text "?1"; bind_all binds 1..n in order.
  sqlite_stmt& bind(int index, const sql_value& v);
  sqlite_stmt& bind_all(const std::vector<sql_value>& values);
  // true while a row is available; throws sqlite_error on failure.
  bool step();
  void reset();

  int columns() const;
  std::string column_name(int i) const;
  bool is_null(int i) const;
  int64_t int64(int i) const;
  double real(int i) const;
  std::string text(int i) const;  // "" for NULL
  sql_value value(int i) const;
  bool readonly() const;

 private:
  sqlite3* db_;
  sqlite3_stmt* stmt_;
  std::string sql_;
};

class sqlite_db {
 public:
  sqlite_db() = default;  // no connection; valid() is false
  ~sqlite_db();
  sqlite_db(sqlite_db&& o) noexcept : db_(o.db_) { o.db_ = nullptr; }
  sqlite_db& operator=(sqlite_db&& o) noexcept;
  sqlite_db(const sqlite_db&) = delete;
  sqlite_db& operator=(const sqlite_db&) = delete;

  static sqlite_db open_memory();
  // A private, writable in-memory copy of `image` (from serialize()).
  static sqlite_db from_image(const std::vector<unsigned char>& image);
  // The whole database as bytes (the snapshot a tenant is reset from).
  std::vector<unsigned char> serialize() const;

  bool valid() const { return db_ != nullptr; }
  void exec(std::string_view sql);  // one or more statements, no results
  sqlite_stmt prepare(std::string_view sql);
  // Runs one statement with parameters and returns all rows (small results only).
  std::vector<std::vector<sql_value>> query(std::string_view sql, const std::vector<sql_value>& params = {});
  // First column of the first row; `fallback` when there is no row.
  int64_t query_int(std::string_view sql, const std::vector<sql_value>& params = {}, int64_t fallback = 0);
  int64_t last_insert_rowid() const;
  int changes() const;

  // Hex FNV-1a-64 over every table's rows in primary-key (else rowid) order, tables by
  // name; values carry type tags, so 1, 1.0 and '1' differ. Equal for equal content.
  std::string content_hash();

 private:
  explicit sqlite_db(sqlite3* db) : db_(db) {}
  sqlite3* db_ = nullptr;
};

// BEGIN ... COMMIT, rolled back when an exception leaves the scope first.
class sqlite_transaction {
 public:
  explicit sqlite_transaction(sqlite_db& db) : db_(db) { db_.exec("BEGIN"); }
  ~sqlite_transaction();
  sqlite_transaction(const sqlite_transaction&) = delete;
  sqlite_transaction& operator=(const sqlite_transaction&) = delete;
  void commit();

 private:
  sqlite_db& db_;
  bool done_ = false;
};

}  // namespace kvarena::sites
