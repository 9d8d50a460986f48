// test-runner.cpp: `kvarena run` (agent/runner*.{h,cpp}, cli/cmd-run.cpp), mostly through the
// built binary (KVARENA_BIN) on a tiny random model (dim 64, 2 layers, garbage replies, so
// episodes end by the step limit) with in-process sites and env server:
//   (the plan and the rows of an item: test-runner-plan.cpp)
//   - end to end: 10 tasks x 5 policies, one done row per item with steps, a report row per
//     policy; 2 shards in two processes merged equal an unsharded run on the deterministic
//     columns; SIGKILL mid-run then --resume: every item once, done items not redone;
//     SIGTERM: the items in flight committed, exit 143, the resume command printed; an
//     unreachable env server: error rows and exit 4; a results file of another schema
//     version: exit 1 before any work; bad flags: clear messages (exit 2 for an option the
//     policy does not take); a first prompt over --ctx: error rows; the oracle (alone and
//     with --with-oracle beside the model's policies): 100%, its steps recorded; --jobs 2 =
//     --jobs 1.
#include <gtest/gtest.h>
#include <signal.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "model-random.h"
#include "results-db.h"
#include "runner-plan.h"
#include "runner-progress.h"
#include "runner-record.h"
#include "sqlite-query.h"
#include "test-util.h"
#include "tiny-model-spec.h"

namespace kvarena {
namespace {

namespace fs = std::filesystem;
using test::query;
using test::rows_t;

// ---------------------------------------------------------------- helpers

int64_t count(const std::string& db, const std::string& sql) {
  rows_t r = query(db, sql);
  return r.empty() || r[0].empty() ? -1 : std::stoll(r[0][0]);
}

// COUNT(*) of the file's done rows, -1 while the file or its tables are not there yet.
int64_t done_rows_or_missing(const std::string& db) {
  if (!fs::exists(db)) return -1;
  sqlite3* h = nullptr;
  int64_t n = -1;
  if (sqlite3_open_v2(db.c_str(), &h, SQLITE_OPEN_READWRITE, nullptr) == SQLITE_OK) {
    sqlite3_busy_timeout(h, 10000);
    sqlite3_stmt* st = nullptr;
    if (sqlite3_prepare_v2(h, "SELECT COUNT(*) FROM task_results WHERE status = 'done'", -1, &st, nullptr) ==
            SQLITE_OK &&
        sqlite3_step(st) == SQLITE_ROW)
      n = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
  }
  sqlite3_close(h);
  return n;
}

// `env` without the shard variables of a surrounding Slurm or Kubernetes job.
std::string clean_env() {
  return "env -u SLURM_ARRAY_TASK_ID -u SLURM_ARRAY_TASK_COUNT -u SLURM_ARRAY_TASK_MIN -u SLURM_ARRAY_TASK_MAX "
         "-u SLURM_ARRAY_TASK_STEP -u JOB_COMPLETION_INDEX ";
}

struct run_result {
  int rc = -1;
  std::string out, err;
};

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

const char* const k_policies =
    "full,window:window=64,h2o:heavy=32:recent=32,confkv:n-high=32:n-low=64:protect=16,"
    "freekv:budget=128:sinks=32:window=32:page=32";
const std::vector<std::string> k_labels = {"full", "window:window=64", "h2o:heavy=32:recent=32",
                                           "confkv:n-high=32:n-low=64:protect=16",
                                           "freekv:budget=128:sinks=32:window=32:page=32"};

class Runner : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new std::string(test::temp_dir("runner").string());
    model_ = new std::string(*dir_ + "/tiny.gguf");
    write_random_model(tiny_spec(), *model_);
  }
  // The suite's tiny llama (byte-level vocabulary, no kvarena.* keys); tests that need a
  // variant copy it and change what they test.
  static random_model_spec tiny_spec() {
    return test::tiny_llama_spec(/*n_vocab=*/512, /*n_ctx=*/8192, /*seed=*/3);
  }
  static void TearDownTestSuite() {
    delete dir_;
    delete model_;
  }

  // `kvarena ARGS` with environment assignments `env` ("A=1 B=2"), output captured.
  static run_result run(const std::string& args, const std::string& env = "") {
    static int n = 0;
    const std::string base = *dir_ + "/cmd" + std::to_string(n++);
    const std::string cmd = clean_env() + env + " " + std::string(KVARENA_BIN) + " " + args + " >" + base +
                            ".out 2>" + base + ".err </dev/null";
    run_result r;
    const int st = std::system(cmd.c_str());
    r.rc = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    r.out = test::read_file(base + ".out");
    r.err = test::read_file(base + ".err");
    return r;
  }
  // The model run's common flags: tiny limits, no worked examples (short prompts), 1 thread.
  static std::string model_args(const std::string& suite_limit = "--limit 10") {
    return "--suite " + suite() + " " + suite_limit + " --model " + *model_ +
           " --max-steps 2 --max-new-tokens 8 --max-obs-tokens 256 --examples 0 --threads 1";
  }
  static std::string suite() { return std::string(KVARENA_SOURCE_DIR) + "/tasks/vwa-local"; }
  static std::string policies() { return std::string("--policies ") + k_policies; }

