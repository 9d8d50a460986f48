// test-results.cpp: the results database (results/): schema creation and the refusal of
// other schema versions and foreign files; items written and read back; one transaction per
// item (a failing write leaves nothing, a killed writer leaves no partial item); the resume
// set and run identity; merge of shards equals one file written with the same items, and
// lists what is missing.
#include <gtest/gtest.h>

#include <algorithm>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <sys/wait.h>
#include <unistd.h>

#include "results-db.h"
#include "results-merge.h"
#include "results-schema.h"
#include "test-util.h"

namespace kvarena::results {
namespace {

namespace fs = std::filesystem;

run_info make_run(const std::string& name = "pilot") {
  run_info r;
  r.name = name;
  r.model = "m125.gguf";
  r.suite = "tasks/long-horizon";
  r.policies = {"full", "confkv"};
  r.seeds = {1, 2};
  r.version = "0.1.0";
  r.config_json = R"({"max_steps": 30, "history": "full"})";
  return r;
}

// A result whose every field depends on the item, so mixed-up rows show.
task_result make_result(const work_item& it, item_status st = item_status::done) {
  task_result r;
  r.item = it;
  r.status = st;
  int64_t h = int64_t(std::hash<std::string>()(it.task_id + it.policy) % 1000) + it.seed;
  r.success = st == item_status::done && h % 2 == 0;
  r.score = r.success ? 1.0 : 0.0;
  r.steps = 3 + h % 4;
  r.answer = "answer " + it.task_id;
  r.final_url = "http://127.0.0.1:1/" + it.task_id;
  r.prompt_tokens = 1000 + h;
  r.generated_tokens = 100 + h;
  r.peak_kv_bytes = (1 << 20) + h * 1024;
  r.peak_kv_host_bytes = it.policy == "freekv" ? 1 << 24 : 0;
  r.peak_device_bytes = (1 << 28) + h;
  r.peak_kv_logical_bytes = (1 << 19) + h * 512;
  r.peak_process_bytes = (1 << 29) + h * 4096;
  r.template_id = h % 3 == 0 ? -1 : int64_t(h % 7);
  r.eval_detail = st == item_status::done ? "string_match 1: exact match\n" : "";
  r.wall_ms = 1234.5 + double(h);
  r.prefill_ms = 800.25;
  r.decode_ms = 400.75;
  if (st != item_status::done) r.error = "env server did not answer";
  return r;
}

std::vector<step_row> make_steps(const task_result& r) {
  std::vector<step_row> out;
  for (int64_t s = 0; s < r.steps; ++s) {
    step_row st;
    st.step = s;
    st.action = "click [" + std::to_string(10 + s) + "]";
    st.action_error = s == 1 ? "no element 11" : "";
    st.kv_tokens = 500 * (s + 1);
    st.kv_bytes = st.kv_tokens * 4096;
    st.confidence = r.item.policy == "full" ? -1 : 0.5 + 0.1 * double(s % 3);
    st.budget = r.item.policy == "full" ? -1 : 1024;
    st.latency_ms = 20.5 + double(s);
    st.prompt_tokens = 480;
    st.generated_tokens = 20;
    st.kv_logical_bytes = st.kv_tokens * 2048;
    st.process_bytes = (1 << 27) + s * 4096;
    st.observation = "[1] RootWebArea 'Step " + std::to_string(s) + "'\n\t[2] link 'Home'";
    st.output = "Let's think step by step. ```click [" + std::to_string(10 + s) + "]```";
    out.push_back(st);
  }
  return out;
}

std::vector<kv_sample> make_trace(const task_result& r) {
  std::vector<kv_sample> out;
  for (int64_t i = 0; i < 10; ++i)
    out.push_back({i * 128, (i % 4 + 1) * 65536, r.item.policy == "full" ? -1 : 256, i % 2 ? 0.9 : -1,
                   (i % 4 + 1) * 32768});
  return out;
}

void write_full_item(results_writer& w, int64_t run, const work_item& it, item_status st = item_status::done) {
  auto r = make_result(it, st);
  w.write_item(run, r, make_steps(r), make_trace(r));
}

// The sorted work items of make_run() over tasks t0..t(n-1), with shard = k mod n_shards.
std::vector<planned_item> plan(int n_tasks, int n_shards) {
  std::vector<work_item> items;
  for (int t = 0; t < n_tasks; ++t)
    for (const char* p : {"confkv", "full"})
      for (int64_t seed : {1, 2}) items.push_back({std::string("t").append(std::to_string(t)), p, seed});
  std::sort(items.begin(), items.end());
  std::vector<planned_item> out;
  for (size_t k = 0; k < items.size(); ++k) out.push_back({items[k], int64_t(k % n_shards)});
  return out;
}

// Every row of the item tables as text, without run ids and timestamps (which differ between
// files written at different times), sorted: equal sets of rows give equal vectors.
std::vector<std::string> row_set(const std::string& path) {
  results_reader rd(path);
  std::vector<std::string> rows;
  const std::pair<const char*, const char*> tables[] = {
      {"task_results", "task_id, policy, seed, status, success, score, steps, answer, final_url, prompt_tokens, "
                       "generated_tokens, peak_kv_bytes, peak_kv_host_bytes, peak_device_bytes, wall_ms, prefill_ms, "
                       "decode_ms, error, peak_kv_logical_bytes, peak_process_bytes, template_id, eval_detail"},
      {"steps", step_columns},
      {"kv_trace", kv_trace_columns},
      {"work_items", "task_id, policy, seed, shard"},
      {"runs", "name, model, suite, policies, seeds, version, config"}};
  for (const auto& [table, cols] : tables) {
    std::string sql = std::string("SELECT ") + cols + " FROM " + table;
    auto q = rd.db().prepare(sql);
    int n = 1;
    for (const char* c = cols; *c; ++c) n += *c == ',';
    while (q.step()) {
      std::string row = table;
      for (int i = 0; i < n; ++i) {
        row += '|';
        row += q.is_null(i) ? std::string("NULL") : q.text(i);
      }
      rows.push_back(row);
    }
  }
  std::sort(rows.begin(), rows.end());
  return rows;
}

TEST(ResultsSchema, NewFileHasTablesAndVersion) {
  auto dir = test::temp_dir("schema");
  std::string path = (dir / "r.sqlite").string();
  { results_writer w(path, {.created_by = "kvarena test"}); }
  auto db = sql_db::open(path, false, true, 1000);
  EXPECT_EQ(db.query_int("PRAGMA user_version"), results_schema_version);
  EXPECT_EQ(db.query_int("SELECT schema_version FROM meta"), results_schema_version);
  EXPECT_EQ(db.query_text("SELECT created_by FROM meta"), "kvarena test");
  EXPECT_EQ(db.query_text("PRAGMA journal_mode"), "delete");  // rollback journal, never WAL
  for (const char* t : {"runs", "work_items", "task_results", "steps", "kv_trace", "meta"})
    EXPECT_EQ(db.query_int(std::string("SELECT COUNT(*) FROM sqlite_master WHERE type='table' AND name='") + t + "'"), 1)
        << t;
  // Re-opening an existing file keeps it as is.
  { results_writer w(path); }
  EXPECT_EQ(db.query_int("SELECT COUNT(*) FROM meta"), 1);
}

TEST(ResultsSchema, OtherVersionIsRefusedWithAClearMessage) {
  auto dir = test::temp_dir("version");
  std::string path = (dir / "old.sqlite").string();
  { results_writer w(path); }
  {
    auto db = sql_db::open(path, false, false, 1000);
    db.exec("PRAGMA user_version = 7; UPDATE meta SET schema_version = 7");
  }
  const std::string want = "results file " + path + " has schema version 7; this kvarena reads versions " +
                           std::to_string(k_oldest_migrated_version) + " to " + std::to_string(results_schema_version) +
                           ": ";
  for (int mode = 0; mode < 3; ++mode) {
    try {
      if (mode == 0) results_writer w(path);
      if (mode == 1) results_reader r(path);
      if (mode == 2) merge_results((dir / "out.sqlite").string(), {path});
      ADD_FAILURE() << "mode " << mode << ": version 7 accepted";
    } catch (const results_error& e) {
      EXPECT_EQ(std::string(e.what()).substr(0, want.size()), want) << e.what();
    }
  }
}

TEST(ResultsSchema, ForeignAndMissingFilesAreRefused) {
  auto dir = test::temp_dir("foreign");
  std::string other = (dir / "other.sqlite").string(), text = (dir / "notes.txt").string();
  {
    auto db = sql_db::open(other, true, false, 1000);
    db.exec("CREATE TABLE listings (id INTEGER)");
  }
  std::ofstream(text) << "this is not a database, just text long enough to be read as a header.....................\n";
  EXPECT_THROW(results_writer w(other), results_error);
  EXPECT_THROW(results_reader r(other), results_error);
  try {
    results_reader r(text);
    ADD_FAILURE();
  } catch (const results_error& e) {
    EXPECT_NE(std::string(e.what()).find("is not a SQLite file"), std::string::npos) << e.what();
  }
  try {
    results_reader r((dir / "absent.sqlite").string());
    ADD_FAILURE();
  } catch (const results_error& e) {
    EXPECT_NE(std::string(e.what()).find("does not exist"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(fs::exists(dir / "absent.sqlite"));  // reading never creates
}

TEST(ResultsWriter, ItemsReadBackAsWritten) {
  auto dir = test::temp_dir("readback");
  std::string path = (dir / "r.sqlite").string();
  results_writer w(path);
  int64_t run = w.begin_run(make_run(), false);
  work_item a{"t0", "confkv", 1}, b{"t1", "full", 2};
  auto ra = make_result(a), rb = make_result(b, item_status::timeout);
  auto sa = make_steps(ra);
  auto ta = make_trace(ra);
  w.write_item(run, ra, sa, ta);
  w.write_item(run, rb, {}, {});

  results_reader rd(path);
  auto runs = rd.runs();
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].run_id, run);
  EXPECT_EQ(run_identity_difference(runs[0].info, make_run()), "");
  EXPECT_EQ(runs[0].info.version, "0.1.0");
  EXPECT_EQ(runs[0].created_at.size(), 20u);  // 2025-01-02T03:04:05Z

  auto rows = rd.task_results(run);
  ASSERT_EQ(rows.size(), 2u);
  const auto& x = rows[0];
  EXPECT_EQ(x.item, a);
  EXPECT_EQ(x.status, item_status::done);
  EXPECT_EQ(x.success, ra.success);
  EXPECT_EQ(x.score, ra.score);
  EXPECT_EQ(x.steps, ra.steps);
  EXPECT_EQ(x.answer, ra.answer);
  EXPECT_EQ(x.final_url, ra.final_url);
  EXPECT_EQ(x.prompt_tokens, ra.prompt_tokens);
  EXPECT_EQ(x.generated_tokens, ra.generated_tokens);
  EXPECT_EQ(x.peak_kv_bytes, ra.peak_kv_bytes);
  EXPECT_EQ(x.peak_kv_host_bytes, ra.peak_kv_host_bytes);
  EXPECT_EQ(x.peak_device_bytes, ra.peak_device_bytes);
  EXPECT_EQ(x.peak_kv_logical_bytes, ra.peak_kv_logical_bytes);
  EXPECT_EQ(x.peak_process_bytes, ra.peak_process_bytes);
  EXPECT_EQ(x.template_id, ra.template_id);
  EXPECT_EQ(x.eval_detail, ra.eval_detail);
  EXPECT_EQ(x.wall_ms, ra.wall_ms);
  EXPECT_EQ(x.prefill_ms, ra.prefill_ms);
  EXPECT_EQ(x.decode_ms, ra.decode_ms);
  EXPECT_EQ(x.error, "");
  EXPECT_FALSE(x.finished_at.empty());
  EXPECT_EQ(rows[1].item, b);
  EXPECT_EQ(rows[1].status, item_status::timeout);
  EXPECT_EQ(rows[1].error, "env server did not answer");

  auto steps = rd.steps(run, a);
  ASSERT_EQ(steps.size(), sa.size());
  for (size_t i = 0; i < steps.size(); ++i) {
    EXPECT_EQ(steps[i].step, sa[i].step);
    EXPECT_EQ(steps[i].action, sa[i].action);
    EXPECT_EQ(steps[i].action_error, sa[i].action_error);
    EXPECT_EQ(steps[i].kv_tokens, sa[i].kv_tokens);
    EXPECT_EQ(steps[i].kv_bytes, sa[i].kv_bytes);
    EXPECT_DOUBLE_EQ(steps[i].confidence, sa[i].confidence);
    EXPECT_EQ(steps[i].budget, sa[i].budget);
    EXPECT_EQ(steps[i].latency_ms, sa[i].latency_ms);
    EXPECT_EQ(steps[i].prompt_tokens, sa[i].prompt_tokens);
    EXPECT_EQ(steps[i].generated_tokens, sa[i].generated_tokens);
    EXPECT_EQ(steps[i].kv_logical_bytes, sa[i].kv_logical_bytes);
    EXPECT_EQ(steps[i].process_bytes, sa[i].process_bytes);
    EXPECT_EQ(steps[i].observation, sa[i].observation);
    EXPECT_EQ(steps[i].output, sa[i].output);
  }
  auto tr = rd.trace(run, a);
  ASSERT_EQ(tr.size(), ta.size());
  for (size_t i = 0; i < tr.size(); ++i) {
    EXPECT_EQ(tr[i].token_index, ta[i].token_index);
    EXPECT_EQ(tr[i].kv_bytes, ta[i].kv_bytes);
    EXPECT_EQ(tr[i].budget, ta[i].budget);
    EXPECT_DOUBLE_EQ(tr[i].confidence, ta[i].confidence);
    EXPECT_EQ(tr[i].kv_logical_bytes, ta[i].kv_logical_bytes);
  }
  // "Not computed" is NULL for plain sqlite3 users, not -1.
  EXPECT_EQ(rd.db().query_int("SELECT COUNT(*) FROM kv_trace WHERE confidence IS NULL"), 5);
  EXPECT_EQ(rd.db().query_int("SELECT COUNT(*) FROM steps WHERE action_error IS NULL"), int64_t(sa.size()) - 1);
}

TEST(ResultsWriter, AFailedItemWritesNothingAndKeepsTheOldRow) {
  auto dir = test::temp_dir("atomic");
  std::string path = (dir / "r.sqlite").string();
  results_writer w(path);
  int64_t run = w.begin_run(make_run(), false);
  work_item it{"t0", "confkv", 1};
  write_full_item(w, run, it, item_status::error);  // the earlier attempt

  auto r = make_result(it);
  auto steps = make_steps(r);
  ASSERT_GE(steps.size(), 3u);
  steps[2].step = 1;  // two steps numbered 1: the primary key refuses the third insert
  EXPECT_THROW(w.write_item(run, r, steps, make_trace(r)), results_error);
  auto bad_trace = make_trace(r);
  bad_trace.back().token_index = -5;  // CHECK (token_index >= 0) fails on the last row
  EXPECT_THROW(w.write_item(run, r, make_steps(r), bad_trace), results_error);
  EXPECT_THROW(w.write_item(run + 10, r, make_steps(r), {}), results_error);  // no such run

  results_reader rd(path);
  auto rows = rd.task_results(run);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].status, item_status::error);  // the old row, untouched
  auto old = make_result(it, item_status::error);
  EXPECT_EQ(rd.steps(run, it).size(), size_t(old.steps));
  EXPECT_EQ(rd.trace(run, it).size(), 10u);
  EXPECT_EQ(rd.db().query_int("SELECT COUNT(*) FROM steps"), old.steps);

