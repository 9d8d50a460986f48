// test-agent-url.cpp: `kvarena run --agent-url` (agent/agent-model-openai.h, the shared
// endpoint call envs/common/openai-chat.h) through the built binary (KVARENA_BIN) against a
// scripted OpenAI-compatible endpoint served here (envs/sites/http-server.h):
//   - 429 (Retry-After: 1) then 200, and 500 then 200: each step retried, the retries and
//     their waits recorded per step and per item; the endpoint's usage recorded (tokens,
//     kvarena's extra KV fields); the memory columns it did not report are NULL (SQLite),
//     and the report says "not reported by the endpoint";
//   - the request JSON: the model name, the VWA system prompt and the step message as chat
//     messages, temperature/top_p/max_tokens/seed; no image part with --agent-images none;
//   - a malformed body and a 503 past --agent-tries: error rows with clear messages, exit 4;
//   - --policies: a row per policy, each request carrying it as kvarena serve's "kv" object;
//   - with Chromium: the Set-of-Marks screenshot as an image_url part (a PNG data: URL)
//     with --agent-images som, the unmarked one beside the tree with --observation
//     screenshot --agent-images screenshot, none with --agent-images none;
//   - end to end: an endpoint that replays the scripted oracle's actions (recorded by
//     `kvarena run --agent oracle`) solves the same vwa-local tasks;
//   - an endpoint serving the embedded engine on a tiny random model the way a chat server
//     does (the messages rendered by the model's chat template, encoded with BOS and
//     special tokens, one sequence per request, greedy): with --model and --history last,
//     the same per-task results and per-step prompt tokens as the embedded run.
// A schema 3 results file (written by hand with the old tables) is migrated when a run
// writes to it and viewed as schema 4 when read.
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/wait.h>

#include <boost/beast/core/detail/base64.hpp>

#include <cstdlib>
#include <deque>
#include <filesystem>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "chat-template.h"
#include "task/task.h"
#include "model-random.h"
#include "model.h"
#include "results-db.h"
#include "results-schema.h"
#include "sampler.h"
#include "session.h"
#include "sites/http-server.h"
#include "sqlite-query.h"
#include "test-util.h"
#include "tokenizer.h"