  static std::string* dir_;
  static std::string* model_;
};
std::string* Runner::dir_ = nullptr;
std::string* Runner::model_ = nullptr;

// The columns that greedy decoding makes the same in every run. The agent shows the env
// session's URL prefix (port, tenant) as one fixed origin (agent/url-view.h), so every run
// feeds the model the same tokens and final_url is comparable as stored.
rows_t deterministic_rows(const std::string& db) {
  return query(db,
               "SELECT task_id, policy, seed, status, success, score, steps, answer, final_url, prompt_tokens, "
               "generated_tokens, peak_kv_bytes, peak_kv_host_bytes, peak_kv_logical_bytes, template_id FROM task_results "
               "ORDER BY task_id, policy, seed");
}


// ---------------------------------------------------------------- end to end

TEST_F(Runner, TenTasksFivePoliciesEndToEnd) {
  const std::string db = *dir_ + "/e2e.sqlite";
  const auto t0 = std::chrono::steady_clock::now();
  run_result r = run("run " + model_args() + " " + policies() + " --out " + db);
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ASSERT_EQ(r.rc, 0) << r.err;
  std::printf("50 items in %.1f s\n", s);
  EXPECT_TRUE(contains(r.err, "50 items: 50 ran (50 done, 0 errors")) << r.err;
  EXPECT_EQ(count(db, "SELECT COUNT(*) FROM work_items"), 50);
  EXPECT_EQ(count(db, "SELECT COUNT(*) FROM task_results"), 50);
  EXPECT_EQ(count(db, "SELECT COUNT(*) FROM (SELECT DISTINCT task_id, policy, seed FROM task_results)"), 50);
  EXPECT_EQ(count(db, "SELECT COUNT(*) FROM task_results WHERE status = 'done' AND success IN (0, 1) AND "
                      "peak_kv_bytes > 0 AND steps > 0 AND prompt_tokens > 0 AND finished_at <> ''"),
            50);
  EXPECT_EQ(count(db, "SELECT COUNT(*) FROM task_results WHERE policy LIKE 'freekv%' AND peak_kv_host_bytes > 0"), 10);
  EXPECT_EQ(count(db, "SELECT COUNT(*) FROM task_results WHERE policy NOT LIKE 'freekv%' AND peak_kv_host_bytes > 0"),
            0);
  // Steps rows for every item, the bounded policies below full.
  EXPECT_EQ(count(db, "SELECT COUNT(DISTINCT task_id || policy) FROM steps"), 50);
  EXPECT_EQ(count(db, "SELECT COUNT(*) FROM steps WHERE action = '' OR kv_bytes <= 0 OR prompt_tokens <= 0"), 0);
  EXPECT_GT(count(db, "SELECT COUNT(*) FROM kv_trace"), 0);
  EXPECT_GT(count(db, "SELECT MIN(peak_kv_bytes) FROM task_results WHERE policy = 'full'"),
            count(db, "SELECT MAX(peak_kv_bytes) FROM task_results WHERE policy = 'window:window=64'"));
  // The run's identity: labels as given, options and limits in the config.
  rows_t run_row = query(db, "SELECT name, policies, config FROM runs");
  ASSERT_EQ(run_row.size(), 1u);
  EXPECT_EQ(run_row[0][0], "e2e");
  EXPECT_TRUE(contains(run_row[0][1], "\"window:window=64\"")) << run_row[0][1];
  for (const char* key : {"\"history\":\"full\"", "\"max_steps\":2", "\"max_new_tokens\":8", "\"max_obs_tokens\":256",
                          "\"budget\":128", "\"window\":64", "tiny.gguf"})
    EXPECT_TRUE(contains(run_row[0][2], key)) << key << " in " << run_row[0][2];
  // The report: printed at the end of the run and by `kvarena report`, a row per policy.
  run_result rep = run("report " + db);
  ASSERT_EQ(rep.rc, 0) << rep.err;
  for (const std::string& label : k_labels) {
    EXPECT_TRUE(contains(rep.out, "\n" + label + " ")) << label << "\n" << rep.out;
    EXPECT_TRUE(contains(r.out, "\n" + label + " ")) << label << "\n" << r.out;
  }
  // A rerun without --resume is refused (the run exists), with what to do.
  run_result again = run("run " + model_args("--limit 1") + " " + policies() + " --out " + db);
  EXPECT_EQ(again.rc, 1);
  EXPECT_TRUE(contains(again.err, "--resume")) << again.err;
}