  // The retry that works replaces the error row with its steps and trace.
  write_full_item(w, run, it);
  rows = rd.task_results(run);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].status, item_status::done);
  EXPECT_EQ(rd.db().query_int("SELECT COUNT(*) FROM steps"), r.steps);
  EXPECT_EQ(rd.db().query_int("SELECT COUNT(*) FROM kv_trace"), 10);
}

TEST(ResultsWriter, AKilledWriterLeavesNoPartialItem) {
  auto dir = test::temp_dir("killed");
  std::string path = (dir / "r.sqlite").string();
  int64_t run;
  {
    results_writer w(path);
    run = w.begin_run(make_run(), false);
    write_full_item(w, run, {"t0", "full", 1});
  }
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    // The child dies half-way through an item's transaction, after a tiny page cache has
    // spilled changed pages to the file (so only the journal can undo them).
    try {
      auto db = open_results_file(path, open_mode::write);
      db.exec("PRAGMA cache_size = 2");
      db.exec("BEGIN IMMEDIATE");
      db.exec("INSERT INTO task_results SELECT run_id, 't9', policy, seed, status, success, score, steps, answer, "
              "final_url, prompt_tokens, generated_tokens, peak_kv_bytes, peak_kv_host_bytes, peak_device_bytes, "
              "wall_ms, prefill_ms, decode_ms, error, finished_at, peak_kv_logical_bytes, peak_process_bytes, template_id, "
              "eval_detail, model_calls, model_retries "
              "FROM task_results");
      db.exec("WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < 20000) "
              "INSERT INTO kv_trace SELECT 1, 't9', 'full', 1, i, i, i * 1000, NULL, NULL, i * 500 FROM n");
      kill(getpid(), SIGKILL);  // with the connection still open
    } catch (...) {
      _exit(3);
    }
    _exit(4);
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) << "child status " << status;
  EXPECT_TRUE(fs::exists(path + "-journal"));  // a hot journal was left behind

  results_reader rd(path);  // rolls the journal back
  EXPECT_EQ(rd.task_results(run).size(), 1u);
  EXPECT_EQ(rd.db().query_int("SELECT COUNT(*) FROM kv_trace"), 10);
  EXPECT_EQ(rd.db().query_text("PRAGMA integrity_check"), "ok");
}

