// oracle-agent.h: the scripted oracle. It follows a task's plan (oracle-plan.h) through
// the env HTTP API like any agent: create a session, resolve each step's element against
// the current observation text, send the action, stop with the plan's answer, evaluate.
// A task the oracle cannot solve is a bug in the task, its plan, or the site.
//
// Element lookup: when the element is not in the viewport the oracle scrolls (down to the
// end of the page, then back up), as an agent would; those scrolls are real steps.
// Failures name the task, the step and why: an action_error, a missing element (with the
// elements of that role that are there), an "expect" text absent, an early stop, or the
// evaluators' details when the score is below 1.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "client/env-client.h"
#include "eval/eval-judge.h"
#include "task/task.h"
#include "oracle-plan.h"

namespace kvarena {
class env_server;
}

namespace kvarena::tasks {

struct oracle_task_result {
  int64_t task_id = 0;
  std::string origin;   // file the task came from, for messages
  bool solved = false;  // evaluate said success (score 1)
  double score = 0;
  int steps = 0;        // actions sent, scrolls included
  double wall_ms = 0;
  std::string reason;   // why not solved; "" when solved
  // The plan step each action sent served (0-based, scrolls included: a locate's scrolls
  // serve the step they look for), and the task's kvarena.memory as instantiated: a fact
  // seen after plan step k is on screen in the observation of the first action of step k+1.
  std::vector<int> action_plan_steps;
  std::vector<memory_fact> memory;
};

// Sees each action the oracle sends, scrolls included, with the observation it was chosen
// on (the training data records trajectories through it: train-data.h).
using oracle_step_observer = std::function<void(const env_observation& seen, const std::string& action)>;

// One task through `client` (a session is created and deleted) with browser backend
// `browser` ("text" or "chromium").
oracle_task_result run_oracle_task(env_client& client, const task& t, const std::string& origin = "",
                                   const oracle_step_observer& observe = {}, const std::string& browser = "text");

struct oracle_run_options {
  int jobs = 8;  // sessions at once
  std::string browser = "text";  // the sessions' browser backend: "text" or "chromium"
  // Called after each task (from worker threads, serialised): done so far, total.
  std::function<void(size_t done, size_t total, const oracle_task_result&)> progress;
  // Sees every step of every task (from worker threads, not serialised): the task's index in
  // `tasks`, then oracle_step_observer's arguments.
  std::function<void(size_t task_index, const env_observation& seen, const std::string& action)> observe;
};

struct oracle_suite_result {
  std::vector<oracle_task_result> results;  // in the order of the tasks
  size_t solved = 0;
  double wall_s = 0;
  bool all_solved() const { return solved == results.size(); }
};

// Every task, `jobs` at once, through the env server at `client`.
oracle_suite_result run_oracle_suite(env_client& client, const std::vector<task>& tasks,
                                     const std::vector<std::string>& origins, const oracle_run_options& opt = {});

// {"suite", "tasks", "solved", "wall_s", "failed": [{"task_id", "reason"}]} as JSON text.
std::string oracle_summary_json(const std::string& suite, const oracle_suite_result& r);

// An env server on 127.0.0.1 with in-process sites (a tenant per session), sized for
// `sessions` sessions at once; for the oracle, the bench and tests.
// site_seed: the sites' content seed (the committed suites are generated on seed 1).
// judge, vqa_url: env_server_options' (the evaluation of VWA/WebArena tasks);
// allow_file_urls: theirs too (--allow-file-urls).
std::unique_ptr<env_server> start_local_env_server(int sessions, uint64_t site_seed = 1,
                                                   std::shared_ptr<fuzzy_judge> judge = nullptr,
                                                   const std::string& vqa_url = "", bool allow_file_urls = false);

}  // namespace kvarena::tasks
