// test-agent-loop.cpp: agent/agent-loop.h: episodes against an in-process env server with a
// tiny random model (its replies are garbage, so episodes end by the early-stop rules):
// clean termination, steps recorded, env sessions closed, errors returned as status
// "error", a full context as an early stop; the token accounting of the history modes (full
// mode prefills exactly the new messages after step 1, last mode the whole prompt every
// step); KV policies ("full" vs "window") as the steps and the KV trace report them; and the
// history mode a run uses (flag, then the model's key, then full).
#include <gtest/gtest.h>

#include <atomic>
#include <cstdio>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "agent-action.h"
#include "agent-loop.h"
#include "agent-model-fixture.h"
#include "chat-template.h"
#include "client/env-client.h"
#include "obs-truncate.h"
#include "oracle-agent.h"
#include "prompt.h"
#include "server/env-server.h"

namespace kvarena {
namespace {

// The history mode: --history when given, else the mode the model's GGUF names (the one a
// trained model was measured in), else full.
TEST(HistoryMode, FlagThenTheModelsKeyThenFull) {
  const model last = model_with("last.gguf", [](gguf_writer& w) { w.set_string("kvarena.history", "last"); });
  const model full = model_with("full.gguf", [](gguf_writer& w) { w.set_string("kvarena.history", "full"); });
  const model unnamed = model_with("none.gguf", [](gguf_writer&) {});
  const model odd = model_with("odd.gguf", [](gguf_writer& w) { w.set_string("kvarena.history", "both"); });
  EXPECT_EQ(history_for_model(last, std::nullopt), history_mode::last);
  EXPECT_EQ(history_for_model(full, std::nullopt), history_mode::full);
  EXPECT_EQ(history_for_model(unnamed, std::nullopt), history_mode::full);
  EXPECT_EQ(history_for_model(model{}, std::nullopt), history_mode::full);  // no GGUF
  EXPECT_EQ(history_for_model(last, history_mode::full), history_mode::full);  // the flag wins
  EXPECT_EQ(history_for_model(unnamed, history_mode::last), history_mode::last);
  try {
    history_for_model(odd, std::nullopt);
    ADD_FAILURE() << "a model naming history 'both' was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("kvarena.history is 'both'"), std::string::npos) << e.what();
  }
  EXPECT_EQ(history_for_model(odd, history_mode::last), history_mode::last);  // the flag overrides a bad key
}

// Episodes against an in-process env server.
class AgentEpisode : public AgentModel {
 protected:
  static void SetUpTestSuite() {
    AgentModel::SetUpTestSuite();
    server_ = tasks::start_local_env_server(2).release();
    env_client_options o;
    o.total_timeout_ms = 30000;
    client_ = new env_client(server_->base_url(), o);
    task_suite suite = load_tasks(std::string(KVARENA_SOURCE_DIR) + "/tasks/vwa-local/30.json");
    ASSERT_TRUE(suite.ok() && suite.tasks.size() == 1);
    task_ = new task(suite.tasks[0]);
  }
  static void TearDownTestSuite() {
    delete task_;
    delete client_;
    delete server_;
    AgentModel::TearDownTestSuite();
  }

  static model_context context(const char* chat = "auto") {
    model_context mc;
    mc.llm = model_;
    mc.tok = tok_;
    mc.chat = chat_template::for_model(*model_, chat);
    mc.session.n_threads = 2;
    mc.sampling.seed = 1;
    return mc;
  }
  static agent_config config(history_mode h) {
    agent_config c;
    c.history = h;
    c.early_stop.max_steps = 3;
    c.max_new_tokens = 16;
    c.max_obs_tokens = 256;
    c.n_examples = 1;
    return c;
  }
  // The first observation of the task, as a fresh session shows it (the same page the
  // agent sees at every step, since its garbage replies never act).
  static std::string first_observation() {
    env_created c = client_->create_session(*task_);
    client_->close(c.session_id);
    return c.observation.text;
  }