TEST(ResultsWriter, ResumeSkipsDoneItemsOnly) {
  auto dir = test::temp_dir("resume");
  std::string path = (dir / "r.sqlite").string();
  int64_t run;
  {
    results_writer w(path);
    run = w.begin_run(make_run(), false);
    w.add_work_items(run, plan(2, 1));
    write_full_item(w, run, {"t0", "full", 1});
    write_full_item(w, run, {"t0", "full", 2}, item_status::error);
    write_full_item(w, run, {"t1", "confkv", 1}, item_status::timeout);
    write_full_item(w, run, {"t1", "confkv", 2});
  }
  results_writer w(path);
  EXPECT_THROW(w.begin_run(make_run(), false), results_error);  // the name exists: --resume or a new name
  EXPECT_EQ(w.begin_run(make_run(), true), run);
  EXPECT_EQ(w.find_run("pilot"), run);
  EXPECT_EQ(w.find_run("other"), std::nullopt);
  std::set<work_item> want = {{"t0", "full", 1}, {"t1", "confkv", 2}};
  EXPECT_EQ(w.done_items(run), want);
  w.add_work_items(run, plan(2, 1));  // again on resume: no change

  auto changed = make_run();
  changed.model = "other.gguf";
  try {
    w.begin_run(changed, true);
    ADD_FAILURE();
  } catch (const results_error& e) {
    EXPECT_NE(std::string(e.what()).find("model m125.gguf vs other.gguf"), std::string::npos) << e.what();
  }
  changed = make_run();
  changed.config_json = R"({"history": "full", "max_steps": 30})";  // same JSON, other key order
  EXPECT_EQ(w.begin_run(changed, true), run);
  changed.config_json = R"({"history": "last", "max_steps": 30})";
  EXPECT_THROW(w.begin_run(changed, true), results_error);
  changed.config_json = "not json";
  EXPECT_THROW(w.begin_run(changed, true), results_error);
  // A second run in the same file is separate.
  auto other = make_run("second");
  int64_t run2 = w.begin_run(other, true);
  EXPECT_NE(run2, run);
  EXPECT_TRUE(w.done_items(run2).empty());

  results_reader rd(path);
  EXPECT_EQ(rd.work_items(run).size(), 8u);
  auto miss = missing_items(rd.db(), run);
  ASSERT_EQ(miss.size(), 6u);  // 8 planned, 2 done
  std::map<std::string, int> states;
  for (const auto& m : miss) ++states[m.state];
  EXPECT_EQ(states["absent"], 4);
  EXPECT_EQ(states["error"], 1);
  EXPECT_EQ(states["timeout"], 1);
}

