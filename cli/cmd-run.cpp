// cmd-run.cpp: `kvarena run`: a suite x policies x seeds evaluation into a results file
// (agent/runner.h does the work; this file turns flags into a runner_config).
//   kvarena run --suite tasks/vwa-local --policies full,window:window=256,h2o,confkv,freekv
//       --model m.gguf [--seeds N | --seed-list 0,5,7] [--limit N] [--out results/runs/NAME.sqlite]
//       [--shard I/N | --shard-count N] [--resume] [--jobs N] [--threads N] ...
//   kvarena run --suite tasks/vwa-local --agent oracle      (the upper-bound row, no model)
//   kvarena run ... --model m.gguf --with-oracle           (model policies + the oracle's row)
//   kvarena run ... --agent-url http://127.0.0.1:8080/v1 [--agent-model NAME] [--agent-images som|none]
//       (an OpenAI-compatible endpoint as the agent's model: agent/agent-model-openai.h)
// The per-policy flags of policy-flags.h (--window, --budget, ...) set every policy's defaults.
// With a shard (--shard, SLURM_ARRAY_TASK_ID/COUNT, or JOB_COMPLETION_INDEX + --shard-count)
// --out is a folder and the file is <out>/shard-I-of-N.sqlite.
// Exit status: 0 every item of this process done (whatever its success); 4 the run went to
// its end but some items are error/timeout rows (listed on stderr; --resume retries them);
// 1 nothing or not everything could run (bad flags, suite, model, results file);
// 128+signal (130, 143) stopped by SIGINT/SIGTERM after the items in flight.
// Progress: one redrawn line on a terminal, else only per-item errors and a summary line
// (stderr); then the report table of the run (stdout).
#include <unistd.h>

#include <atomic>
#include <cctype>
#include <csignal>
#include <cstdlib>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "agent-model-openai.h"
#include "browser/chromium/chromium-cleanup.h"
#include "browser/chromium/chromium-process.h"
#include "cli-commands.h"
#include "eval-flags.h"
#include "default-model.h"
#include "engine-error.h"
#include "gguf-reader.h"
#include "model.h"
#include "policy-flags.h"
#include "results-report.h"
#include "runner.h"
#include "sequence.h"
#include "tokenizer.h"

