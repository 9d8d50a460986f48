// test-results-hardening.cpp: results files that come from elsewhere, and overlapping
// writers (issue 41):
//   - merge: a step_screenshots path that leaves the folder ("x/../../.bashrc", an
//     absolute path) is refused; only the picked rows' screenshots are copied (same-named
//     shards do not overwrite each other's images); a shard that a runner is still writing
//     is attached read-only, so neither side waits for the other;
//   - every connection is defensive (SQLITE_DBCONFIG_DEFENSIVE, trusted_schema off);
//   - write_item never replaces a done row with an error or timeout row.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "results-db.h"
#include "results-merge.h"
#include "step-screenshots.h"
#include "test-util.h"

namespace kvarena::results {
namespace {

namespace fs = std::filesystem;

run_info pilot() {
  run_info r;
  r.name = "pilot";
  r.model = "m.gguf";
  r.suite = "tasks/x";
  r.policies = {"full"};
  r.seeds = {0};
  r.version = "0.1.0";
  return r;
}

task_result result(const std::string& task, item_status st, const std::string& answer = "a") {
  task_result r;
  r.item = {task, "full", 0};
  r.status = st;
  r.success = st == item_status::done;
  r.score = r.success ? 1 : 0;
  r.steps = 1;
  r.answer = answer;
  if (st != item_status::done) r.error = "env server did not answer";
  return r;
}

// A results file at `path` with item `task` done and one step whose screenshot is `png`.
void write_shard(const std::string& path, const std::string& task, const std::string& png) {
  results_writer w(path);
  int64_t run = w.begin_run(pilot(), false);
  task_result r = result(task, item_status::done);
  step_row s;
  s.step = 0;
  s.action = "click [1]";
  s.screenshot_png = png;
  w.write_item(run, r, {s}, {});
}

std::string read_file(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

std::string status_of(const std::string& path, const std::string& task) {
  results_reader rd(path);
  auto st = rd.db().prepare("SELECT status || ' ' || answer FROM task_results WHERE task_id = ?1");
  st.bind_text(1, task);
  return st.step() ? st.text(0) : "";
}

TEST(ResultsHardening, MergeRefusesScreenshotPathsThatLeaveTheFolder) {
  const fs::path dir = test::temp_dir("merge-escape");
  fs::create_directories(dir / "s" / "in");
  fs::create_directories(dir / "o" / "out");
  const std::string shard = (dir / "s" / "in" / "shard.sqlite").string();
  write_shard(shard, "t0", "PNG0");
  std::ofstream(dir / "s" / ".bashrc") << "rm -rf ~\n";  // what the row points at, beside the shard's folder
  for (const std::string& evil : {std::string("x/../../.bashrc"), std::string("../.bashrc"),
                                  (dir / "s" / ".bashrc").string()}) {
    {
      sql_db db = sql_db::open(shard, false, false, 1000);
      auto st = db.prepare("UPDATE step_screenshots SET path = ?1");
      st.bind_text(1, evil);
      st.step();
    }
    const std::string out = (dir / "o" / "out" / "merged.sqlite").string();
    try {
      merge_results(out, {shard});
      ADD_FAILURE() << evil << " was merged";
    } catch (const results_error& e) {
      EXPECT_NE(std::string(e.what()).find("leaves the results folder"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(evil), std::string::npos) << e.what();
    }
    EXPECT_FALSE(fs::exists(dir / "o" / ".bashrc")) << evil;
    EXPECT_EQ(status_of(out, "t0"), "") << "nothing of the refused shard is merged";
  }
  EXPECT_FALSE(path_inside(dir, "a/../../b"));
  EXPECT_FALSE(path_inside(dir, "/etc/passwd"));
  EXPECT_TRUE(path_inside(dir, "a/./b/../c.png"));
  fs::create_directory_symlink("/", dir / "o" / "out" / "link");
  EXPECT_FALSE(path_inside(dir / "o" / "out", "link/etc/passwd")) << "a symlink out";
}

TEST(ResultsHardening, MergeCopiesOnlyThePickedRowsScreenshots) {
  // Two shards of one name in two folders, both holding item t0 (a re-run): the first is
  // picked, and its image must not be overwritten by the second's.
  const fs::path dir = test::temp_dir("merge-picked");
  fs::create_directories(dir / "a");
  fs::create_directories(dir / "b");
  fs::create_directories(dir / "out");
  const std::string a = (dir / "a" / "shard.sqlite").string(), b = (dir / "b" / "shard.sqlite").string();
  write_shard(a, "t0", "FIRST");
  write_shard(b, "t0", "SECOND");
  const std::string out = (dir / "out" / "merged.sqlite").string();
  merge_summary sum = merge_results(out, {a, b});
  EXPECT_EQ(sum.items_added, 1);
  EXPECT_EQ(sum.items_kept, 1);
  results_reader rd(out);
  auto st = rd.db().prepare("SELECT path FROM step_screenshots");
  ASSERT_TRUE(st.step());
  EXPECT_EQ(read_file(dir / "out" / st.text(0)), "FIRST");
}

TEST(ResultsHardening, MergeReadsAShardARunnerIsStillWriting) {
  const fs::path dir = test::temp_dir("merge-live");
  const std::string shard = (dir / "shard.sqlite").string();
  write_shard(shard, "t0", "");
  // The runner, mid-item: its write transaction is open on the shard.
  sql_db runner = sql_db::open(shard, false, false, 2000);
  runner.exec("BEGIN IMMEDIATE");
  runner.exec("UPDATE task_results SET answer = 'being rewritten'");
  const auto start = std::chrono::steady_clock::now();
  merge_summary sum = merge_results((dir / "merged.sqlite").string(), {shard});
  const double waited_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(sum.items_added, 1);
  EXPECT_LT(waited_s, 1.5) << "merge waited for the runner's lock";
  EXPECT_EQ(status_of((dir / "merged.sqlite").string(), "t0"), "done a") << "the committed row";
  runner.exec("COMMIT");  // and the runner was not blocked by merge either
  EXPECT_EQ(status_of(shard, "t0"), "done being rewritten");
  EXPECT_EQ(readonly_uri("/a b/x?y#z%.sqlite"), "file:/a%20b/x%3Fy%23z%25.sqlite?mode=ro");
}

TEST(ResultsHardening, ConnectionsAreDefensive) {
  const fs::path dir = test::temp_dir("defensive");
  const std::string path = (dir / "r.sqlite").string();
  write_shard(path, "t0", "");
  results_reader rd(path);
  EXPECT_EQ(rd.db().query_int("PRAGMA trusted_schema", -1), 0);
  // Defensive mode: the schema cannot be rewritten through writable_schema.
  sql_db db = sql_db::open(path, false, false, 1000);
  EXPECT_EQ(db.query_int("PRAGMA trusted_schema", -1), 0);
  db.exec("PRAGMA writable_schema = ON");
  EXPECT_THROW(db.exec("UPDATE sqlite_master SET sql = 'CREATE TABLE runs (x)' WHERE name = 'runs'"), results_error);
  // A path that starts with "file:" is still a plain file name, not a URI.
  const fs::path cwd = fs::current_path();
  fs::current_path(dir);
  { sql_db plain = sql_db::open("file:odd.sqlite", true, false, 1000); }
  fs::current_path(cwd);
  EXPECT_TRUE(fs::exists(dir / "file:odd.sqlite"));
}

TEST(ResultsHardening, DoneRowIsNeverReplacedByAnError) {
  const fs::path dir = test::temp_dir("done-stays");
  const std::string path = (dir / "r.sqlite").string();
  results_writer w(path);
  int64_t run = w.begin_run(pilot(), false);
  EXPECT_TRUE(w.write_item(run, result("t0", item_status::done, "first"), {}, {}));
  // A second runner overlapping on t0 fails it: the done row stays.
  EXPECT_FALSE(w.write_item(run, result("t0", item_status::error, "x"), {}, {}));
  EXPECT_FALSE(w.write_item(run, result("t0", item_status::timeout, "y"), {}, {}));
  EXPECT_EQ(status_of(path, "t0"), "done first");
  // An error row is replaced by a later error (a retry) and by done.
  EXPECT_TRUE(w.write_item(run, result("t1", item_status::error, "e1"), {}, {}));
  EXPECT_TRUE(w.write_item(run, result("t1", item_status::timeout, "e2"), {}, {}));
  EXPECT_EQ(status_of(path, "t1"), "timeout e2");
  EXPECT_TRUE(w.write_item(run, result("t1", item_status::done, "ok"), {}, {}));
  EXPECT_EQ(status_of(path, "t1"), "done ok");
  // done over done: the later one (a deliberate re-run).
  EXPECT_TRUE(w.write_item(run, result("t1", item_status::done, "again"), {}, {}));
  EXPECT_EQ(status_of(path, "t1"), "done again");
}

}  // namespace
}  // namespace kvarena::results