TEST(ResultsWriter, LongTracesAreDownsampledKeepingTheSawtooth) {
  std::vector<kv_sample> saw;
  for (int64_t i = 0; i < 10000; ++i) saw.push_back({i, 1000 + (i % 500) * 10, 256, -1});  // peaks at i%500==499
  auto d = downsample_trace(saw, 400);
  ASSERT_LE(d.size(), 400u);
  EXPECT_EQ(d.front().token_index, 0);
  EXPECT_EQ(d.back().token_index, 9999);
  for (size_t i = 1; i < d.size(); ++i) EXPECT_LT(d[i - 1].token_index, d[i].token_index);
  int64_t hi = 0, lo = 1 << 30;
  for (const auto& s : d) hi = std::max(hi, s.kv_bytes), lo = std::min(lo, s.kv_bytes);
  EXPECT_EQ(hi, 1000 + 499 * 10);  // the teeth keep their height
  EXPECT_EQ(lo, 1000);
  EXPECT_EQ(downsample_trace(saw, 20000).size(), saw.size());
}

TEST(ResultsMerge, ShardsMergeToTheSameRowsAsOneFile) {
  auto dir = test::temp_dir("merge");
  const int n_shards = 3;
  auto items = plan(4, n_shards);  // 16 items
  std::string single = (dir / "single.sqlite").string();
  {
    results_writer w(single);
    int64_t run = w.begin_run(make_run(), false);
    w.add_work_items(run, items);
    for (const auto& p : items) write_full_item(w, run, p.item);
  }
  std::vector<std::string> shards;
  for (int s = 0; s < n_shards; ++s) {
    shards.push_back((dir / ("shard-" + std::to_string(s) + "-of-3.sqlite")).string());
    results_writer w(shards.back());
    // A shard file with an unrelated run first, so run ids differ between files.
    if (s == 1) w.begin_run(make_run("elsewhere"), false);
    int64_t run = w.begin_run(make_run(), false);
    w.add_work_items(run, items);
    for (const auto& p : items)
      if (p.shard == s) write_full_item(w, run, p.item);
  }
  std::string out = (dir / "merged.sqlite").string();
  auto sum = merge_results(out, shards);
  EXPECT_EQ(sum.items_added, 16);
  EXPECT_EQ(sum.items_kept, 0);
  EXPECT_TRUE(sum.complete()) << format_merge_summary(sum);
  ASSERT_EQ(sum.runs.size(), 2u);  // pilot and elsewhere

  auto merged_rows = row_set(out), single_rows = row_set(single);
  // The merged file also holds run "elsewhere" (no items): drop its runs row.
  std::erase_if(merged_rows, [](const std::string& r) { return r.rfind("runs|elsewhere", 0) == 0; });
  EXPECT_EQ(merged_rows, single_rows);

  // Merging the same shards again adds nothing.
  auto again = merge_results(out, shards);
  EXPECT_EQ(again.items_added, 0);
  EXPECT_EQ(again.items_kept, 16);
  EXPECT_EQ(row_set(out).size(), merged_rows.size() + 1);
  EXPECT_NE(format_merge_summary(again).find("COMPLETE"), std::string::npos);
}

