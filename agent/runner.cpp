// runner.cpp: see runner.h.
#include "runner.h"

#include <chrono>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <map>
#include <mutex>
#include <set>
#include <stdexcept>
#include <thread>

#include <nlohmann/json.hpp>

#include "obs-truncate.h"
#include "oracle-agent.h"
#include "runner-progress.h"
#include "runner-record.h"
#include "server/env-server.h"
#include "task-verdict.h"

namespace kvarena {

namespace {

namespace fs = std::filesystem;
using json = nlohmann::ordered_json;
using clk = std::chrono::steady_clock;

double ms_since(clk::time_point t0) { return std::chrono::duration<double, std::milli>(clk::now() - t0).count(); }

std::vector<task> load_suite(const std::string& suite, int64_t limit) {
  std::error_code ec;
  if (suite.empty()) throw std::invalid_argument("--suite: give a suite folder (e.g. tasks/vwa-local)");
  if (!fs::exists(suite, ec))
    throw std::invalid_argument("--suite " + suite + ": no such folder (the suites are tasks/vwa-local and "
                                "tasks/long-horizon)");
  task_suite s = load_tasks(suite);
  if (!s.ok()) {
    std::string msg = "--suite " + suite + ": " + std::to_string(s.errors.size()) +
                      " problem(s); `kvarena tasks validate " + suite + "` lists them all:";
    for (size_t i = 0; i < s.errors.size() && i < 10; ++i) msg += "\n  " + s.errors[i];
    throw std::invalid_argument(msg);
  }
  if (s.tasks.empty()) throw std::invalid_argument("--suite " + suite + ": no tasks");
  if (limit < 0) throw std::invalid_argument("--limit must be at least 1 (or 0 for all tasks)");
  if (limit > 0 && static_cast<size_t>(limit) < s.tasks.size()) s.tasks.resize(static_cast<size_t>(limit));
  return std::move(s.tasks);
}

// One work item to its rows: the scripted oracle's episode, or the model agent's under the
// item's policy with the item's seed; with the task's template (VWA's intent_template_id)
// for per-template means. Never throws: an agent that throws becomes an error row.
class item_executor {
 public:
  item_executor(const std::vector<task>& tasks, const std::vector<run_policy>& policies, env_client& client,
                const agent_config& cfg, const model_context& base)
      : client_(client), cfg_(cfg), base_(base) {
    for (const task& t : tasks) by_id_[std::to_string(t.task_id)] = &t;
    for (const run_policy& p : policies) by_label_[p.label] = &p;
  }

  item_rows operator()(const results::work_item& item) const {
    item_rows rows = run_item(item);
    if (auto it = by_id_.find(item.task_id); it != by_id_.end())
      rows.result.template_id = it->second->intent_template_id.value_or(-1);
    return rows;
  }

 private:
  item_rows run_item(const results::work_item& item) const {
    const auto ti = clk::now();
    try {
      const task& t = *by_id_.at(item.task_id);
      const run_policy& p = *by_label_.at(item.policy);
      return p.oracle ? run_oracle(item, t) : run_model(item, t, p);
    } catch (const std::exception& e) {  // run_episode reports failures itself; this is a last resort
      return error_rows(item, std::string("agent crashed: ") + e.what(), ms_since(ti));
    } catch (...) {
      return error_rows(item, "agent crashed: unknown exception", ms_since(ti));
    }
  }

  item_rows run_oracle(const results::work_item& item, const task& t) const {
    std::vector<results::step_row> steps;  // the oracle's actions, each with the page it was chosen on
    const auto observe = [&steps](const env_observation& seen, const std::string& action) {
      results::step_row s;
      s.step = static_cast<int64_t>(steps.size());
      s.action = action;
      s.observation = seen.text;
      steps.push_back(std::move(s));
    };
    const tasks::oracle_task_result r = tasks::run_oracle_task(client_, t, "", observe, cfg_.env.browser);
    return rows_from_oracle(item, r, std::move(steps));
  }

  item_rows run_model(const results::work_item& item, const task& t, const run_policy& p) const {
    model_context mc = base_;
    mc.session.kv_policy = p.spec.name;
    mc.session.kv = p.spec.options;
    mc.session.kv_overlap = p.spec.overlap;
    mc.sampling.seed = static_cast<uint64_t>(item.seed);
    mc.endpoint_kv_json = p.endpoint_kv_json;
    return rows_from_episode(item, run_episode(client_, t, cfg_, mc));
  }

