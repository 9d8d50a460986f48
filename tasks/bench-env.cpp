// bench-env.cpp: see bench-env.h.
#include "bench-env.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <mutex>
#include <stdexcept>
#include <thread>

#include <nlohmann/json.hpp>

#include "client/env-client.h"
#include "oracle-agent.h"
#include "oracle-plan.h"
#include "server/env-server.h"

namespace kvarena::tasks {
namespace {

using clk = std::chrono::steady_clock;

double ms_since(clk::time_point t0) { return std::chrono::duration<double, std::milli>(clk::now() - t0).count(); }

double quantile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  double pos = q * double(v.size() - 1);
  size_t lo = static_cast<size_t>(pos);
  size_t hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (v[hi] - v[lo]) * (pos - double(lo));
}

// A logged-in classifieds task starting at the home page; never evaluated.
const char* const k_bench_task = R"({
  "task_id": 0, "sites": ["classifieds"], "require_login": true, "storage_state": null,
  "start_url": "__CLASSIFIEDS__/", "intent": "bench env: reset and step latency",
  "require_reset": false,
  "eval": {"eval_types": ["string_match"], "reference_answers": {"exact_match": "n/a"}}
})";

// Step i of a session: clicks "All listings" (even i) or "Home" (odd i), resolved on the
// observation the step is taken on (the chromium backend's ids change from page to page;
// the text backend's do not, and resolving costs it the same microseconds).
std::string step_action(const env_observation& obs, int i) {
  auto elements = parse_observation(obs.text);
  std::string why;
  auto id = find_element(elements, {"link", i % 2 ? "Home" : "All listings"}, &why);
  if (!id) throw std::runtime_error("bench env: the classifieds page changed: " + why);
  return "click [" + std::to_string(*id) + "]";
}

void check_step(const env_step_result& r) {
  if (r.action_error) throw std::runtime_error("action error: " + *r.action_error);
  if (r.done) throw std::runtime_error("the episode ended: " + r.reason.value_or("?"));
}

}  // namespace

bench_env_result run_bench_env(const bench_env_options& opt) {
  int most = 1;
  for (int s : opt.sessions) most = std::max(most, s);
  std::unique_ptr<env_server> local;
  std::string url = opt.env_url;
  if (url.empty()) {
    local = start_local_env_server(most);
    url = local->base_url();
  }
  env_client_options co;
  co.tries = 1;  // a retry would hide an error
  env_client client(url, co);
  env_create_options create;
  create.browser = opt.browser;

  bench_env_result out;
  out.backend = opt.browser;
  // Warm-up (connections, page caches, allocator).
  env_created first = client.create_session(k_bench_task, create);
  env_observation seen = first.observation;
  for (int i = 0; i < 4; ++i) {
    env_step_result r = client.step(first.session_id, step_action(seen, i));
    check_step(r);
    seen = r.observation;
  }
  client.close(first.session_id);

  std::vector<double> resets;
  for (int i = 0; i < opt.resets; ++i) {
    auto t0 = clk::now();
    env_created c = client.create_session(k_bench_task, create);
    resets.push_back(ms_since(t0));
    client.close(c.session_id);
  }
  std::vector<double> steps;
  while (static_cast<int>(steps.size()) < opt.steps) {
    env_created c = client.create_session(k_bench_task, create);
    env_observation obs = c.observation;
    for (int i = 0; i < 20 && static_cast<int>(steps.size()) < opt.steps; ++i) {
      std::string action = step_action(obs, i);
      auto t0 = clk::now();
      env_step_result r = client.step(c.session_id, action);
      steps.push_back(ms_since(t0));
      check_step(r);
      obs = r.observation;
    }
    client.close(c.session_id);
  }
  out.reset_ms_median = quantile(resets, 0.5);
  out.reset_ms_p90 = quantile(resets, 0.9);
  out.step_ms_median = quantile(steps, 0.5);
  out.step_ms_p90 = quantile(steps, 0.9);

  for (int sessions : opt.sessions) {
    bench_env_level lvl;
    lvl.sessions = sessions;
    std::atomic<long long> n_steps{0}, n_resets{0}, n_errors{0};
    std::mutex mu;
    const auto t0 = clk::now();
    const auto deadline = t0 + std::chrono::duration_cast<clk::duration>(std::chrono::duration<double>(opt.seconds));
    auto worker = [&] {
      while (clk::now() < deadline) {
        std::string id;
        try {
          env_created c = client.create_session(k_bench_task, create);
          id = c.session_id;
          ++n_resets;
          env_observation obs = c.observation;
          for (int i = 0; i < opt.steps_per_session; ++i) {
            env_step_result r = client.step(id, step_action(obs, i));
            check_step(r);
            obs = r.observation;
            ++n_steps;
          }
          client.close(id);
        } catch (const std::exception& e) {
          ++n_errors;
          std::lock_guard<std::mutex> lock(mu);
          if (lvl.first_error.empty()) lvl.first_error = e.what();
          if (!id.empty()) {
            try {
              client.close(id);
            } catch (...) {
            }
          }
        }
      }
    };
    std::vector<std::thread> threads;
    for (int k = 0; k < sessions; ++k) threads.emplace_back(worker);
    for (auto& t : threads) t.join();
    double secs = std::chrono::duration<double>(clk::now() - t0).count();
    lvl.steps = n_steps;
    lvl.errors = n_errors;
    lvl.steps_per_s = double(n_steps) / secs;
    lvl.resets_per_s = double(n_resets) / secs;
    out.levels.push_back(lvl);
  }
  return out;
}

std::string bench_env_json(const std::vector<bench_env_result>& results) {
  std::string out = "{\"backends\": [";
  for (size_t i = 0; i < results.size(); ++i) out += (i ? ", " : "") + bench_env_json(results[i]);
  return out + "]}";
}

std::string bench_env_json(const bench_env_result& r) {
  auto round3 = [](double x) { return std::round(x * 1000) / 1000; };
  nlohmann::ordered_json levels = nlohmann::ordered_json::array();
  for (const bench_env_level& l : r.levels) {
    nlohmann::ordered_json j = {{"sessions", l.sessions},
                                {"steps_per_s", round3(l.steps_per_s)},
                                {"errors", l.errors},
                                {"steps", l.steps},
                                {"resets_per_s", round3(l.resets_per_s)}};
    if (!l.first_error.empty()) j["first_error"] = l.first_error;
    levels.push_back(std::move(j));
  }
  nlohmann::ordered_json j = {{"backend", r.backend},
                              {"reset_ms_median", round3(r.reset_ms_median)},
                              {"step_ms_median", round3(r.step_ms_median)},
                              {"concurrency", levels},
                              {"reset_ms_p90", round3(r.reset_ms_p90)},
                              {"step_ms_p90", round3(r.step_ms_p90)}};
  return j.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

}  // namespace kvarena::tasks
