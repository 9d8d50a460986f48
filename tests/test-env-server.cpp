// test-env-server.cpp: the env HTTP API (envs/server) through its libcurl client
// (envs/client), on loopback with port 0 and the sites in-process: sessions on the
// classifieds site, steps, evaluation, tenant isolation between sessions, the idle reaper,
// retries against a dead port, and 16 sessions in parallel. The error statuses:
// test-env-server-errors.cpp.
#include "env-server-test-util.h"

// ---- health, create, steps

TEST_F(EnvServerTest, HealthReportsInProcessSites) {
  env_health h = client_.health();
  EXPECT_EQ(h.status, "ok");
  EXPECT_EQ(h.sites_mode, "in-process");
  EXPECT_NE(std::find(h.sites.begin(), h.sites.end(), "classifieds"), h.sites.end());
  std::vector<std::string> browsers = {"text"};
  if (chromium_available()) browsers.push_back("chromium");
  EXPECT_EQ(h.browsers, browsers);
  EXPECT_GT(h.max_sessions, 0);
}

TEST_F(EnvServerTest, CreateOpensStartUrlInOwnTenant) {
  env_created c = client_.create_session(classifieds_task(k_string_eval));
  EXPECT_EQ(c.session_id.rfind("s-", 0), 0u);
  EXPECT_NE(c.observation.text.find("Tab 0 (current): "), std::string::npos);
  EXPECT_NE(find_id(c.observation.text, "link", "All listings"), -1) << c.observation.text;
  EXPECT_NE(c.observation.text.find("] link 'Log in'"), std::string::npos) << "not logged in";
  ASSERT_EQ(c.observation.tabs.size(), 1u);

  env_session_info info = client_.session_info(c.session_id);
  EXPECT_EQ(info.task_id, 1);
  EXPECT_TRUE(store().has_tenant(info.tenant));
  EXPECT_EQ(c.observation.url, classifieds_base(info.tenant));
  EXPECT_EQ(info.sites.at("classifieds"), classifieds_base(info.tenant));
  EXPECT_TRUE(client_.close(c.session_id));
}

TEST_F(EnvServerTest, RequireLoginLogsInAsDefaultAgentUser) {
  env_created c = client_.create_session(classifieds_task(k_string_eval, /*require_login=*/true));
  EXPECT_NE(c.observation.text.find("Signed in as Blake Sullivan"), std::string::npos) << c.observation.text;
  client_.close(c.session_id);
}

// Every site served logs the agent in as its default user (the login form must accept it).
TEST_F(EnvServerTest, EverySiteLogsInItsDefaultUser) {
  for (const std::string& site : client_.health().sites) {
    nlohmann::json t = parse_json(classifieds_task(k_string_eval, /*require_login=*/true));
    std::string placeholder = "__" + site + "__";
    for (char& ch : placeholder) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
    t["sites"] = {site};
    t["start_url"] = placeholder;
    env_created c;
    ASSERT_NO_THROW(c = client_.create_session(t.dump())) << site;
    EXPECT_EQ(c.observation.text.find("] link 'Log in'"), std::string::npos) << site << ":\n" << c.observation.text;
    client_.close(c.session_id);
  }
}

TEST_F(EnvServerTest, SeveralStartTabsFocusTheFirst) {
  env_created c =
      client_.create_session(classifieds_task(k_string_eval, false, "__CLASSIFIEDS__ |AND| __CLASSIFIEDS__/category/cars"));
  ASSERT_EQ(c.observation.tabs.size(), 2u);
  EXPECT_NE(c.observation.text.find("Tab 0 (current)"), std::string::npos);
  EXPECT_EQ(c.observation.url.find("/category/"), std::string::npos);
  env_step_result r = client_.step(c.session_id, "tab_focus [1]");
  EXPECT_FALSE(r.action_error) << *r.action_error;
  EXPECT_NE(r.observation.url.find("/category/cars"), std::string::npos);
  client_.close(c.session_id);
}

