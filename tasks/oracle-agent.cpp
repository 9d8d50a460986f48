// oracle-agent.cpp: the scripted oracle (see oracle-agent.h).
#include "oracle-agent.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>

#include <nlohmann/json.hpp>

#include "eval/eval-text.h"
#include "oracle-plan.h"
#include "server/env-server.h"

namespace kvarena::tasks {
namespace {

using clk = std::chrono::steady_clock;

constexpr int k_max_scrolls = 8;  // per direction, while looking for an element

// The plan with the session's site URLs in place of the placeholders (the same rule the
// server applies to the task).
bool instantiate_plan(const task& t, const std::map<std::string, std::string>& sites, task_extension* ext,
                      std::string* err) {
  task copy;
  copy.kvarena = t.kvarena;
  site_urls urls(sites.begin(), sites.end());
  std::vector<std::string> left = substitute_placeholders(copy, urls);
  if (!left.empty()) {
    *err = "the plan uses " + left.front() + " but the session has no such site";
    return false;
  }
  return parse_extension(copy.kvarena, ext, err);
}

std::string step_label(size_t i, const plan_step& s) { return "step " + std::to_string(i) + " (" + describe_step(s) + ")"; }

std::string evaluator_details(const eval_result& e) {
  std::string out = "score " + std::to_string(e.score).substr(0, 4);
  for (const evaluator_result& ev : e.evaluators)
    if (ev.score < 1) out += "; " + ev.type + ": " + message_snippet(ev.detail, 600);
  for (const std::string& n : e.notes) out += "; note: " + message_snippet(n, 200);
  return out;
}

// One episode; throws std::runtime_error with the reason of a failure before evaluation.
class episode {
 public:
  episode(env_client& c, std::string id, env_observation first, const oracle_step_observer& observe,
          std::vector<int>* plan_steps)
      : c_(c), id_(std::move(id)), obs_(std::move(first)), observe_(observe), plan_steps_(plan_steps) {}

  int steps() const { return static_cast<int>(plan_steps_->size()); }
  void serving(int plan_step) { plan_step_ = plan_step; }

  env_step_result send(const std::string& action) {
    if (observe_) observe_(obs_, action);
    env_step_result r = c_.step(id_, action);
    plan_steps_->push_back(plan_step_);
    obs_ = r.observation;
    return r;
  }

  // The element's id, scrolling down then up to find it when it is not in view.
  int64_t locate(const element_ref& ref, const std::string& label) {
    std::string why;
    auto elements = parse_observation(obs_.text);
    if (auto id = find_element(elements, ref, &why)) return *id;
    for (const char* dir : {"down", "up"}) {
      for (int k = 0; k < k_max_scrolls; ++k) {
        std::string before = obs_.text;
        env_step_result r = send(std::string("scroll [") + dir + "]");
        if (r.done) throw std::runtime_error(label + ": the episode ended while scrolling (" + r.reason.value_or("") + ")");
        if (auto id = find_element(parse_observation(obs_.text), ref, nullptr)) return *id;
        if (obs_.text == before) break;  // the end of the page
      }
    }
    throw std::runtime_error(label + ": " + why + " (page " + obs_.url + ", also after scrolling)");
  }

  const env_observation& observation() const { return obs_; }

