// test-env-server-errors.cpp: the env server's error answers (specs/web-envs.md): unknown
// session 404, malformed JSON 400 with the parser's message, wrong fields and invalid tasks
// 422 with the loader's messages, a placeholder without a site, request sites overriding
// the server's map, each other check of a create request 422 with its message, an
// unreachable start URL 502 without a leaked tenant, oversized bodies 413, wrong methods 405.
#include "env-server-test-util.h"

// ---- errors

TEST_F(EnvServerTest, UnknownSessionIs404) {
  auto r = client_.request("POST", "/v1/sessions/s-0000000000000000/step", R"({"action": "scroll [down]"})");
  EXPECT_EQ(r.status, 404);
  auto j = parse_json(r.body);
  EXPECT_EQ(j["error"]["code"], 404);
  EXPECT_NE(j["error"]["message"].get<std::string>().find("POST /v1/sessions"), std::string::npos);
  EXPECT_FALSE(client_.close("s-0000000000000000"));
  EXPECT_EQ(client_.request("POST", "/v1/sessions/s-0000000000000000/evaluate", "{}").status, 404);
  try {
    client_.step("s-0000000000000000", "scroll [down]");
    ADD_FAILURE();
  } catch (const env_client_error& e) {
    EXPECT_EQ(e.http_status(), 404);
    EXPECT_EQ(std::string(e.what()).find("tries"), std::string::npos) << "4xx are not retried: " << e.what();
  }
}

TEST_F(EnvServerTest, MalformedJsonIs400WithTheParsersMessage) {
  auto r = client_.request("POST", "/v1/sessions", R"({"task": {"task_id": 1,})");
  EXPECT_EQ(r.status, 400);
  auto j = parse_json(r.body);
  EXPECT_EQ(j["error"]["code"], 400);
  EXPECT_NE(j["error"]["message"].get<std::string>().find("parse error"), std::string::npos) << r.body;

  std::string deep(200, '[');
  EXPECT_EQ(client_.request("POST", "/v1/sessions", deep).status, 400);
}

TEST_F(EnvServerTest, WrongFieldsAre422) {
  auto r = client_.request("POST", "/v1/sessions", R"({"browser": "text"})");
  EXPECT_EQ(r.status, 422);
  EXPECT_NE(parse_json(r.body)["error"]["message"].get<std::string>().find("\"task\""), std::string::npos);

  env_created c = client_.create_session(classifieds_task(k_string_eval));
  r = client_.request("POST", "/v1/sessions/" + c.session_id + "/step", R"({"action": 12})");
  EXPECT_EQ(r.status, 422);
  EXPECT_NE(parse_json(r.body)["error"]["message"].get<std::string>().find("action"), std::string::npos);
  client_.close(c.session_id);

  env_create_options unknown;
  unknown.browser = "firefox";
  try {
    client_.create_session(classifieds_task(k_string_eval), unknown);
    ADD_FAILURE();
  } catch (const env_client_error& e) {
    EXPECT_EQ(e.http_status(), 422);
    EXPECT_NE(std::string(e.what()).find("browser 'firefox' is unknown"), std::string::npos) << e.what();
  }
}

TEST_F(EnvServerTest, InvalidTaskIs422WithTheLoadersMessages) {
  nlohmann::json t = parse_json(classifieds_task(k_string_eval));
  t.erase("intent");
  t["require_login"] = "yes";
  auto r = client_.request("POST", "/v1/sessions", nlohmann::json{{"task", t}}.dump());
  EXPECT_EQ(r.status, 422);
  auto j = parse_json(r.body);
  ASSERT_TRUE(j["error"]["details"].is_array()) << r.body;
  std::string all = j["error"]["details"].dump();
  EXPECT_NE(all.find("intent"), std::string::npos) << all;
  EXPECT_NE(all.find("require_login"), std::string::npos) << all;
  // A task that reads but fails validation: the validator's message.
  t = parse_json(classifieds_task(k_string_eval));
  t["eval"]["eval_types"] = {"string_match", "telepathy"};
  r = client_.request("POST", "/v1/sessions", nlohmann::json{{"task", t}}.dump());
  EXPECT_EQ(r.status, 422);
  EXPECT_NE(r.body.find("telepathy"), std::string::npos) << r.body;
  t["eval"]["eval_types"] = {"string_match"};
  t.erase("intent");
  t["require_login"] = "yes";
  try {
    client_.create_session(t.dump());
    ADD_FAILURE();
  } catch (const env_client_error& e) {
    EXPECT_EQ(e.http_status(), 422);
    EXPECT_GE(e.details().size(), 2u);
  }
}

TEST_F(EnvServerTest, PlaceholderWithoutASiteIs422) {
  try {
    client_.create_session(classifieds_task(k_string_eval, false, "__WIKIPEDIA__/wiki/Sky"));
    ADD_FAILURE();
  } catch (const env_client_error& e) {
    EXPECT_EQ(e.http_status(), 422);
    EXPECT_NE(std::string(e.what()).find("__WIKIPEDIA__"), std::string::npos) << e.what();
  }
  EXPECT_EQ(server_->session_count(), 0u);
}