TEST_F(EnvServerTest, StepClickTypeGotoStop) {
  env_created c = client_.create_session(classifieds_task(k_string_eval));
  const std::string base = c.observation.url;

  env_step_result r = client_.step(c.session_id, "click [" + std::to_string(find_id(c.observation.text, "link", "Cars")) + "]");
  ASSERT_FALSE(r.action_error) << *r.action_error;
  EXPECT_EQ(r.observation.url, base + "/category/cars");
  EXPECT_FALSE(r.done);

  int64_t search = find_id(r.observation.text, "searchbox", "Search");
  ASSERT_NE(search, -1) << r.observation.text;
  r = client_.step(c.session_id, "type [" + std::to_string(search) + "] [bike] [1]");
  ASSERT_FALSE(r.action_error) << *r.action_error;
  EXPECT_NE(r.observation.url.find("/search?"), std::string::npos) << r.observation.url;
  EXPECT_NE(r.observation.url.find("q=bike"), std::string::npos) << r.observation.url;

  r = client_.step(c.session_id, "goto [" + base + "/item/1]");
  ASSERT_FALSE(r.action_error) << *r.action_error;
  EXPECT_EQ(r.observation.url, base + "/item/1");

  r = client_.step(c.session_id, "go_back");
  ASSERT_FALSE(r.action_error) << *r.action_error;
  EXPECT_NE(r.observation.url.find("q=bike"), std::string::npos);

  r = client_.step(c.session_id, "stop [blue]");
  EXPECT_TRUE(r.done);
  EXPECT_EQ(r.answer, "blue");
  EXPECT_EQ(r.reason, "stop");
  EXPECT_FALSE(r.action_error);

  // The episode is over: another step is refused (409), evaluation still works.
  try {
    client_.step(c.session_id, "scroll [down]");
    ADD_FAILURE() << "a step after stop must be refused";
  } catch (const env_client_error& e) {
    EXPECT_EQ(e.http_status(), 409);
    EXPECT_NE(std::string(e.what()).find("evaluate"), std::string::npos) << e.what();
  }
  eval_result ev = client_.evaluate(c.session_id);
  EXPECT_EQ(ev.score, 1.0);
  EXPECT_TRUE(ev.success);
  client_.close(c.session_id);
}

TEST_F(EnvServerTest, MalformedActionIsAnActionErrorNotAnHttpError) {
  env_created c = client_.create_session(classifieds_task(k_string_eval));
  env_step_result r = client_.step(c.session_id, "Click on the cars link");
  ASSERT_TRUE(r.action_error);
  EXPECT_FALSE(r.done);
  EXPECT_EQ(r.observation.url, c.observation.url);
  EXPECT_FALSE(r.observation.text.empty());

  r = client_.step(c.session_id, "click [99999]");
  ASSERT_TRUE(r.action_error);
  EXPECT_NE(r.action_error->find("99999"), std::string::npos) << *r.action_error;

  // Raw bytes a model may emit (invalid UTF-8) travel and come back replaced, not thrown.
  int64_t search = find_id(c.observation.text, "searchbox", "Search");
  r = client_.step(c.session_id, "type [" + std::to_string(search) + "] [caf\xff\xfe] [0]");
  EXPECT_FALSE(r.action_error) << *r.action_error;
  client_.close(c.session_id);
}

TEST_F(EnvServerTest, EarlyStopEndsTheEpisodeWithTheReason) {
  env_create_options opt;
  opt.early_stop = early_stop_config{30, 3, 5};
  env_created c = client_.create_session(classifieds_task(k_string_eval), opt);
  env_step_result r;
  for (int i = 0; i < 3; ++i) r = client_.step(c.session_id, "not an action");
  EXPECT_TRUE(r.done);
  EXPECT_EQ(r.reason, "Failed to parse actions for 3 times");
  EXPECT_EQ(r.answer, "Early stop: Failed to parse actions for 3 times");
  eval_result ev = client_.evaluate(c.session_id);  // scored with the early-stop answer
  EXPECT_EQ(ev.score, 0.0);
  client_.close(c.session_id);

  opt.early_stop = early_stop_config{2, 3, 5};
  c = client_.create_session(classifieds_task(k_string_eval), opt);
  r = client_.step(c.session_id, "scroll [down]");
  EXPECT_FALSE(r.done);
  r = client_.step(c.session_id, "scroll [up]");
  EXPECT_TRUE(r.done);
  EXPECT_EQ(r.reason, "Reach max steps 2");
  client_.close(c.session_id);
}