TEST_F(Runner, TwoShardsMergedEqualAnUnshardedRun) {
  const std::string whole = *dir_ + "/whole.sqlite", shards = *dir_ + "/sharded";
  // confkv's budget follows the confidence and freekv's pages the queries: both must come
  // out the same because every run feeds the model the same tokens.
  const std::string args = model_args() +
                           " --policies full,window:window=64,h2o:heavy=32:recent=32,"
                           "confkv:n-high=32:n-low=64:protect=16,freekv:budget=128:sinks=32:window=32:page=32"
                           " --name cmp";
  run_result w = run("run " + args + " --out " + whole);
  ASSERT_EQ(w.rc, 0) << w.err;
  // The two shards in two processes at once.
  std::vector<run_result> sr(2);
  std::vector<std::thread> th;
  for (int i = 0; i < 2; ++i)
    th.emplace_back([&, i] { sr[i] = run("run " + args + " --shard " + std::to_string(i) + "/2 --out " + shards); });
  for (auto& t : th) t.join();
  for (int i = 0; i < 2; ++i) {
    ASSERT_EQ(sr[i].rc, 0) << sr[i].err;
    const std::string f = shards + "/shard-" + std::to_string(i) + "-of-2.sqlite";
    EXPECT_EQ(count(f, "SELECT COUNT(*) FROM work_items"), 50);  // the whole plan in every shard file
    EXPECT_EQ(count(f, "SELECT COUNT(*) FROM work_items WHERE shard = " + std::to_string(i)), 25);
    EXPECT_EQ(count(f, "SELECT COUNT(*) FROM task_results"), 25);
    EXPECT_EQ(count(f, "SELECT COUNT(*) FROM task_results t JOIN work_items w USING (run_id, task_id, policy, seed) "
                       "WHERE w.shard = " + std::to_string(i)),
              25);
  }
  const std::string merged = *dir_ + "/merged.sqlite";
  run_result m = run("merge " + merged + " " + shards + "/shard-0-of-2.sqlite " + shards + "/shard-1-of-2.sqlite");
  ASSERT_EQ(m.rc, 0) << m.out << m.err;
  EXPECT_TRUE(contains(m.out, "COMPLETE")) << m.out;
  const rows_t a = deterministic_rows(whole), b = deterministic_rows(merged);
  ASSERT_EQ(a.size(), 50u);
  EXPECT_EQ(a, b);
  // Each item's steps too (action text, tokens, KV bytes).
  const char* steps_sql =
      "SELECT task_id, policy, seed, step, action, prompt_tokens, generated_tokens, kv_tokens, kv_bytes, "
      "confidence, budget FROM steps "
      "ORDER BY 1, 2, 3, 4";
  EXPECT_EQ(query(whole, steps_sql), query(merged, steps_sql));
}