TEST(ResultsMerge, MissingItemsAreListedAndDoneReplacesError) {
  auto dir = test::temp_dir("missing");
  auto items = plan(2, 2);  // 8 items, shard 0 and 1
  std::string s0 = (dir / "shard-0-of-2.sqlite").string(), s1 = (dir / "shard-1-of-2.sqlite").string();
  work_item failed;
  {
    results_writer w(s0);
    int64_t run = w.begin_run(make_run(), false);
    w.add_work_items(run, items);
    bool first = true;
    for (const auto& p : items)
      if (p.shard == 0) {
        write_full_item(w, run, p.item, first ? item_status::error : item_status::done);
        if (first) failed = p.item;
        first = false;
      }
  }
  std::string out = (dir / "merged.sqlite").string();
  auto sum = merge_results(out, {s0});  // shard 1 never ran
  EXPECT_FALSE(sum.complete());
  ASSERT_EQ(sum.runs.size(), 1u);
  EXPECT_EQ(sum.runs[0].planned, 8);
  EXPECT_EQ(sum.runs[0].done, 3);
  ASSERT_EQ(sum.runs[0].missing.size(), 5u);
  int absent = 0;
  for (const auto& m : sum.runs[0].missing) {
    if (m.state == "absent") {
      EXPECT_EQ(m.planned.shard, 1);
      ++absent;
    } else {
      EXPECT_EQ(m.state, "error");
      EXPECT_EQ(m.planned.item, failed);
    }
  }
  EXPECT_EQ(absent, 4);
  std::string text = format_merge_summary(sum);
  EXPECT_NE(text.find("INCOMPLETE: 5 item(s) not done"), std::string::npos) << text;
  EXPECT_NE(text.find(failed.task_id + " " + failed.policy + " " + std::to_string(failed.seed) + " 0 error"),
            std::string::npos)
      << text;

  // Shard 1 runs, shard 0 is resumed (its error item retried): the next merge completes.
  {
    results_writer w(s1);
    int64_t run = w.begin_run(make_run(), true);
    w.add_work_items(run, items);
    for (const auto& p : items)
      if (p.shard == 1) write_full_item(w, run, p.item);
  }
  std::string retry = (dir / "retry.sqlite").string();
  {
    results_writer w(retry);
    int64_t run = w.begin_run(make_run(), true);
    write_full_item(w, run, failed);
  }
  sum = merge_results(out, {s1, retry});
  EXPECT_EQ(sum.items_added, 4);
  EXPECT_EQ(sum.items_replaced, 1);
  EXPECT_TRUE(sum.complete()) << format_merge_summary(sum);
  results_reader rd(out);
  // The replaced item carries the retry's steps only.
  EXPECT_EQ(rd.steps(rd.find_run("pilot")->run_id, failed).size(), size_t(make_result(failed).steps));
}

