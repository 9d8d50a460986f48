// sqlite-util.h: a tiny RAII layer over the SQLite C API for results/: a connection to a
// file, prepared statements with typed binds and getters, a transaction guard. Errors are
// results_error exceptions that name the file and the SQL that failed.
// Not here: the schema (results-schema.h). results/ depends on nothing else in the repo,
// so this is its own small wrapper (envs/sites has another one for the sites).
#pragma once
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>

struct sqlite3;
struct sqlite3_stmt;

namespace kvarena::results {

// Every error results/ raises: a bad or foreign file, another schema version, a refused
// merge, a failed write. The message names the file and says what to do.
struct results_error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

class sql_stmt {
 public:
  sql_stmt(sqlite3* db, sqlite3_stmt* stmt, std::string sql) : db_(db), stmt_(stmt), sql_(std::move(sql)) {}
  ~sql_stmt();
  sql_stmt(sql_stmt&& o) noexcept;
  sql_stmt(const sql_stmt&) = delete;
  sql_stmt& operator=(const sql_stmt&) = delete;
  sql_stmt& operator=(sql_stmt&&) = delete;

  // 1-based, as "?1" in SQL text. bind_text of std::string_view; bind_null for NULL.
  sql_stmt& bind_int(int index, int64_t v);
  sql_stmt& bind_real(int index, double v);
  sql_stmt& bind_text(int index, std::string_view v);
  sql_stmt& bind_null(int index);
  // true while a row is available; throws results_error on failure.
  bool step();
  void reset();  // for re-use: also clears the bindings

  bool is_null(int i) const;
  int64_t int64(int i) const;  // 0 for NULL
  double real(int i) const;    // 0 for NULL
  std::string text(int i) const;  // "" for NULL

 private:
  sqlite3* db_;
  sqlite3_stmt* stmt_;
  std::string sql_;
};

class sql_db {
 public:
  sql_db() = default;  // no connection
  ~sql_db();
  sql_db(sql_db&& o) noexcept;
  sql_db& operator=(sql_db&& o) noexcept;
  sql_db(const sql_db&) = delete;
  sql_db& operator=(const sql_db&) = delete;

  // Opens `path`; `create` allows making a new file, `readonly` opens for reading only.
  // Sets a busy timeout so a reader and the writer of one file wait for each other.
  // Every connection is defensive (SQLITE_DBCONFIG_DEFENSIVE, trusted_schema off): results
  // files and shards come from elsewhere.
  static sql_db open(const std::string& path, bool create, bool readonly, int busy_timeout_ms);

  bool valid() const { return db_ != nullptr; }
  const std::string& path() const { return path_; }
  void exec(std::string_view sql);  // one or more statements, no results
  sql_stmt prepare(std::string_view sql);
  // First column of the first row of a one-parameter-less query; `fallback` without a row.
  int64_t query_int(std::string_view sql, int64_t fallback = 0);
  std::string query_text(std::string_view sql, const std::string& fallback = "");
  int64_t last_insert_rowid() const;
  int changes() const;

 private:
  sqlite3* db_ = nullptr;
  std::string path_;
};

// `path` as a read-only SQLite URI ("file:/a/shard%3F.sqlite?mode=ro"), for ATTACH: the
// attached file is never locked for writing, so a runner still writing it goes on.
std::string readonly_uri(const std::string& path);

// BEGIN IMMEDIATE ... COMMIT (the write lock is taken at once, so a busy file waits at the
// start, not half-way); rolled back when an exception leaves the scope before commit().
class sql_transaction {
 public:
  explicit sql_transaction(sql_db& db);
  ~sql_transaction();
  sql_transaction(const sql_transaction&) = delete;
  sql_transaction& operator=(const sql_transaction&) = delete;
  void commit();

 private:
  sql_db& db_;
  bool done_ = false;
};

}  // namespace kvarena::results