// Starts `kvarena ARGS` as a child (the returned pid is kvarena itself), output to BASE.out/.err.
pid_t spawn_kvarena(const std::string& args, const std::string& base) {
  const std::string cmd = "exec " + clean_env() + std::string(KVARENA_BIN) + " " + args + " >" + base + ".out 2>" + base + ".err </dev/null";
  const pid_t pid = fork();
  if (pid == 0) {
    execl("/bin/sh", "sh", "-c", cmd.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  return pid;
}

// Polls the results file until it holds `n` done rows (or 60 s pass); returns what it saw.
int64_t wait_for_done_rows(const std::string& db, int64_t n) {
  int64_t seen = -1;
  const auto t0 = std::chrono::steady_clock::now();
  while ((seen = done_rows_or_missing(db)) < n && std::chrono::steady_clock::now() - t0 < std::chrono::seconds(60))
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  return seen;
}

TEST_F(Runner, KilledRunResumesWithEveryItemOnce) {
  const std::string db = *dir_ + "/killed.sqlite";
  // 10 tasks x 2 policies with a worked example in the prompt: a few seconds, long enough
  // to kill it in the middle.
  const std::string args = "run --suite " + suite() + " --limit 10 --model " + *model_ +
                           " --max-steps 2 --max-new-tokens 8 --max-obs-tokens 256 --examples 1 --threads 1"
                           " --policies full,window:window=64 --out " + db;
  const pid_t pid = spawn_kvarena(args, *dir_ + "/killed");
  ASSERT_GT(pid, 0);
  const int64_t seen = wait_for_done_rows(db, 3);
  ASSERT_EQ(kill(pid, SIGKILL), 0);
  int st = 0;
  waitpid(pid, &st, 0);
  ASSERT_TRUE(WIFSIGNALED(st)) << "the run ended before it was killed: " << test::read_file(*dir_ + "/killed.err");
  ASSERT_GE(seen, 3);

  // What survived the kill: whole items only (no steps without their task row).
  const rows_t before = query(db, "SELECT task_id, policy, seed, finished_at FROM task_results ORDER BY 1, 2, 3");
  const int64_t k = static_cast<int64_t>(before.size());
  ASSERT_GE(k, 3);
  ASSERT_LT(k, 20) << "the run finished before the kill";
  EXPECT_EQ(count(db, "SELECT COUNT(*) FROM steps s WHERE NOT EXISTS (SELECT 1 FROM task_results t WHERE "
                      "t.run_id = s.run_id AND t.task_id = s.task_id AND t.policy = s.policy AND t.seed = s.seed)"),
            0);
  std::this_thread::sleep_for(std::chrono::milliseconds(1100));  // a redone item would get a new finished_at

  run_result r = run(args + " --resume");
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_TRUE(contains(r.err, std::to_string(20 - k) + " ran")) << r.err;
  EXPECT_TRUE(contains(r.err, std::to_string(k) + " already done")) << r.err;
  EXPECT_EQ(count(db, "SELECT COUNT(*) FROM task_results WHERE status = 'done'"), 20);
  EXPECT_EQ(count(db, "SELECT COUNT(*) FROM (SELECT task_id, policy, seed FROM task_results GROUP BY 1, 2, 3 "
                      "HAVING COUNT(*) > 1)"),
            0);
  EXPECT_EQ(count(db, "SELECT COUNT(*) FROM runs"), 1);
  const rows_t after = query(db, "SELECT task_id, policy, seed, finished_at FROM task_results ORDER BY 1, 2, 3");
  std::map<std::vector<std::string>, std::string> finished;
  for (const auto& row : after) finished[{row[0], row[1], row[2]}] = row[3];
  for (const auto& row : before) {
    const std::vector<std::string> key = {row[0], row[1], row[2]};
    EXPECT_EQ(finished[key], row[3]) << "redone: " << row[0] << " " << row[1];
  }
  // Resuming a complete run runs nothing.
  run_result again = run(args + " --resume");
  ASSERT_EQ(again.rc, 0) << again.err;
  EXPECT_TRUE(contains(again.err, "0 ran")) << again.err;
}

TEST_F(Runner, SigtermStopsAfterTheItemsInFlight) {
  const std::string db = *dir_ + "/stopped.sqlite";
  const std::string args = "run --suite " + suite() + " --limit 10 --model " + *model_ +
                           " --max-steps 2 --max-new-tokens 8 --max-obs-tokens 256 --examples 1 --threads 1"
                           " --policies full,window:window=64 --jobs 2 --out " + db;
  const pid_t pid = spawn_kvarena(args, *dir_ + "/stopped");
  ASSERT_GT(pid, 0);
  ASSERT_GE(wait_for_done_rows(db, 2), 2);
  ASSERT_EQ(kill(pid, SIGTERM), 0);
  int st = 0;
  waitpid(pid, &st, 0);
  ASSERT_TRUE(WIFEXITED(st));
  const std::string err = test::read_file(*dir_ + "/stopped.err");
  EXPECT_EQ(WEXITSTATUS(st), 128 + SIGTERM) << err;
  EXPECT_TRUE(contains(err, "stopping after the items in flight")) << err;
  EXPECT_TRUE(contains(err, "resume with:")) << err;
  EXPECT_TRUE(contains(err, "--resume")) << err;
  // Every item that started was finished and committed: the rows are whole and done.
  const int64_t k = count(db, "SELECT COUNT(*) FROM task_results");
  EXPECT_LT(k, 20);
  EXPECT_EQ(count(db, "SELECT COUNT(*) FROM task_results WHERE status = 'done'"), k);
  EXPECT_TRUE(contains(err, std::to_string(k) + " ran")) << err;
  run_result r = run(args + " --resume");
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(count(db, "SELECT COUNT(*) FROM task_results WHERE status = 'done'"), 20);
}

TEST_F(Runner, UnreachableEnvServerGivesErrorRowsAndExit4) {
  const std::string db = *dir_ + "/unreachable.sqlite";
  run_result r = run("run " + model_args("--limit 3") +
                     " --policies full,window --env-url http://127.0.0.1:1 --env-tries 2 --env-backoff-ms 10 --out " + db);
  EXPECT_EQ(r.rc, 4) << r.err;
  EXPECT_TRUE(contains(r.err, "6 errors")) << r.err;
  EXPECT_TRUE(contains(r.err, "--resume")) << r.err;
  EXPECT_EQ(count(db, "SELECT COUNT(*) FROM task_results"), 6);
  EXPECT_EQ(count(db, "SELECT COUNT(*) FROM task_results WHERE status = 'error' AND error LIKE "
                      "'%127.0.0.1:1%unreachable after 2 tries%'"),
            6)
      << query(db, "SELECT error FROM task_results LIMIT 1")[0][0];
}

TEST_F(Runner, ChromiumBrowserRunsTheEpisodes) {
  if (!fs::exists("/usr/bin/chromium")) GTEST_SKIP() << "no /usr/bin/chromium (apt-get install chromium)";
  const std::string oracle = *dir_ + "/chromium-oracle.sqlite";
  run_result r = run("run --suite " + suite() + " --agent oracle --browser chromium --limit 2 --jobs 1 --out " + oracle);
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(count(oracle, "SELECT COUNT(*) FROM task_results WHERE status = 'done' AND success = 1"), 2);
  // The model's first observation of the same task with each backend: Chromium's tree is
  // its own (e.g. StaticText under buttons), so the two differ; both have the tab header.
  std::string first[2];
  for (int b = 0; b < 2; ++b) {
    const std::string out = *dir_ + "/browser-" + std::to_string(b) + ".sqlite";
    run_result m = run("run " + model_args("--limit 1") + " --policies full --browser " + (b ? "chromium" : "text") +
                       " --out " + out);
    ASSERT_EQ(m.rc, 0) << m.err;
    first[b] = query(out, "SELECT observation FROM steps WHERE step = 0")[0][0];
    EXPECT_TRUE(contains(first[b], "Tab 0 (current)")) << first[b];
  }
  EXPECT_NE(first[0], first[1]);
}

TEST_F(Runner, ShardFromSlurmVariables) {
  const std::string out = *dir_ + "/slurm";
  const std::string args = "run --suite " + suite() + " --agent oracle --limit 5 --out " + out;
  for (int i = 0; i < 2; ++i) {
    run_result r = run(args, "SLURM_ARRAY_TASK_ID=" + std::to_string(i) + " SLURM_ARRAY_TASK_COUNT=2");
    ASSERT_EQ(r.rc, 0) << r.err;
  }
  // Items sorted by task id as text: 0 1 2 3 4 -> shards 0 1 0 1 0.
  const std::string f0 = out + "/shard-0-of-2.sqlite", f1 = out + "/shard-1-of-2.sqlite";
  EXPECT_EQ(query(f0, "SELECT task_id FROM task_results ORDER BY 1"), (rows_t{{"0"}, {"2"}, {"4"}}));
  EXPECT_EQ(query(f1, "SELECT task_id FROM task_results ORDER BY 1"), (rows_t{{"1"}, {"3"}}));
  EXPECT_EQ(count(f1, "SELECT COUNT(*) FROM work_items"), 5);
  EXPECT_EQ(query(f1, "SELECT name FROM runs"), (rows_t{{"slurm"}}));
  // --shard wins over the variables.
  run_result f = run(args + "2 --shard 0/1", "SLURM_ARRAY_TASK_ID=5 SLURM_ARRAY_TASK_COUNT=2");
  ASSERT_EQ(f.rc, 0) << f.err;
  EXPECT_TRUE(fs::exists(out + "2/shard-0-of-1.sqlite"));
  // Ids outside 0..N-1, an array not starting at 0: refused before anything is written.
  run_result bad = run(args + "3", "SLURM_ARRAY_TASK_ID=2 SLURM_ARRAY_TASK_COUNT=2");
  EXPECT_EQ(bad.rc, 1);
  EXPECT_TRUE(contains(bad.err, "shard index 2 of 2 is not in 0..1")) << bad.err;
  run_result one = run(args + "3", "SLURM_ARRAY_TASK_ID=1 SLURM_ARRAY_TASK_COUNT=2 SLURM_ARRAY_TASK_MIN=1 "
                                   "SLURM_ARRAY_TASK_MAX=2");
  EXPECT_EQ(one.rc, 1);
  EXPECT_TRUE(contains(one.err, "--array=0-1")) << one.err;
  EXPECT_FALSE(fs::exists(out + "3"));
  // Kubernetes: JOB_COMPLETION_INDEX with --shard-count.
  run_result k8s = run(args + "4 --shard-count 3", "JOB_COMPLETION_INDEX=2");
  ASSERT_EQ(k8s.rc, 0) << k8s.err;
  EXPECT_EQ(query(out + "4/shard-2-of-3.sqlite", "SELECT task_id FROM task_results"), (rows_t{{"2"}}));
}

TEST_F(Runner, OtherSchemaVersionIsRefusedBeforeAnyWork) {
  const std::string db = *dir_ + "/v99.sqlite";
  { results::results_writer w(db); }
  query(db, "PRAGMA user_version = 99");
  const std::string bytes = test::read_file(db);
  // The model does not exist: the file's refusal must come first.
  run_result r = run("run --suite " + suite() + " --model /nonexistent.gguf --policies full --out " + db);
  EXPECT_EQ(r.rc, 1);
  EXPECT_TRUE(contains(r.err, "99")) << r.err;
  EXPECT_TRUE(contains(r.err, "version")) << r.err;
  EXPECT_FALSE(contains(r.err, "nonexistent")) << r.err;
  EXPECT_EQ(test::read_file(db), bytes);
}

TEST_F(Runner, VwaTasksOnTheLocalSitesAreRefusedUnlessAskedFor) {
  // A real VisualWebArena task (no kvarena extension) names classifieds: its ids and answers
  // are VWA's content, which the local classifieds does not hold. Refused before any work,
  // with the flag that runs it; --local-sites-for-real-tasks runs it anyway (the oracle has no
  // plan for it: an error row, exit 4, but it ran).
  const std::string suite_dir = *dir_ + "/vwa-raw";
  fs::create_directories(suite_dir);
  std::ofstream(suite_dir + "/0.json") << R"({"task_id": 0, "sites": ["classifieds"], "require_login": false,
    "storage_state": null, "start_url": "__CLASSIFIEDS__", "intent": "Find me the cheapest blue kayak",
    "require_reset": false, "eval": {"eval_types": ["url_match"], "reference_answers": null,
    "reference_url": "__CLASSIFIEDS__/index.php?page=item&id=4799", "program_html": [], "string_note": ""}})";
  const std::string args = "run --suite " + suite_dir + " --agent oracle --out " + *dir_ + "/vwa-raw.sqlite";
  run_result r = run(args);
  EXPECT_EQ(r.rc, 1) << r.err;
  EXPECT_TRUE(contains(r.err, "1 of 1 tasks are VisualWebArena/WebArena tasks on sites served locally")) << r.err;
  EXPECT_TRUE(contains(r.err, "--site classifieds=URL")) << r.err;
  EXPECT_FALSE(fs::exists(*dir_ + "/vwa-raw.sqlite"));
  r = run(args + " --local-sites-for-real-tasks");
  EXPECT_NE(r.rc, 1) << r.err;
  EXPECT_TRUE(fs::exists(*dir_ + "/vwa-raw.sqlite"));
}