TEST_F(EnvServerTest, MaxObsTokensCutsTheObservation) {
  env_create_options opt;
  opt.max_obs_tokens = 25;
  env_created c = client_.create_session(classifieds_task(k_string_eval), opt);
  EXPECT_LE(c.observation.text.size(), size_t(25 * k_obs_chars_per_token));
  EXPECT_EQ(c.observation.text.rfind("Tab 0 (current): ", 0), 0u);
  client_.close(c.session_id);
}

TEST(EnvSession, TruncateObservationKeepsUtf8Whole) {
  EXPECT_EQ(truncate_observation("abcdefgh", 1), "abcd");
  EXPECT_EQ(truncate_observation("abc", 1), "abc");
  // "aaa" + "é" (2 bytes): a 4-byte cut would split é, so it stops before it.
  EXPECT_EQ(truncate_observation("aaa\xc3\xa9zz", 1), "aaa");
  EXPECT_EQ(truncate_observation("abcdefgh", 0), "abcdefgh");
}

// ---- evaluation

TEST_F(EnvServerTest, EvaluateStringMatchScoresRightAndWrongAnswers) {
  env_created c = client_.create_session(classifieds_task(k_string_eval));
  eval_result right = client_.evaluate(c.session_id, std::string("Blue"));
  EXPECT_EQ(right.score, 1.0);
  EXPECT_TRUE(right.success);
  ASSERT_EQ(right.evaluators.size(), 1u);
  EXPECT_EQ(right.evaluators[0].type, "string_match");
  EXPECT_EQ(right.evaluators[0].score, 1.0);

  eval_result wrong = client_.evaluate(c.session_id, std::string("red"));
  EXPECT_EQ(wrong.score, 0.0);
  EXPECT_FALSE(wrong.success);
  EXPECT_FALSE(wrong.evaluators[0].detail.empty());
  client_.close(c.session_id);
}

TEST_F(EnvServerTest, EvaluateUrlMatchUsesTheSessionsPage) {
  env_created c = client_.create_session(classifieds_task(k_url_eval));
  EXPECT_EQ(client_.evaluate(c.session_id).score, 0.0);  // still on the home page
  client_.step(c.session_id, "click [" + std::to_string(find_id(c.observation.text, "link", "Cars")) + "]");
  eval_result ev = client_.evaluate(c.session_id);
  EXPECT_EQ(ev.score, 1.0) << (ev.evaluators.empty() ? "" : ev.evaluators[0].detail);
  EXPECT_EQ(ev.evaluators.at(0).type, "url_match");
  client_.close(c.session_id);
}

// ---- tenants

TEST_F(EnvServerTest, DeleteFreesTheTenant) {
  env_created c = client_.create_session(classifieds_task(k_string_eval));
  std::string tenant = client_.session_info(c.session_id).tenant;
  ASSERT_TRUE(store().has_tenant(tenant));
  EXPECT_TRUE(client_.close(c.session_id));
  EXPECT_FALSE(store().has_tenant(tenant));
  EXPECT_FALSE(client_.close(c.session_id));
  EXPECT_EQ(client_.request("POST", "/v1/sessions/" + c.session_id + "/step", R"({"action": "go_back"})").status, 404);
}

