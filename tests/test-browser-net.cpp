// test-browser-net.cpp: the browser's URL handling (RFC 3986 resolution, leniencies, user
// input, form encoding) and its HTTP client over a loopback Beast server (redirects,
// cookies, error statuses, failures, limits, timeouts). No network beyond 127.0.0.1.
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "browser/text/http-fetch.h"
#include "browser/common/url-util.h"
#include "test-browser-server.h"

namespace kvarena {
namespace {

using namespace browser_test;

// URLs

TEST(BrowserUrl, Rfc3986NormalExamples) {
  const std::string base = "http://a/b/c/d;p?q";
  const std::pair<const char*, const char*> cases[] = {
      {"g:h", "g:h"}, {"g", "http://a/b/c/g"}, {"./g", "http://a/b/c/g"}, {"g/", "http://a/b/c/g/"},
      {"/g", "http://a/g"}, {"//g", "http://g/"}, {"?y", "http://a/b/c/d;p?y"},
      {"g?y", "http://a/b/c/g?y"}, {"#s", "http://a/b/c/d;p?q#s"}, {"g#s", "http://a/b/c/g#s"},
      {"g?y#s", "http://a/b/c/g?y#s"}, {";x", "http://a/b/c/;x"}, {"g;x", "http://a/b/c/g;x"},
      {"g;x?y#s", "http://a/b/c/g;x?y#s"}, {"", "http://a/b/c/d;p?q"}, {".", "http://a/b/c/"},
      {"./", "http://a/b/c/"}, {"..", "http://a/b/"}, {"../", "http://a/b/"}, {"../g", "http://a/b/g"},
      {"../..", "http://a/"}, {"../../", "http://a/"}, {"../../g", "http://a/g"}};
  for (const auto& [ref, want] : cases) EXPECT_EQ(resolve_url(base, ref).value_or("<none>"), want) << ref;
}

TEST(BrowserUrl, Rfc3986AbnormalExamples) {
  const std::string base = "http://a/b/c/d;p?q";
  const std::pair<const char*, const char*> cases[] = {
      {"../../../g", "http://a/g"}, {"../../../../g", "http://a/g"}, {"/./g", "http://a/g"},
      {"/../g", "http://a/g"}, {"g.", "http://a/b/c/g."}, {".g", "http://a/b/c/.g"},
      {"g..", "http://a/b/c/g.."}, {"..g", "http://a/b/c/..g"}, {"./../g", "http://a/b/g"},
      {"./g/.", "http://a/b/c/g/"}, {"g/./h", "http://a/b/c/g/h"}, {"g/../h", "http://a/b/c/h"},
      {"g;x=1/./y", "http://a/b/c/g;x=1/y"}, {"g;x=1/../y", "http://a/b/c/y"},
      {"g?y/./x", "http://a/b/c/g?y/./x"}, {"g?y/../x", "http://a/b/c/g?y/../x"},
      {"g#s/./x", "http://a/b/c/g#s/./x"}, {"g#s/../x", "http://a/b/c/g#s/../x"},
      {"http:g", "http:g"}};
  for (const auto& [ref, want] : cases) EXPECT_EQ(resolve_url(base, ref).value_or("<none>"), want) << ref;
}

TEST(BrowserUrl, BrowserLeniencies) {
  EXPECT_EQ(*resolve_url("http://h/a/b", "  c d\n "), "http://h/a/c%20d");
  EXPECT_EQ(*resolve_url("http://h/a/b", "..\\x\\y?q=\\"), "http://h/x/y?q=\\");
  EXPECT_EQ(*resolve_url("http://h/", "/caf\xC3\xA9"), "http://h/caf%C3%A9");
  EXPECT_EQ(*resolve_url("http://h/", "HTTP://Example.COM"), "http://example.com/");
  EXPECT_EQ(*resolve_url("http://h/", "/a%20b"), "http://h/a%20b");  // escapes kept
  EXPECT_EQ(*resolve_url("http://user:PW@h/", "//u:PW@Host:80/x"), "http://u:PW@host:80/x");
  EXPECT_EQ(*resolve_url("http://h/a", "mailto:x@y.z"), "mailto:x@y.z");
  EXPECT_EQ(*resolve_url("about:blank", "#top"), "about:blank#top");
  EXPECT_FALSE(resolve_url("about:blank", "page.html").has_value());
  EXPECT_FALSE(resolve_url("", "page.html").has_value());
  EXPECT_EQ(url_scheme("HTTPS://x"), "https");
  EXPECT_EQ(url_scheme("/rel"), "");
  EXPECT_EQ(url_without_fragment("http://h/a#b"), "http://h/a");
  EXPECT_EQ(url_fragment("http://h/a#b"), "b");
}

TEST(BrowserUrl, UserInput) {
  EXPECT_EQ(url_from_user_input("example.com/x"), "http://example.com/x");
  EXPECT_EQ(url_from_user_input("localhost:8080/x"), "http://localhost:8080/x");
  EXPECT_EQ(url_from_user_input(" http://127.0.0.1:9/a "), "http://127.0.0.1:9/a");
  EXPECT_EQ(url_from_user_input("about:blank"), "about:blank");
}

TEST(BrowserUrl, FormEncoding) {
  EXPECT_EQ(form_urlencode({{"q", "a b&c=d/\xC3\xA9"}, {"x y", "*-._~"}}),
            "q=a+b%26c%3Dd%2F%C3%A9&x+y=*-._%7E");
  EXPECT_EQ(form_urlencode_component("l1\nl2\rl3\r\nl4"), "l1%0D%0Al2%0D%0Al3%0D%0Al4");
  auto back = form_urldecode("q=a+b%26c&empty=&flag&bad=%zz");
  ASSERT_EQ(back.size(), 4u);
  EXPECT_EQ(back[0], (std::pair<std::string, std::string>{"q", "a b&c"}));
  EXPECT_EQ(back[1].second, "");
  EXPECT_EQ(back[2].first, "flag");
  EXPECT_EQ(back[3].second, "%zz");
}

// HTTP

http_request get(const std::string& url) {
  http_request r;
  r.url = url;
  return r;
}

http_request post(const std::string& url, const std::string& body) {
  http_request r;
  r.method = "POST";
  r.url = url;
  r.body = body;
  return r;
}

TEST(BrowserHttp, GetFollowsRedirectsAndRecordsFinalUrl) {
  test_server server(site);
  http_client http;
  http_response r = http.fetch(get(server.url("/redirect")));
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.final_url, server.url("/echo?from=redirect"));
  EXPECT_NE(r.body.find("from=redirect"), std::string::npos);
  EXPECT_EQ(r.content_type, "text/html; charset=utf-8");
}

TEST(BrowserHttp, PostSendsUrlencodedBody) {
  test_server server(site);
  http_client http;
  http_request req = post(server.url("/echo"), "a=1&b=two");
  http_response r = http.fetch(req);
  ASSERT_TRUE(r.ok) << r.error;
  auto log = server.log();
  ASSERT_EQ(log.size(), 1u);
  EXPECT_EQ(log[0].method, "POST");
  EXPECT_EQ(log[0].body, "a=1&b=two");
  EXPECT_EQ(log[0].content_type, "application/x-www-form-urlencoded");
}

TEST(BrowserHttp, CookieJarPerClient) {
  test_server server(site);
  http_client a, b;
  http_response r = a.fetch(post(server.url("/login"), "user=alice&pass=secret"));
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.final_url, server.url("/account"));  // 302 after POST becomes a GET
  EXPECT_NE(r.body.find("Welcome alice"), std::string::npos);
  ASSERT_EQ(a.cookies().size(), 1u);
  EXPECT_NE(a.cookies()[0].find("abc123"), std::string::npos);
  EXPECT_TRUE(b.cookies().empty());
  http_response other = b.fetch(get(server.url("/account")));
  EXPECT_EQ(other.final_url, server.url("/login"));  // b has no session
  a.clear_cookies();
  EXPECT_TRUE(a.cookies().empty());
  b.add_cookie("Set-Cookie: session=abc123; domain=127.0.0.1; path=/");
  EXPECT_NE(b.fetch(get(server.url("/account"))).body.find("Welcome alice"), std::string::npos);
}