TEST_F(Runner, BadFlagsFailWithClearMessages) {
  const std::string s = "run --suite " + suite() + " --model /nonexistent.gguf ";
  const std::string out = " --out " + *dir_ + "/bad.sqlite";
  struct bad_case {
    std::string args, message;
    int rc = 1;  // 2: an option the policy does not take (a bad combination)
  };
  const std::vector<bad_case> cases = {
      {s + "--policies full,wndow" + out, "unknown policy 'wndow'"},
      {s + "--policies window:budget=5" + out,
       "policy 'window:budget=5': unknown option 'budget' for window (valid: window, sinks)", 2},
      {s + "--policies window:kv-int8=1" + out, "unknown option 'kv-int8' for window (valid: window, sinks)", 2},
      {s + "--policies window --kv-int8" + out,
       "kvarena: error: --kv-int8: policy 'window' has no such option (its options: window, sinks)\n", 2},
      {s + "--policies full --window 64" + out, "--window: policy 'full' has no such option (its options: none)", 2},
      {s + "--policies window,h2o:heavy=8:recent=8 --page 64" + out,
       "--page: none of the policies 'window', 'h2o' has such an option (it is an option of freekv)", 2},
      {"run --suite " + suite() + " --agent oracle --tau 0.5" + out,
       "--tau: --agent oracle runs no KV policy, so it has no such option (drop it)", 2},
      {s + "--policies full,full" + out, "'full' is listed twice"},
      {s + "--shard 2/2" + out, "--shard 2/2: the index must be in 0..1"},
      {s + "--shard 1/2 --out " + *dir_ + "/x.sqlite", "--out is a folder"},
      {s + "--limit 0" + out, "--limit 0: give at least 1 task"},
      {s + "--history some" + out, "history mode 'some'"},
      {s + "--seeds 2 --seed-list 1,2" + out, "give one of them"},
      {"run --suite /nonexistent-suite --model /nonexistent.gguf" + out, "--suite /nonexistent-suite: no such folder"},
      {"run --suite " + suite() + " --agent oracle --policies full" + out, "drop --policies"},
      {"run --suite " + suite() + " --agent robot" + out, "--agent robot: use model (default) or oracle"},
      {"run --suite " + suite() + " --agent oracle --with-oracle" + out, "--with-oracle adds the oracle to a model run"},
      {s + "--policies full" + out, "nonexistent.gguf"},  // all else fine: the model's own error
      // A flag some listed policies take applies to those: no refusal, the model's error.
      {s + "--policies window,confkv,freekv --kv-int8 --page 64" + out, "nonexistent.gguf"},
  };
  for (const bad_case& c : cases) {
    SCOPED_TRACE(c.args);
    run_result r = run(c.args);
    EXPECT_EQ(r.rc, c.rc);
    EXPECT_TRUE(contains(r.err, c.message)) << r.err;
    if (c.rc == 2) {
      EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;  // one line
    }
  }
}

