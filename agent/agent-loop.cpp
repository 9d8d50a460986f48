// agent-loop.cpp: see agent-loop.h.
#include "agent-loop.h"

#include <boost/beast/core/detail/base64.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <memory>
#include <optional>
#include <stdexcept>

#include "agent-action.h"
#include "agent-model.h"
#include "conversation.h"
#include "gguf-reader.h"
#include "obs-truncate.h"
#include "process-memory.h"
#include "prompt.h"
#include "url-view.h"

namespace kvarena {

const char* history_mode_name(history_mode m) { return m == history_mode::last ? "last" : "full"; }

history_mode parse_history_mode(std::string_view name) {
  if (name == "last") return history_mode::last;
  if (name == "full") return history_mode::full;
  throw std::invalid_argument("history mode '" + std::string(name) + "': use last (VWA) or full");
}

history_mode history_for_model(const model& m, std::optional<history_mode> requested) {
  if (requested) return *requested;
  const std::optional<std::string> named = m.gguf ? m.gguf->get_string(k_history_key) : std::nullopt;
  if (!named) return history_mode::full;
  try {
    return parse_history_mode(*named);
  } catch (const std::invalid_argument&) {
    throw std::invalid_argument(std::string("the model's ") + k_history_key + " is '" + *named +
                                "': expected last or full (give --history to override it)");
  }
}

namespace {

// The env says the session's browser died (Chromium killed or crashed: "the Chromium browser
// of this session is gone (...); this session cannot continue", envs/browser/
// chromium-browser.cpp), as the step's action error or, after an action that never reached
// the browser, as the observation "Error: ...". Every later step would fail the same way:
// the episode is the env's failure, not the policy's, so it ends as an error row that
// --resume runs again, not as a done row of failed steps scored 0.
std::optional<std::string> browser_gone(const std::optional<std::string>& action_error, const env_observation& obs) {
  static constexpr std::string_view k_gone = "browser of this session is gone";
  if (action_error && action_error->find(k_gone) != std::string::npos) return *action_error;
  if (obs.text.rfind("Error: ", 0) == 0 && obs.text.find(k_gone) != std::string::npos) return obs.text.substr(7);
  return std::nullopt;
}

using clk = std::chrono::steady_clock;

std::string base64_decode(const std::string& b64) {
  std::string out(boost::beast::detail::base64::decoded_size(b64.size()), '\0');
  out.resize(boost::beast::detail::base64::decode(out.data(), b64.data(), b64.size()).first);
  return out;
}

double ms_since(clk::time_point t0) { return std::chrono::duration<double, std::milli>(clk::now() - t0).count(); }

// Deletes the env session when the episode ends, however it ends.
class env_session_guard {
 public:
  env_session_guard(env_client& env, std::string id) : env_(env), id_(std::move(id)) {}
  ~env_session_guard() {
    try {
      env_.close(id_);
    } catch (...) {  // the server reaps idle sessions; a failed close must not hide the result
    }
  }
  env_session_guard(const env_session_guard&) = delete;
  env_session_guard& operator=(const env_session_guard&) = delete;
  const std::string& id() const { return id_; }

 private:
  env_client& env_;
  std::string id_;
};

class episode_runner {
 public:
  episode_runner(env_client& env, const task& t, const agent_config& cfg, const model_context& mc,
                 episode_result& r)
      : env_(env), task_(t), cfg_(cfg), mc_(mc), r_(r) {}

  // Throws on a model or env failure; phase() says where.
  void run();
  // The episode's totals and peaks from what ran (also after a failure).
  void collect();
  const std::string& phase() const { return phase_; }

 private:
  // What the loop carries from one step to the next.
  struct step_state {
    env_observation obs;                        // the page the next step sees
    std::optional<agent_action> prev;           // the previous step's action
    std::optional<std::string> prev_env_error;  // and the env's complaint about it
  };
  // One step's prompt: the observation as shown to the model, and the prompt built on it.
  struct step_input {
    truncated_observation shown;
    prompt_text prompt;
  };

  // run()'s stages, in order. The env session (its first observation), then the model's.
  env_observation open_env_session();
  void start_model_session();
  // Per step: the answer when the episode ends before the step (early stop, timeout) ...
  std::optional<std::string> stop_before_step(const early_stop_rules& rules);
  // ... the prompt ...
  step_input prompt_step(const step_state& st, const url_view& urls);
  // ... the answer when the model cannot take it (a full context; throws at step 1) ...
  std::optional<std::string> model_prompt_step(int step, const step_input& in, const env_observation& obs);
  // ... the reply and its action, recorded ...
  agent_action model_step(int step, const step_input& in, const url_view& urls, early_stop_rules& rules,
                          const env_observation& obs);
  // ... and the action sent to the env: the answer when the episode ends with it.
  std::optional<std::string> env_step(int step, agent_action a, const url_view& urls, step_state& st);
  // At the end, the env's verdict on the answer.
  void evaluate(const std::string& answer);