  static env_server* server_;
  static env_client* client_;
  static task* task_;
};
env_server* AgentEpisode::server_ = nullptr;
env_client* AgentEpisode::client_ = nullptr;
task* AgentEpisode::task_ = nullptr;

TEST_F(AgentEpisode, GarbageRepliesEndCleanlyByTheEarlyStopRules) {
  for (history_mode h : {history_mode::last, history_mode::full}) {
    SCOPED_TRACE(history_mode_name(h));
    episode_result r = run_episode(*client_, *task_, config(h), context());
    ASSERT_EQ(r.status, "done") << r.error;
    EXPECT_EQ(r.steps, 3);
    EXPECT_EQ(r.end_reason, "Reach max steps 3");
    EXPECT_EQ(r.answer, "Early stop: Reach max steps 3");
    EXPECT_FALSE(r.success);
    EXPECT_EQ(r.score, 0);
    EXPECT_EQ(r.history_mode, history_mode_name(h));
    EXPECT_EQ(r.chat_template, "plain");
    ASSERT_EQ(r.step_records.size(), 3u);
    for (const step_record& s : r.step_records) {
      EXPECT_FALSE(s.parsed);
      EXPECT_EQ(s.action, "none");
      ASSERT_TRUE(s.action_error.has_value());
      EXPECT_GT(s.generated_tokens, 0);
      EXPECT_LE(s.generated_tokens, 16);
      EXPECT_GT(s.prompt_tokens, 0);
      EXPECT_GT(s.kv_tokens, 0);
      EXPECT_GT(s.kv_bytes, 0u);
      EXPECT_NE(s.url.find("/shopping"), std::string::npos);
      EXPECT_TRUE(s.obs_truncated);
      EXPECT_LE(s.obs_tokens, 256);
    }
    EXPECT_NE(r.final_url.find("/shopping"), std::string::npos);
    EXPECT_GT(r.peak_kv_bytes, 0u);
    EXPECT_GE(r.peak_device_bytes, r.peak_kv_bytes);
    EXPECT_GT(r.wall_ms, 0);
    ASSERT_FALSE(r.kv_trace.empty());
    for (size_t i = 1; i < r.kv_trace.size(); ++i) {
      EXPECT_GT(r.kv_trace[i].forward_call, r.kv_trace[i - 1].forward_call);
      EXPECT_GT(r.kv_trace[i].token_index, r.kv_trace[i - 1].token_index);
    }
    EXPECT_EQ(r.kv_trace.back().step, 2);
    EXPECT_EQ(server_->session_count(), 0u);  // the env session was closed
  }
  // The parse-failure rule, before max_steps.
  agent_config c = config(history_mode::last);
  c.early_stop.max_steps = 5;
  c.early_stop.parse_failures = 2;
  episode_result r = run_episode(*client_, *task_, c, context());
  ASSERT_EQ(r.status, "done") << r.error;
  EXPECT_EQ(r.steps, 2);
  EXPECT_EQ(r.end_reason, "Failed to parse actions for 2 times");
}

TEST_F(AgentEpisode, FullModePrefillsOnlyTheNewMessages) {
  const model_context mc = context("chatml");
  const std::string obs = first_observation();
  episode_result last = run_episode(*client_, *task_, config(history_mode::last), mc);
  episode_result full = run_episode(*client_, *task_, config(history_mode::full), mc);
  ASSERT_EQ(last.status, "done") << last.error;
  ASSERT_EQ(full.status, "done") << full.error;
  ASSERT_EQ(last.step_records.size(), 3u);
  ASSERT_EQ(full.step_records.size(), 3u);

  // The user message of step k, rebuilt from what the records say the agent saw.
  const truncated_observation shown = truncate_to_tokens(*tok_, obs, 256);
  auto user_message = [&](const episode_result& r, size_t k) {
    std::string prev = "None";
    agent_action a;
    if (k > 0) {
      a = extract_agent_action(r.step_records[k - 1].output);
      prev = previous_action_text(&a, std::nullopt);
    }
    return step_message({shown.text, r.step_records[k].url, task_->intent, prev});
  };
  auto whole_prompt_tokens = [&](const episode_result& r, size_t k) {
    std::vector<chat_message> msgs = prompt_prefix(1);
    msgs.push_back({"user", user_message(r, k)});
    return static_cast<int64_t>(tok_->encode(mc.chat.render(msgs, true), true, true).size());
  };

  std::printf("step  last: prompt gen seq_len   full: prompt gen seq_len\n");
  for (size_t k = 0; k < 3; ++k) {
    const step_record& l = last.step_records[k];
    const step_record& f = full.step_records[k];
    std::printf("%4zu  %12lld %3lld %7lld   %12lld %3lld %7lld\n", k + 1, (long long)l.prompt_tokens,
                (long long)l.generated_tokens, (long long)l.seq_len, (long long)f.prompt_tokens,
                (long long)f.generated_tokens, (long long)f.seq_len);
    // Last mode: every step re-prefills the whole prompt, the sequence holds only this step.
    EXPECT_EQ(l.prompt_tokens, whole_prompt_tokens(last, k)) << "step " << k + 1;
    EXPECT_EQ(l.seq_len, l.prompt_tokens + l.generated_tokens);
    if (k == 0) {
      EXPECT_EQ(f.prompt_tokens, whole_prompt_tokens(full, 0));
      EXPECT_EQ(f.seq_len, f.prompt_tokens + f.generated_tokens);
      continue;
    }
    // Full mode: only what follows the previous reply: its end, the new message, the header.
    const std::vector<chat_message> tail = {{"assistant", full.step_records[k - 1].output},
                                            {"user", user_message(full, k)}};
    const int64_t expect_new =
        static_cast<int64_t>(tok_->encode(mc.chat.continue_after_reply(tail, 0, true), false, true).size());
    EXPECT_EQ(f.prompt_tokens, expect_new) << "step " << k + 1;
    EXPECT_LT(f.prompt_tokens * 2, full.step_records[0].prompt_tokens);
    EXPECT_EQ(f.seq_len, full.step_records[k - 1].seq_len + f.prompt_tokens + f.generated_tokens);
    EXPECT_GT(f.kv_tokens, full.step_records[k - 1].kv_tokens);  // the cache grows over the horizon
  }
  EXPECT_LT(full.prompt_tokens, last.prompt_tokens);
}

TEST_F(AgentEpisode, FullContextEndsTheEpisodeEarly) {
  // Room for the first step but not the second.
  agent_config c = config(history_mode::full);
  model_context mc = context();
  episode_result probe = run_episode(*client_, *task_, c, mc);
  ASSERT_EQ(probe.status, "done") << probe.error;
  mc.session.n_ctx = probe.step_records[0].seq_len + 16 + 20;
  episode_result r = run_episode(*client_, *task_, c, mc);
  ASSERT_EQ(r.status, "done") << r.error;
  EXPECT_EQ(r.steps, 1);
  EXPECT_EQ(r.end_reason.rfind("Context full: ", 0), 0u) << r.end_reason;
  EXPECT_EQ(r.answer, "Early stop: " + r.end_reason);
  EXPECT_EQ(server_->session_count(), 0u);
}

TEST_F(AgentEpisode, FirstPromptOverTheContextIsAnError) {
  // Not even the first prompt fits: nothing can run, so the episode is an error naming the
  // sizes and what to change, not a "done" episode of zero steps (in both history modes).
  for (history_mode h : {history_mode::full, history_mode::last}) {
    SCOPED_TRACE(history_mode_name(h));
    agent_config c = config(h);
    model_context mc = context();
    mc.session.n_ctx = 64;
    const episode_result r = run_episode(*client_, *task_, c, mc);
    EXPECT_EQ(r.status, "error");
    EXPECT_EQ(r.steps, 0);
    EXPECT_TRUE(r.step_records.empty());
    EXPECT_EQ(r.error.rfind("step 1 prompt: the first prompt (", 0), 0u) << r.error;
    EXPECT_NE(r.error.find(" + max_new_tokens " + std::to_string(c.max_new_tokens) + " does not fit n_ctx 64: raise "
                           "--ctx (the model's context length is " + std::to_string(mc.llm->config.n_ctx) +
                           ") or lower --max-obs-tokens (now " +
                           std::to_string(c.max_obs_tokens) + ") or --max-new-tokens"),
              std::string::npos)
        << r.error;
    EXPECT_FALSE(r.success);
    EXPECT_EQ(server_->session_count(), 0u);  // the env session is closed all the same
  }
}

TEST_F(AgentEpisode, KvPolicyBoundsTheCacheAndStepsReportIt) {
  // Full mode under the engine's policies: "full" keeps every token, "window" at most its
  // window; the steps carry the kept tokens, the budget and the decode confidence.
  model_context mc = context();
  mc.session.kv_policy = "full";
  episode_result all = run_episode(*client_, *task_, config(history_mode::full), mc);
  mc.session.kv_policy = "window";
  mc.session.kv.window = 512;
  episode_result win = run_episode(*client_, *task_, config(history_mode::full), mc);
  ASSERT_EQ(all.status, "done") << all.error;
  ASSERT_EQ(win.status, "done") << win.error;
  EXPECT_EQ(win.kv_policy, "window");
  ASSERT_EQ(all.step_records.size(), 3u);
  ASSERT_EQ(win.step_records.size(), 3u);
  for (size_t k = 0; k < 3; ++k) {
    const step_record& a = all.step_records[k];
    const step_record& w = win.step_records[k];
    EXPECT_EQ(a.kv_tokens, a.seq_len);
    EXPECT_LE(w.kv_tokens, 512);
    EXPECT_GT(w.seq_len, 2000);
    EXPECT_EQ(w.budget, 512);
    EXPECT_GE(w.confidence, 0.f);
    EXPECT_LE(w.confidence, 1.f);
    EXPECT_LT(w.kv_bytes, a.kv_bytes);
  }
  EXPECT_LT(win.peak_kv_bytes * 3, all.peak_kv_bytes);
  // The trace: every prefill chunk, some decode steps with their confidence.
  int prefill = 0, decode = 0;
  for (const kv_trace_point& p : win.kv_trace) {
    prefill += p.decode ? 0 : 1;
    decode += p.decode && p.confidence >= 0 ? 1 : 0;
    EXPECT_LE(p.kv_tokens, 512);
  }
  EXPECT_GE(prefill, 3);
  EXPECT_GE(decode, 3);
  EXPECT_EQ(server_->session_count(), 0u);
}

TEST_F(AgentEpisode, FailuresComeBackAsErrorsWithTheirPhase) {
  // The env is unreachable.
  env_client_options o;
  o.tries = 1;
  o.connect_timeout_ms = 500;
  env_client dead("http://127.0.0.1:9", o);
  episode_result r = run_episode(dead, *task_, config(history_mode::full), context());
  EXPECT_EQ(r.status, "error");
  EXPECT_EQ(r.error.rfind("create env session: ", 0), 0u) << r.error;
  EXPECT_EQ(r.steps, 0);

  // The model side is missing: the env session is still closed.
  model_context mc = context();
  mc.tok = nullptr;
  r = run_episode(*client_, *task_, config(history_mode::full), mc);
  EXPECT_EQ(r.status, "error");
  EXPECT_NE(r.error.find("start model session"), std::string::npos) << r.error;
  EXPECT_EQ(server_->session_count(), 0u);

  // Bad session options: the engine's message comes through.
  mc = context();
  mc.session.n_threads = 0;
  r = run_episode(*client_, *task_, config(history_mode::full), mc);
  EXPECT_EQ(r.status, "error");
  EXPECT_NE(r.error.find("n_threads"), std::string::npos) << r.error;
  EXPECT_EQ(server_->session_count(), 0u);

  EXPECT_EQ(parse_history_mode("last"), history_mode::last);
  EXPECT_THROW(parse_history_mode("both"), std::invalid_argument);
}

// A session whose Chromium died mid-episode (scripts/chaos.sh, chromium-kill): the env
// answers each step 200 with "the Chromium browser of this session is gone ...; this
// session cannot continue" (or, for an action that never reached the browser, only the
// observation "Error: ..."). The episode is an error row that --resume runs again, not a
// done row of failed steps scored 0 against the policy.
TEST_F(AgentEpisode, ABrowserGoneMidEpisodeIsAnErrorNotAFailedEpisode) {
  const std::string gone =
      "the Chromium browser of this session is gone (connection closed: end of stream); this session cannot "
      "continue: close it and create a new one";
  for (const bool as_action_error : {true, false}) {
    SCOPED_TRACE(as_action_error ? "action error" : "observation only");
    std::atomic<int> steps{0}, evaluations{0};
    sites::http_server fake(sites::http_server_options{"127.0.0.1", 0, 2}, [&](const sites::http_request& q) {
      if (q.method == "POST" && q.path == "/v1/sessions") {
        env_created c;
        c.session_id = "s1";
        c.observation.text = "Tab 0 (current): Shop\n\n[1] link 'Home'";
        c.observation.url = "http://127.0.0.1:1/t-1/shopping/";
        c.observation.tabs = {"Shop"};
        return sites::http_response::json(to_json_text(c), 201);
      }
      if (q.method == "POST" && q.path == "/v1/sessions/s1/step") {
        ++steps;
        env_step_result r;
        r.observation.text = "Error: " + gone;
        if (as_action_error) r.action_error = gone;
        return sites::http_response::json(to_json_text(r));
      }
      if (q.method == "POST" && q.path == "/v1/sessions/s1/evaluate") {
        ++evaluations;
        return sites::http_response::json(to_json_text(eval_result{}));
      }
      if (q.method == "DELETE") return sites::http_response::json(to_json_text(env_deleted{"s1"}));
      return sites::http_response::json_error(404, "no such path");
    });
    fake.start();
    env_client_options o;
    o.tries = 1;
    env_client client(fake.base_url(), o);
    episode_result r = run_episode(client, *task_, config(history_mode::full), context());
    EXPECT_EQ(r.status, "error");
    EXPECT_EQ(r.error.rfind("step 1 env: ", 0), 0u) << r.error;
    EXPECT_NE(r.error.find("browser of this session is gone"), std::string::npos) << r.error;
    EXPECT_EQ(r.steps, 1);
    EXPECT_EQ(steps.load(), 1);        // no further steps against a dead browser
    EXPECT_EQ(evaluations.load(), 0);  // and no score
  }
}

}  // namespace
}  // namespace kvarena