// Session A deletes listing X, session B deletes listing Y, at the same time, on the same
// site: each sees only its own deletion.
TEST_F(EnvServerTest, ConcurrentSessionsSeeOnlyTheirOwnChanges) {
  auto rows = store().query("main", "classifieds", "SELECT id FROM listings WHERE seller_id = 1 ORDER BY id LIMIT 2");
  ASSERT_EQ(rows.size(), 2u);
  const int64_t listing[2] = {rows[0]["id"].get<int64_t>(), rows[1]["id"].get<int64_t>()};

  env_created s[2];
  for (int i = 0; i < 2; ++i) s[i] = client_.create_session(classifieds_task(k_string_eval, /*require_login=*/true));
  std::string errors[2];
  std::vector<std::thread> threads;
  for (int i = 0; i < 2; ++i) {
    threads.emplace_back([&, i] {
      try {
        std::string base = s[i].observation.url;
        env_step_result r = client_.step(s[i].session_id, "goto [" + base + "/item/" + std::to_string(listing[i]) + "/delete]");
        int64_t button = find_id(r.observation.text, "button", "Yes, delete this listing");
        if (button < 0) throw std::runtime_error("no delete button in:\n" + r.observation.text);
        r = client_.step(s[i].session_id, "click [" + std::to_string(button) + "]");
        if (r.action_error) throw std::runtime_error(*r.action_error);
      } catch (const std::exception& e) {
        errors[i] = e.what();
      }
    });
  }
  for (auto& t : threads) t.join();
  ASSERT_EQ(errors[0], "");
  ASSERT_EQ(errors[1], "");

  for (int i = 0; i < 2; ++i) {
    std::string base = s[i].observation.url;
    env_step_result mine = client_.step(s[i].session_id, "goto [" + base + "/item/" + std::to_string(listing[i]) + "]");
    EXPECT_NE(mine.observation.text.find("no listing"), std::string::npos) << mine.observation.text;
    env_step_result other = client_.step(s[i].session_id, "goto [" + base + "/item/" + std::to_string(listing[1 - i]) + "]");
    EXPECT_EQ(other.observation.text.find("no listing"), std::string::npos) << other.observation.text;
  }
  std::string t0 = client_.session_info(s[0].session_id).tenant, t1 = client_.session_info(s[1].session_id).tenant;
  EXPECT_NE(store().content_hash(t0, "classifieds"), store().content_hash(t1, "classifieds"));
  EXPECT_EQ(store().content_hash("main", "classifieds"), store().snapshot_hash("classifieds"));
  for (auto& x : s) client_.close(x.session_id);
}

// Requests on one session from two threads are serialised: every step runs, none is lost.
TEST_F(EnvServerTest, StepsOfOneSessionAreSerialised) {
  env_create_options opt;
  opt.early_stop = early_stop_config{0, 0, 0};  // rules off: the interleaving repeats actions
  env_created c = client_.create_session(classifieds_task(k_string_eval), opt);
  std::atomic<int> errors{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 2; ++t)
    threads.emplace_back([&, t] {
      env_client client(server_->base_url());
      for (int i = 0; i < 10; ++i) {
        try {
          env_step_result r = client.step(c.session_id, t == 0 ? "scroll [down]" : "scroll [up]");
          if (r.action_error) ++errors;
        } catch (const std::exception&) {
          ++errors;
        }
      }
    });
  for (auto& th : threads) th.join();
  EXPECT_EQ(errors.load(), 0);
  EXPECT_EQ(client_.session_info(c.session_id).steps, 20);
  client_.close(c.session_id);
}

// --sites-url: sites that run elsewhere, shared by every session (no tenants).
TEST(EnvServerExternal, UsesTheGivenSitesWithoutTenants) {
  sites::sites_server sites_server(sites::sites_options{});
  sites_server.start();
  const std::string classifieds = sites_server.site_base_url("main", "classifieds");

  env_server_options opt;
  opt.sites.external_url = sites_server.base_url();
  env_server server(opt);
  server.start();
  env_client client(server.base_url());
  EXPECT_EQ(client.health().sites_mode, "external");
  env_created c = client.create_session(classifieds_task(k_string_eval, /*require_login=*/true));
  EXPECT_EQ(c.observation.url, classifieds);
  EXPECT_NE(c.observation.text.find("Signed in as Blake Sullivan"), std::string::npos);
  EXPECT_EQ(client.session_info(c.session_id).tenant, "");
  EXPECT_TRUE(client.close(c.session_id));
  EXPECT_EQ(sites_server.store().tenants(), std::vector<std::string>{"main"});

  opt.sites.external_url = "classifieds=" + classifieds + "/";
  env_server by_name(opt);
  by_name.start();
  env_client client2(by_name.base_url());
  EXPECT_EQ(client2.health().sites, std::vector<std::string>{"classifieds"});
  c = client2.create_session(classifieds_task(k_url_eval));
  EXPECT_EQ(c.observation.url, classifieds);
  client2.close(c.session_id);

  for (const char* bad : {"ftp://x", "classifieds", "classifieds=127.0.0.1:1", ","}) {
    opt.sites.external_url = bad;
    EXPECT_THROW(env_server{opt}, std::invalid_argument) << bad;
  }
}