TEST(BrowserHttp, HttpErrorStatusIsNotATransportFailure) {
  test_server server(site);
  http_client http;
  http_response r = http.fetch(get(server.url("/missing")));
  EXPECT_TRUE(r.ok);
  EXPECT_EQ(r.status, 404);
  EXPECT_NE(r.body.find("No such page"), std::string::npos);
}

TEST(BrowserHttp, FailuresSayWhatToDo) {
  std::string dead_url;
  {
    test_server gone(site);
    dead_url = gone.url("/x");
  }
  http_client http;
  http_response r = http.fetch(get(dead_url));
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.error.find("could not connect"), std::string::npos) << r.error;
  EXPECT_NE(r.error.find("is the site running?"), std::string::npos) << r.error;

  test_server server(site);
  r = http.fetch(get(server.url("/loop")));
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.error.find("redirects"), std::string::npos) << r.error;

  http_options small;
  small.max_body_bytes = 1 << 20;
  http_client limited(small);
  r = limited.fetch(get(server.url("/big")));
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.error.find("larger than the 1048576-byte limit"), std::string::npos) << r.error;
  EXPECT_TRUE(r.body.empty());

  r = http.fetch(get("gopher://x/"));
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.error.find("only http://"), std::string::npos) << r.error;

  http_request put = get(server.url("/echo"));
  put.method = "PUT";
  r = http.fetch(put);
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.error.find("use GET or POST"), std::string::npos) << r.error;
}

TEST(BrowserHttp, TimeoutSaysTimedOut) {
  test_server slow([](const test_request&) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1200));
    test_response r;
    r.body = "late";
    return r;
  });
  http_options fast;
  fast.total_timeout_ms = 300;
  http_client http(fast);
  auto start = std::chrono::steady_clock::now();
  http_response r = http.fetch(get(slow.url("/")));
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start).count();
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.error.find("timed out"), std::string::npos) << r.error;
  // Functional, not a speed check: the client gave up before the server's reply (1200 ms).
  EXPECT_LT(ms, 1200);
}

}  // namespace
}  // namespace kvarena
