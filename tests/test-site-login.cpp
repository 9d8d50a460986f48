// test-site-login.cpp: logging in on sites served elsewhere through their own login forms
// (envs/server/site-login.h), against a local fake of a Postmill-style login page (hidden
// CSRF token, username and password fields; Postmill itself cannot run here), and VWA's
// accounts per site.
#include <gtest/gtest.h>

#include <mutex>
#include <string>

#include "browser/text/http-fetch.h"
#include "server/site-login.h"
#include "sites/http-server.h"

namespace kvarena {
namespace {

struct fake_forum {
  std::mutex mu;
  std::string posted;
  sites::http_server http{{}, [this](const sites::http_request& req) {
                            sites::http_response r;
                            if (req.path == "/login" && req.method == "GET") {
                              r.body = R"(<form action="/search"><input name="q"></form>
<form method="post" action="/login_check"><input type="hidden" name="_csrf_token" value="tok&amp;1">
<input type="text" name="_username"><input type="password" name="_password">
<input type="checkbox" name="_remember_me" checked><button>Log in</button></form>)";
                            } else if (req.path == "/login_check") {
                              std::lock_guard lock(mu);
                              posted = req.body;
                              bool ok = req.body.find("_password=test1234") != std::string::npos;
                              r = sites::http_response::redirect(ok ? "/" : "/login");
                              if (ok) r.add_header("Set-Cookie", "PHPSESSID=abc; Path=/");
                            } else if (req.path == "/") {
                              r.body = "<p>Welcome</p>";
                            } else {
                              r.status = 404;
                            }
                            return r;
                          }};
};

TEST(SiteLogin, FillsTheFormWithPasswordAndKeepsHiddenFields) {
  fake_forum forum;
  forum.http.start();
  http_client http;
  std::string err;
  auto account = vwa_account("reddit");
  ASSERT_TRUE(account);
  EXPECT_EQ(account->username, "MarvelsGrantMan136");
  ASSERT_TRUE(form_login(http, forum.http.base_url() + "/", *account, &err)) << err;
  {
    std::lock_guard lock(forum.mu);
    EXPECT_EQ(forum.posted, "_csrf_token=tok%261&_username=MarvelsGrantMan136&_password=test1234&_remember_me=on");
  }
  bool has_cookie = false;
  for (const std::string& c : http.cookies()) has_cookie |= c.find("PHPSESSID") != std::string::npos;
  EXPECT_TRUE(has_cookie);

  site_account wrong = *account;
  wrong.password = "nope";
  EXPECT_FALSE(form_login(http, forum.http.base_url(), wrong, &err));
  EXPECT_NE(err.find("showed its login form again"), std::string::npos) << err;
  wrong.login_path = "/";
  EXPECT_FALSE(form_login(http, forum.http.base_url(), wrong, &err));
  EXPECT_NE(err.find("no form with a password field"), std::string::npos) << err;
}

TEST(SiteLogin, VwaAccountsPerSite) {
  EXPECT_EQ(vwa_account("shopping")->login_path, "/customer/account/login/");
  EXPECT_EQ(vwa_account("classifieds")->username, "blake.sullivan@gmail.com");
  EXPECT_EQ(vwa_account("gitlab")->username, "byteblaze");
  EXPECT_EQ(vwa_account("shopping_admin")->password, "admin1234");
  EXPECT_FALSE(vwa_account("wikipedia"));
  EXPECT_FALSE(vwa_account("map"));
}

}  // namespace
}  // namespace kvarena
