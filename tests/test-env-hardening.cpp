// test-env-hardening.cpp: what a task file, a page or a request body from elsewhere must
// not do to the machine that runs kvarena (issue 41):
//   - open a local file: every place that opens a URL (goto, a link, a <base href>, a form,
//     a session's start_url, the evaluators' fetches) takes http(s) only unless
//     --allow-file-urls (common/url-policy.h); a refusal is an error, never an empty page;
//   - read unbounded bodies: the evaluators' HTTP fetches are capped;
//   - crash or hold the server with one request: every numeric field is range-checked
//     (422 naming the field and the range), tabs are at most k_max_tabs per session;
//   - drive it without being asked to: an optional bearer token (401 without it), and no
//     binding beyond loopback without one;
//   - remove what is not ours: the stale Chromium profile sweep takes this user's
//     directories only and never throws on an odd name;
// each against a loopback server, no network needed.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include <nlohmann/json.hpp>

#include "browser/chromium/chromium-cleanup.h"
#include "browser/text/text-browser.h"
#include "browser/common/url-util.h"
#include "client/env-client.h"
#include "common/http-call.h"
#include "common/url-policy.h"
#include "server/env-api.h"
#include "server/env-server.h"
#include "server/env-session.h"
#include "sites/http-server.h"
#include "test-util.h"

namespace kvarena {
namespace {

// A loopback site whose pages link, post and point their base at a local file.
class FileUrlSite : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = test::temp_dir("file-urls");
    std::ofstream(dir_ / "secret.html") << "<html><head><title>Secret</title></head><body>TOP-SECRET</body></html>";
    secret_ = "file://" + (dir_ / "secret.html").string();
    server_ = std::make_unique<sites::http_server>(sites::http_server_options{}, [this](const sites::http_request& req) {
      if (req.path == "/link") return sites::http_response::html("<a href='" + secret_ + "'>Secret</a>");
      if (req.path == "/base")
        return sites::http_response::html("<html><head><base href='file://" + dir_.string() +
                                          "/'></head><body><a href='secret.html'>Secret</a></body></html>");
      if (req.path == "/form")
        return sites::http_response::html("<form action='" + secret_ + "'><button type=submit>Go</button></form>");
      if (req.path == "/blank-link")
        return sites::http_response::html("<a href='/' target='_blank'>Elsewhere</a>");
      if (req.path == "/big") return sites::http_response::text(std::string(3000, 'x'));
      if (req.path.rfind("/mib/", 0) == 0)  // a 1 MiB page: /mib/<n>
        return sites::http_response::html("<html><head><title>MiB " + req.path.substr(5) + "</title></head><body><p>" +
                                          std::string(1u << 20, 'm') + "</p></body></html>");
      if (req.path == "/to-file") return sites::http_response::redirect(secret_, 302);
      return sites::http_response::html("<p>home</p>");
    });
    server_->start();
  }

  std::string url(const std::string& path) const { return server_->base_url() + path; }

  // The [id] of the first observation line holding `needle`.
  static int64_t id_on(text_browser& b, const std::string& needle) {
    std::string obs = b.observe().text;
    size_t at = obs.find(needle);
    if (at == std::string::npos) return -1;
    size_t open = obs.rfind('[', at);
    return std::stoll(obs.substr(open + 1));
  }

  std::filesystem::path dir_;
  std::string secret_;
  std::unique_ptr<sites::http_server> server_;
};

TEST(UrlPolicy, HttpOnlyUnlessFileUrlsAreAllowed) {
  EXPECT_TRUE(url_allowed("http://127.0.0.1/x", false));
  EXPECT_TRUE(url_allowed("HTTPS://example.com/", false));
  EXPECT_FALSE(url_allowed("file:///etc/passwd", false));
  EXPECT_FALSE(url_allowed("/etc/passwd", false));
  EXPECT_FALSE(url_allowed("ftp://example.com/", false));
  EXPECT_FALSE(url_allowed("javascript:alert(1)", true));
  EXPECT_TRUE(url_allowed("file:///etc/passwd", true));
  EXPECT_EQ(refused_url_reason("file:///etc/passwd", false),
            "cannot open 'file:///etc/passwd': only http:// and https:// URLs are opened; file:// URLs and local "
            "paths need --allow-file-urls");
  EXPECT_STREQ(curl_protocols(false), "http,https");
}