TEST_F(EnvServerTest, RequestSitesOverrideTheServersMap) {
  env_create_options opt;
  opt.sites["classifieds"] = classifieds_base("main");
  env_created c = client_.create_session(classifieds_task(k_string_eval), opt);
  EXPECT_EQ(c.observation.url, classifieds_base("main"));
  client_.close(c.session_id);

  opt.sites["classifieds"] = "not-a-url";
  EXPECT_THROW(client_.create_session(classifieds_task(k_string_eval), opt), env_client_error);
}

// Each check of a create request (env-create.h) answers 422 with its own message and gives
// the tenant back.
TEST_F(EnvServerTest, EachCreateCheckIs422WithItsMessageAndLeaksNoTenant) {
  const size_t tenants = store().tenants().size();
  nlohmann::json login_elsewhere = parse_json(classifieds_task(k_string_eval, true));
  login_elsewhere["sites"] = {"classifieds", "gitlab"};
  std::string many_tabs = "__CLASSIFIEDS__";
  for (int i = 0; i < k_max_tabs; ++i) many_tabs += " |AND| __CLASSIFIEDS__";
  const nlohmann::json task = parse_json(classifieds_task(k_string_eval));
  const std::pair<nlohmann::json, std::string> cases[] = {
      {{{"task", task}, {"browser", "firefox"}}, "browser 'firefox' is unknown: use \"text\" or \"chromium\""},
      {{{"task", task}, {"sites", {{"classifieds", "ftp://example.test/"}}}},
       "sites.classifieds: 'ftp://example.test/' is not an http:// URL"},
      {{{"task", parse_json(classifieds_task(k_string_eval, false, many_tabs))}},
       "the task's start_url opens 17 tabs (URLs joined by ' |AND| '); a session may have at most 16"},
      {{{"task", login_elsewhere}}, "the task requires login on 'gitlab', which this env server does not serve"},
      {{{"task", task}, {"observation", "som"}}, "\"observation\": \"som\" needs a screenshot"},
  };
  for (const auto& [body, message] : cases) {
    SCOPED_TRACE(message);
    auto r = client_.request("POST", "/v1/sessions", body.dump());
    EXPECT_EQ(r.status, 422) << r.body;
    const std::string got = parse_json(r.body)["error"]["message"];
    EXPECT_EQ(got.rfind(message, 0), 0u) << got;
  }
  EXPECT_EQ(store().tenants().size(), tenants);
  EXPECT_EQ(server_->session_count(), 0u);
}

TEST_F(EnvServerTest, UnreachableStartUrlIs502AndLeaksNoTenant) {
  size_t tenants = store().tenants().size();
  uint16_t dead_port;
  {
    sites::http_server probe({}, [](const sites::http_request&) { return sites::http_response::text("x"); });
    probe.start();
    dead_port = probe.port();
  }
  auto r = client_.request("POST", "/v1/sessions",
                           nlohmann::json{{"task", parse_json(classifieds_task(
                                                       k_string_eval, false,
                                                       "http://127.0.0.1:" + std::to_string(dead_port) + "/"))}}
                               .dump());
  EXPECT_EQ(r.status, 502) << r.body;
  EXPECT_NE(r.body.find("start_url"), std::string::npos) << r.body;
  EXPECT_EQ(store().tenants().size(), tenants);
  EXPECT_EQ(server_->session_count(), 0u);
}

TEST_F(EnvServerTest, OversizedBodyIs413) {
  std::string big = R"({"action": ")" + std::string(100 << 10, 'x') + "\"}";
  auto r = client_.request("POST", "/v1/sessions/s-0000000000000000/step", big);
  EXPECT_EQ(r.status, 413);
  EXPECT_EQ(parse_json(r.body)["error"]["code"], 413);
  // Far over the limit, the HTTP layer refuses it before the API: same status.
  std::string huge(1 << 20, ' ');
  r = client_.request("POST", "/v1/sessions", huge);
  EXPECT_EQ(r.status, 413);
  EXPECT_EQ(parse_json(r.body)["error"]["code"], 413) << r.body;  // JSON there too
}

TEST_F(EnvServerTest, WrongMethodIs405AndUnknownPathIs404) {
  auto r = client_.request("GET", "/v1/sessions/s-1/step", "");
  EXPECT_EQ(r.status, 405);
  EXPECT_EQ(parse_json(r.body)["error"]["code"], 405);
  r = client_.request("PUT", "/v1/health", "");
  EXPECT_EQ(r.status, 405);
  r = client_.request("GET", "/v2/whatever", "");
  EXPECT_EQ(r.status, 404);
  EXPECT_NE(parse_json(r.body)["error"]["message"].get<std::string>().find("/v1/health"), std::string::npos);
}

}  // namespace
}  // namespace kvarena