namespace kvarena::cli {

namespace {

constexpr int k_exit_items_failed = 4;

struct run_args {
  eval_flags eval;  // --judge-url / --judge-model / --site NAME=URL (eval-flags.h)
  bool local_sites_for_real_tasks = false;  // run VWA/WebArena tasks on the local sites anyway
  std::string suite;
  std::string agent = "model";
  std::string model;
  std::string tokenizer_path;
  int64_t seeds = 1;
  std::string seed_list;
  int64_t limit = -1;
  std::string out;
  std::string name;
  std::string shard;
  int64_t shard_count = 0;
  bool resume = false;
  bool with_oracle = false;
  std::string history;  // only when given: the model names its own (kvarena.history)
  int max_steps = 30;
  int64_t max_new_tokens = 256;
  int64_t max_obs_tokens = 1024;
  int examples = 2;
  double max_episode_s = 0;
  int64_t n_ctx = 0;
  std::string chat_template = "auto";
  std::string prompt = "auto";
  std::string backend = "cpu";
  uint64_t site_seed = 1;
  float temp = 0.0f;
  float top_p = 1.0f;
  int32_t top_k = 0;
  int threads = 2;
  int jobs = 1;
  int batch = 1;
  std::string env_url;
  std::string browser = "text";  // every env session's backend
  std::string observation = "text";  // or som: VWA's Set-of-Marks list and a marked screenshot per step
  int env_tries = 3;
  long env_backoff_ms = 250;
  long env_timeout_ms = 120000;
  policy_flags policy;
  std::string agent_url;          // an OpenAI-compatible endpoint as the agent's model
  std::string agent_model;        // its request's "model"
  std::string agent_images;       // som | none ("" : som with --observation som, else none)
  std::string agent_token;        // bearer token ("" : $KVARENA_AGENT_API_KEY)
  int agent_tries = 5;
  long agent_backoff_ms = 1000;
  long agent_timeout_ms = 600000;
  CLI::App* sub = nullptr;  // to ask whether a flag was given
};

std::atomic<bool> g_stop{false};
std::atomic<int> g_signal{0};

extern "C" void on_stop_signal(int sig) {
  if (g_stop.exchange(true)) {  // a second signal: quit now (items are transactional)
    chromium_cleanup_for_exit();
    _exit(128 + sig);
  }
  g_signal = sig;
  const char msg[] = "\nkvarena run: stopping after the items in flight (signal again to quit at once)\n";
  ssize_t ignored = write(STDERR_FILENO, msg, sizeof msg - 1);
  (void)ignored;
}

void install_stop_handlers() {
  struct sigaction sa = {};
  sa.sa_handler = on_stop_signal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
}

// This process's command line with --resume added (for the message after an interruption).
std::string resume_command() {
  std::ifstream f("/proc/self/cmdline", std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  const std::string raw = ss.str();
  std::string cmd;
  bool has_resume = false;
  size_t b = 0;
  while (b < raw.size()) {
    size_t e = raw.find('\0', b);
    if (e == std::string::npos) e = raw.size();
    const std::string arg = raw.substr(b, e - b);
    has_resume |= arg == "--resume";
    bool plain = !arg.empty();
    for (char c : arg) plain &= std::isalnum(static_cast<unsigned char>(c)) || std::string("-_./:=,@%+").find(c) != std::string::npos;
    if (!cmd.empty()) cmd += ' ';
    if (plain) {
      cmd += arg;
    } else {
      cmd += '\'';
      for (char c : arg) cmd += c == '\'' ? std::string("'\\''") : std::string(1, c);
      cmd += '\'';
    }
    b = e + 1;
  }
  if (cmd.empty()) return "the same command with --resume";
  return has_resume ? cmd : cmd + " --resume";
}

bool given(const run_args& a, const char* flag) { return a.sub->get_option(flag)->count() > 0; }

// --agent-url: the endpoint as the agent's model, the model only when named (its tokenizer
// and defaults). Without --policies one "endpoint" row (the endpoint's own KV cache); with
// them (for kvarena serve) a row per policy, whose requests carry it as the "kv" object.
void configure_endpoint(const run_args& a, runner_config& c) {
  if (!a.policy.kv_budget.empty())
    throw usage_error("--kv-budget with --agent-url: not supported (kvarena serve spends a budget itself: start it "
                      "with --kv-budget)");
  if (given(a, "--policies")) {
    for (const kv_policy_spec& p : parse_policy_specs(a.policy)) {
      nlohmann::ordered_json kv = {{"policy", p.name}};
      kv.update(policy_options_json(p));
      c.policies.push_back({p.text, p, policy_options_json(p).dump(), false, kv.dump()});
    }
  } else if (const std::vector<std::string> flags = given_policy_flags(a.policy); !flags.empty()) {
    throw usage_error(flags[0] + " with --agent-url sets an option of the listed --policies, and none is listed "
                                 "(without --policies the endpoint runs its own KV cache)");
  } else {
    c.policies.push_back({"endpoint", {}, "{}"});
  }
  if (given(a, "--backend") || given(a, "--batch") || given(a, "--ctx"))
    throw usage_error("--agent-url: --backend, --batch and --ctx are the embedded engine's; the endpoint has its own");
  c.model_path = a.model;  // optional
  openai_agent_options o;
  o.url = a.agent_url;
  o.model = a.agent_model;
  o.images = a.agent_images.empty() ? (a.observation == "text" ? "none" : a.observation) : a.agent_images;
  if (o.images != "none" && a.observation != o.images)
    throw usage_error("--agent-images " + o.images + " sends each step's " +
                      (o.images == "som" ? "Set-of-Marks screenshot" : "screenshot") + ": it needs --observation " +
                      o.images + " (and --browser chromium)");
  o.api_key = a.agent_token;
  if (o.api_key.empty())
    if (const char* k = std::getenv("KVARENA_AGENT_API_KEY")) o.api_key = k;
  o.tries = a.agent_tries;
  o.backoff_ms = a.agent_backoff_ms;
  o.timeout_ms = a.agent_timeout_ms;
  c.endpoint_model = o.model;
  c.endpoint_images = o.images;
  c.endpoint = make_openai_agent_model(o);
  if (a.with_oracle) c.policies.push_back({"oracle", {}, "{}", true});
}

runner_config make_config(const run_args& a) {
  runner_config c;
  c.suite = a.suite;
  if (given(a, "--limit") && a.limit < 1)
    throw std::invalid_argument("--limit " + std::to_string(a.limit) + ": give at least 1 task (omit --limit for all)");
  c.limit = a.limit < 0 ? 0 : a.limit;
  if (a.agent == "oracle") {
    c.agent = run_agent::oracle;
    if (!a.model.empty()) throw std::invalid_argument("--agent oracle runs no model: drop --model");
    if (!a.agent_url.empty()) throw std::invalid_argument("--agent oracle runs no model: drop --agent-url");
    if (given(a, "--policies"))
      throw std::invalid_argument("--agent oracle runs no KV policy (its row is labelled \"oracle\"): drop --policies");
    if (const std::vector<std::string> flags = given_policy_flags(a.policy); !flags.empty())
      throw usage_error(flags[0] + ": --agent oracle runs no KV policy, so it has no such option (drop it)");
    if (a.with_oracle) throw std::invalid_argument("--with-oracle adds the oracle to a model run; --agent oracle is only that");
    c.policies.push_back({"oracle", {}, "{}", true});
  } else if (a.agent == "model" && !a.agent_url.empty()) {
    configure_endpoint(a, c);
  } else if (a.agent == "model") {
    c.model_path = model_or_default(a.model);
    std::vector<kv_policy_spec> specs = parse_policy_specs(a.policy);
    if (!a.policy.kv_budget.empty()) {  // the budget is spent on the model's shape, for a whole context
      const model_config mc = load_model(c.model_path)->config;
      specs = apply_kv_budget_flag(a.policy, specs, mc, a.n_ctx > 0 ? a.n_ctx : mc.n_ctx);
    }
    for (const kv_policy_spec& p : specs) c.policies.push_back({p.text, p, policy_options_json(p).dump()});
    if (a.with_oracle) c.policies.push_back({"oracle", {}, "{}", true});
  } else {
    throw std::invalid_argument("--agent " + a.agent + ": use model (default) or oracle");
  }
  if (given(a, "--seed-list") && given(a, "--seeds"))
    throw std::invalid_argument("--seeds N and --seed-list LIST: give one of them");
  c.seeds = given(a, "--seed-list") ? parse_seed_list(a.seed_list) : seeds_from_count(a.seeds);
  c.chat_template = a.chat_template;
  if (a.prompt != "auto") parse_prompt_style(a.prompt);  // a bad name stops the run before the model loads
  c.prompt_style = a.prompt;
  c.backend = a.backend;
  if (given(a, "--site-seed") && !a.env_url.empty())
    throw std::invalid_argument("--site-seed sets the in-process sites' content; with --env-url the server decides it "
                                "(kvarena env-server --site-seed)");
  c.site_seed = a.site_seed;
  c.n_ctx = a.n_ctx;
  c.sampling.temperature = a.temp;
  c.sampling.top_p = a.top_p;
  c.sampling.top_k = a.top_k;
  if (given(a, "--history")) c.history = parse_history_mode(a.history);
  c.agent_cfg.early_stop.max_steps = a.max_steps;
  c.agent_cfg.max_new_tokens = a.max_new_tokens;
  if (given(a, "--max-obs-tokens")) c.max_obs_tokens = a.max_obs_tokens;
  c.agent_cfg.n_examples = a.examples;
  c.agent_cfg.max_episode_s = a.max_episode_s;
  c.threads = a.threads;
  c.jobs = a.jobs;
  if (given(a, "--batch") && given(a, "--jobs") && a.batch != a.jobs)
    throw std::invalid_argument("--jobs " + std::to_string(a.jobs) + " and --batch " + std::to_string(a.batch) +
                                ": --batch N already runs N items at once; give one of them");
  c.batch = a.batch;
  c.env_url = a.env_url;
  c.agent_cfg.env.sites = parse_site_flags(a.eval.sites);  // every session's overrides
  if (a.browser == "chromium" && a.env_url.empty() && !chromium_available())
    throw usage_error("--browser chromium needs /usr/bin/chromium, which is missing; install Debian's chromium "
                      "package (scripts/setup.sh) or use --browser text");
  c.agent_cfg.env.browser = a.browser;
  if (a.observation != "text" && a.browser != "chromium")
    throw usage_error("--observation " + a.observation + " needs screenshots: use it with --browser chromium");
  c.agent_cfg.env.observation = a.observation;
  if ((a.eval.has_judge() || !a.eval.vqa_url.empty()) && !a.env_url.empty())
    throw usage_error("--judge-url / --judge-model judge in the env server this run starts; with --env-url the "
                      "server scores: give the judge to `kvarena env-server`");
  c.judge = make_judge(a.eval);
  c.vqa_url = a.eval.vqa_url;
  if (a.eval.allow_file_urls && !a.env_url.empty())
    throw usage_error("--allow-file-urls is the env server's: with --env-url give it to `kvarena env-server`");
  c.allow_file_urls = a.eval.allow_file_urls;
  c.local_sites_for_real_tasks = a.local_sites_for_real_tasks || !a.env_url.empty();  // a server's sites: its own
  c.env.tries = a.env_tries;
  c.env.backoff_ms = a.env_backoff_ms;
  c.env.total_timeout_ms = a.env_timeout_ms;
  if (const char* token = std::getenv("KVARENA_ENV_TOKEN"); token && !a.env_url.empty()) c.env.token = token;
  if (!a.shard.empty()) {
    c.shard = parse_shard(a.shard);
  } else {
    c.shard = shard_from_environment(given(a, "--shard-count") ? std::optional<int64_t>(a.shard_count) : std::nullopt);
  }
  const std::string named = c.agent == run_agent::oracle ? "oracle"
                            : c.endpoint ? "endpoint-" + (a.agent_model.empty() ? std::string("default") : a.agent_model)
                                         : c.model_path;
  c.output = resolve_run_output(a.out, a.name, c.shard, a.suite, named);
  c.resume = a.resume;
  return c;
}

int run_suite_command(const run_args& a) {
  if (a.agent == "model" && a.agent_url.empty()) kvarena::check_backend(a.backend);  // exit 2 before anything else
  runner_config cfg = make_config(a);
  suite_runner runner(cfg);  // suite, plan, results file: refused here before any work

  std::unique_ptr<model> m;
  std::unique_ptr<tokenizer> tok;
  if (cfg.agent == run_agent::model && !cfg.model_path.empty()) {
    m = load_model(cfg.model_path);
    std::vector<kv_policy_spec> specs;
    for (const run_policy& p : cfg.policies)
      if (!p.oracle && !cfg.endpoint) specs.push_back(p.spec);
    check_policy_specs(specs, m->config);
    if (!a.tokenizer_path.empty()) tok = tokenizer::from_llama2c(a.tokenizer_path, m->config.n_vocab);
    else if (m->gguf) tok = tokenizer::from_gguf(*m->gguf);
    else throw engine_error(cfg.model_path + ": not a GGUF file, so it has no vocabulary: pass --tokenizer tokenizer.bin");
  }

  const bool tty = isatty(STDERR_FILENO);
  install_stop_handlers();
  runner_hooks hooks;
  hooks.stop = &g_stop;
  hooks.tty = tty;
  hooks.log = stderr;
  const size_t mine = shard_work_items(runner.plan(), cfg.shard ? cfg.shard->index : 0).size();
  std::string shard_text;
  if (cfg.shard)
    shard_text = ", shard " + std::to_string(cfg.shard->index) + "/" + std::to_string(cfg.shard->count) + " (" +
                 cfg.shard->source + "): " + std::to_string(mine) + " items";
  std::fprintf(stderr, "kvarena run: %s: %zu tasks x %zu policies x %zu seeds = %zu items%s -> %s\n",
               cfg.output.name.c_str(), runner.tasks().size(), cfg.policies.size(), cfg.seeds.size(),
               runner.plan().size(), shard_text.c_str(), cfg.output.file.c_str());
  const runner_summary sum = runner.run(m.get(), tok.get(), hooks);
  std::fprintf(stderr, "%s\n", format_run_summary(sum).c_str());

  try {  // the items are committed whatever happens here: a report failure does not change the status
    results::report_options ro;
    ro.run_name = sum.name;
    std::fputs(results::report_text(results::build_report(sum.file, ro)).c_str(), stdout);
    std::fflush(stdout);
    if (sum.shard && sum.shard->count > 1)
      std::fprintf(stderr, "kvarena run: the table is this shard's; the other shards' items count as not done until "
                           "`kvarena merge OUT.sqlite %s/shard-*-of-%lld.sqlite`\n",
                   std::filesystem::path(sum.file).parent_path().string().c_str(), (long long)sum.shard->count);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "kvarena run: no report: %s (try `kvarena report %s`)\n", e.what(), sum.file.c_str());
  }

  if (sum.interrupted) {
    std::fprintf(stderr, "kvarena run: interrupted: %lld items committed, %lld not started; resume with:\n  %s\n",
                 (long long)sum.ran, (long long)sum.not_started, resume_command().c_str());
    return 128 + (g_signal.load() ? g_signal.load() : SIGINT);
  }
  if (sum.errors + sum.timeouts > 0) {
    std::fprintf(stderr, "kvarena run: %lld items ended in error or timeout (listed above); run again with --resume "
                         "to retry only those\n", (long long)(sum.errors + sum.timeouts));
    return k_exit_items_failed;
  }
  return 0;
}

}  // namespace

void add_run_command(CLI::App& app, command_fn& run) {
  auto* sub = app.add_subcommand("run", "Evaluate an agent on a task suite under KV policies x seeds into a results "
                                        "file (resumable, shardable)");
  auto a = std::make_shared<run_args>();
  a->sub = sub;
  const char* g = "Run";
  sub->add_option("--suite,-s", a->suite, "Task suite folder (tasks/vwa-local, tasks/long-horizon)")->required()->group(g);
  sub->add_option("--agent", a->agent, "model (default) or oracle (the scripted upper bound; no model, no policies)")
      ->group(g);
  sub->add_flag("--with-oracle", a->with_oracle, "Also run the scripted oracle on every task: the report's upper-bound "
                                                "row (policy \"oracle\")")->group(g);
  sub->add_option("--model,-m", a->model, "Model file (GGUF or llama2.c .bin; default models/kvarena-agent.gguf); shared read-only by the items")->group(g);
  sub->add_option("--tokenizer", a->tokenizer_path, "llama2.c tokenizer.bin (for .bin checkpoints)")->group(g);
  sub->add_option("--seeds", a->seeds, "Seeds 0..N-1 per (task, policy)")->capture_default_str()->group(g);
  sub->add_option("--seed-list", a->seed_list, "Explicit seeds instead of --seeds, e.g. 0,5,7")->group(g);
  sub->add_option("--limit", a->limit, "Only the first N tasks of the suite (by id)")->group(g);
  sub->add_option("--out,-o", a->out, "Results file (.sqlite); with a shard a folder that gets shard-I-of-N.sqlite "
                                      "(default results/runs/<name>.sqlite)")->group(g);
  sub->add_option("--name", a->name, "Run name (default: the --out file's stem, or the folder's name)")->group(g);
  sub->add_option("--shard", a->shard, "This process's shard I/N (default: SLURM_ARRAY_TASK_ID/COUNT)")->group(g);
  sub->add_option("--shard-count", a->shard_count, "N for JOB_COMPLETION_INDEX (Kubernetes Indexed Jobs)")->group(g);
  sub->add_flag("--resume", a->resume, "Continue the run of that name in the file: skip its done items")->group(g);
  sub->add_option("--batch", a->batch,
                  "Items at once whose decode steps run as one batched forward call on a device backend "
                  "(--backend cuda); on the CPU they share the --threads threads")
      ->capture_default_str()->check(CLI::Range(1, 256))->group(g);
  sub->add_option("--jobs,-j", a->jobs, "Items at once (each its own engine session)")
      ->capture_default_str()->check(CLI::Range(1, 256))->group(g);
  sub->add_option("--threads,-t", a->threads, "Threads per item's engine session")
      ->capture_default_str()->check(CLI::Range(1, 1024))->group(g);
  const char* ag = "Agent";
  sub->add_option("--history", a->history,
                  "last (VWA: re-prompt each step) or full (one growing sequence) [default: the model's "
                  "kvarena.history, else full]")
      ->group(ag);
  sub->add_option("--max-steps", a->max_steps, "Agent steps per task")->capture_default_str()->check(CLI::Range(1, 100000))->group(ag);
  sub->add_option("--max-new-tokens", a->max_new_tokens, "Tokens generated per step")
      ->capture_default_str()->check(CLI::Range(int64_t(1), int64_t(1) << 30))->group(ag);
  sub->add_option("--max-obs-tokens", a->max_obs_tokens,
                  "Observation budget in model tokens (0: no limit) [default: the model's kvarena.max_obs_tokens, else 1024]")
      ->check(CLI::NonNegativeNumber)->group(ag);
  sub->add_option("--examples", a->examples, "Worked examples in the prompt (0..3)")
      ->capture_default_str()->check(CLI::Range(0, 3))->group(ag);
  sub->add_option("--max-episode-s", a->max_episode_s, "Wall-clock limit per item, seconds (status timeout; 0: none)")
      ->check(CLI::NonNegativeNumber)->group(ag);
  sub->add_option("--ctx", a->n_ctx, "Context length of each session (0: the model's)")->check(CLI::NonNegativeNumber)->group(ag);
  sub->add_option("--chat-template", a->chat_template, "auto (the GGUF's own tokenizer.chat_template, rendered), or a built-in: chatml, llama3, llama2 or plain")
      ->capture_default_str()->group(ag);
  sub->add_option("--backend", a->backend, "Engine backend: cpu, or cuda (a CUDA build and a GPU; exit 2 without)")
      ->capture_default_str()->group(ag);
  sub->add_option("--prompt", a->prompt, "auto (the GGUF's kvarena.prompt_style, else vwa), vwa or compact")
      ->capture_default_str()->group(ag);
  sub->add_option("--temp", a->temp, "Sampling temperature (0 = greedy)")->check(CLI::NonNegativeNumber)->group(ag);
  sub->add_option("--top-p", a->top_p, "Nucleus sampling mass in (0, 1]")->check(CLI::Range(0.0, 1.0))->group(ag);
  sub->add_option("--top-k", a->top_k, "Keep the k most likely tokens (0 = all)")->check(CLI::NonNegativeNumber)->group(ag);
  const char* eg = "Env";
  sub->add_option("--env-url", a->env_url, "An env server to use (default: start one with in-process sites); "
                  "$KVARENA_ENV_TOKEN is sent as its bearer token when set")->group(eg);
  add_eval_flags(sub, a->eval, eg);
  sub->add_flag("--local-sites-for-real-tasks", a->local_sites_for_real_tasks,
                "Run VisualWebArena/WebArena tasks (no kvarena extension) on kvarena's local sites anyway: they "
                "refer to that project's site content, so they are refused without --site NAME=URL or this flag")
      ->group(eg);
  sub->add_option("--browser", a->browser, "Browser of every env session: text, or chromium (headless Chromium: "
                                           "JavaScript locators and prep_actions run for real)")
      ->capture_default_str()->check(CLI::IsMember({"text", "chromium"}))->group(eg);
  sub->add_option("--observation", a->observation,
                  "text (the accessibility tree), or som (Set-of-Marks, --browser chromium: VWA's [id] [TAG] [text] "
                  "list; every step's marked screenshot is saved beside the results file and shown by report --html), "
                  "or screenshot (--browser chromium: the accessibility tree and the screenshot unmarked, saved alike)")
      ->capture_default_str()->check(CLI::IsMember({"text", "som", "screenshot"}))->group(eg);
  sub->add_option("--site-seed", a->site_seed, "Content seed of the in-process sites (the committed suites use 1; "
                                              "suites for another seed: kvarena tasks generate --seed S)")
      ->capture_default_str()->group(eg);
  sub->add_option("--env-tries", a->env_tries, "Attempts per env call that got no answer or a 5xx (1 = no retry)")
      ->capture_default_str()->check(CLI::Range(1, 100))->group(eg);
  sub->add_option("--env-backoff-ms", a->env_backoff_ms, "Wait before the 2nd try, doubled for each further one")
      ->capture_default_str()->check(CLI::NonNegativeNumber)->group(eg);
  sub->add_option("--env-timeout-ms", a->env_timeout_ms, "Limit of one env request")
      ->capture_default_str()->check(CLI::PositiveNumber)->group(eg);
  const char* ug = "Agent endpoint";
  sub->add_option("--agent-url", a->agent_url,
                  "An OpenAI-compatible chat completions endpoint as the agent's model instead of the embedded engine "
                  "(vLLM, llama.cpp's llama-server, an API, `kvarena serve`): http://HOST:PORT/v1; one policy row "
                  "\"endpoint\" (with --policies: a row per policy, sent as kvarena serve's \"kv\" object); --model, when given, only cuts observations with its tokenizer and sets the defaults "
                  "(prompt, history, observation budget; else vwa, last, 1024 tokens estimated at 4 bytes each)")
      ->group(ug);
  sub->add_option("--agent-model", a->agent_model, "The requests' \"model\" (default: \"default\")")->group(ug);
  sub->add_option("--agent-images", a->agent_images,
                  "som: each step's Set-of-Marks screenshot as an image part (needs --observation som); screenshot: "
                  "the unmarked screenshot beside the accessibility tree (needs --observation screenshot); none: text "
                  "only [default: the --observation's screenshot, none with text]")
      ->check(CLI::IsMember({"som", "screenshot", "none"}))->group(ug);
  sub->add_option("--agent-token", a->agent_token, "Bearer token of the endpoint [default: $KVARENA_AGENT_API_KEY]")
      ->group(ug);
  sub->add_option("--agent-tries", a->agent_tries, "Requests per step at most: 429, 5xx and no answer are retried")
      ->capture_default_str()->check(CLI::Range(1, 100))->group(ug);
  sub->add_option("--agent-backoff-ms", a->agent_backoff_ms,
                  "Wait before the 2nd request, doubled for each further one (a Retry-After is honoured, at most 60 s)")
      ->capture_default_str()->check(CLI::NonNegativeNumber)->group(ug);
  sub->add_option("--agent-timeout-ms", a->agent_timeout_ms, "Limit of one request")
      ->capture_default_str()->check(CLI::PositiveNumber)->group(ug);
  add_policy_flags(sub, a->policy, true);
  sub->callback([&run, a] { run = [a] { return run_suite_command(*a); }; });
}

}  // namespace kvarena::cli