  bool timed_out() const {
    return cfg_.max_episode_s > 0 && ms_since(t0_) > cfg_.max_episode_s * 1000.0;
  }
  template <class F>
  auto env_call(F&& f) {
    const auto t = clk::now();
    auto out = f();
    r_.env_ms += ms_since(t);
    return out;
  }

  env_client& env_;
  const task& task_;
  const agent_config& cfg_;
  const model_context& mc_;
  episode_result& r_;
  clk::time_point t0_ = clk::now();
  std::string phase_ = "start";
  std::unique_ptr<episode_model> model_;  // mc_.agent's (the embedded engine when none)
  std::unique_ptr<env_session_guard> env_session_;
  std::unique_ptr<agent_conversation> conv_;
  std::string screenshot_;  // the step's screenshot (PNG bytes) the prompt points at
};

std::string step_phase(int step, const char* what) {
  return "step " + std::to_string(step + 1) + " " + what;
}

// The step's row before the model replies: the page and what the model was shown.
step_record make_step_record(int step, const std::string& url, const env_observation& obs,
                             const truncated_observation& shown) {
  step_record rec;
  rec.index = step;
  rec.url = url;
  rec.observation = shown.text;
  rec.screenshot_png = base64_decode(obs.screenshot_png_base64);
  rec.obs_tokens = shown.n_tokens;
  rec.obs_truncated = shown.truncated;
  return rec;
}

// The action extracted from the reply, into the row.
void record_action(step_record& rec, const agent_action& a) {
  rec.action = a.text;
  rec.parsed = a.ok();
  if (!a.ok()) rec.action_error = a.parsed.error;
  if (!a.answer_error.empty())
    rec.action_error = "stop [[" + std::to_string(a.answer_element) + "]]: " + a.answer_error;
}

void episode_runner::run() {
  step_state st{open_env_session(), std::nullopt, std::nullopt};
  start_model_session();
  early_stop_rules rules(cfg_.early_stop);
  const url_view urls(st.obs.url);  // the model sees one fixed origin, the env the real one
  r_.final_url = urls.show(st.obs.url);
  std::string answer;
  for (int step = 0;; ++step) {
    if (std::optional<std::string> end = stop_before_step(rules)) {
      answer = std::move(*end);
      break;
    }
    phase_ = step_phase(step, "prompt");
    const step_input in = prompt_step(st, urls);
    if (std::optional<std::string> end = model_prompt_step(step, in, st.obs)) {
      answer = std::move(*end);
      break;
    }
    phase_ = step_phase(step, "model");
    agent_action a = model_step(step, in, urls, rules, st.obs);
    phase_ = step_phase(step, "env");
    if (std::optional<std::string> end = env_step(step, std::move(a), urls, st)) {
      answer = std::move(*end);
      break;
    }
  }
  evaluate(answer);
}

env_observation episode_runner::open_env_session() {
  phase_ = "create env session";
  env_create_options eo = cfg_.env;
  eo.early_stop = cfg_.early_stop;
  env_created created = env_call([&] { return env_.create_session(task_, eo); });
  env_session_ = std::make_unique<env_session_guard>(env_, created.session_id);
  if (std::optional<std::string> why = browser_gone(std::nullopt, created.observation)) throw std::runtime_error(*why);
  return std::move(created.observation);
}

void episode_runner::start_model_session() {
  phase_ = "start model session";
  model_ = (mc_.agent ? mc_.agent : make_engine_agent_model())->start_episode(cfg_, mc_);
  conv_ = std::make_unique<agent_conversation>(mc_.chat, cfg_.history, mc_.style, cfg_.n_examples);
}

std::optional<std::string> episode_runner::stop_before_step(const early_stop_rules& rules) {
  if (early_stop_decision d = rules.check(); d.stop) {
    r_.end_reason = d.reason;
    return early_stop_answer(d.reason);
  }
  if (timed_out()) {
    r_.status = "timeout";
    r_.end_reason = "Timeout after " + std::to_string(cfg_.max_episode_s) + " s";
    return early_stop_answer(r_.end_reason);
  }
  return std::nullopt;
}

episode_runner::step_input episode_runner::prompt_step(const step_state& st, const url_view& urls) {
  const std::string page = urls.show(st.obs.text);
  step_input in{mc_.tok ? truncate_to_tokens(*mc_.tok, page, cfg_.max_obs_tokens)
                        : truncate_by_estimate(page, cfg_.max_obs_tokens),
                {}};
  const std::string prev_text = previous_action_text(st.prev ? &*st.prev : nullptr, st.prev_env_error);
  in.prompt = conv_->next_prompt(in.shown.text, urls.show(st.obs.url), task_.intent, prev_text);
  return in;
}

std::optional<std::string> episode_runner::model_prompt_step(int step, const step_input& in,
                                                             const env_observation& obs) {
  model_prompt p;
  p.step = step;
  p.text = &in.prompt;
  p.messages = &conv_->messages();
  screenshot_ = base64_decode(obs.screenshot_png_base64);
  p.screenshot_png = screenshot_;
  p.obs_tokens = in.shown.n_tokens;
  return model_->prompt(p, r_);
}

agent_action episode_runner::model_step(int step, const step_input& in, const url_view& urls,
                                        early_stop_rules& rules, const env_observation& obs) {
  step_record rec = make_step_record(step, urls.show(obs.url), obs, in.shown);
  model_->reply(rec);
  conv_->add_reply(rec.output);
  agent_action a = extract_agent_action(rec.output, in.shown.text);
  rules.record(a.parsed);
  record_action(rec, a);
  r_.step_records.push_back(std::move(rec));
  return a;
}

std::optional<std::string> episode_runner::env_step(int step, agent_action a, const url_view& urls, step_state& st) {
  const auto te = clk::now();
  env_step_result er = env_call([&] { return env_.step(env_session_->id(), urls.real(a.env_text)); });
  step_record& done = r_.step_records.back();
  done.env_ms = ms_since(te);
  if (a.ok() && er.action_error) done.action_error = er.action_error;
  r_.steps = step + 1;
  st.prev = std::move(a);
  st.prev_env_error = er.action_error;
  if (std::optional<std::string> why = browser_gone(er.action_error, er.observation)) throw std::runtime_error(*why);
  st.obs = std::move(er.observation);
  r_.final_url = urls.show(st.obs.url);
  if (er.done || st.prev->parsed.act.kind == action_kind::stop) {
    r_.end_reason = er.reason.value_or("stop");
    return er.answer.value_or(st.prev->parsed.act.answer);
  }
  return std::nullopt;
}

void episode_runner::evaluate(const std::string& answer) {
  phase_ = "evaluate";
  r_.answer = answer;
  r_.evaluation = env_call([&] { return env_.evaluate(env_session_->id(), answer); });
  r_.score = r_.evaluation.score;
  r_.success = r_.evaluation.success;
  if (r_.status != "timeout") r_.status = "done";
}

void episode_runner::collect() {
  for (const step_record& s : r_.step_records) {
    r_.prompt_tokens += s.prompt_tokens;
    r_.generated_tokens += s.generated_tokens;
    r_.prefill_ms += s.prefill_ms;
    r_.decode_ms += s.decode_ms;
  }
  if (model_) {
    model_->collect(r_);
  } else {  // the model side never started: the process's resident high-water
    r_.peak_process_bytes = process_peak_rss_bytes();
  }
}

}  // namespace

episode_result run_episode(env_client& env, const task& t, const agent_config& cfg, const model_context& mc) {
  const auto t0 = clk::now();
  // This episode's resident peak, not the process's so far: the high-water mark is reset
  // when no other episode runs in the process (with --jobs N overlapping episodes share it,
  // so the figure covers them all: results/README.md says so).
  static std::atomic<int> active{0};
  if (active.fetch_add(1) == 0) reset_process_peak();
  struct leave {
    ~leave() { active.fetch_sub(1); }
  } on_exit;
  episode_result r;
  r.task_id = t.task_id;
  r.history_mode = history_mode_name(cfg.history);
  r.chat_template = mc.chat.name();
  r.kv_policy = mc.session.kv_policy;
  {
    episode_runner runner(env, t, cfg, mc, r);
    try {
      runner.run();
    } catch (const std::exception& e) {
      r.status = "error";
      r.error = runner.phase() + ": " + e.what();
    }
    runner.collect();
  }  // the env session is closed here
  r.wall_ms = ms_since(t0);
  return r;
}

}  // namespace kvarena