TEST(UrlOrigin, SchemeHostAndPortOfHttpUrlsOnly) {
  EXPECT_EQ(url_origin("http://127.0.0.1:9980/t-1/classifieds?x=1#f"), "http://127.0.0.1:9980");
  EXPECT_EQ(url_origin("HTTP://User:pw@Example.COM:80/x"), "http://example.com");
  EXPECT_EQ(url_origin("https://example.com:443"), "https://example.com");
  EXPECT_EQ(url_origin("https://example.com:8443/"), "https://example.com:8443");
  EXPECT_EQ(url_origin("http://[::1]:8080/"), "http://[::1]:8080");
  EXPECT_EQ(url_origin("http://[::1]/"), "http://[::1]");
  EXPECT_EQ(url_origin("about:blank"), "");
  EXPECT_EQ(url_origin("file:///etc/passwd"), "");
  EXPECT_EQ(url_origin("data:text/html,<b>x</b>"), "");
  EXPECT_EQ(url_origin("/relative"), "");
}

TEST_F(FileUrlSite, TextBrowserRefusesFileUrlsEverywhere) {
  text_browser b;
  browser_result r = b.go_to(secret_);
  EXPECT_FALSE(r.ok());
  EXPECT_NE(r.error.find("--allow-file-urls"), std::string::npos) << r.error;
  EXPECT_EQ(b.current_url(), "about:blank");

  ASSERT_TRUE(b.go_to(url("/link")).ok());
  r = b.click(id_on(b, "link 'Secret'"));
  EXPECT_FALSE(r.ok()) << "a link to file:// is an action error";
  EXPECT_EQ(b.current_url(), url("/link"));
  EXPECT_EQ(b.observe().text.find("TOP-SECRET"), std::string::npos);

  ASSERT_TRUE(b.go_to(url("/base")).ok());
  r = b.click(id_on(b, "link 'Secret'"));
  EXPECT_FALSE(r.ok()) << "<base href='file://...'> does not lead there either";
  EXPECT_EQ(b.observe().text.find("TOP-SECRET"), std::string::npos);

  ASSERT_TRUE(b.go_to(url("/form")).ok());
  r = b.click(id_on(b, "button 'Go'"));
  EXPECT_FALSE(r.ok()) << "a form whose action is file://";
  EXPECT_EQ(b.observe().text.find("TOP-SECRET"), std::string::npos);

  r = b.go_to(url("/to-file"));  // a redirect there
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(b.observe().text.find("TOP-SECRET"), std::string::npos);

  text_browser_options allow;
  allow.http.allow_file_urls = true;
  text_browser with(allow);
  ASSERT_TRUE(with.go_to(secret_).ok());
  EXPECT_NE(with.observe().text.find("TOP-SECRET"), std::string::npos);
}

TEST_F(FileUrlSite, EvaluatorFetchesAreHttpOnlyAndCapped) {
  http_call_request req;
  req.url = secret_;
  http_call_response res = http_call(req);
  EXPECT_FALSE(res.ok);
  EXPECT_TRUE(res.body.empty());
  EXPECT_NE(res.error.find("only http:// and https://"), std::string::npos) << res.error;

  req.url = url("/big");
  req.max_body_bytes = 1000;
  res = http_call(req);
  EXPECT_FALSE(res.ok);
  EXPECT_NE(res.error.find("1000-byte limit"), std::string::npos) << res.error;
  req.max_body_bytes = 4000;
  res = http_call(req);
  EXPECT_TRUE(res.ok) << res.error;
  EXPECT_EQ(res.body.size(), 3000u);
  EXPECT_EQ(http_call_request{}.max_body_bytes, 16u << 20);

  req.url = url("/to-file");  // a redirect to file:// is not followed
  res = http_call(req);
  EXPECT_TRUE(!res.ok || res.body.find("TOP-SECRET") == std::string::npos);
}

