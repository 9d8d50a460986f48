// test-env-chromium.cpp: the env API with "browser": "chromium" on the in-process sites:
// the text and chromium observations of the same site pages list the same interactive
// elements with the same names; a logged-in session; logging in on a site given by URL
// through its form in the page; an action; Set-of-Marks screenshots;
// Chromium killed mid-session (an error observation, then a new session works); a task's
// scripts refused outside its sites' origins; and chromium asked for where it is not
// installed (HTTP 400). Label `chromium`: the tests that
// need /usr/bin/chromium skip with a reason without it.
#include <set>

#include <boost/beast/core/detail/base64.hpp>

#include "chromium-test-util.h"
#include "env-server-test-util.h"
#include "sites/http-server.h"

using chromium_test::interactive_lines;

std::string site_task(const std::string& site, const std::string& path, bool login) {
  nlohmann::json t = parse_json(classifieds_task(k_string_eval, login));
  std::string placeholder = "__" + site + "__";
  for (char& ch : placeholder) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
  t["sites"] = {site};
  t["start_url"] = placeholder + path;
  t["viewport_size"] = {{"width", 1280}, {"height", 20000}};  // the whole page: layout and estimate agree
  return t.dump();
}

env_create_options with_browser(const std::string& browser, const std::string& observation = "text") {
  env_create_options o;
  o.browser = browser;
  o.observation = observation;
  return o;
}

TEST_F(EnvServerTest, ChromiumAndTextShowTheSameElementsOnTheSitePages) {
  SKIP_WITHOUT_CHROMIUM();
  const std::vector<std::pair<std::string, std::string>> pages = {
      {"classifieds", "/"}, {"classifieds", "/category/cars"}, {"shopping", "/"}, {"reddit", "/"}};
  for (const auto& [site, path] : pages) {
    if (std::find(client_.health().sites.begin(), client_.health().sites.end(), site) == client_.health().sites.end())
      continue;
    for (bool login : {false, true}) {
      std::string task = site_task(site, path, login);
      env_created t = client_.create_session(task, with_browser("text"));
      env_created c = client_.create_session(task, with_browser("chromium"));
      std::vector<std::string> want = interactive_lines(t.observation.text);
      EXPECT_GT(want.size(), 3u) << site << path;
      EXPECT_EQ(want, interactive_lines(c.observation.text))
          << site << path << (login ? " (logged in)" : "") << "\ntext:\n" << t.observation.text << "\nchromium:\n"
          << c.observation.text;
      EXPECT_EQ(t.observation.tabs, c.observation.tabs);
      client_.close(t.session_id);
      client_.close(c.session_id);
    }
  }
}

TEST_F(EnvServerTest, ChromiumSessionLogsInStepsAndEvaluates) {
  SKIP_WITHOUT_CHROMIUM();
  env_created c = client_.create_session(classifieds_task(k_url_eval, /*require_login=*/true), with_browser("chromium"));
  EXPECT_NE(c.observation.text.find("Signed in as Blake Sullivan"), std::string::npos) << c.observation.text;
  EXPECT_TRUE(c.observation.screenshot_png_base64.empty()) << "only with \"observation\": \"som\"";
  int64_t cars = find_id(c.observation.text, "link", "Cars");
  ASSERT_GE(cars, 0) << c.observation.text;
  env_step_result r = client_.step(c.session_id, "click [" + std::to_string(cars) + "]");
  EXPECT_FALSE(r.action_error) << *r.action_error;
  EXPECT_NE(r.observation.url.find("/category/cars"), std::string::npos) << r.observation.url;
  eval_result e = client_.evaluate(c.session_id, std::string(""));
  EXPECT_EQ(e.score, 1.0) << to_json_text(e);
  client_.close(c.session_id);
}

// A Postmill-like site served elsewhere (--site reddit=URL): its login form at VWA's /login
// gets its CSRF token from a script, so only a browser that runs the page's JavaScript can
// sign in; the front page greets whoever holds the session cookie.
struct fake_postmill {
  std::atomic<bool> accept{true};
  sites::http_server http{{}, [this](const sites::http_request& req) {
                            if (req.path == "/login" && req.method == "GET")
                              return sites::http_response::html(
                                  "<html><head><title>Log in</title></head><body><form method=\"post\" "
                                  "action=\"/login_check\"><input type=\"hidden\" name=\"_csrf_token\" value=\"\">"
                                  "<label>Username <input type=\"text\" name=\"_username\"></label>"
                                  "<label>Password <input type=\"password\" name=\"_password\"></label>"
                                  "<button>Log in</button></form><script>document.querySelector("
                                  "'[name=_csrf_token]').value = 'from-script';</script></body></html>");
                            if (req.path == "/login_check") {
                              bool ok = accept && req.form.get("_csrf_token") == "from-script" &&
                                        req.form.get("_password") == "test1234";
                              sites::http_response r = sites::http_response::redirect(ok ? "/" : "/login");
                              if (ok) r.set_cookie("PHPSESSID", req.form.get("_username"), "/");
                              return r;
                            }
                            if (req.path == "/") {
                              std::string who = req.cookies.get("PHPSESSID");
                              return sites::http_response::html(
                                  "<html><head><title>Forum</title></head><body><p>" +
                                  (who.empty() ? std::string("Not logged in") : "Logged in as " + who) +
                                  "</p><a href=\"/login\">Log in</a></body></html>");
                            }
                            return sites::http_response::error(404, "no such page");
                          }};
};