 private:
  env_client& c_;
  std::string id_;
  env_observation obs_;
  const oracle_step_observer& observe_;
  std::vector<int>* plan_steps_;  // per action sent: the plan step it served (their count: steps())
  int plan_step_ = 0;
};

}  // namespace

oracle_task_result run_oracle_task(env_client& client, const task& t, const std::string& origin,
                                   const oracle_step_observer& observe, const std::string& browser) {
  const auto t0 = clk::now();
  oracle_task_result r;
  r.task_id = t.task_id;
  r.origin = origin;
  auto finish = [&](std::string reason) {
    r.reason = std::move(reason);
    r.wall_ms = std::chrono::duration<double, std::milli>(clk::now() - t0).count();
    return r;
  };

  task_extension raw;
  std::string err;
  if (!parse_extension(t.kvarena, &raw, &err)) return finish(err);

  env_created created;
  try {
    env_create_options create;
    create.browser = browser;
    created = client.create_session(t, create);
  } catch (const std::exception& e) {
    return finish(std::string("cannot create a session: ") + e.what());
  }
  const std::string id = created.session_id;
  try {
    task_extension ext;
    if (!instantiate_plan(t, client.session_info(id).sites, &ext, &err)) {
      client.close(id);
      return finish(err);
    }
    r.memory = ext.memory;
    episode ep(client, id, created.observation, observe, &r.action_plan_steps);
    for (size_t i = 0; i < ext.plan.size(); ++i) {
      const plan_step& s = ext.plan[i];
      ep.serving(static_cast<int>(i));
      const std::string label = step_label(i, s);
      int64_t element = -1;
      if (s.action == "click" || s.action == "type" || s.action == "hover" || s.action == "clear")
        element = ep.locate(s.target, label);
      env_step_result res = ep.send(step_action_text(s, element));
      if (res.action_error) throw std::runtime_error(label + ": action error: " + *res.action_error);
      if (s.action == "stop") break;
      if (res.done) throw std::runtime_error(label + ": the episode ended early: " + res.reason.value_or("?"));
      for (const std::string& want : s.expect)
        if (!observation_shows(ep.observation().text, want))
          throw std::runtime_error(label + ": expected " + quote_for_detail(want, 120) + " in the observation of " +
                                   ep.observation().url + ", it is not there");
    }
    r.steps = ep.steps();
    eval_result ev = client.evaluate(id);
    r.score = ev.score;
    r.solved = ev.success;
    client.close(id);
    return finish(r.solved ? "" : "evaluation: " + evaluator_details(ev));
  } catch (const std::exception& e) {
    try {
      client.close(id);
    } catch (...) {
    }
    return finish(e.what());
  }
}

oracle_suite_result run_oracle_suite(env_client& client, const std::vector<task>& tasks,
                                     const std::vector<std::string>& origins, const oracle_run_options& opt) {
  const auto t0 = clk::now();
  oracle_suite_result out;
  out.results.resize(tasks.size());
  std::atomic<size_t> next{0};
  std::mutex mu;
  size_t done = 0;
  auto worker = [&] {
    for (size_t i = next++; i < tasks.size(); i = next++) {
      oracle_step_observer observe;
      if (opt.observe)
        observe = [&opt, i](const env_observation& seen, const std::string& action) { opt.observe(i, seen, action); };
      oracle_task_result res =
          run_oracle_task(client, tasks[i], i < origins.size() ? origins[i] : "", observe, opt.browser);
      std::lock_guard<std::mutex> lock(mu);
      out.results[i] = res;
      if (res.solved) ++out.solved;
      ++done;
      if (opt.progress) opt.progress(done, tasks.size(), res);
    }
  };
  int n = std::max(1, std::min<int>(opt.jobs, static_cast<int>(tasks.size())));
  std::vector<std::thread> threads;
  for (int k = 0; k < n; ++k) threads.emplace_back(worker);
  for (auto& th : threads) th.join();
  out.wall_s = std::chrono::duration<double>(clk::now() - t0).count();
  return out;
}

std::string oracle_summary_json(const std::string& suite, const oracle_suite_result& r) {
  nlohmann::ordered_json failed = nlohmann::ordered_json::array();
  for (const oracle_task_result& t : r.results)
    if (!t.solved) failed.push_back({{"task_id", t.task_id}, {"reason", t.reason}});
  nlohmann::ordered_json j = {{"suite", suite},
                              {"tasks", r.results.size()},
                              {"solved", r.solved},
                              {"wall_s", std::round(r.wall_s * 1000) / 1000},
                              {"failed", failed}};
  return j.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

std::unique_ptr<env_server> start_local_env_server(int sessions, uint64_t site_seed,
                                                   std::shared_ptr<fuzzy_judge> judge, const std::string& vqa_url,
                                                   bool allow_file_urls) {
  env_server_options o;
  o.allow_file_urls = allow_file_urls;
  o.judge = std::move(judge);
  o.vqa_url = vqa_url;
  o.sites.seed = site_seed;
  o.http.host = "127.0.0.1";
  o.http.port = 0;
  o.http.threads = std::clamp(sessions + 2, 4, 72);
  o.sites.threads = std::clamp(sessions / 2, 4, 16);
  o.max_sessions = std::max<size_t>(256, static_cast<size_t>(sessions) * 2);
  auto s = std::make_unique<env_server>(o);
  s->start();
  return s;
}

}  // namespace kvarena::tasks
