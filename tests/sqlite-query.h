// sqlite-query.h: reading a results file in tests: every row of a query as text. The file
// is opened read-write so that a killed writer's hot journal is rolled back, as any results
// opener does, and waits up to 10 s for a writer's lock.
#pragma once
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <string>
#include <vector>

namespace kvarena::test {

using rows_t = std::vector<std::vector<std::string>>;

// Every row of `sql` as text ("" for NULL); a failure to open or to run is a test failure.
inline rows_t query(const std::string& db, const std::string& sql) {
  sqlite3* h = nullptr;
  rows_t out;
  if (sqlite3_open_v2(db.c_str(), &h, SQLITE_OPEN_READWRITE, nullptr) != SQLITE_OK) {
    sqlite3_close(h);
    ADD_FAILURE() << "cannot open " << db;
    return out;
  }
  sqlite3_busy_timeout(h, 10000);
  sqlite3_stmt* st = nullptr;
  if (sqlite3_prepare_v2(h, sql.c_str(), -1, &st, nullptr) != SQLITE_OK) {
    ADD_FAILURE() << sql << ": " << sqlite3_errmsg(h);
    sqlite3_close(h);
    return out;
  }
  int rc;
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    std::vector<std::string> row;
    for (int i = 0; i < sqlite3_column_count(st); ++i) {
      const unsigned char* t = sqlite3_column_text(st, i);
      row.push_back(t ? reinterpret_cast<const char*>(t) : "");
    }
    out.push_back(std::move(row));
  }
  if (rc != SQLITE_DONE) ADD_FAILURE() << sql << ": " << sqlite3_errmsg(h);
  sqlite3_finalize(st);
  sqlite3_close(h);
  return out;
}

// The first column of the first row, "<no row>" when there is none.
inline std::string query_one(const std::string& db, const std::string& sql) {
  const rows_t r = query(db, sql);
  return r.empty() || r[0].empty() ? "<no row>" : r[0][0];
}

}  // namespace kvarena::test