TEST_F(EnvServerTest, ChromiumSessionLogsInOnASiteByUrlThroughItsFormInThePage) {
  SKIP_WITHOUT_CHROMIUM();
  fake_postmill forum;
  forum.http.start();
  nlohmann::json t = parse_json(classifieds_task(k_string_eval, /*require_login=*/true));
  t["sites"] = {"reddit"};
  t["start_url"] = "__REDDIT__/";
  env_create_options o = with_browser("chromium");
  o.sites = {{"reddit", forum.http.base_url()}};
  env_created c = client_.create_session(t.dump(), o);
  EXPECT_NE(c.observation.text.find("Logged in as MarvelsGrantMan136"), std::string::npos) << c.observation.text;
  client_.close(c.session_id);

  forum.accept = false;  // the site keeps showing its form: a clear error, no session
  try {
    client_.create_session(t.dump(), o);
    ADD_FAILURE() << "a refused login made a session";
  } catch (const env_client_error& e) {
    EXPECT_EQ(e.http_status(), 502);
    EXPECT_NE(std::string(e.what()).find("showed its login form again"), std::string::npos) << e.what();
  }
}

TEST_F(EnvServerTest, SetOfMarksObservationCarriesAMarkedScreenshot) {
  SKIP_WITHOUT_CHROMIUM();
  env_created c = client_.create_session(classifieds_task(k_string_eval), with_browser("chromium", "som"));
  const std::string& b64 = c.observation.screenshot_png_base64;
  ASSERT_FALSE(b64.empty()) << c.observation.text;
  std::string png(boost::beast::detail::base64::decoded_size(b64.size()), '\0');
  png.resize(boost::beast::detail::base64::decode(png.data(), b64.data(), b64.size()).first);
  ASSERT_GT(png.size(), 1000u);
  EXPECT_EQ(png.substr(0, 8), std::string("\x89PNG\r\n\x1a\n", 8));
  env_step_result r = client_.step(c.session_id, "scroll [down]");
  EXPECT_FALSE(r.observation.screenshot_png_base64.empty()) << "every observation has one";
  client_.close(c.session_id);

  // The text is VWA's list under the tab header: [id] [TAG] [text] per marked element (the
  // ids actions take), [] [StaticText] [text] for the rest; no accessibility tree lines.
  c = client_.create_session(classifieds_task(k_string_eval), with_browser("chromium", "som"));
  const std::string& text = c.observation.text;
  EXPECT_EQ(text.rfind("Tab 0 (current): ", 0), 0u) << text;
  std::istringstream lines(text.substr(text.find("\n\n") + 2));
  std::string line, cars_line;
  int marked = 0, statics = 0;
  while (std::getline(lines, line)) {
    ASSERT_EQ(line.front(), '[') << line;
    ASSERT_EQ(line.back(), ']') << line;
    if (line.rfind("[] [StaticText] [", 0) == 0) {
      ++statics;
      continue;
    }
    size_t close = line.find("] [");
    ASSERT_NE(close, std::string::npos) << line;
    EXPECT_NE(line.substr(1, close - 1).find_first_not_of("0123456789"), 0u) << "an id: " << line;
    ++marked;
    if (line.find("] [A] [Cars]") != std::string::npos) cars_line = line;
  }
  EXPECT_GT(marked, 3) << text;
  EXPECT_GT(statics, 0) << text;
  EXPECT_EQ(text.find("] link '"), std::string::npos) << "the list replaces the tree:\n" << text;
  ASSERT_FALSE(cars_line.empty()) << text;
  r = client_.step(c.session_id, "click " + cars_line.substr(0, cars_line.find(']') + 1));
  EXPECT_FALSE(r.action_error) << *r.action_error;
  EXPECT_NE(r.observation.url.find("/category/cars"), std::string::npos) << r.observation.url;
  client_.close(c.session_id);

  try {
    client_.create_session(classifieds_task(k_string_eval), with_browser("text", "som"));
    ADD_FAILURE() << "a text session cannot have screenshots";
  } catch (const env_client_error& e) {
    EXPECT_EQ(e.http_status(), 422);
    EXPECT_NE(std::string(e.what()).find("\"browser\": \"chromium\""), std::string::npos) << e.what();
  }
}