TEST_F(FileUrlSite, EnvServerRefusesAFileStartUrlWith422) {
  env_server_options opt;
  env_server server(opt);
  server.start();
  nlohmann::json task = {{"task_id", 1},
                         {"sites", {"classifieds"}},
                         {"require_login", false},
                         {"storage_state", nullptr},
                         {"start_url", "file:///etc/passwd"},
                         {"intent", "Read it"},
                         {"require_reset", false},
                         {"eval", {{"eval_types", {"string_match"}},
                                   {"reference_answers", {{"exact_match", "x"}}},
                                   {"reference_url", ""},
                                   {"program_html", nlohmann::json::array()}}}};
  sites::http_request req;
  req.method = "POST";
  req.path = "/v1/sessions";
  req.body = nlohmann::json{{"task", task}}.dump();
  sites::http_response res = server.handle(req);
  EXPECT_EQ(res.status, 422) << res.body;
  EXPECT_NE(res.body.find("--allow-file-urls"), std::string::npos) << res.body;
  EXPECT_EQ(res.body.find("root:"), std::string::npos);
  EXPECT_EQ(server.session_count(), 0u);

  task["start_url"] = url("/link") + " |AND| " + secret_;  // a second tab there too
  req.body = nlohmann::json{{"task", task}}.dump();
  EXPECT_EQ(server.handle(req).status, 422);
}

// ---- request bodies, tabs, token: against an env server with in-process sites

nlohmann::json classifieds_task(const std::string& start_url = "__CLASSIFIEDS__") {
  return {{"task_id", 1},
          {"sites", {"classifieds"}},
          {"require_login", false},
          {"storage_state", nullptr},
          {"start_url", start_url},
          {"intent", "What colour is the sky?"},
          {"require_reset", false},
          {"eval", {{"eval_types", {"string_match"}},
                    {"reference_answers", {{"exact_match", "blue"}}},
                    {"reference_url", ""},
                    {"program_html", nlohmann::json::array()}}}};
}

class HardenedServer : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    env_server_options opt;
    opt.token = "s3cret";
    server_ = new env_server(opt);
    server_->start();
  }
  static void TearDownTestSuite() {
    delete server_;
    server_ = nullptr;
  }
  static sites::http_response call(const std::string& method, const std::string& path, const std::string& body,
                                   const std::string& authorization = "Bearer s3cret") {
    sites::http_request req;
    req.method = method;
    req.path = path;
    req.body = body;
    if (!authorization.empty()) req.headers["authorization"] = authorization;
    return server_->handle(req);
  }
  static std::string message(const sites::http_response& r) {
    return nlohmann::json::parse(r.body)["error"]["message"].get<std::string>();
  }
  static std::string create_body(const nlohmann::json& extra, const nlohmann::json& task = classifieds_task()) {
    nlohmann::json body = extra;
    body["task"] = task;
    return body.dump();
  }
  static inline env_server* server_ = nullptr;
};