namespace kvarena {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;
using test::query;
using test::rows_t;

std::string one(const std::string& db, const std::string& sql) { return test::query_one(db, sql); }

struct run_result {
  int rc = -1;
  std::string out, err;
};

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

run_result kvarena_run(const std::string& dir, const std::string& args) {
  static int n = 0;
  const std::string base = dir + "/cmd" + std::to_string(n++);
  const std::string cmd = "env -u SLURM_ARRAY_TASK_ID -u SLURM_ARRAY_TASK_COUNT -u JOB_COMPLETION_INDEX "
                          "-u KVARENA_AGENT_API_KEY " + std::string(KVARENA_BIN) + " " + args + " >" + base +
                          ".out 2>" + base + ".err </dev/null";
  run_result r;
  const int st = std::system(cmd.c_str());
  r.rc = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  r.out = test::read_file(base + ".out");
  r.err = test::read_file(base + ".err");
  return r;
}

std::string suite() { return std::string(KVARENA_SOURCE_DIR) + "/tasks/vwa-local"; }

// A reply in VWA's form that the agent parses as `action`.
std::string vwa_reply(const std::string& action) {
  return "Let's think step-by-step. In summary, the next action I will perform is ```" + action + "```";
}

// One scripted answer: status, body, extra headers.
struct scripted {
  int status = 200;
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;
};

json completion(const std::string& content, const json& usage) {
  json j = {{"id", "c1"},
            {"object", "chat.completion"},
            {"choices", {{{"index", 0}, {"finish_reason", "stop"}, {"message", {{"role", "assistant"}, {"content", content}}}}}}};
  if (!usage.is_null()) j["usage"] = usage;
  return j;
}

// An OpenAI-compatible endpoint: answers /v1/chat/completions with the scripted answers in
// order, then with `fallback(request)`; keeps every request's JSON.
struct scripted_endpoint {
  std::mutex mu;
  std::deque<scripted> answers;
  std::function<scripted(const json&)> fallback = [](const json&) {
    return scripted{200, completion(vwa_reply("stop [N/A]"), {{"prompt_tokens", 100}, {"completion_tokens", 7}}).dump(), {}};
  };
  std::vector<json> requests;
  std::vector<std::string> auth;  // the Authorization header of each request
  sites::http_server http{[] {
                            sites::http_server_options o;
                            o.body_limit_bytes = 64u << 20;  // screenshots
                            return o;
                          }(),
                          [this](const sites::http_request& req) {
                            if (req.path != "/v1/chat/completions") return sites::http_response::json("{}", 404);
                            std::lock_guard lock(mu);
                            const json body = json::parse(req.body, nullptr, false);
                            requests.push_back(body);
                            scripted s;
                            if (!answers.empty()) {
                              s = answers.front();
                              answers.pop_front();
                            } else {
                              s = fallback(body);
                            }
                            sites::http_response r = sites::http_response::json(s.body, s.status);
                            for (auto& [k, v] : s.headers) r.add_header(k, v);
                            return r;
                          }};
  scripted_endpoint() { http.start(); }
  std::string url() const { return http.base_url() + "/v1"; }
};

class AgentUrl : public ::testing::Test {
 protected:
  void SetUp() override {
    static int n = 0;
    dir_ = test::temp_dir("agent-url-" + std::to_string(n++)).string();
  }
  std::string dir_;
};

// The text of a request's last message (its text part when it has parts).
std::string last_text(const json& req) {
  const json& c = req["messages"].back()["content"];
  if (c.is_string()) return c.get<std::string>();
  for (const json& p : c)
    if (p["type"] == "text") return p["text"].get<std::string>();
  return "";
}

bool has_image_part(const json& req) {
  for (const json& m : req["messages"])
    if (m["content"].is_array())
      for (const json& p : m["content"])
        if (p["type"] == "image_url") return true;
  return false;
}

TEST_F(AgentUrl, RetriesAreBoundedRecordedAndUsageStoredWithNullMemory) {
  scripted_endpoint ep;
  const json usage_plain = {{"prompt_tokens", 1234}, {"completion_tokens", 17}, {"total_tokens", 1251}};
  const json usage_kv = {{"prompt_tokens", 2000},
                         {"completion_tokens", 9},
                         {"peak_kv_bytes", 262144},  // flat, as kvarena serve writes them
                         {"kvarena", {{"peak_kv_logical_bytes", 123456}, {"kept_tokens", 321}}}};
  // Task 0: 429 (Retry-After: 1) then the answer. Task 1: 500 then an answer whose usage
  // has kvarena's extra fields.
  ep.answers = {{429, R"({"error":{"message":"rate limited"}})", {{"Retry-After", "1"}}},
                {200, completion(vwa_reply("stop [N/A]"), usage_plain).dump(), {}},
                {500, R"({"error":"overloaded"})", {}},
                {200, completion(vwa_reply("stop [N/A]"), usage_kv).dump(), {}}};
  const std::string db = dir_ + "/r.sqlite";
  const run_result r = kvarena_run(dir_, "run --suite " + suite() + " --limit 2 --agent-url " + ep.url() +
                                             " --agent-model scripted-7b --agent-token sk-test --agent-backoff-ms 1 "
                                             "--agent-images none --out " + db);
  ASSERT_EQ(r.rc, 0) << r.err << r.out;

  // Retries, per step and per item.
  const rows_t steps = query(db, "SELECT task_id, model_retries, model_retry_log, prompt_tokens, generated_tokens, "
                                 "kv_tokens IS NULL, kv_bytes IS NULL, kv_logical_bytes, process_bytes IS NULL "
                                 "FROM steps ORDER BY CAST(task_id AS INTEGER), step");
  ASSERT_EQ(steps.size(), 2u);
  EXPECT_EQ(steps[0][1], "1");
  EXPECT_EQ(steps[0][2], "HTTP 429 (waited 1000 ms)");  // Retry-After: 1 s, not the 1 ms backoff
  EXPECT_EQ(steps[1][1], "1");
  EXPECT_EQ(steps[1][2], "HTTP 500 (waited 1 ms)");     // the backoff
  // The endpoint's usage.
  EXPECT_EQ(steps[0][3], "1234");
  EXPECT_EQ(steps[0][4], "17");
  EXPECT_EQ(steps[1][3], "2000");
  // Memory: NULL where not reported, kvarena's fields where reported.
  EXPECT_EQ(steps[0][5], "1");
  EXPECT_EQ(steps[0][6], "1");
  EXPECT_EQ(steps[0][7], "");  // NULL
  EXPECT_EQ(steps[0][8], "1");
  EXPECT_EQ(steps[1][5], "0");  // kept_tokens reported
  EXPECT_EQ(one(db, "SELECT kv_tokens FROM steps WHERE task_id = '1'"), "321");
  EXPECT_EQ(steps[1][6], "0");  // allocated KV reported
  EXPECT_EQ(one(db, "SELECT kv_bytes FROM steps WHERE task_id = '1'"), "262144");
  EXPECT_EQ(steps[1][7], "123456");

  const rows_t items = query(db, "SELECT task_id, status, model_calls, model_retries, prompt_tokens, "
                                 "peak_kv_bytes IS NULL, peak_kv_host_bytes IS NULL, peak_device_bytes IS NULL, "
                                 "peak_process_bytes IS NULL, peak_kv_logical_bytes, policy "
                                 "FROM task_results ORDER BY CAST(task_id AS INTEGER)");
  ASSERT_EQ(items.size(), 2u);
  for (const auto& it : items) {
    EXPECT_EQ(it[1], "done");
    EXPECT_EQ(it[2], "2");  // requests, the retry included
    EXPECT_EQ(it[3], "1");
    EXPECT_EQ(it[6], "1");
    EXPECT_EQ(it[7], "1");
    EXPECT_EQ(it[8], "1");
    EXPECT_EQ(it[10], "endpoint");
  }
  EXPECT_EQ(items[0][5], "1");  // peak_kv_bytes NULL: not reported
  EXPECT_EQ(items[1][5], "0");
  EXPECT_EQ(one(db, "SELECT peak_kv_bytes FROM task_results WHERE task_id = '1'"), "262144");
  EXPECT_EQ(items[0][4], "1234");
  EXPECT_EQ(items[0][9], "");  // NULL: not reported
  EXPECT_EQ(items[1][9], "123456");
  EXPECT_EQ(one(db, "SELECT model FROM runs"), "endpoint:scripted-7b");

  // The report says so.
  EXPECT_TRUE(contains(r.out, "n/r")) << r.out;
  EXPECT_TRUE(contains(r.out, "not reported by the endpoint")) << r.out;
  const run_result html = kvarena_run(dir_, "report " + db + " --html " + dir_ + "/report.html");
  ASSERT_EQ(html.rc, 0) << html.err;
  EXPECT_TRUE(contains(test::read_file(dir_ + "/report.html"), "not reported by the endpoint"));

  // What the endpoint was sent.
  std::lock_guard lock(ep.mu);
  ASSERT_EQ(ep.requests.size(), 4u);
  const json& q = ep.requests[0];
  EXPECT_EQ(q["model"], "scripted-7b");
  EXPECT_EQ(q["temperature"], 0.0);
  EXPECT_EQ(q["top_p"], 1.0);
  EXPECT_EQ(q["max_tokens"], 256);
  EXPECT_EQ(q["seed"], 0);
  EXPECT_FALSE(q.contains("stop"));  // no model named: the endpoint's own template ends turns
  ASSERT_GE(q["messages"].size(), 2u);
  EXPECT_EQ(q["messages"][0]["role"], "system");
  EXPECT_TRUE(contains(q["messages"][0]["content"].get<std::string>(), "In summary, the next action I will perform is"));
  EXPECT_EQ(q["messages"].back()["role"], "user");
  const std::string msg = last_text(q);
  EXPECT_TRUE(contains(msg, "OBSERVATION:\n")) << msg;
  EXPECT_TRUE(contains(msg, "URL: http://localhost/")) << msg;
  EXPECT_TRUE(contains(msg, "OBJECTIVE: Show me all TV & Audio listings in Sacramento, CA")) << msg;
  EXPECT_TRUE(contains(msg, "PREVIOUS ACTION: None")) << msg;
  EXPECT_FALSE(has_image_part(q));
  EXPECT_EQ(ep.requests[0], ep.requests[1]);  // the retry sends the same request
  // 2 worked examples (user/assistant pairs) between the system text and the step.
  EXPECT_EQ(q["messages"].size(), 6u);
}

TEST_F(AgentUrl, MalformedBodyAndExhaustedTriesAreErrorRows) {
  scripted_endpoint ep;
  ep.answers = {{200, "this is not JSON", {}}, {503, "busy", {}}, {503, "still busy", {}}};
  const std::string db = dir_ + "/r.sqlite";
  const run_result r = kvarena_run(dir_, "run --suite " + suite() + " --limit 2 --agent-url " + ep.url() +
                                             " --agent-tries 2 --agent-backoff-ms 1 --out " + db);
  EXPECT_EQ(r.rc, 4) << r.err;
  const rows_t items =
      query(db, "SELECT status, error, model_calls, model_retries FROM task_results ORDER BY CAST(task_id AS INTEGER)");
  ASSERT_EQ(items.size(), 2u);
  EXPECT_EQ(items[0][0], "error");
  EXPECT_TRUE(contains(items[0][1], "step 1 model: agent endpoint: ")) << items[0][1];
  EXPECT_TRUE(contains(items[0][1], "without choices[0].message.content")) << items[0][1];
  EXPECT_TRUE(contains(items[0][1], "this is not JSON")) << items[0][1];
  EXPECT_EQ(items[0][2], "1");  // a malformed body is not retried
  EXPECT_EQ(items[1][0], "error");
  EXPECT_TRUE(contains(items[1][1], "answered HTTP 503: still busy (after 2 tries: HTTP 503 (waited 1 ms))"))
      << items[1][1];
  EXPECT_EQ(items[1][2], "2");
  EXPECT_EQ(items[1][3], "1");
}

TEST_F(AgentUrl, PoliciesGoToTheEndpointAsTheKvObject) {
  scripted_endpoint ep;
  const std::string db = dir_ + "/r.sqlite";
  const run_result r = kvarena_run(dir_, "run --suite " + suite() + " --limit 1 --agent-url " + ep.url() +
                                             " --policies full,window:window=64 --sinks 2 --out " + db);
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(query(db, "SELECT policy FROM task_results ORDER BY policy"),
            (rows_t{{"full"}, {"window:window=64"}}));
  std::lock_guard lock(ep.mu);
  ASSERT_EQ(ep.requests.size(), 2u);
  std::map<std::string, json> kv;
  for (const json& q : ep.requests) {
    ASSERT_TRUE(q.contains("kv")) << q.dump().substr(0, 300);
    kv[q["kv"]["policy"]] = q["kv"];
  }
  ASSERT_EQ(kv.size(), 2u);
  EXPECT_EQ(kv["window"]["window"], 64);  // the label's option
  EXPECT_EQ(kv["window"]["sinks"], 2);    // the flag's
  EXPECT_EQ(kv["full"], json({{"policy", "full"}}));  // full takes no option
}

TEST_F(AgentUrl, BadFlagsAreRefused) {
  const run_result pol = kvarena_run(dir_, "run --suite " + suite() + " --limit 1 --agent-url http://127.0.0.1:9/v1 "
                                            "--policies full --kv-budget 512t --out " + dir_ + "/a.sqlite");
  EXPECT_NE(pol.rc, 0);
  EXPECT_TRUE(contains(pol.err, "--kv-budget with --agent-url: not supported")) << pol.err;
  const run_result img = kvarena_run(dir_, "run --suite " + suite() + " --limit 1 --agent-url http://127.0.0.1:9/v1 "
                                            "--agent-images som --out " + dir_ + "/b.sqlite");
  EXPECT_NE(img.rc, 0);
  EXPECT_TRUE(contains(img.err, "needs --observation som")) << img.err;
  const run_result url = kvarena_run(dir_, "run --suite " + suite() + " --limit 1 --agent-url ftp://x --out " + dir_ +
                                            "/c.sqlite");
  EXPECT_NE(url.rc, 0);
  EXPECT_TRUE(contains(url.err, "expected the http(s) URL")) << url.err;
}

// The PNG signature of an image_url part's data: URL.
std::string image_png_magic(const json& req) {
  for (const json& m : req["messages"])
    if (m["content"].is_array())
      for (const json& p : m["content"])
        if (p["type"] == "image_url") {
          const std::string url = p["image_url"]["url"];
          const std::string prefix = "data:image/png;base64,";
          if (url.rfind(prefix, 0) != 0) return "not a PNG data URL";
          const std::string b64 = url.substr(prefix.size(), 12);
          std::string out(boost::beast::detail::base64::decoded_size(b64.size()), '\0');
          out.resize(boost::beast::detail::base64::decode(out.data(), b64.data(), b64.size()).first);
          return out.substr(1, 3);
        }
  return "";
}

TEST_F(AgentUrl, ScreenshotsAreSentAsAnImagePartUnlessNone) {
  if (!fs::exists("/usr/bin/chromium")) GTEST_SKIP() << "no /usr/bin/chromium (apt-get install chromium)";
  // (observation, images): the Set-of-Marks list with its marked screenshot; the tree with the
  // screenshot unmarked; the Set-of-Marks list without an image.
  const std::pair<std::string, std::string> cases[] = {{"som", "som"}, {"screenshot", "screenshot"}, {"som", "none"}};
  for (const auto& [observation, images] : cases) {
    SCOPED_TRACE(observation + " " + images);
    scripted_endpoint ep;
    const run_result r = kvarena_run(dir_, "run --suite " + suite() + " --limit 1 --agent-url " + ep.url() +
                                               " --browser chromium --observation " + observation +
                                               " --agent-images " + images + " --out " + dir_ + "/" + observation +
                                               "-" + images + ".sqlite");
    ASSERT_EQ(r.rc, 0) << r.err;
    std::lock_guard lock(ep.mu);
    ASSERT_EQ(ep.requests.size(), 1u);
    const json& q = ep.requests[0];
    const std::string text = last_text(q);
    EXPECT_TRUE(contains(text, "OBJECTIVE: ")) << q.dump().substr(0, 500);
    // The SoM list names tags in brackets ("[12] [A] [...]"); the tree names roles ("[12] link '...'").
    EXPECT_EQ(contains(text, "] [A] ["), observation == "som") << text.substr(0, 800);
    if (images == "none") {
      EXPECT_FALSE(has_image_part(q));
    } else {
      EXPECT_EQ(image_png_magic(q), "PNG");
      // The image follows the text of the step's message (the last one).
      EXPECT_EQ(q["messages"].back()["content"][1]["type"], "image_url");
    }
  }
}

// The oracle's actions of every task, by the task's objective (its intent).
std::map<std::string, std::deque<std::string>> oracle_actions(const std::string& db, const std::vector<task>& tasks) {
  std::map<std::string, std::string> intent_of;
  for (const task& t : tasks) intent_of[std::to_string(t.task_id)] = t.intent;
  std::map<std::string, std::deque<std::string>> out;
  for (const auto& row : query(db, "SELECT task_id, action FROM steps ORDER BY task_id, step"))
    out[intent_of.at(row[0])].push_back(row[1]);
  return out;
}

TEST_F(AgentUrl, EndpointReplayingTheOracleSolvesTheTasks) {
  const int n = 6;
  const std::string oracle_db = dir_ + "/oracle.sqlite";
  const run_result o = kvarena_run(dir_, "run --suite " + suite() + " --limit " + std::to_string(n) +
                                             " --agent oracle --out " + oracle_db);
  ASSERT_EQ(o.rc, 0) << o.err;
  ASSERT_EQ(one(oracle_db, "SELECT SUM(success) FROM task_results"), std::to_string(n));
  const task_suite s = load_tasks(suite());
  ASSERT_TRUE(s.ok());
  std::map<std::string, std::deque<std::string>> actions = oracle_actions(oracle_db, s.tasks);
  ASSERT_EQ(actions.size(), size_t(n));  // the objectives tell the tasks apart

  scripted_endpoint ep;
  ep.fallback = [&actions](const json& req) {
    const std::string msg = last_text(req);
    const size_t at = msg.find("OBJECTIVE: ");
    std::string reply = vwa_reply("stop [no objective found]");
    if (at != std::string::npos) {
      const std::string intent = msg.substr(at + 11, msg.find('\n', at) - at - 11);
      auto it = actions.find(intent);
      if (it != actions.end() && !it->second.empty()) {
        reply = vwa_reply(it->second.front());
        it->second.pop_front();
      }
    }
    return scripted{200, completion(reply, {{"prompt_tokens", 10}, {"completion_tokens", 5}}).dump(), {}};
  };
  const std::string db = dir_ + "/replay.sqlite";
  const run_result r = kvarena_run(dir_, "run --suite " + suite() + " --limit " + std::to_string(n) +
                                             " --agent-url " + ep.url() + " --out " + db);
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(one(db, "SELECT COUNT(*) FROM task_results WHERE status = 'done' AND success = 1"), std::to_string(n))
      << r.out;
  // Every oracle action was asked for and used, and each step's action is the oracle's.
  for (const auto& [intent, left] : actions) EXPECT_TRUE(left.empty()) << intent << ": " << left.size() << " left";
  EXPECT_EQ(query(db, "SELECT task_id, step, action FROM steps ORDER BY task_id, step"),
            query(oracle_db, "SELECT task_id, step, action FROM steps ORDER BY task_id, step"));
}

// A chat server on the embedded engine: renders the messages with the model's chat template
// (a new sequence per request), generates greedily with the request's max_tokens and stop
// strings, answers the text with usage (prompt_tokens = the rendered prompt's tokens).
struct engine_endpoint {
  std::unique_ptr<model> m;
  std::unique_ptr<tokenizer> tok;
  scripted_endpoint ep;
  explicit engine_endpoint(const std::string& path) : m(load_model(path)), tok(tokenizer::from_gguf(*m->gguf)) {
    ep.fallback = [this](const json& req) {
      std::vector<chat_message> msgs;
      for (const json& x : req["messages"]) msgs.push_back({x["role"], x["content"]});
      const std::string text = chat_template::for_model(*m).render(msgs, true);
      const std::vector<int32_t> prompt = tok->encode(text, /*add_bos=*/true, /*parse_special=*/true);
      session_options so;
      so.n_threads = 1;
      session seq(*m, so);
      generate_options g;
      g.max_tokens = req["max_tokens"].get<int64_t>();
      if (req.contains("stop")) g.stop = req["stop"].get<std::vector<std::string>>();
      sampler_options sp;
      sp.temperature = req["temperature"].get<float>();
      sampler smp(sp);
      const generate_result r = generate(seq, *tok, prompt, g, smp);
      const json usage = {{"prompt_tokens", prompt.size()}, {"completion_tokens", r.tokens.size()}};
      return scripted{200, completion(r.text, usage).dump(-1, ' ', false, json::error_handler_t::replace), {}};
    };
  }
};

TEST_F(AgentUrl, EngineBehindAnEndpointGivesTheEmbeddedRunsResults) {
  random_model_spec spec;
  spec.arch = model_arch::llama;
  spec.dim = 64;
  spec.n_layers = 2;
  spec.n_heads = 4;
  spec.n_kv_heads = 2;
  spec.ffn_dim = 128;
  spec.n_vocab = 512;
  spec.n_ctx = 8192;
  spec.type = ggml_type::f32;
  spec.seed = 3;
  const std::string gguf = dir_ + "/tiny.gguf";
  write_random_model(spec, gguf);
  const std::string common = "--suite " + suite() + " --limit 3 --model " + gguf +
                             " --history last --max-steps 3 --max-new-tokens 12 --max-obs-tokens 256 --examples 1";
  const run_result emb = kvarena_run(dir_, "run " + common + " --policies full --threads 1 --out " + dir_ + "/emb.sqlite");
  ASSERT_EQ(emb.rc, 0) << emb.err;
  engine_endpoint server(gguf);
  const run_result url = kvarena_run(dir_, "run " + common + " --agent-url " + server.ep.url() + " --out " + dir_ +
                                               "/url.sqlite");
  ASSERT_EQ(url.rc, 0) << url.err;
  const std::string items = "SELECT task_id, status, success, score, steps, answer, final_url, prompt_tokens, "
                            "generated_tokens FROM task_results ORDER BY task_id";
  const rows_t a = query(dir_ + "/emb.sqlite", items), b = query(dir_ + "/url.sqlite", items);
  ASSERT_EQ(a.size(), 3u);
  EXPECT_EQ(a, b);
  const std::string steps = "SELECT task_id, step, action, action_error, prompt_tokens, generated_tokens, observation "
                            "FROM steps ORDER BY task_id, step";
  const rows_t sa = query(dir_ + "/emb.sqlite", steps), sb = query(dir_ + "/url.sqlite", steps);
  EXPECT_EQ(sa.size(), 9u);  // 3 tasks x 3 steps: garbage replies end by the step limit
  EXPECT_EQ(sa, sb);
  std::lock_guard lock(server.ep.mu);
  EXPECT_EQ(server.ep.requests.size(), sa.size());
  // The plain chat format's stop strings, named by the model, went along.
  EXPECT_EQ(server.ep.requests.at(0)["stop"], json({"\nUSER:", "\nOBSERVATION:"}));
}

// A results file of schema 3 (the tables as they were, made here by hand): a run appends to
// it (migrated, its old row kept), and a reader of an unmigrated copy sees the new columns
// as NULL.
TEST_F(AgentUrl, SchemaThreeFilesAreMigratedOnWriteAndViewedOnRead) {
  const std::string db = dir_ + "/old.sqlite";
  {
    const run_result o = kvarena_run(dir_, "run --suite " + suite() + " --limit 1 --agent oracle --name old --out " + db);
    ASSERT_EQ(o.rc, 0) << o.err;
  }
  // Back to schema 3: the two tables without the new columns and with their NOT NULLs.
  sqlite3* h = nullptr;
  ASSERT_EQ(sqlite3_open(db.c_str(), &h), SQLITE_OK);
  const char* to_v3 =
      "BEGIN; DROP INDEX task_results_by_policy; "
      "ALTER TABLE task_results DROP COLUMN model_calls; ALTER TABLE task_results DROP COLUMN model_retries; "
      "ALTER TABLE steps DROP COLUMN model_retries; ALTER TABLE steps DROP COLUMN model_retry_log; "
      "CREATE INDEX task_results_by_policy ON task_results (run_id, policy); "
      "UPDATE meta SET schema_version = 3; PRAGMA user_version = 3; COMMIT;";
  ASSERT_EQ(sqlite3_exec(h, to_v3, nullptr, nullptr, nullptr), SQLITE_OK) << sqlite3_errmsg(h);
  sqlite3_close(h);
  fs::copy_file(db, dir_ + "/old-copy.sqlite");

  {  // read: viewed as schema 4, nothing written
    results::results_reader reader(dir_ + "/old-copy.sqlite");
    const auto runs = reader.runs();
    ASSERT_EQ(runs.size(), 1u);
    const auto items = reader.task_results(runs[0].run_id);
    ASSERT_EQ(items.size(), 1u);
    EXPECT_TRUE(items[0].success);
    EXPECT_EQ(items[0].model_calls, -1);
    ASSERT_FALSE(reader.steps(runs[0].run_id, items[0].item).empty());
  }
  EXPECT_EQ(one(dir_ + "/old-copy.sqlite", "PRAGMA user_version"), "3");

  scripted_endpoint ep;
  const run_result r = kvarena_run(dir_, "run --suite " + suite() + " --limit 1 --agent-url " + ep.url() +
                                             " --name new --out " + db);
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(one(db, "PRAGMA user_version"), "4");
  EXPECT_EQ(one(db, "SELECT schema_version FROM meta"), "4");
  EXPECT_EQ(query(db, "SELECT r.name, t.success, t.model_calls IS NULL, t.peak_kv_bytes IS NULL FROM task_results t "
                      "JOIN runs r USING (run_id) ORDER BY r.name"),
            (rows_t{{"new", "0", "0", "1"}, {"old", "1", "1", "0"}}));
  EXPECT_EQ(one(db, "SELECT COUNT(*) FROM steps s JOIN runs r USING (run_id) WHERE r.name = 'old'"),
            one(dir_ + "/old-copy.sqlite", "SELECT COUNT(*) FROM steps"));
}

}  // namespace
}  // namespace kvarena