// A model whose context cannot hold a task's first prompt: every item an error row saying
// so (not a "done" row of zero steps), exit 4 like any run with error rows.
TEST_F(Runner, FirstPromptOverTheContextIsAnErrorRow) {
  const std::string db = *dir_ + "/small-ctx.sqlite";
  run_result r = run("run " + model_args("--limit 2") + " --ctx 64 --policies full --out " + db);
  EXPECT_EQ(r.rc, 4) << r.err;
  const rows_t rows = query(db, "SELECT status, steps, error FROM task_results ORDER BY task_id");
  ASSERT_EQ(rows.size(), 2u);
  for (const auto& row : rows) {
    EXPECT_EQ(row[0], "error");
    EXPECT_EQ(row[1], "0");
    EXPECT_EQ(row[2].rfind("step 1 prompt: the first prompt (", 0), 0u) << row[2];
    EXPECT_TRUE(contains(row[2], " + max_new_tokens 8 does not fit n_ctx 64: raise --ctx (the model's context "
                                 "length is 8192) or lower --max-obs-tokens (now 256) or --max-new-tokens"))
        << row[2];
  }
}

// The observation budget comes from the model unless --max-obs-tokens is given: a model whose
// GGUF names kvarena.max_obs_tokens 96 has its pages cut there; the fixture's tiny model names
// none, so 1024.
TEST_F(Runner, ObservationBudgetIsTheModelsUnlessGiven) {
  const std::string named = *dir_ + "/budget-96.gguf";
  random_model_spec s = tiny_spec();
  s.seed = 5;
  s.extra_u32 = {{"kvarena.max_obs_tokens", 96}};
  write_random_model(s, named);
  const std::string common = "run --suite " + suite() + " --limit 1 --max-steps 1 --max-new-tokens 4 --examples 0 "
                             "--threads 1 --policies full";
  struct want_t {
    std::string model, flag;
    int64_t budget;
  };
  for (const want_t& w : {want_t{named, "", 96}, want_t{named, " --max-obs-tokens 128", 128},
                          want_t{*model_, "", 1024}}) {
    const std::string db = *dir_ + "/budget-" + std::to_string(w.budget) + ".sqlite";
    run_result r = run(common + " --model " + w.model + w.flag + " --out " + db);
    ASSERT_EQ(r.rc, 0) << r.err;
    const std::string config = query(db, "SELECT config FROM runs")[0][0];
    EXPECT_TRUE(contains(config, "\"max_obs_tokens\":" + std::to_string(w.budget))) << config;
    // Task 0's first page is over 1024 tokens of the tiny model's byte-level vocabulary.
    const std::string marker = "[... observation truncated to " + std::to_string(w.budget) + " tokens ...]";
    EXPECT_EQ(count(db, "SELECT COUNT(*) FROM steps WHERE step = 0 AND instr(observation, '" + marker + "') > 0"), 1)
        << marker;
  }
}