TEST_F(HardenedServer, NumericFieldsAreRangeChecked) {
  struct bad {
    const char* body;
    const char* field;
    const char* range;
  };
  const bad cases[] = {
      {R"({"max_obs_tokens": 3000000000000000000})", "\"max_obs_tokens\"", "1..10000000"},
      {R"({"max_obs_tokens": 18446744073709551615})", "\"max_obs_tokens\"", "1..10000000"},
      {R"({"max_obs_tokens": -9223372036854775808})", "\"max_obs_tokens\"", "1..10000000"},
      {R"({"max_obs_tokens": 0})", "\"max_obs_tokens\"", "1..10000000"},
      {R"({"max_obs_tokens": 1.5})", "\"max_obs_tokens\"", "1..10000000"},
      {R"({"max_obs_tokens": 1e300})", "\"max_obs_tokens\"", "1..10000000"},
      {R"({"early_stop": {"max_steps": 4294967297}})", "\"early_stop.max_steps\"", "0..100000"},
      {R"({"early_stop": {"parse_failures": -1}})", "\"early_stop.parse_failures\"", "0..100000"},
      {R"({"early_stop": {"repeated_actions": 18446744073709551615}})", "\"early_stop.repeated_actions\"", "0..100000"},
  };
  for (const bad& c : cases) {
    sites::http_response r = call("POST", "/v1/sessions", create_body(nlohmann::json::parse(c.body)));
    EXPECT_EQ(r.status, 422) << c.body << ": " << r.body;
    EXPECT_NE(message(r).find(c.field), std::string::npos) << message(r);
    EXPECT_NE(message(r).find(c.range), std::string::npos) << message(r);
  }
  nlohmann::json tall = classifieds_task();
  tall["viewport_size"] = {{"width", 1280}, {"height", 1000000000}};
  sites::http_response r = call("POST", "/v1/sessions", create_body(nlohmann::json::object(), tall));
  EXPECT_EQ(r.status, 422) << r.body;
  EXPECT_NE(message(r).find("\"task.viewport_size.height\" must be an integer in 1..100000"), std::string::npos)
      << message(r);
  tall["viewport_size"] = {{"width", 100001}, {"height", 2048}};
  r = call("POST", "/v1/sessions", create_body(nlohmann::json::object(), tall));
  EXPECT_EQ(r.status, 422) << r.body;
  EXPECT_NE(message(r).find("task.viewport_size.width"), std::string::npos) << message(r);
  EXPECT_EQ(server_->session_count(), 0u);

  // In range: the session is made, and the observation is cut to 10 tokens' bytes.
  r = call("POST", "/v1/sessions", create_body({{"max_obs_tokens", 10}, {"early_stop", {{"max_steps", 100000}}}}));
  ASSERT_EQ(r.status, 201) << r.body;
  auto created = nlohmann::json::parse(r.body);
  EXPECT_LE(created["observation"]["text"].get<std::string>().size(), 10u * k_obs_chars_per_token);
  EXPECT_EQ(call("DELETE", "/v1/sessions/" + created["session_id"].get<std::string>(), "").status, 200);

  EXPECT_EQ(truncate_observation("abcdef", INT64_MAX), "abcdef");
  EXPECT_EQ(truncate_observation("abcdef", INT64_MAX / 2), "abcdef");
  EXPECT_EQ(truncate_observation(std::string(9, 'x'), 2), std::string(8, 'x'));
}

// Found by fuzz-env-api: a number past a double in a body was an uncaught out_of_range
// from the JSON parser (500 "internal error"); it is a 400 like any other bad JSON.
TEST_F(HardenedServer, NumbersPastADoubleAre400) {
  const std::string huge = "5555E555555555555555555555";
  sites::http_response r = call("POST", "/v1/sessions", R"({"task": )" + huge + "}");
  EXPECT_EQ(r.status, 400) << r.body;
  EXPECT_NE(message(r).find("not valid JSON"), std::string::npos) << message(r);
  r = call("POST", "/v1/sessions", create_body({{"max_obs_tokens", 10}}));
  ASSERT_EQ(r.status, 201) << r.body;
  const std::string id = nlohmann::json::parse(r.body)["session_id"];
  EXPECT_EQ(call("POST", "/v1/sessions/" + id + "/step", R"({"action": "scroll [down]", "x": 1e999999})").status, 400);
  EXPECT_EQ(call("POST", "/v1/sessions/" + id + "/evaluate", R"({"answer": "x", "n": -1E400})").status, 400);
  EXPECT_EQ(call("DELETE", "/v1/sessions/" + id, "").status, 200);
  env_create_request cr;
  cr.task_json = R"({"task_id": 1e99999})";
  try {
    (void)to_json_text(cr);
    ADD_FAILURE() << "a task with a number past a double was written";
  } catch (const env_api_error& e) {
    EXPECT_EQ(e.status(), 400) << e.what();
  }
}