TEST_F(EnvServerTest, ChromiumKilledMidSessionGivesAnErrorObservationAndTheNextSessionWorks) {
  SKIP_WITHOUT_CHROMIUM();
  env_created a = client_.create_session(classifieds_task(k_string_eval), with_browser("chromium"));
  env_created b = client_.create_session(classifieds_task(k_string_eval), with_browser("chromium"));
  std::shared_ptr<chromium_process> p = server_->chromium();
  ASSERT_TRUE(p);
  const pid_t killed = p->pid();
  p->kill_now();
  p.reset();
  for (const std::string& id : {a.session_id, b.session_id}) {  // every affected session
    env_step_result r = client_.step(id, "scroll [down]");
    ASSERT_TRUE(r.action_error);
    EXPECT_NE(r.action_error->find("Chromium browser of this session is gone"), std::string::npos) << *r.action_error;
    EXPECT_NE(r.action_error->find("create a new one"), std::string::npos) << *r.action_error;
    EXPECT_EQ(r.observation.text.rfind("Error: ", 0), 0u) << r.observation.text;
    client_.close(id);
  }
  env_created c = client_.create_session(classifieds_task(k_string_eval), with_browser("chromium"));
  EXPECT_NE(find_id(c.observation.text, "link", "All listings"), -1) << c.observation.text;
  EXPECT_NE(server_->chromium()->pid(), killed) << "a fresh Chromium";
  client_.close(c.session_id);
}

// A task's scripts (prep actions, JavaScript locators) run only on its sites' origins: on a
// page of another origin they are refused with a note naming the page and the origins
// allowed, and nothing of theirs runs there; on the task's site they run as before.
TEST_F(EnvServerTest, TaskScriptsRunOnlyOnTheOriginsOfItsSites) {
  SKIP_WITHOUT_CHROMIUM();
  std::atomic<int> ran{0};
  sites::http_server foreign({}, [&ran](const sites::http_request& req) {
    if (req.path == "/ran") {
      ++ran;
      return sites::http_response::text("ran");
    }
    return sites::http_response::html("<html><head><title>Foreign</title></head><body><h1>Foreign</h1></body></html>");
  });
  foreign.start();
  const std::string foreign_page = foreign.base_url() + "/page";
  nlohmann::json t = parse_json(classifieds_task(k_string_eval));
  t["eval"] = {{"eval_types", {"program_html"}},
               {"reference_answers", nullptr},
               {"reference_url", ""},
               {"program_html",
                {{{"url", foreign_page},
                  {"locator", "document.querySelector('h1').outerText"},
                  {"prep_actions", {"fetch('/ran').then(r => r.text())"}},
                  {"required_contents", {{"must_include", {"Foreign"}}}}},
                 {{"url", "__CLASSIFIEDS__/category/cars"},
                  {"locator", "document.location.pathname.split('/').pop()"},
                  {"prep_actions", {"document.title"}},
                  {"required_contents", {{"must_include", {"cars"}}}}}}}};
  env_created c = client_.create_session(t.dump(), with_browser("chromium"));
  const std::string site_origin = c.observation.url.substr(0, c.observation.url.find('/', 8));
  eval_result e = client_.evaluate(c.session_id, std::string(""));
  ASSERT_EQ(e.evaluators.size(), 1u) << to_json_text(e);
  const std::string detail = e.evaluators[0].detail;
  EXPECT_NE(detail.find("target 0: "), std::string::npos) << detail;
  EXPECT_EQ(e.score, 0.0) << "the foreign page's locator gave \"\": " << to_json_text(e);
  EXPECT_EQ(ran.load(), 0) << "a prep action ran on a page outside the task's sites";
  std::string notes;
  for (const std::string& n : e.notes) notes += n + "\n";
  EXPECT_NE(notes.find("target 0: prep action"), std::string::npos) << notes;
  EXPECT_NE(notes.find("refused to run the task's JavaScript on " + foreign_page), std::string::npos) << notes;
  EXPECT_NE(notes.find("target 0: locator"), std::string::npos) << notes;
  EXPECT_NE(notes.find("run only on the origins of its sites (" + site_origin + ")"), std::string::npos) << notes;
  EXPECT_EQ(notes.find("target 1"), std::string::npos) << "the site's own page runs them: " << notes;
  EXPECT_NE(detail.find("target 0: must_include: missing"), std::string::npos) << detail;
  EXPECT_NE(detail.find("target 1: must_include: all 1 found"), std::string::npos) << detail;
  client_.close(c.session_id);
}

TEST(EnvChromiumMissing, AskingForChromiumWithoutItIs400) {
  env_server_options opt;
  opt.chromium.executable = "/nonexistent/chromium";
  env_server server(opt);
  server.start();
  env_client client(server.base_url());
  EXPECT_EQ(client.health().browsers, std::vector<std::string>{"text"});
  try {
    client.create_session(classifieds_task(k_string_eval), with_browser("chromium"));
    ADD_FAILURE() << "created a chromium session without Chromium";
  } catch (const env_client_error& e) {
    EXPECT_EQ(e.http_status(), 400);
    EXPECT_NE(std::string(e.what()).find("/nonexistent/chromium is missing"), std::string::npos) << e.what();
  }
  env_created t = client.create_session(classifieds_task(k_string_eval));  // text still works
  EXPECT_TRUE(client.close(t.session_id));
}

}  // namespace
}  // namespace kvarena