TEST(ResultsMerge, ConflictingRunsAndSelfMergeAreRefused) {
  auto dir = test::temp_dir("conflict");
  std::string a = (dir / "a.sqlite").string(), b = (dir / "b.sqlite").string(), out = (dir / "out.sqlite").string();
  {
    results_writer w(a);
    int64_t run = w.begin_run(make_run(), false);
    write_full_item(w, run, {"t0", "full", 1});
  }
  {
    results_writer w(b);
    auto r = make_run();
    r.seeds = {1, 2, 3};
    int64_t run = w.begin_run(r, false);
    write_full_item(w, run, {"t1", "full", 1});
  }
  try {
    merge_results(out, {a, b});
    ADD_FAILURE();
  } catch (const results_error& e) {
    EXPECT_NE(std::string(e.what()).find("seeds 1,2 vs 1,2,3"), std::string::npos) << e.what();
  }
  // Checked before copying: a's rows are not in out either.
  EXPECT_EQ(results_reader(out).db().query_int("SELECT COUNT(*) FROM task_results"), 0);
  EXPECT_THROW(merge_results(a, {a}), results_error);
  EXPECT_THROW(merge_results(out, {(dir / "absent.sqlite").string()}), results_error);
}

}  // namespace
}  // namespace kvarena::results