TEST(EnvServerReaper, IdleSessionsAreClosedAndTheirTenantsDropped) {
  env_server_options opt;
  opt.idle_timeout = 100ms;
  env_server server(opt);
  server.start();
  env_client client(server.base_url());
  env_created c = client.create_session(classifieds_task(k_string_eval));
  std::string tenant = client.session_info(c.session_id).tenant;
  // The reaper removes the session from the table first, then drops its tenant: wait for both.
  auto store_has = [&] { return server.sites_server()->store().has_tenant(tenant); };
  for (int i = 0; i < 200 && (server.session_count() > 0 || store_has()); ++i) std::this_thread::sleep_for(20ms);
  EXPECT_EQ(server.session_count(), 0u);
  EXPECT_FALSE(server.sites_server()->store().has_tenant(tenant));
  EXPECT_EQ(client.request("POST", "/v1/sessions/" + c.session_id + "/step", R"({"action": "go_back"})").status, 404);
}

TEST(EnvServerLimits, FullTableIs503) {
  env_server_options opt;
  opt.max_sessions = 1;
  env_server server(opt);
  server.start();
  env_client client(server.base_url(), env_client_options{2000, 30000, 1, 10, ""});
  env_created c = client.create_session(classifieds_task(k_string_eval));
  try {
    client.create_session(classifieds_task(k_string_eval));
    ADD_FAILURE();
  } catch (const env_client_error& e) {
    EXPECT_EQ(e.http_status(), 503);
    EXPECT_NE(std::string(e.what()).find("--max-sessions"), std::string::npos) << e.what();
  }
  client.close(c.session_id);
  EXPECT_NO_THROW(client.create_session(classifieds_task(k_string_eval)));
}

// ---- client

TEST(EnvClient, UnreachableServerGivesAClearErrorAfterRetries) {
  uint16_t port;
  {
    sites::http_server probe({}, [](const sites::http_request&) { return sites::http_response::text("x"); });
    probe.start();
    port = probe.port();
  }  // stopped: nothing listens on `port` now
  std::string url = "http://127.0.0.1:" + std::to_string(port);
  env_client client(url, env_client_options{1000, 5000, 3, 10, ""});
  auto t0 = std::chrono::steady_clock::now();
  try {
    client.health();
    ADD_FAILURE() << "no server listens there";
  } catch (const env_client_error& e) {
    std::string msg = e.what();
    EXPECT_EQ(e.http_status(), 0);
    EXPECT_NE(msg.find("env server at " + url + " unreachable after 3 tries"), std::string::npos) << msg;
    EXPECT_NE(msg.find("Connection refused"), std::string::npos) << msg;
    EXPECT_NE(msg.find("kvarena env-server --port " + std::to_string(port)), std::string::npos) << msg;
  }
  EXPECT_GE(std::chrono::steady_clock::now() - t0, 30ms);  // backoff 10 + 20 ms
  // A step is retried too when the connection was never made (the action cannot have run).
  EXPECT_THROW(client.step("s-1", "scroll [down]"), env_client_error);
  EXPECT_THROW(env_client("127.0.0.1:8090"), std::invalid_argument);
}

