// results-merge.cpp: merge of shard files (results-merge.h).
#include "results-merge.h"

#include <filesystem>
#include <map>

#include "results-schema.h"
#include "step-screenshots.h"

namespace kvarena::results {

namespace {

bool same_file(const std::string& a, const std::string& b) {
  std::error_code ec;
  return std::filesystem::exists(a, ec) && std::filesystem::exists(b, ec) && std::filesystem::equivalent(a, b, ec);
}

int64_t count(sql_db& db, const std::string& sql, int64_t id) {
  auto st = db.prepare(sql);
  st.bind_int(1, id);
  return st.step() ? st.int64(0) : 0;
}

void exec_with_ids(sql_db& db, const std::string& sql, int64_t new_id, int64_t old_id) {
  auto st = db.prepare(sql);
  st.bind_int(1, new_id).bind_int(2, old_id);
  st.step();
}

// Copies one run of the attached `src` into main (within the caller's transaction) and adds
// its counts to `sum`.
void merge_run(sql_db& db, int64_t old_id, const std::string& name, const std::string& in, const std::string& out,
               merge_summary& sum) {
  int64_t new_id;
  if (auto have = find_run(db, name)) {
    new_id = have->run_id;
  } else {
    auto st = db.prepare(
        "INSERT INTO main.runs (name, created_at, model, suite, policies, seeds, version, config) "
        "SELECT name, created_at, model, suite, policies, seeds, version, config FROM src.runs WHERE run_id = ?1");
    st.bind_int(1, old_id);
    st.step();
    new_id = db.last_insert_rowid();
  }
  exec_with_ids(db,
                "INSERT OR IGNORE INTO main.work_items (run_id, task_id, policy, seed, shard) "
                "SELECT ?1, task_id, policy, seed, shard FROM src.work_items WHERE run_id = ?2",
                new_id, old_id);

  // The shard's items to copy: new to OUT, or done where OUT has only an error/timeout.
  db.exec("DROP TABLE IF EXISTS temp.pick; "
          "CREATE TEMP TABLE pick (task_id TEXT, policy TEXT, seed INTEGER, replaces INTEGER, "
          "PRIMARY KEY (task_id, policy, seed))");
  exec_with_ids(db,
                "INSERT INTO temp.pick SELECT s.task_id, s.policy, s.seed, m.task_id IS NOT NULL "
                "FROM src.task_results s LEFT JOIN main.task_results m ON m.run_id = ?1 AND m.task_id = s.task_id "
                "AND m.policy = s.policy AND m.seed = s.seed "
                "WHERE s.run_id = ?2 AND (m.task_id IS NULL OR (m.status <> 'done' AND s.status = 'done'))",
                new_id, old_id);
  int64_t picked = db.query_int("SELECT COUNT(*) FROM temp.pick");
  int64_t replaced = db.query_int("SELECT COUNT(*) FROM temp.pick WHERE replaces");
  sum.items_added += picked - replaced;
  sum.items_replaced += replaced;
  sum.items_kept += count(db, "SELECT COUNT(*) FROM src.task_results WHERE run_id = ?1", old_id) - picked;

  copy_step_screenshot_files(db, old_id, in, out);  // the picked rows' files only; paths checked

  const std::string in_pick = " AND (task_id, policy, seed) IN (SELECT task_id, policy, seed FROM temp.pick";
  for (const char* table : {"task_results", "steps", "kv_trace", "step_screenshots"}) {
    auto st = db.prepare(std::string("DELETE FROM main.") + table + " WHERE run_id = ?1" + in_pick + " WHERE replaces)");
    st.bind_int(1, new_id);
    st.step();
  }
  const bool v3 = db.query_int("PRAGMA src.user_version") == 3;  // its rows get schema 4's new columns NULL
  const std::pair<const char*, const char*> tables[] = {
      {"task_results", v3 ? task_result_columns_v3 : task_result_columns},
      {"steps", v3 ? step_columns_v3 : step_columns},
      {"kv_trace", kv_trace_columns},
      {"step_screenshots", step_screenshot_columns}};
  for (const auto& [table, cols] : tables)
    exec_with_ids(db,
                  std::string("INSERT INTO main.") + table + " (run_id, " + cols + ") SELECT ?1, " + cols +
                      " FROM src." + table + " WHERE run_id = ?2" + in_pick + ")",
                  new_id, old_id);
  db.exec("DROP TABLE temp.pick");
}

}  // namespace

bool merge_summary::complete() const {
  for (const auto& r : runs)
    if (!r.missing.empty() || r.done != r.rows) return false;
  return true;
}

std::vector<merge_run_state> run_states(sql_db& db) {
  std::vector<merge_run_state> out;
  std::vector<std::pair<int64_t, std::string>> ids;
  {
    auto st = db.prepare("SELECT run_id, name FROM runs ORDER BY run_id");
    while (st.step()) ids.emplace_back(st.int64(0), st.text(1));
  }
  for (const auto& [id, name] : ids) {
    merge_run_state s;
    s.name = name;
    s.planned = count(db, "SELECT COUNT(*) FROM work_items WHERE run_id = ?1", id);
    s.rows = count(db, "SELECT COUNT(*) FROM task_results WHERE run_id = ?1", id);
    s.done = count(db, "SELECT COUNT(*) FROM task_results WHERE run_id = ?1 AND status = 'done'", id);
    s.missing = missing_items(db, id);
    out.push_back(std::move(s));
  }
  return out;
}

merge_summary merge_results(const std::string& out, const std::vector<std::string>& inputs,
                            const std::string& created_by) {
  merge_summary sum;
  sum.out = out;
  sum.inputs = inputs;
  sql_db db = open_results_file(out, open_mode::write, 60000, created_by);

  // Check every input before copying anything: readable, our schema, runs that agree.
  std::map<std::string, std::pair<run_info, std::string>> seen;  // name -> (identity, where from)
  {
    auto st = db.prepare("SELECT name FROM runs");
    while (st.step())
      if (auto r = find_run(db, st.text(0))) seen[r->info.name] = {r->info, out};
  }
  for (const auto& in : inputs) {
    if (same_file(in, out))
      throw results_error("cannot merge " + in + " into itself: the output file must differ from the shard files");
    results_reader reader(in);
    for (const auto& r : reader.runs()) {
      auto [it, fresh] = seen.try_emplace(r.info.name, r.info, in);
      if (fresh) continue;
      if (auto diff = run_identity_difference(it->second.first, r.info); !diff.empty())
        throw results_error("cannot merge " + in + ": its run " + r.info.name + " differs from the run of that name in " +
                            it->second.second + " (" + diff + "); nothing was merged");
    }
  }

  for (const auto& in : inputs) {
    // Read-only: no lock that would stop a runner still writing the shard.
    auto att = db.prepare("ATTACH DATABASE ?1 AS src");
    att.bind_text(1, readonly_uri(std::filesystem::absolute(in).string()));
    att.step();
    try {
      sql_transaction tx(db);
      std::vector<std::pair<int64_t, std::string>> runs;
      {
        auto st = db.prepare("SELECT run_id, name FROM src.runs ORDER BY run_id");
        while (st.step()) runs.emplace_back(st.int64(0), st.text(1));
      }
      for (const auto& [id, name] : runs) merge_run(db, id, name, in, out, sum);
      tx.commit();
    } catch (...) {
      db.exec("DETACH DATABASE src");
      throw;
    }
    db.exec("DETACH DATABASE src");
  }
  sum.runs = run_states(db);
  return sum;
}

std::string format_merge_summary(const merge_summary& s, size_t max_listed) {
  std::string o = "merged " + std::to_string(s.inputs.size()) + " file(s) into " + s.out + ": " +
                  std::to_string(s.items_added) + " items added, " + std::to_string(s.items_replaced) +
                  " error/timeout items replaced by done ones, " + std::to_string(s.items_kept) +
                  " already there\n";
  size_t listed = 0, not_done = 0;
  for (const auto& r : s.runs) {
    o += "run " + r.name + ": " + std::to_string(r.done) + " done of " +
         (r.planned ? std::to_string(r.planned) + " planned" : "? planned (the shards stored no plan)") + ", " +
         std::to_string(r.rows - r.done) + " error/timeout rows\n";
    not_done += r.planned ? r.missing.size() : size_t(r.rows - r.done);
    if (r.missing.empty()) continue;
    o += "  not done (task_id policy seed shard state):\n";
    for (const auto& m : r.missing) {
      if (listed == max_listed) break;
      ++listed;
      o += "  " + m.planned.item.task_id + " " + m.planned.item.policy + " " + std::to_string(m.planned.item.seed) +
           " " + std::to_string(m.planned.shard) + " " + m.state + "\n";
    }
  }
  size_t total_missing = 0;
  for (const auto& r : s.runs) total_missing += r.missing.size();
  if (total_missing > listed) o += "  ... and " + std::to_string(total_missing - listed) + " more\n";
  if (s.complete()) {
    o += "COMPLETE: every planned item of every run is done\n";
  } else {
    o += "INCOMPLETE: " + std::to_string(not_done) +
         " item(s) not done; run their shards again with resume (done items are skipped) and merge again\n";
  }
  return o;
}

}  // namespace kvarena::results
