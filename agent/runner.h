// runner.h: `kvarena run`: a suite x policies x seeds evaluation. Each work item (task,
// policy label, seed) runs one agent episode (agent-loop.h) on its own engine session, or
// the scripted oracle (the upper-bound row, policy label "oracle", no model), and is
// written to the results file in one transaction (results-db.h): a killed process loses at
// most the items in flight, and --resume skips the items already done.
//
// How the CLI drives it (cli/cmd-run.cpp):
//   suite_runner r(cfg);          // suite loaded, plan made, results file opened: a bad
//                                 // suite, shard or file (another schema version) throws
//                                 // here, before any model is loaded or env started
//   load the model; r.run(&model, &tok, hooks)   // begin_run (resume), plan, items
// Items run `jobs` at once on one shared read-only model, each with its own session and
// `threads` threads; the env is an in-process env server (sites included, 127.0.0.1,
// ephemeral ports) unless env_url names one. A task whose agent or env fails becomes an
// error row and the run goes on; an unreachable env server is retried (env_client_options)
// and then recorded the same way. Setting *hooks.stop lets the items in flight finish and
// starts no new one.
//
// The run's identity (runs.config, compared on --resume and by merge) is everything that
// decides the results: suite, task limit, agent, model path, chat template, context,
// history mode, limits, sampling, policies with their effective options, seeds. Not in it:
// threads, jobs, env URL and retries, the shard and the output path, so shards and resumed
// runs may differ in those.
#pragma once
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "agent-loop.h"
#include "agent-model.h"
#include "eval/eval-judge.h"
#include "bench/bench-common.h"
#include "client/env-client.h"
#include "task/task.h"
#include "results-db.h"
#include "runner-plan.h"
#include "sampler.h"

namespace kvarena {

// The version written to runs.version and meta.created_by.
inline constexpr const char* k_kvarena_version = KVARENA_VERSION;  // the CMake project version

// model: the agent loop on the model, one row per policy (plus "oracle" rows when a policy
// has `oracle` set: kvarena run --with-oracle); oracle: only the scripted oracle, no model.
enum class run_agent { model, oracle };

// One policy of the run. The label is what work items and the report call it: the spec
// as the user gave it ("window:window=256"), so two variants of one policy can be compared
// in one run; "oracle" for the oracle agent.
struct run_policy {
  std::string label;
  kv_policy_spec spec;              // the engine's policy and options (unused by the oracle)
  std::string options_json = "{}";  // effective options as a JSON object (into the config)
  bool oracle = false;              // items of this label run the scripted oracle, not the model
  std::string endpoint_kv_json{};   // with an endpoint: the "kv" object its requests carry ("" none)
};

struct runner_config {
  // What is run: the run's identity.
  std::string suite;                   // suite folder (or task file)
  int64_t limit = 0;                   // the first N tasks by id; 0: all
  run_agent agent = run_agent::model;
  std::vector<run_policy> policies;
  std::vector<int64_t> seeds{0};       // the sampler's seed of an item is its seed
  std::string model_path;              // "" for the oracle; with an endpoint: the model whose tokenizer
                                       // cuts observations and whose defaults apply ("" none)
  // The agent's model when not the embedded engine (agent-model.h): run --agent-url's endpoint.
  // Its identity is endpoint_model (the request's model name) and endpoint_images; the URL,
  // like the env URL, is not part of the run's identity (a restarted server may move).
  std::shared_ptr<const agent_model> endpoint;
  std::string endpoint_model;
  std::string endpoint_images = "none";
  std::string chat_template = "auto";  // chat_template::for_model's name
  std::string prompt_style = "auto";   // prompt_style_for_model's name
  std::string backend = "cpu";         // the engine backend of every item (sequence.h)
  uint64_t site_seed = 1;              // content seed of the in-process sites (no env_url)
  int64_t n_ctx = 0;                   // session context; 0: the model's
  sampler_options sampling;            // temperature 0: greedy
  agent_config agent_cfg;              // history, early stop (max_steps), token limits, examples
  // The observation budget: given (0: no limit) or none, the model's (max_obs_tokens_for_model);
  // run() writes the resolved value into agent_cfg.max_obs_tokens and the run's config.
  std::optional<int64_t> max_obs_tokens;
  // The history mode: given, or none: the model's (history_for_model); run() writes the
  // resolved mode into agent_cfg.history and the run's config.
  std::optional<history_mode> history;
  // How it runs: not part of the identity.
  int threads = 2;                     // per item's engine session
  int jobs = 1;                        // items at once
  // --batch N: N items at once whose decode steps a device backend runs as one batched
  // forward call (session_options::decode_batch); on the CPU the N sessions share the
  // --threads threads (each gets threads / N, at least 1). Results equal N = 1's.
  int batch = 1;
  std::string env_url;                 // "" = start an env server with in-process sites
  env_client_options env;              // timeouts and retries of env calls
  std::shared_ptr<fuzzy_judge> judge;  // fuzzy_match judge of the in-process env server (no env_url)
  std::string vqa_url;                 // its page_image_query eval_vqa endpoint
  bool allow_file_urls = false;        // its sessions may open file:// URLs (--allow-file-urls)
  // Run VisualWebArena/WebArena tasks on the local sites although they refer to that
  // project's own site content (--local-sites-for-real-tasks); otherwise refused up front.
  bool local_sites_for_real_tasks = false;
  std::optional<shard_spec> shard;     // nullopt: every item
  run_output output;                   // results file and run name (resolve_run_output)
  bool resume = false;
};

struct runner_hooks {
  const std::atomic<bool>* stop = nullptr;  // when set, no new item starts
  FILE* log = stderr;                       // progress, per-item errors
  bool tty = false;                         // redraw a progress line (else quiet)
};

struct runner_summary {
  std::string file;
  std::string name;
  int64_t run_id = 0;
  std::optional<shard_spec> shard;
  int64_t planned = 0;   // items of the whole plan (every shard)
  int64_t in_shard = 0;  // this process's items
  int64_t skipped = 0;   // already done in the file (resume)
  int64_t ran = 0;       // items run and written by this process
  int64_t done = 0, errors = 0, timeouts = 0, successes = 0;  // of those
  int64_t not_started = 0;  // left when stopped by a signal
  bool interrupted = false;
  double wall_s = 0;
  int64_t not_done() const { return errors + timeouts + not_started; }
};

// "kvarena run: NAME (shard 0/2): 25 items: 25 ran (20 done, 5 errors, 0 timeouts; 12
//  successes), 0 already done; 1m20s; results in FILE"
std::string format_run_summary(const runner_summary& s);

class suite_runner {
 public:
  // Loads the suite (std::invalid_argument listing its problems, or naming a missing
  // folder), makes the plan, and opens the results file, creating its folder (results_error
  // for a file of another schema version or a foreign file). Nothing else is written yet.
  explicit suite_runner(runner_config cfg);
  ~suite_runner();