TEST(EnvApiJson, BodiesRoundTrip) {
  env_step_result r;
  r.observation = {"Tab 0 (current): x\n\n[1] RootWebArea 'x'", "http://h/a", {"x", "y"}, ""};
  r.action_error = "no element [3]";
  r.done = true;
  r.answer = "42";
  r.reason = "stop";
  env_step_result back;
  from_json_text(to_json_text(r), back);
  EXPECT_EQ(back.observation.text, r.observation.text);
  EXPECT_EQ(back.observation.tabs, r.observation.tabs);
  EXPECT_EQ(back.action_error, r.action_error);
  EXPECT_EQ(back.answer, r.answer);
  EXPECT_EQ(back.reason, r.reason);

  eval_result e;
  e.score = 0.5;
  e.evaluators = {{"string_match", 1, "ok", eval_status::scored}, {"page_image_query", 0, "n/a", eval_status::unsupported}};
  e.status = eval_status::unsupported;
  e.notes = {"note"};
  eval_result eb;
  from_json_text(to_json_text(e), eb);
  EXPECT_EQ(eb.score, 0.5);
  ASSERT_EQ(eb.evaluators.size(), 2u);
  EXPECT_EQ(eb.evaluators[1].status, eval_status::unsupported);
  EXPECT_EQ(eb.status, eval_status::unsupported);
  EXPECT_EQ(eb.notes, e.notes);

  // Invalid UTF-8 is replaced, never thrown.
  env_step_request bad{"type [1] [\xff] [0]"};
  std::string text = to_json_text(bad);
  env_step_request bad_back;
  from_json_text(text, bad_back);
  EXPECT_EQ(bad_back.action, "type [1] [\xef\xbf\xbd] [0]");

  env_evaluate_request none;
  from_json_text("", none);
  EXPECT_FALSE(none.answer);
  EXPECT_THROW(from_json_text("[1]", none), env_api_error);

  env_api_error err = parse_error_body(422, to_json_text(env_api_error(422, "bad task", {"a", "b"})));
  EXPECT_EQ(std::string(err.what()), "bad task");
  EXPECT_EQ(err.details().size(), 2u);
  EXPECT_EQ(std::string(parse_error_body(502, "<html><h1>Bad Gateway</h1></html>").what()), "HTTP 502: Bad Gateway");
}

// ---- many sessions at once

TEST_F(EnvServerTest, SixteenSessionsStepInParallelWithoutErrors) {
  constexpr int k_sessions = 16, k_steps = 6;
  std::atomic<int> errors{0}, steps{0};
  std::vector<std::string> first_error(k_sessions);
  std::vector<std::thread> threads;
  auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < k_sessions; ++i) {
    threads.emplace_back([&, i] {
      try {
        env_client client(server_->base_url());  // one client per agent, as a runner would
        env_created c = client.create_session(classifieds_task(k_url_eval, i % 2 == 0, "__CLASSIFIEDS__", i));
        const std::string base = c.observation.url;
        const std::string actions[k_steps] = {
            "click [" + std::to_string(find_id(c.observation.text, "link", "Cars")) + "]",
            "scroll [down]",
            "goto [" + base + "/item/" + std::to_string(1 + i) + "]",
            "go_back",
            "scroll [up]",
            "stop [done]"};
        for (const auto& a : actions) {
          env_step_result r = client.step(c.session_id, a);
          if (r.action_error) throw std::runtime_error(a + ": " + *r.action_error);
          ++steps;
        }
        eval_result ev = client.evaluate(c.session_id);
        if (ev.score != 1.0) throw std::runtime_error("url_match scored " + std::to_string(ev.score));
        if (!client.close(c.session_id)) throw std::runtime_error("close failed");
      } catch (const std::exception& e) {
        ++errors;
        first_error[i] = e.what();
      }
    });
  }
  for (auto& t : threads) t.join();
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  for (int i = 0; i < k_sessions; ++i) EXPECT_EQ(first_error[i], "") << "session " << i;
  EXPECT_EQ(errors.load(), 0);
  EXPECT_EQ(steps.load(), k_sessions * k_steps);
  EXPECT_EQ(server_->session_count(), 0u);
  std::printf("16 sessions x %d steps: %.2f s (%.0f steps/s)\n", k_steps, s, steps.load() / s);
}

}  // namespace
}  // namespace kvarena