// The history mode comes from the model unless --history is given: the fixture's weights with
// kvarena.history "last" re-prompt each step, so step 1's KV holds step 1's prompt alone (the
// page and the previous action: 396 tokens against step 0's 251, under twice); in full mode
// it holds step 0's prompt and reply too (648, over twice). The fixture's model names none:
// full. Same weights, greedy: every run takes the same actions.
TEST_F(Runner, HistoryIsTheModelsUnlessGiven) {
  const std::string named = *dir_ + "/history-last.gguf";
  random_model_spec s = tiny_spec();
  s.extra_strings = {{"kvarena.history", "last"}};
  write_random_model(s, named);
  const std::string common = "run --suite " + suite() + " --limit 1 --max-steps 2 --max-new-tokens 4 --examples 0 "
                             "--max-obs-tokens 96 --prompt compact --threads 1 --policies full";
  struct want_t {
    std::string model, flag, history;
  };
  int i = 0;
  for (const want_t& w : {want_t{named, "", "last"}, want_t{named, " --history full", "full"},
                          want_t{*model_, "", "full"}, want_t{*model_, " --history last", "last"}}) {
    SCOPED_TRACE(w.model + w.flag);
    const std::string db = *dir_ + "/history-" + std::to_string(i++) + ".sqlite";
    run_result r = run(common + " --model " + w.model + w.flag + " --out " + db);
    ASSERT_EQ(r.rc, 0) << r.err;
    const std::string config = query(db, "SELECT config FROM runs")[0][0];
    EXPECT_TRUE(contains(config, "\"history\":\"" + w.history + "\"")) << config;
    const auto kv = query(db, "SELECT kv_tokens FROM steps ORDER BY step");
    ASSERT_EQ(kv.size(), 2u);
    const int64_t kv0 = std::stoll(kv[0][0]), kv1 = std::stoll(kv[1][0]);
    if (w.history == "last")
      EXPECT_LT(kv1, 2 * kv0) << kv0 << " then " << kv1;
    else
      EXPECT_GT(kv1, 2 * kv0) << kv0 << " then " << kv1;
  }
}

// Without --model the run uses the shipped agent model (models/kvarena-agent.gguf, found
// beside the binary's build folder) and its prompt style; without that file, one line
// naming where it looked.
TEST_F(Runner, NoModelFlagUsesTheShippedAgentModel) {
  const std::string db = *dir_ + "/default-model.sqlite";
  const std::string shipped = std::string(KVARENA_SOURCE_DIR) + "/models/kvarena-agent.gguf";
  run_result r = run("run --suite " + suite() + " --limit 1 --max-steps 1 --max-new-tokens 4 --policies full --out " + db);
  if (!std::filesystem::exists(shipped)) {
    EXPECT_EQ(r.rc, 1);
    EXPECT_TRUE(contains(r.err, "the default model is not there")) << r.err;
    return;
  }
  ASSERT_EQ(r.rc, 0) << r.err;
  rows_t run_row = query(db, "SELECT config FROM runs");
  ASSERT_EQ(run_row.size(), 1u);
  EXPECT_TRUE(contains(run_row[0][0], "models/kvarena-agent.gguf")) << run_row[0][0];
  EXPECT_TRUE(contains(run_row[0][0], "\"prompt\":\"compact\"")) << run_row[0][0];
  EXPECT_TRUE(contains(run_row[0][0], "\"chat_template\":\"chatml\"")) << run_row[0][0];
}

