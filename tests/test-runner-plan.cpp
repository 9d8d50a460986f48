// test-runner-plan.cpp: the runner's pure parts (agent/runner-plan.h, runner-record.h):
// sorted items, item k -> shard k mod N; shards from --shard and from the Slurm / Kubernetes
// variables, ids outside 0..N-1 refused; output paths and names; the rows an episode and an
// oracle run become. (The runner end to end: test-runner.cpp.)
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "results-db.h"
#include "runner-plan.h"
#include "runner-progress.h"
#include "runner-record.h"
#include "test-util.h"

namespace kvarena {
namespace {

namespace fs = std::filesystem;

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

// ---------------------------------------------------------------- the plan

TEST(RunnerPlan, SortedItemsGoToShardKModN) {
  const auto plan = plan_work_items({"2", "10", "1"}, {"window", "full"}, {1, 0}, 3);
  ASSERT_EQ(plan.size(), 12u);
  for (size_t k = 0; k < plan.size(); ++k) {
    EXPECT_EQ(plan[k].shard, static_cast<int64_t>(k % 3));
    if (k > 0) {
      EXPECT_TRUE(plan[k - 1].item < plan[k].item) << k;
    }
  }
  EXPECT_EQ(plan[0].item, (results::work_item{"1", "full", 0}));
  EXPECT_EQ(plan[1].item, (results::work_item{"1", "full", 1}));
  EXPECT_EQ(plan[4].item, (results::work_item{"10", "full", 0}));  // task ids sort as text
  // The shards together hold every item exactly once.
  std::vector<results::work_item> all;
  for (int64_t s = 0; s < 3; ++s)
    for (const auto& it : shard_work_items(plan, s)) all.push_back(it);
  EXPECT_EQ(all.size(), plan.size());
  std::sort(all.begin(), all.end());
  EXPECT_EQ(std::adjacent_find(all.begin(), all.end()), all.end());
  // Unsharded: everything in shard 0.
  for (const auto& p : plan_work_items({"1", "2"}, {"full"}, {0}, 1)) EXPECT_EQ(p.shard, 0);
}

TEST(RunnerPlan, ShardFlag) {
  EXPECT_EQ(parse_shard("1/4"), (shard_spec{1, 4, ""}));
  EXPECT_EQ(parse_shard("0/1"), (shard_spec{0, 1, ""}));
  for (const char* bad : {"2/2", "4/2", "1/0", "-1/2", "1", "a/b", "1/2/3", "", "/2"}) {
    SCOPED_TRACE(bad);
    EXPECT_THROW(parse_shard(bad), std::invalid_argument);
  }
  try {
    parse_shard("2/2");
  } catch (const std::invalid_argument& e) {
    EXPECT_TRUE(contains(e.what(), "--shard 2/2: the index must be in 0..1")) << e.what();
  }
}

TEST(RunnerPlan, ShardFromSlurmAndKubernetesVariables) {
  auto env = [](std::map<std::string, std::string> vars) {
    return env_lookup([vars = std::move(vars)](const char* n) -> const char* {
      auto it = vars.find(n);
      return it == vars.end() ? nullptr : it->second.c_str();
    });
  };
  EXPECT_EQ(shard_from_environment(std::nullopt, env({})), std::nullopt);
  auto s = shard_from_environment(std::nullopt, env({{"SLURM_ARRAY_TASK_ID", "3"}, {"SLURM_ARRAY_TASK_COUNT", "4"},
                                                     {"SLURM_ARRAY_TASK_MIN", "0"}, {"SLURM_ARRAY_TASK_MAX", "3"},
                                                     {"SLURM_ARRAY_TASK_STEP", "1"}}));
  ASSERT_TRUE(s);
  EXPECT_EQ(*s, (shard_spec{3, 4, ""}));
  EXPECT_TRUE(contains(s->source, "SLURM_ARRAY_TASK_ID=3"));
  // Ids not 0..N-1: out of range, an array starting at 1, a step, a count missing.
  auto refused = [&](std::map<std::string, std::string> vars, std::optional<int64_t> count, const char* msg) {
    try {
      shard_from_environment(count, env(std::move(vars)));
      ADD_FAILURE() << "not refused: " << msg;
    } catch (const std::invalid_argument& e) {
      EXPECT_TRUE(contains(e.what(), msg)) << e.what();
    }
  };
  refused({{"SLURM_ARRAY_TASK_ID", "4"}, {"SLURM_ARRAY_TASK_COUNT", "4"}}, std::nullopt, "not in 0..3");
  refused({{"SLURM_ARRAY_TASK_ID", "1"}, {"SLURM_ARRAY_TASK_COUNT", "4"}, {"SLURM_ARRAY_TASK_MIN", "1"},
           {"SLURM_ARRAY_TASK_MAX", "4"}},
          std::nullopt, "--array=0-3");
  refused({{"SLURM_ARRAY_TASK_ID", "0"}, {"SLURM_ARRAY_TASK_COUNT", "2"}, {"SLURM_ARRAY_TASK_MIN", "0"},
           {"SLURM_ARRAY_TASK_MAX", "2"}, {"SLURM_ARRAY_TASK_STEP", "2"}},
          std::nullopt, "not 0..1");
  refused({{"SLURM_ARRAY_TASK_ID", "0"}}, std::nullopt, "SLURM_ARRAY_TASK_COUNT is not set");
  refused({{"SLURM_ARRAY_TASK_ID", "x"}, {"SLURM_ARRAY_TASK_COUNT", "2"}}, std::nullopt, "not a non-negative integer");
  // Kubernetes Indexed Jobs: the index from the environment, N from --shard-count.
  EXPECT_EQ(shard_from_environment(5, env({{"JOB_COMPLETION_INDEX", "2"}})), (shard_spec{2, 5, ""}));
  refused({{"JOB_COMPLETION_INDEX", "2"}}, std::nullopt, "pass --shard-count");
  refused({{"JOB_COMPLETION_INDEX", "5"}}, 5, "not in 0..4");
  refused({}, 3, "needs JOB_COMPLETION_INDEX");
}

TEST(RunnerPlan, SeedsAndOutputPaths) {
  EXPECT_EQ(seeds_from_count(3), (std::vector<int64_t>{0, 1, 2}));
  EXPECT_THROW(seeds_from_count(0), std::invalid_argument);
  EXPECT_EQ(parse_seed_list("0,5,7"), (std::vector<int64_t>{0, 5, 7}));
  for (const char* bad : {"", "1,,2", "1,1", "-1", "x"}) {
    EXPECT_THROW(parse_seed_list(bad), std::invalid_argument) << bad;
  }

  run_output o = resolve_run_output("results/runs/abc.sqlite", "", std::nullopt, "tasks/vwa-local", "m.gguf");
  EXPECT_EQ(o.file, "results/runs/abc.sqlite");
  EXPECT_EQ(o.name, "abc");
  o = resolve_run_output("out/run7", "", shard_spec{1, 4, "--shard"}, "tasks/vwa-local", "m.gguf");
  EXPECT_EQ(o.file, "out/run7/shard-1-of-4.sqlite");
  EXPECT_EQ(o.name, "run7");
  o = resolve_run_output("out/run7/", "named", std::nullopt, "tasks/vwa-local", "m.gguf");
  EXPECT_EQ(o.file, "out/run7/shard-0-of-1.sqlite");
  EXPECT_EQ(o.name, "named");
  o = resolve_run_output("", "", std::nullopt, "tasks/vwa-local/", "/models/m125.gguf");
  EXPECT_EQ(o.file, "results/runs/vwa-local-m125.sqlite");
  o = resolve_run_output("", "", shard_spec{0, 2, "--shard"}, "tasks/long-horizon", "oracle");
  EXPECT_EQ(o.file, "results/runs/long-horizon-oracle/shard-0-of-2.sqlite");
  EXPECT_THROW(resolve_run_output("x.sqlite", "", shard_spec{0, 2, "--shard"}, "s", "m"), std::invalid_argument);
  EXPECT_EQ(format_duration(125), "2m05s");
  EXPECT_EQ(format_duration(3725), "1h02m");
  EXPECT_EQ(item_label({"12", "window:window=64", 3}), "task 12 window:window=64 seed 3");
}

// ---------------------------------------------------------------- rows of an item

TEST(RunnerRecord, EpisodeAndOracleRows) {
  episode_result e;
  e.status = "timeout";
  e.end_reason = "Timeout after 5 s";
  e.steps = 2;
  e.answer = "Early stop: Timeout after 5 s";
  e.peak_kv_bytes = 1000;
  e.peak_kv_host_bytes = 2000;
  e.peak_device_bytes = 5000;
  step_record s0;
  s0.index = 0;
  s0.action = "click [3]";
  s0.kv_tokens = 40;
  s0.kv_bytes = 640;
  s0.confidence = 0.5f;
  s0.budget = 64;
  s0.latency_ms = 7;
  s0.prompt_tokens = 30;
  s0.generated_tokens = 8;
  s0.observation = "[1] RootWebArea 'Cars'";
  s0.output = "```click [3]```";
  s0.kv_logical_bytes = 512;
  step_record s1 = s0;
  s1.index = 1;
  s1.action = "none";
  s1.action_error = "no action found";
  s1.confidence = -1;
  s1.budget = -1;
  e.step_records = {s0, s1};
  kv_trace_point p;
  p.token_index = 30;
  p.kv_bytes = 480;
  p.budget = 64;
  p.confidence = 0.25f;
  e.kv_trace = {p};
  e.evaluation.evaluators = {{"string_match", 0, "expected 'blue', got 'red'"}, {"url_match", 1, ""}};
  e.evaluation.notes = {"prep action failed: timeout"};
  const results::work_item item{"7", "window", 1};
  item_rows r = rows_from_episode(item, e);
  EXPECT_EQ(r.result.item, item);
  EXPECT_EQ(r.result.status, results::item_status::timeout);
  EXPECT_EQ(r.result.error, "Timeout after 5 s");
  EXPECT_EQ(r.result.peak_kv_bytes, 1000);
  EXPECT_EQ(r.result.peak_kv_host_bytes, 2000);
  ASSERT_EQ(r.steps.size(), 2u);
  EXPECT_EQ(r.steps[0].action, "click [3]");
  EXPECT_EQ(r.steps[0].observation, "[1] RootWebArea 'Cars'");
  EXPECT_EQ(r.steps[0].output, "```click [3]```");
  EXPECT_EQ(r.steps[0].kv_logical_bytes, 512);
  // A timeout is evaluated: the verdicts, one line each, then the notes.
  EXPECT_EQ(r.result.eval_detail,
            "string_match 0: expected 'blue', got 'red'\nurl_match 1\nnote: prep action failed: timeout\n");
  EXPECT_EQ(r.steps[0].action_error, "");
  EXPECT_EQ(r.steps[0].budget, 64);
  EXPECT_FLOAT_EQ(r.steps[0].confidence, 0.5);
  EXPECT_EQ(r.steps[1].action_error, "no action found");
  EXPECT_LT(r.steps[1].confidence, 0);
  ASSERT_EQ(r.trace.size(), 1u);
  EXPECT_EQ(r.trace[0].token_index, 30);
  EXPECT_EQ(r.trace[0].kv_bytes, 480);

  e.status = "error";
  e.error = "step 2 env: boom";
  EXPECT_EQ(rows_from_episode(item, e).result.error, "step 2 env: boom");
  e.status = "weird";
  EXPECT_EQ(rows_from_episode(item, e).result.status, results::item_status::error);

  tasks::oracle_task_result o;
  o.solved = true, o.score = 1, o.steps = 4;
  EXPECT_EQ(rows_from_oracle(item, o).result.status, results::item_status::done);
  EXPECT_TRUE(rows_from_oracle(item, o).result.success);
  o.solved = false, o.score = 0, o.reason = "evaluation: score 0.00";
  EXPECT_EQ(rows_from_oracle(item, o).result.status, results::item_status::done);
  o.reason = "cannot create a session: unreachable";
  EXPECT_EQ(rows_from_oracle(item, o).result.status, results::item_status::error);
  EXPECT_EQ(rows_from_oracle(item, o).result.error, o.reason);
}

}  // namespace
}  // namespace kvarena