  const runner_config& config() const { return cfg_; }
  const std::vector<task>& tasks() const { return tasks_; }  // after --limit, by id
  const std::vector<results::planned_item>& plan() const { return plan_; }
  // The run configuration as a JSON object (runs.config). `chat` is the chat template's
  // resolved name ("" for the oracle).
  std::string config_json(const std::string& chat, const std::string& prompt) const;

  // Starts (or, with resume, continues) the run and runs this shard's items not yet done.
  // The model agent needs `llm` and `tok` (shared read-only by the items); the oracle none.
  // Throws results_error when the run cannot be started (a run of that name without
  // resume, or resuming one of another identity) or an item cannot be written.
  runner_summary run(const model* llm, const tokenizer* tok, const runner_hooks& hooks);

 private:
  // Throws std::invalid_argument for VisualWebArena/WebArena tasks on sites served locally
  // (needs_real_site) unless local_sites_for_real_tasks.
  void refuse_tasks_needing_real_sites() const;
  // run()'s stages, in order. The model side every item shares (none for the oracle),
  // resolving the observation budget and history mode into cfg_.agent_cfg.
  model_context resolve_model(const model* llm, const tokenizer* tok);
  // The run begun (or resumed) in the results file with the whole plan; its id.
  int64_t begin_run(const model_context& base);
  // This shard's items not yet done (sum.in_shard and sum.skipped set).
  std::vector<results::work_item> pending_items(runner_summary& sum) const;
  // The env (in-process unless env_url), then the items on `jobs` threads, written and
  // counted into sum as each finishes.
  void run_pending(const std::vector<results::work_item>& todo, const model_context& base, const runner_hooks& hooks,
                   runner_summary& sum);

  runner_config cfg_;
  std::vector<task> tasks_;
  std::vector<results::planned_item> plan_;
  std::unique_ptr<results::results_writer> writer_;
};

}  // namespace kvarena