TEST_F(HardenedServer, TabsAreBounded) {
  std::string many = "__CLASSIFIEDS__";
  for (int i = 1; i < k_max_tabs + 1; ++i) many += " |AND| __CLASSIFIEDS__";
  sites::http_response r = call("POST", "/v1/sessions", create_body(nlohmann::json::object(), classifieds_task(many)));
  EXPECT_EQ(r.status, 422) << r.body;
  EXPECT_NE(message(r).find("at most 16"), std::string::npos) << message(r);

  r = call("POST", "/v1/sessions", create_body({{"early_stop", {{"repeated_actions", 0}}}}));  // new_tab x16
  ASSERT_EQ(r.status, 201) << r.body;
  const std::string id = nlohmann::json::parse(r.body)["session_id"];
  for (int i = 1; i < k_max_tabs; ++i) {
    r = call("POST", "/v1/sessions/" + id + "/step", R"({"action": "new_tab"})");
    ASSERT_EQ(r.status, 200) << r.body;
    ASSERT_TRUE(nlohmann::json::parse(r.body)["action_error"].is_null()) << i << ": " << r.body;
  }
  r = call("POST", "/v1/sessions/" + id + "/step", R"({"action": "new_tab"})");
  ASSERT_EQ(r.status, 200) << r.body;
  auto step = nlohmann::json::parse(r.body);
  ASSERT_TRUE(step["action_error"].is_string()) << r.body;
  EXPECT_NE(step["action_error"].get<std::string>().find("16 tabs are open"), std::string::npos) << r.body;
  EXPECT_EQ(step["observation"]["tabs"].size(), static_cast<size_t>(k_max_tabs));
  call("DELETE", "/v1/sessions/" + id, "");
}

TEST_F(FileUrlSite, TextBrowserTabsAreBounded) {
  text_browser b;
  for (int i = 1; i < k_max_tabs; ++i) ASSERT_TRUE(b.new_tab().ok()) << i;
  EXPECT_EQ(b.tab_count(), k_max_tabs);
  browser_result r = b.new_tab();
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(r.error, too_many_tabs_error());
  // A link that opens a tab, at the limit: an action error, no tab.
  ASSERT_TRUE(b.go_to(url("/blank-link")).ok());
  r = b.click(id_on(b, "link 'Elsewhere'"));
  EXPECT_EQ(r.error, too_many_tabs_error());
  EXPECT_EQ(b.tab_count(), k_max_tabs);
  ASSERT_TRUE(b.close_tab().ok());
  ASSERT_TRUE(b.go_to(url("/blank-link")).ok());
  EXPECT_TRUE(b.click(id_on(b, "link 'Elsewhere'")).ok());
  EXPECT_EQ(b.tab_count(), k_max_tabs);
}

// Bytes per session: the history all tabs hold is capped; the oldest history goes first,
// and a page that cannot fit beside the pages the tabs show is an action error.
TEST_F(FileUrlSite, TextBrowserSessionBytesAreBounded) {
  text_browser_options o;
  o.max_session_bytes = (7u << 20) / 2;  // 3.5 MiB: three 1 MiB pages, not four
  text_browser b(o);
  for (int i = 1; i <= 10; ++i) ASSERT_TRUE(b.go_to(url("/mib/" + std::to_string(i))).ok()) << i;
  EXPECT_LE(b.session_bytes(), o.max_session_bytes);
  EXPECT_EQ(b.current_url(), url("/mib/10"));
  int backs = 0;
  while (b.go_back().ok()) ++backs;
  EXPECT_EQ(backs, 2) << "the history keeps what fits, the newest";
  EXPECT_EQ(b.current_url(), url("/mib/8"));

  // Other tabs' history goes too, never a page a tab shows.
  ASSERT_TRUE(b.new_tab().ok());
  ASSERT_TRUE(b.go_to(url("/mib/11")).ok());
  ASSERT_TRUE(b.new_tab().ok());
  ASSERT_TRUE(b.go_to(url("/mib/12")).ok());
  EXPECT_LE(b.session_bytes(), o.max_session_bytes);
  ASSERT_TRUE(b.new_tab().ok());
  browser_result r = b.go_to(url("/mib/13"));  // a fourth page shown at once: refused
  EXPECT_FALSE(r.ok());
  EXPECT_NE(r.error.find("more than its limit of 3.5 MiB"), std::string::npos) << r.error;
  EXPECT_NE(r.error.find("close_tab"), std::string::npos) << r.error;
  EXPECT_EQ(b.current_url(), "about:blank") << "the tab is unchanged";
  EXPECT_LE(b.session_bytes(), o.max_session_bytes);
  ASSERT_TRUE(b.tab_focus(0).ok());
  EXPECT_EQ(b.current_url(), url("/mib/8")) << "a page a tab shows is kept";
}