  env_client& client_;
  const agent_config& cfg_;
  const model_context& base_;
  std::map<std::string, const task*> by_id_;
  std::map<std::string, const run_policy*> by_label_;
};

// The item's rows into the results file (one transaction); a done row another runner wrote
// is kept and said so. Throws when the file is unusable (disk full, removed).
void write_rows(results::results_writer& writer, int64_t run_id, const item_rows& rows, FILE* log) {
  if (!writer.write_item(run_id, rows.result, rows.steps, rows.trace) && log)
    std::fprintf(log, "kvarena run: %s %s seed %lld: kept the done row another runner wrote (this try: %s)\n",
                 rows.result.item.task_id.c_str(), rows.result.item.policy.c_str(),
                 static_cast<long long>(rows.result.item.seed), results::to_string(rows.result.status));
}

void count_item(const results::task_result& r, runner_summary& sum) {
  ++sum.ran;
  switch (r.status) {
    case results::item_status::done: ++sum.done; break;
    case results::item_status::error: ++sum.errors; break;
    case results::item_status::timeout: ++sum.timeouts; break;
  }
  if (r.success) ++sum.successes;
}

// `todo` on n threads, each item written as it finishes and counted into sum. A stop
// request (hooks.stop) or a failed write starts no new item; the write's error is thrown
// once every thread has ended.
void run_items(const std::vector<results::work_item>& todo, int n, const item_executor& exec,
               results::results_writer& writer, int64_t run_id, const runner_hooks& hooks, runner_summary& sum) {
  run_progress progress(hooks.log, hooks.tty, static_cast<int64_t>(todo.size()));
  std::atomic<size_t> next{0};
  std::atomic<bool> failed{false};
  std::exception_ptr write_error;
  std::mutex mu;  // guards sum's counters and write_error
  auto worker = [&] {
    for (;;) {
      if ((hooks.stop && hooks.stop->load()) || failed.load()) return;
      const size_t i = next++;
      if (i >= todo.size()) return;
      progress.started(todo[i]);
      item_rows rows = exec(todo[i]);
      try {
        write_rows(writer, run_id, rows, hooks.log);
      } catch (...) {  // the file is unusable (disk full, removed): stop, report after the join
        std::lock_guard lock(mu);
        if (!write_error) write_error = std::current_exception();
        failed = true;
        return;
      }
      progress.finished(rows.result);
      std::lock_guard lock(mu);
      count_item(rows.result, sum);
    }
  };
  std::vector<std::thread> threads;
  for (int k = 0; k < n; ++k) threads.emplace_back(worker);
  for (auto& th : threads) th.join();
  progress.clear();
  if (write_error) std::rethrow_exception(write_error);
}

}  // namespace

std::string format_run_summary(const runner_summary& s) {
  std::string out = "kvarena run: " + s.name;
  if (s.shard) out += " (shard " + std::to_string(s.shard->index) + "/" + std::to_string(s.shard->count) + ")";
  out += ": " + std::to_string(s.in_shard) + " items: " + std::to_string(s.ran) + " ran (" + std::to_string(s.done) +
         " done, " + std::to_string(s.errors) + " errors, " + std::to_string(s.timeouts) + " timeouts; " +
         std::to_string(s.successes) + " successes), " + std::to_string(s.skipped) + " already done";
  if (s.not_started) out += ", " + std::to_string(s.not_started) + " not started";
  out += "; " + format_duration(s.wall_s) + "; results in " + s.file;
  return out;
}

suite_runner::suite_runner(runner_config cfg) : cfg_(std::move(cfg)) {
  if (cfg_.policies.empty()) throw std::invalid_argument("a run needs at least one policy");
  for (size_t i = 0; i < cfg_.policies.size(); ++i) {
    if (cfg_.agent == run_agent::oracle && !cfg_.policies[i].oracle)
      throw std::invalid_argument("the oracle agent runs no KV policy ('" + cfg_.policies[i].label + "')");
    for (size_t j = 0; j < i; ++j)
      if (cfg_.policies[j].label == cfg_.policies[i].label)
        throw std::invalid_argument("--policies: '" + cfg_.policies[i].label + "' is listed twice");
  }
  if (cfg_.seeds.empty()) throw std::invalid_argument("a run needs at least one seed");
  if (cfg_.jobs < 1) throw std::invalid_argument("--jobs must be at least 1");
  if (cfg_.batch < 1) throw std::invalid_argument("--batch must be at least 1");
  if (cfg_.threads < 1) throw std::invalid_argument("--threads must be at least 1");
  if (cfg_.output.file.empty() || cfg_.output.name.empty()) throw std::invalid_argument("no results file or run name");
  tasks_ = load_suite(cfg_.suite, cfg_.limit);
  refuse_tasks_needing_real_sites();
  std::vector<std::string> ids, labels;
  for (const task& t : tasks_) ids.push_back(std::to_string(t.task_id));
  for (const run_policy& p : cfg_.policies) labels.push_back(p.label);
  plan_ = plan_work_items(ids, labels, cfg_.seeds, cfg_.shard ? cfg_.shard->count : 1);

  const fs::path parent = fs::path(cfg_.output.file).parent_path();
  std::error_code ec;
  if (!parent.empty()) fs::create_directories(parent, ec);
  if (ec) throw results::results_error("cannot create the folder " + parent.string() + " for " + cfg_.output.file +
                                       ": " + ec.message());
  results::writer_options wo;
  wo.created_by = std::string("kvarena ") + k_kvarena_version;
  writer_ = std::make_unique<results::results_writer>(cfg_.output.file, wo);
}

// Another project's tasks (no kvarena extension) on a site served locally refer to that
// project's site content: every policy would score 0 without a word. Refused up front with
// the sites to give (tasks/task-verdict.h: needs_real_site).
void suite_runner::refuse_tasks_needing_real_sites() const {
  if (cfg_.local_sites_for_real_tasks) return;
  std::set<std::string> given;
  for (const auto& [name, url] : cfg_.agent_cfg.env.sites) given.insert(name);
  std::set<std::string> sites;
  int64_t n = 0;
  for (const task& t : tasks_) {
    const std::vector<std::string> need = tasks::sites_needing_real_site(t, given);
    n += !need.empty();
    sites.insert(need.begin(), need.end());
  }
  if (n == 0) return;
  std::string flags;
  for (const std::string& s : sites) flags += " --site " + s + "=URL";
  throw std::invalid_argument(std::to_string(n) + " of " + std::to_string(tasks_.size()) +
                              " tasks are VisualWebArena/WebArena tasks on sites served locally, whose content is "
                              "not theirs (needs_real_site): give" + flags +
                              ", or --local-sites-for-real-tasks to run them here anyway");
}

suite_runner::~suite_runner() = default;

std::string suite_runner::config_json(const std::string& chat, const std::string& prompt) const {
  const runner_config& c = cfg_;
  const bool oracle = c.agent == run_agent::oracle;
  json j;
  j["agent"] = oracle ? "oracle" : "model";
  j["suite"] = c.suite;
  j["tasks"] = tasks_.size();
  j["limit"] = c.limit;
  if (c.env_url.empty()) j["site_seed"] = c.site_seed;
  json pols = json::array();
  for (const run_policy& p : c.policies) {
    json o = json::parse(p.options_json, nullptr, false);
    if (o.is_discarded()) o = json::object();
    pols.push_back({{"label", p.label}, {"policy", p.oracle ? "oracle" : p.spec.name}, {"options", o}});
  }
  j["policies"] = pols;
  j["seeds"] = c.seeds;
  if (!oracle) {
    const agent_config& a = c.agent_cfg;
    if (c.endpoint) {
      j["agent"] = "endpoint";
      j["endpoint_model"] = c.endpoint_model;
      j["endpoint_images"] = c.endpoint_images;
    }
    j["model"] = c.model_path;
    j["chat_template"] = chat;
    j["backend"] = c.backend;
    j["n_ctx"] = c.n_ctx;
    j["history"] = history_mode_name(a.history);
    j["max_steps"] = a.early_stop.max_steps;
    j["parse_failures"] = a.early_stop.parse_failures;
    j["repeated_actions"] = a.early_stop.repeated_actions;
    j["max_obs_tokens"] = a.max_obs_tokens;
    j["max_new_tokens"] = a.max_new_tokens;
    j["examples"] = a.n_examples;
    j["prompt"] = prompt;
    j["max_episode_s"] = a.max_episode_s;
    j["browser"] = a.env.browser;
    if (a.env.observation != "text") j["observation"] = a.env.observation;
    j["sampling"] = {{"temperature", c.sampling.temperature}, {"top_p", c.sampling.top_p}, {"top_k", c.sampling.top_k}};
  }
  return j.dump();
}

runner_summary suite_runner::run(const model* llm, const tokenizer* tok, const runner_hooks& hooks) {
  const auto t0 = clk::now();
  const model_context base = resolve_model(llm, tok);
  runner_summary sum;
  sum.file = cfg_.output.file;
  sum.name = cfg_.output.name;
  sum.run_id = begin_run(base);
  sum.shard = cfg_.shard;
  sum.planned = static_cast<int64_t>(plan_.size());
  const std::vector<results::work_item> todo = pending_items(sum);
  if (!todo.empty()) run_pending(todo, base, hooks, sum);
  sum.wall_s = std::chrono::duration<double>(clk::now() - t0).count();
  return sum;
}

model_context suite_runner::resolve_model(const model* llm, const tokenizer* tok) {
  model_context base;
  if (cfg_.agent == run_agent::oracle) return base;
  base.agent = cfg_.endpoint;
  base.sampling = cfg_.sampling;
  if (cfg_.endpoint && !llm) {
    // No model named: no tokenizer (observations cut by a byte estimate), the VWA prompt,
    // history last (VWA's: every step one request of system + examples + this step).
    base.tok = tok;
    base.chat = chat_template::by_name(cfg_.chat_template == "auto" ? "plain" : cfg_.chat_template);
    base.style = parse_prompt_style(cfg_.prompt_style == "auto" ? "vwa" : cfg_.prompt_style);
    if (cfg_.max_obs_tokens && *cfg_.max_obs_tokens < 0)
      throw std::invalid_argument("--max-obs-tokens " + std::to_string(*cfg_.max_obs_tokens) + ": give 0 or more");
    cfg_.agent_cfg.max_obs_tokens = cfg_.max_obs_tokens.value_or(k_default_max_obs_tokens);
    cfg_.agent_cfg.history = cfg_.history.value_or(history_mode::last);
    return base;
  }
  if (!llm || !tok) throw std::invalid_argument("the model agent needs a model and its tokenizer");
  base.llm = llm;
  base.tok = tok;
  base.chat = chat_template::for_model(*llm, cfg_.chat_template);
  base.style = prompt_style_for_model(*llm, cfg_.prompt_style);
  cfg_.agent_cfg.max_obs_tokens = max_obs_tokens_for_model(*llm, cfg_.max_obs_tokens);
  cfg_.agent_cfg.history = history_for_model(*llm, cfg_.history);
  if (cfg_.agent_cfg.history == history_mode::full && !base.chat.prefix_stable())
    std::fprintf(stderr,
                 "kvarena: note: the model's chat template is not prefix-stable (it renders earlier turns "
                 "differently once a reply follows them); history full starts a new sequence (session reset, "
                 "history re-encoded) at each step where that happens\n");
  base.backend = cfg_.backend;
  base.session.n_threads = cfg_.threads;
  base.session.decode_batch = cfg_.batch;
  if (cfg_.batch > 1 && cfg_.backend == "cpu") base.session.n_threads = std::max(1, cfg_.threads / cfg_.batch);
  base.session.n_ctx = cfg_.n_ctx;
  base.sampling = cfg_.sampling;
  return base;
}

int64_t suite_runner::begin_run(const model_context& base) {
  const bool oracle = cfg_.agent == run_agent::oracle;
  results::run_info info;
  info.name = cfg_.output.name;
  info.model = oracle ? "oracle"
                      : cfg_.endpoint ? "endpoint:" + (cfg_.endpoint_model.empty() ? std::string("default") : cfg_.endpoint_model)
                                      : cfg_.model_path;
  info.suite = cfg_.suite;
  for (const run_policy& p : cfg_.policies) info.policies.push_back(p.label);
  info.seeds = cfg_.seeds;
  info.version = k_kvarena_version;
  info.config_json = config_json(oracle ? "" : base.chat.name(), oracle ? "" : prompt_style_name(base.style));
  const int64_t run_id = writer_->begin_run(info, cfg_.resume);
  writer_->add_work_items(run_id, plan_);
  return run_id;
}

std::vector<results::work_item> suite_runner::pending_items(runner_summary& sum) const {
  const std::vector<results::work_item> mine = shard_work_items(plan_, cfg_.shard ? cfg_.shard->index : 0);
  sum.in_shard = static_cast<int64_t>(mine.size());
  const std::set<results::work_item> already = writer_->done_items(sum.run_id);
  std::vector<results::work_item> todo;
  for (const auto& it : mine)
    if (!already.count(it)) todo.push_back(it);
  sum.skipped = sum.in_shard - static_cast<int64_t>(todo.size());
  return todo;
}

void suite_runner::run_pending(const std::vector<results::work_item>& todo, const model_context& base,
                               const runner_hooks& hooks, runner_summary& sum) {
  std::unique_ptr<env_server> local;
  std::string url = cfg_.env_url;
  if (url.empty()) {
    local = tasks::start_local_env_server(std::max(cfg_.jobs, cfg_.batch), cfg_.site_seed, cfg_.judge, cfg_.vqa_url,
                                          cfg_.allow_file_urls);
    url = local->base_url();
  }
  env_client client(url, cfg_.env);
  const item_executor exec(tasks_, cfg_.policies, client, cfg_.agent_cfg, base);
  const int n = std::max(1, std::min<int>(std::max(cfg_.jobs, cfg_.batch), static_cast<int>(todo.size())));
  run_items(todo, n, exec, *writer_, sum.run_id, hooks, sum);
  sum.not_started = static_cast<int64_t>(todo.size()) - sum.ran;
  sum.interrupted = sum.not_started > 0;
}

}  // namespace kvarena
