// test-judge.cpp: fuzzy_match through a model-backed judge, scored by VisualWebArena's rule
// (judge_verdict): --judge-url against a scripted OpenAI-compatible server started here
// (envs/eval/judge-openai.h), --judge-model on a random GGUF on the embedded engine
// (agent/judge-engine.h), and an env-server session of a VWA task without a judge
// (unsupported, never the deterministic judge's substring score).
#include <gtest/gtest.h>

#include <deque>
#include <mutex>
#include <string>

#include <nlohmann/json.hpp>

#include "eval/evaluator.h"
#include "eval/judge-openai.h"
#include "judge-engine.h"
#include "model-random.h"
#include "sites/http-server.h"
#include "test-util.h"

namespace kvarena {
namespace {

openai_judge_options judge_options(const std::string& url) {
  openai_judge_options o;
  o.url = url;
  return o;
}

// A task scored by string_match fuzzy_match, as VWA writes them.
task fuzzy_task(const std::string& reference) {
  task t;
  t.task_id = 5;
  t.sites = {"shopping"};
  t.start_url = "http://127.0.0.1:1/";
  t.intent = "What colour is the mug?";
  t.eval.eval_types = {"string_match"};
  reference_answer_set r;
  fuzzy_reference f;
  f.items = {reference};
  r.fuzzy_match = f;
  t.eval.reference_answers = r;
  return t;
}

// Answers chat completions with the scripted replies in order ("HTTP 500" answers 500).
struct scripted_chat_server {
  std::mutex mu;
  std::deque<std::string> replies;
  std::vector<nlohmann::json> requests;
  sites::http_server http{{}, [this](const sites::http_request& req) {
                            std::lock_guard lock(mu);
                            requests.push_back(nlohmann::json::parse(req.body, nullptr, false));
                            std::string r = replies.empty() ? "" : replies.front();
                            if (!replies.empty()) replies.pop_front();
                            if (req.path != "/v1/chat/completions") return sites::http_response::json("{}", 404);
                            if (r == "HTTP 500") return sites::http_response::json("{\"error\":\"overloaded\"}", 500);
                            nlohmann::json body = {
                                {"object", "chat.completion"},
                                {"choices", {{{"index", 0}, {"message", {{"role", "assistant"}, {"content", r}}}}}}};
                            return sites::http_response::json(body.dump());
                          }};
};

eval_result evaluate_with(fuzzy_judge* judge, const task& t, const std::string& answer) {
  eval_inputs in;
  in.answer = answer;
  in.judge = judge;
  in.require_llm_judge = true;
  return evaluate_task(t, in);
}

TEST(JudgeUrl, ScoresByTheRepliesOfAScriptedEndpoint) {
  scripted_chat_server server;
  server.http.start();
  openai_judge_options o;
  o.url = server.http.base_url();  // the /v1/chat/completions path is added
  o.model = "judge-7b";
  openai_judge judge(o);
  const task t = fuzzy_task("blue");
  server.replies = {"Correct.", "incorrect", "Partially correct", "I cannot tell", "HTTP 500"};
  EXPECT_EQ(evaluate_with(&judge, t, "It is navy blue").score, 1);
  EXPECT_EQ(evaluate_with(&judge, t, "blue").score, 0);  // the judge said incorrect: no substring rescue
  EXPECT_EQ(evaluate_with(&judge, t, "blue").score, 0);
  eval_result odd = evaluate_with(&judge, t, "blue");
  EXPECT_EQ(odd.score, 0);
  ASSERT_FALSE(odd.notes.empty());
  EXPECT_NE(odd.notes[0].find("unexpected reply 'I cannot tell'"), std::string::npos) << odd.notes[0];
  eval_result down = evaluate_with(&judge, t, "blue");
  EXPECT_EQ(down.score, 0);
  ASSERT_FALSE(down.notes.empty());
  EXPECT_NE(down.notes[0].find("HTTP 500"), std::string::npos) << down.notes[0];
  EXPECT_EQ(down.judge, "openai:judge-7b@" + server.http.base_url() + "/v1/chat/completions");

  // What was asked: VWA's question, temperature 0, the reference and the answer in it.
  std::lock_guard lock(server.mu);
  ASSERT_EQ(server.requests.size(), 5u);
  const nlohmann::json& r = server.requests[0];
  EXPECT_EQ(r["model"], "judge-7b");
  EXPECT_EQ(r["temperature"], 0);
  const std::string user = r["messages"][1]["content"];
  EXPECT_NE(user.find("question: What colour is the mug?"), std::string::npos) << user;
  EXPECT_NE(user.find("reference answer: blue"), std::string::npos) << user;
  EXPECT_NE(user.find("student answer: It is navy blue"), std::string::npos) << user;
  EXPECT_NE(user.find("'correct', 'incorrect', 'partially correct'"), std::string::npos) << user;
}

TEST(JudgeUrl, UnachievableTasksAskSameOrDifferent) {
  scripted_chat_server server;
  server.http.start();
  openai_judge judge(judge_options(server.http.base_url() + "/v1/chat/completions"));
  task t = fuzzy_task("N/A");
  t.eval.reference_answers->fuzzy_match = fuzzy_reference{false, {}, "N/A"};
  t.eval.string_note = "the store sells no mugs";
  server.replies = {"same", "Different."};
  EXPECT_EQ(evaluate_with(&judge, t, "I cannot find any mug; the shop has none").score, 1);
  EXPECT_EQ(evaluate_with(&judge, t, "The page did not load").score, 0);
  std::lock_guard lock(server.mu);
  const std::string user = server.requests.at(0)["messages"][1]["content"];
  EXPECT_NE(user.find("actual reason it cannot be done: the store sells no mugs"), std::string::npos) << user;
}

TEST(JudgeUrl, WithoutAJudgeVwaTasksAreUnsupportedNotSubstringScored) {
  eval_result r = evaluate_with(nullptr, fuzzy_task("blue"), "blue");
  EXPECT_EQ(r.status, eval_status::unsupported);
  EXPECT_EQ(r.score, 0);
  EXPECT_NE(r.evaluators.at(0).detail.find("--judge-url"), std::string::npos) << r.evaluators[0].detail;
  eval_inputs own;  // kvarena's own suites keep the deterministic judge
  own.answer = "blue";
  EXPECT_EQ(evaluate_task(fuzzy_task("blue"), own).score, 1);
  EXPECT_THROW(openai_judge(judge_options("ftp://x")), std::invalid_argument);
}

TEST(JudgeModel, TheVerdictIsTheRandomModelsReplyReadByTheRule) {
  const std::string path = (test::temp_dir("judge-model") / "judge.gguf").string();
  random_model_spec spec;
  spec.dim = 64;
  spec.n_layers = 2;
  spec.n_heads = 4;
  spec.n_kv_heads = 2;
  spec.ffn_dim = 96;
  spec.n_vocab = 320;
  spec.n_ctx = 4096;
  spec.seed = 11;
  write_random_model(spec, path);
  engine_judge_options o;
  o.model_path = path;
  o.max_tokens = 8;
  engine_judge judge(o);
  judge_request req{judge_question::fuzzy_match, "What colour is the mug?", "blue", "blue"};
  judge_result first = judge.judge(req);
  ASSERT_TRUE(first.error.empty()) << first.error;
  EXPECT_EQ(judge.judge(req).reply, first.reply);  // greedy: the same reply again

  eval_result r = evaluate_with(&judge, fuzzy_task("blue"), "blue");
  const int v = judge_verdict(judge_question::fuzzy_match, first.reply);
  EXPECT_EQ(r.score, v == 1 ? 1 : 0) << "reply: " << first.reply;
  EXPECT_EQ(r.judge, "engine:" + path);
  if (v < 0) {  // a random model rarely says "correct": the note quotes its reply
    ASSERT_FALSE(r.notes.empty());
    EXPECT_NE(r.notes[0].find("unexpected reply"), std::string::npos) << r.notes[0];
  }
}

}  // namespace
}  // namespace kvarena