TEST_F(Runner, OracleSolvesEveryTaskAloneAndBesideTheModel) {
  const std::string db = *dir_ + "/oracle.sqlite";
  run_result r = run("run --suite " + suite() + " --agent oracle --limit 6 --jobs 2 --out " + db);
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(query(db, "SELECT policy, COUNT(*), SUM(success), SUM(status = 'done') FROM task_results GROUP BY 1"),
            (rows_t{{"oracle", "6", "6", "6"}}));
  EXPECT_EQ(query(db, "SELECT model FROM runs"), (rows_t{{"oracle"}}));
  EXPECT_TRUE(contains(r.out, "oracle")) << r.out;
  EXPECT_TRUE(contains(r.out, "100.0% (6/6)")) << r.out;
  // Its steps are recorded: one row per action sent, the page it was chosen on beside it.
  // Task 4 ("Search the classifieds for \"camping\".") by hand: type into the header's
  // search box (element 34 on the start page) and press Enter, then stop with no answer.
  EXPECT_EQ(query(db, "SELECT step, action FROM steps WHERE task_id = '4' ORDER BY step"),
            (rows_t{{"0", "type [34] [camping] [1]"}, {"1", "stop []"}}));
  EXPECT_TRUE(contains(query(db, "SELECT observation FROM steps WHERE task_id = '4' AND step = 0")[0][0],
                       "[34] searchbox 'Search'"));
  EXPECT_EQ(query(db, "SELECT COUNT(*) FROM task_results r WHERE steps != "
                      "(SELECT COUNT(*) FROM steps s WHERE s.task_id = r.task_id AND s.policy = r.policy)"),
            (rows_t{{"0"}}));

  // --with-oracle: the oracle's row beside the model's policies in one run.
  const std::string both = *dir_ + "/with-oracle.sqlite";
  run_result w = run("run " + model_args("--limit 3") + " --policies full,window:window=64 --with-oracle --out " + both);
  ASSERT_EQ(w.rc, 0) << w.err;
  EXPECT_EQ(query(both, "SELECT policy, COUNT(*), SUM(success) FROM task_results GROUP BY 1 ORDER BY 1"),
            (rows_t{{"full", "3", "0"}, {"oracle", "3", "3"}, {"window:window=64", "3", "0"}}));
  EXPECT_TRUE(contains(w.out, "\noracle (upper bound)")) << w.out;
  EXPECT_TRUE(contains(query(both, "SELECT config FROM runs")[0][0], "\"policy\":\"oracle\""));
}

TEST_F(Runner, JobsRunItemsAtOnceWithTheSameResults) {
  const std::string one = *dir_ + "/jobs1.sqlite", two = *dir_ + "/jobs2.sqlite";
  const std::string args = model_args("--limit 4") + " --policies full,window:window=64 --name jobs";
  ASSERT_EQ(run("run " + args + " --out " + one).rc, 0);
  run_result r = run("run " + args + " --jobs 2 --out " + two);
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(deterministic_rows(one), deterministic_rows(two));
}

// --batch 4 on the CPU backend: four items at once through the sequence interface, the
// threads shared; every item's rows (actions, steps, answer, success, tokens) as --batch 1's.
TEST_F(Runner, BatchOfFourGivesTheResultsOfBatchOne) {
  const std::string one = *dir_ + "/batch1.sqlite", four = *dir_ + "/batch4.sqlite";
  const std::string args = model_args("--limit 4") + " --policies full,confkv:n-high=32:n-low=64:protect=8 --name batch";
  ASSERT_EQ(run("run " + args + " --batch 1 --out " + one).rc, 0);
  run_result r = run("run " + args + " --batch 4 --out " + four);
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(deterministic_rows(one), deterministic_rows(four));
  const char* steps_sql = "SELECT task_id, policy, seed, step, action, generated_tokens, kv_tokens, kv_logical_bytes, "
                          "confidence, budget FROM steps ORDER BY 1, 2, 3, 4";
  EXPECT_EQ(query(one, steps_sql), query(four, steps_sql));
  const run_result both = run("run " + args + " --batch 4 --jobs 2 --out " + *dir_ + "/both.sqlite");
  EXPECT_EQ(both.rc, 1);
  EXPECT_NE(both.err.find("give one of them"), std::string::npos) << both.err;
}

}  // namespace
}  // namespace kvarena