// At session creation: start URLs whose pages do not fit are a 422, not a 502.
TEST_F(FileUrlSite, EnvServerRefusesStartPagesOverTheSessionBytesWith422) {
  env_server_options opt;
  opt.browser.max_session_bytes = (7u << 20) / 2;
  env_server server(opt);
  server.start();
  std::string start = url("/mib/1");
  for (int i = 2; i <= 4; ++i) start += " |AND| " + url("/mib/" + std::to_string(i));
  sites::http_request req;
  req.method = "POST";
  req.path = "/v1/sessions";
  req.body = nlohmann::json{{"task", classifieds_task(start)}}.dump();
  sites::http_response res = server.handle(req);
  EXPECT_EQ(res.status, 422) << res.body;
  EXPECT_NE(res.body.find("limit of 3.5 MiB"), std::string::npos) << res.body;
  EXPECT_EQ(server.session_count(), 0u);
}

// A TCP connection to 127.0.0.1:port (-1 when it cannot connect).
int connect_loopback(uint16_t port) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

// Sends `request` on `fd` and reads until the server closes or 5 s pass; closes fd.
std::string exchange(int fd, const std::string& request) {
  (void)!::send(fd, request.data(), request.size(), MSG_NOSIGNAL);
  std::string out;
  char buf[4096];
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (std::chrono::steady_clock::now() < deadline) {
    pollfd p{fd, POLLIN, 0};
    if (poll(&p, 1, 100) <= 0) continue;
    ssize_t n = recv(fd, buf, sizeof buf, 0);
    if (n <= 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  close(fd);
  return out;
}

// Connections per server: idle connections cannot take every slot unnoticed; one past
// max_connections gets 503 with Retry-After in the API's JSON shape, and a slot freed is
// usable again.
TEST(EnvServerConnections, OnePastTheLimitIs503) {
  env_server_options opt;
  opt.http.max_connections = 2;
  env_server server(opt);
  server.start();
  const std::string health = "GET /v1/health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
  int idle1 = connect_loopback(server.port()), idle2 = connect_loopback(server.port());
  ASSERT_GE(idle1, 0);
  ASSERT_GE(idle2, 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(200));  // both accepted
  std::string refused = exchange(connect_loopback(server.port()), health);
  EXPECT_EQ(refused.rfind("HTTP/1.1 503", 0), 0u) << refused;
  EXPECT_NE(refused.find("Retry-After: 1"), std::string::npos) << refused;
  EXPECT_NE(refused.find("\"error\""), std::string::npos) << refused;
  EXPECT_NE(refused.find("2 connections open"), std::string::npos) << refused;
  close(idle1);
  std::string ok;
  for (int i = 0; i < 50 && ok.rfind("HTTP/1.1 200", 0) != 0; ++i) {  // the slot frees once the server sees the close
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    ok = exchange(connect_loopback(server.port()), health);
  }
  EXPECT_EQ(ok.rfind("HTTP/1.1 200", 0), 0u) << ok;
  close(idle2);
}

TEST_F(HardenedServer, BearerTokenIsRequired) {
  sites::http_response r = call("GET", "/v1/health", "", "");
  EXPECT_EQ(r.status, 401) << r.body;
  EXPECT_NE(message(r).find("Authorization: Bearer"), std::string::npos) << message(r);
  bool challenge = false;
  for (const auto& [name, value] : r.headers) challenge |= name == "WWW-Authenticate" && value == "Bearer";
  EXPECT_TRUE(challenge);
  EXPECT_EQ(call("GET", "/v1/health", "", "Bearer s3cre").status, 401);
  EXPECT_EQ(call("GET", "/v1/health", "", "Bearer s3cret2").status, 401);
  EXPECT_EQ(call("GET", "/v1/health", "", "s3cret").status, 401);
  EXPECT_EQ(call("POST", "/v1/sessions", create_body(nlohmann::json::object()), "").status, 401);
  EXPECT_EQ(server_->session_count(), 0u);
  EXPECT_EQ(call("GET", "/v1/health", "").status, 200);

  // Through the client over HTTP: the token from its options.
  env_client_options with;
  with.token = "s3cret";
  env_client good(server_->base_url(), with);
  EXPECT_EQ(good.health().status, "ok");
  env_client none(server_->base_url());
  try {
    none.health();
    ADD_FAILURE() << "no token: 401";
  } catch (const env_client_error& e) {
    EXPECT_EQ(e.http_status(), 401);
  }
}

TEST(EnvServerBind, NonLoopbackNeedsAToken) {
  EXPECT_TRUE(is_loopback_host("127.0.0.1"));
  EXPECT_TRUE(is_loopback_host("127.1.2.3"));
  EXPECT_TRUE(is_loopback_host("localhost"));
  EXPECT_TRUE(is_loopback_host("::1"));
  EXPECT_FALSE(is_loopback_host("0.0.0.0"));
  EXPECT_FALSE(is_loopback_host("127.0.0.1.evil"));
  EXPECT_FALSE(is_loopback_host("10.0.0.5"));
  EXPECT_FALSE(is_loopback_host("::"));
  EXPECT_EQ(bind_refusal("127.0.0.1", ""), "");
  EXPECT_EQ(bind_refusal("0.0.0.0", "t"), "");
  const std::string why = bind_refusal("0.0.0.0", "");
  EXPECT_NE(why.find("--token"), std::string::npos) << why;
  EXPECT_EQ(why.find('\n'), std::string::npos) << "one line";
  env_server_options opt;
  opt.http.host = "0.0.0.0";
  env_server open(opt);
  EXPECT_THROW(open.start(), std::runtime_error);
}

// ---- the stale-profile sweep (chromium-cleanup.h)

pid_t dead_pid() {
  pid_t child = fork();
  if (child == 0) _exit(0);
  waitpid(child, nullptr, 0);
  return child;
}

TEST(ChromiumCleanup, StaleSweepSkipsOddNamesAndOtherUsersDirectories) {
  const std::filesystem::path dir = test::temp_dir("stale-sweep");
  const std::string dead = std::to_string(dead_pid());
  const auto mine = dir / ("kvarena-chromium-" + dead + "-mine");
  const auto huge = dir / "kvarena-chromium-99999999999999999999-abc";  // 20 digits
  const auto theirs = dir / ("kvarena-chromium-" + dead + "-theirs");
  const auto target = dir / "elsewhere";
  const auto link = dir / ("kvarena-chromium-" + dead + "-link");
  for (const auto& d : {mine, huge, theirs, target}) std::filesystem::create_directories(d / "Default");
  std::filesystem::create_directory_symlink(target, link);
  const bool root = geteuid() == 0;
  if (root) {
    ASSERT_EQ(chown(theirs.c_str(), 65534, 65534), 0);  // nobody's
  }

  int removed = -1;
  EXPECT_NO_THROW(removed = remove_stale_chromium_dirs(dir.string()));
  EXPECT_EQ(removed, root ? 1 : 2);  // without root "theirs" is this user's too
  EXPECT_FALSE(std::filesystem::exists(mine)) << "this user's, its kvarena gone: removed";
  EXPECT_TRUE(std::filesystem::exists(huge)) << "no pid: skipped";
  EXPECT_TRUE(std::filesystem::exists(target / "Default")) << "a symlink is not followed";
  EXPECT_TRUE(std::filesystem::is_symlink(link));
  if (root) {
    EXPECT_TRUE(std::filesystem::exists(theirs)) << "another user's: not ours to remove";
  }
}

}  // namespace
}  // namespace kvarena
