// test-browser.cpp: the text browser backend (envs/browser/): URL resolution, HTTP over a
// loopback Beast server (redirects, cookies, timeouts, limits), the accessibility tree and
// its VWA printing, the viewport, forms, tabs and history, every action error, the CSS
// selector engine, the evaluators' probe, and odd HTML. No network beyond 127.0.0.1.
#include <gtest/gtest.h>

#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include <atomic>
#include <chrono>
#include <fstream>
#include <functional>
#include <mutex>
#include <regex>
#include <sstream>
#include <thread>

#include "browser/ax-print.h"
#include "browser/ax-tree.h"
#include "browser/browser-act.h"
#include "browser/css-select.h"
#include "browser/dom-text.h"
#include "browser/form-state.h"
#include "browser/form-submit.h"
#include "browser/html-document.h"
#include "browser/http-fetch.h"
#include "browser/text-browser-probe.h"
#include "browser/text-browser.h"
#include "browser/url-util.h"
#include "eval/action-parse.h"
#include "test-util.h"

namespace kvarena {
namespace {

namespace beast = boost::beast;
namespace bhttp = boost::beast::http;
using tcp = boost::asio::ip::tcp;

// ---------------------------------------------------------------------------------------
// A tiny HTTP/1.1 server on 127.0.0.1, port 0: one connection at a time, Connection: close.

struct test_request {
  std::string method, target, path, query, body, cookie, referer, content_type;
};

struct test_response {
  int status = 200;
  std::string body;
  std::string content_type = "text/html; charset=utf-8";
  std::vector<std::pair<std::string, std::string>> headers;
};

class test_server {
 public:
  using handler = std::function<test_response(const test_request&)>;

  explicit test_server(handler h)
      : handler_(std::move(h)), acceptor_(ioc_, {boost::asio::ip::make_address("127.0.0.1"), 0}) {
    port_ = acceptor_.local_endpoint().port();
    thread_ = std::thread([this] { run(); });
  }
  ~test_server() {
    stop_ = true;
    boost::system::error_code ec;
    tcp::socket wake(ioc_);
    wake.connect(acceptor_.local_endpoint(), ec);  // unblocks accept()
    thread_.join();
  }

  std::string url(const std::string& path) const {
    return "http://127.0.0.1:" + std::to_string(port_) + path;
  }
  std::vector<test_request> log() {
    std::lock_guard<std::mutex> lock(mu_);
    return log_;
  }

 private:
  void run() {
    while (!stop_) {
      tcp::socket sock(ioc_);
      boost::system::error_code ec;
      acceptor_.accept(sock, ec);
      if (ec || stop_) continue;
      serve(sock);
    }
  }

  void serve(tcp::socket& sock) {
    beast::flat_buffer buf;
    bhttp::request<bhttp::string_body> req;
    boost::system::error_code ec;
    bhttp::read(sock, buf, req, ec);
    if (ec) return;
    test_request r;
    r.method = std::string(req.method_string());
    r.target = std::string(req.target());
    size_t q = r.target.find('?');
    r.path = r.target.substr(0, q);
    r.query = q == std::string::npos ? "" : r.target.substr(q + 1);
    r.body = req.body();
    r.cookie = std::string(req[bhttp::field::cookie]);
    r.referer = std::string(req[bhttp::field::referer]);
    r.content_type = std::string(req[bhttp::field::content_type]);
    {
      std::lock_guard<std::mutex> lock(mu_);
      log_.push_back(r);
    }
    test_response out = handler_(r);
    bhttp::response<bhttp::string_body> res{static_cast<bhttp::status>(out.status), req.version()};
    res.set(bhttp::field::content_type, out.content_type);
    for (const auto& [name, value] : out.headers) res.insert(name, value);
    res.body() = out.body;
    res.keep_alive(false);
    res.prepare_payload();
    bhttp::write(sock, res, ec);
    sock.shutdown(tcp::socket::shutdown_send, ec);
  }

  handler handler_;
  boost::asio::io_context ioc_;
  tcp::acceptor acceptor_;
  unsigned short port_ = 0;
  std::atomic<bool> stop_{false};
  std::thread thread_;
  std::mutex mu_;
  std::vector<test_request> log_;
};

std::string page(const std::string& title, const std::string& body) {
  return "<!DOCTYPE html><html><head><title>" + title + "</title></head><body>" + body +
         "</body></html>";
}

test_response redirect(const std::string& location, int status = 302) {
  test_response r;
  r.status = status;
  r.headers.push_back({"Location", location});
  return r;
}

std::string form_page(const std::string& method) {
  return page("Form",
              "<form action=\"/echo\" method=\"" + method + "\" aria-label=\"Test form\">"
              "<label for=\"q\">Query</label><input id=\"q\" name=\"q\" type=\"text\" placeholder=\"Search here\">"
              "<input type=\"hidden\" name=\"h\" value=\"hv\">"
              "<label for=\"s\">Sort</label><select id=\"s\" name=\"s\"><option value=\"a\">Alpha</option>"
              "<option value=\"b\" selected>Beta</option><option value=\"c\">Gamma</option></select>"
              "<label><input type=\"checkbox\" name=\"c\" value=\"yes\"> Remember me</label>"
              "<label><input type=\"radio\" name=\"r\" value=\"r1\" checked> Choice one</label>"
              "<label><input type=\"radio\" name=\"r\" value=\"r2\"> Choice two</label>"
              "<textarea name=\"t\" aria-label=\"Notes\">init</textarea>"
              "<input type=\"text\" name=\"dis\" value=\"x\" aria-label=\"Disabled field\" disabled>"
              "<input type=\"text\" name=\"ro\" value=\"fixed\" aria-label=\"Read only field\" readonly>"
              "<button type=\"submit\" name=\"go\" value=\"Go\">Submit form</button>"
              "<button type=\"button\">Does nothing</button>"
              "<button type=\"reset\">Reset all</button>"
              "</form><a href=\"/echo\">Plain link</a><p>Just text</p>"
              "<div role=\"textbox\" aria-label=\"Rich editor\" contenteditable></div>");
}

// The pages of the loopback site used by most browser tests.
test_response site(const test_request& r) {
  test_response out;
  const std::string& p = r.path;
  if (p == "/dir/index.html") {
    out.body = page("Index",
                    "<nav aria-label=\"Main\"><a href=\"page2.html\">Page two</a> "
                    "<a href=\"../up.html\">Up one</a> <a href=\"?q=1\">Query link</a> "
                    "<a href=\"#sec\">Jump</a> <a href=\"/echo?x=1\" target=\"_blank\">New tab link</a> "
                    "<a href=\"javascript:void(0)\">Script link</a> <a href=\"mailto:a@b.c\">Mail us</a></nav>"
                    "<h1>Welcome</h1><p id=\"q\">query is " + r.query + "</p><p id=\"sec\">Section text</p>");
  } else if (p == "/dir/page2.html") {
    out.body = page("Page two", "<h1>Second page</h1><a href=\"index.html\">Back home</a>");
  } else if (p == "/up.html") {
    out.body = page("Up", "<h1>Up page</h1>");
  } else if (p == "/echo") {
    out.body = page("Echo", "<p id=\"method\">" + r.method + "</p><p id=\"query\">" + r.query +
                                "</p><pre id=\"body\">" + r.body + "</pre><p id=\"cookie\">" + r.cookie +
                                "</p><p id=\"referer\">" + r.referer + "</p><p id=\"ctype\">" +
                                r.content_type + "</p>");
  } else if (p == "/form-get") {
    out.body = form_page("get");
  } else if (p == "/form-post") {
    out.body = form_page("post");
  } else if (p == "/login" && r.method == "GET") {
    out.body = page("Login",
                    "<form method=\"post\" action=\"/login\"><input name=\"user\" aria-label=\"Username\">"
                    "<input name=\"pass\" type=\"password\" aria-label=\"Password\">"
                    "<input type=\"submit\" value=\"Log in\"></form>");
  } else if (p == "/login") {
    auto fields = form_urldecode(r.body);
    bool good = fields.size() >= 2 && fields[0].second == "alice" && fields[1].second == "secret";
    if (!good) {
      out.body = page("Login failed", "<p>Wrong password</p>");
      return out;
    }
    out = redirect("/account");
    out.headers.push_back({"Set-Cookie", "session=abc123; Path=/; HttpOnly"});
  } else if (p == "/account") {
    if (r.cookie.find("session=abc123") == std::string::npos) return redirect("/login");
    out.body = page("Account", "<h1>Welcome alice</h1>");
  } else if (p == "/redirect") {
    return redirect("/echo?from=redirect", 301);
  } else if (p == "/loop") {
    return redirect("/loop");
  } else if (p == "/missing") {
    out.status = 404;
    out.body = page("Not Found", "<h1>No such page</h1>");
  } else if (p == "/long") {
    std::string body = "<main>";
    for (int i = 0; i < 40; ++i) body += "<p id=\"l" + std::to_string(i) + "\">Line " + std::to_string(i) + "</p>";
    body += "<a href=\"/echo\">Bottom link</a></main>";
    out.body = page("Long", body);
  } else if (p == "/big") {
    out.body = std::string(3 << 20, 'x');
  } else if (p == "/plain.txt") {
    out.content_type = "text/plain";
    out.body = "plain <b>text</b>\nline two";
  } else if (p == "/pic.png") {
    out.content_type = "image/png";
    out.body = std::string("\x89PNG\r\n\x1a\n\0\0\0", 11);
  } else if (p == "/bin") {
    out.content_type = "application/octet-stream";
    out.body = std::string("\0\1\2\3", 4);
  } else if (p == "/garbage") {
    std::string g;
    for (int i = 0; i < 5000; ++i) g += static_cast<char>((i * 7919 + 13) & 0xFF);
    out.body = g;
  } else if (p == "/latin1") {
    out.content_type = "text/html; charset=ISO-8859-1";
    out.body = "<title>Caf\xE9</title><p>na\xEFve \x80</p>";
  } else if (p == "/blank-target-form") {
    out.body = page("BT", "<form action=\"/echo\" target=\"_blank\"><input name=\"a\" value=\"1\" aria-label=\"A\">"
                          "<input type=\"submit\" value=\"Open\"></form>");
  } else if (p == "/multi") {
    out.body = page("Multi", "<form action=\"/echo\" method=\"post\" enctype=\"multipart/form-data\">"
                             "<input name=\"a\" value=\"1\" aria-label=\"A\"><input type=\"submit\" value=\"Send\"></form>");
  } else if (p == "/base") {
    out.body = page("Base", "<base href=\"/dir/\"><a href=\"page2.html\">Based link</a>");
  } else if (p == "/select-only") {
    out.body = page("Select", "<form action=\"/echo\"><select name=\"m\" multiple aria-label=\"Many\">"
                              "<option>x</option><option selected>y</option><option>z</option></select>"
                              "<input type=\"submit\" value=\"Send\"></form>");
  } else {
    out.status = 404;
    out.body = page("404", "<p>unknown path " + p + "</p>");
  }
  return out;
}

// The [id] on the first observation line containing `needle`; -1 when none.
int64_t id_of(const std::string& obs, const std::string& needle) {
  std::istringstream in(obs);
  std::string line;
  while (std::getline(in, line)) {
    if (line.find(needle) == std::string::npos) continue;
    size_t open = line.find('['), close = line.find(']');
    if (open != std::string::npos && close > open) return std::stoll(line.substr(open + 1, close - open - 1));
  }
  return -1;
}

std::string strip_ids(const std::string& s) { return std::regex_replace(s, std::regex(R"(\[\d+\] )"), "[] "); }

// The printed tree of an HTML string (whole page, no viewport limit).
std::string tree_of(const std::string& html, bool keep_ids = false) {
  html_document doc(html);
  form_state state(doc);
  std::string text = render_ax_tree(build_ax_tree(doc, state, nullptr), 0, 1 << 30).text;
  return keep_ids ? text : strip_ids(text);
}

std::string body_tree(const std::string& body) {
  std::string t = tree_of(page("T", body));
  std::string head = "[] RootWebArea 'T' focused: True\n";
  EXPECT_EQ(t.substr(0, head.size()), head);
  return t.substr(std::min(t.size(), head.size()));
}

std::string prop(text_browser& b, const std::string& selector, const std::string& property = "textContent") {
  std::string err;
  return b.query_selector_property(selector, property, &err).value_or("<" + err + ">");
}

// ---------------------------------------------------------------------------------------
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

// ---------------------------------------------------------------------------------------
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

// ---------------------------------------------------------------------------------------
// Accessibility tree: one golden case per HTML construct (ids stripped; see ExactIds)

TEST(AxTree, ExactIdsArePreorderIndexes) {
  std::string html = "<html><head><title>T</title></head><body><a href=\"/x\">Go</a></body></html>";
  // document 0, html 1, head 2, title 3, "T" 4, body 5, a 6, "Go" 7; id = index + 1
  EXPECT_EQ(tree_of(html, true), "[1] RootWebArea 'T' focused: True\n\t[7] link 'Go'");
  html_document doc(html);
  EXPECT_EQ(doc.node_count(), 8);
  EXPECT_EQ(ax_value_text_id(doc, doc.node(6)), 8 + 1 + 6);
}

TEST(AxTree, Links) {
  EXPECT_EQ(body_tree("<a href=\"/x\">Home</a><a>plain anchor</a><a href=\"/i\"><img src=i.png alt=\"Logo\"></a>"),
            "\t[] link 'Home'\n\t[] StaticText 'plain anchor'\n\t[] link 'Logo'\n\t\t[] img 'Logo'");
}

TEST(AxTree, Buttons) {
  EXPECT_EQ(body_tree("<button>Go</button><input type=submit value=\"Send\"><input type=button value=\"B\">"
                      "<input type=submit><input type=reset><input type=image alt=\"Find\">"
                      "<button disabled>Off</button>"),
            "\t[] button 'Go'\n\t[] button 'Send'\n\t[] button 'B'\n\t[] button 'Submit'\n"
            "\t[] button 'Reset'\n\t[] button 'Find'\n\t[] button 'Off' disabled: True");
}

TEST(AxTree, Textboxes) {
  EXPECT_EQ(body_tree("<label for=\"a\">Name</label><input id=\"a\" required>"
                      "<input aria-label=\"Email\" type=\"email\" value=\"x@y.z\">"
                      "<input placeholder=\"e.g., a blue used car\">"
                      "<input title=\"Titled\">"
                      "<label>Wrapped <input name=w></label>"
                      "<span id=lb>By ref</span><input aria-labelledby=\"lb\">"
                      "<input type=\"search\" aria-label=\"Search query\">"
                      "<input type=\"number\" aria-label=\"Qty\">"
                      "<input type=\"password\" aria-label=\"Pw\" value=\"abc\">"
                      "<textarea aria-label=\"Notes\">hello</textarea>"),
            "\t[] StaticText 'Name'\n"
            "\t[] textbox 'Name' required: True\n"
            "\t[] textbox 'Email' required: False\n"
            "\t\t[] StaticText 'x@y.z'\n"
            "\t[] textbox 'e.g., a blue used car' required: False\n"
            "\t[] textbox 'Titled' required: False\n"
            "\t[] StaticText 'Wrapped'\n"
            "\t[] textbox 'Wrapped' required: False\n"
            "\t[] StaticText 'By ref'\n"
            "\t[] textbox 'By ref' required: False\n"
            "\t[] searchbox 'Search query' required: False\n"
            "\t[] spinbutton 'Qty' required: False\n"
            "\t[] textbox 'Pw' required: False\n"
            "\t\t[] StaticText '\xE2\x80\xA2\xE2\x80\xA2\xE2\x80\xA2'\n"
            "\t[] textbox 'Notes' required: False\n"
            "\t\t[] StaticText 'hello'");
}

TEST(AxTree, SelectIsAComboboxWithItsOptions) {
  EXPECT_EQ(body_tree("<label for=\"s\">Sort by</label><select id=\"s\"><option>Price</option>"
                      "<option selected>Name</option><optgroup label=\"More\"><option disabled>Date</option>"
                      "</optgroup></select><select multiple aria-label=\"Tags\"><option>t1</option></select>"),
            "\t[] StaticText 'Sort by'\n"
            "\t[] combobox 'Sort by' hasPopup: menu expanded: False\n"
            "\t\t[] option 'Price' selected: False\n"
            "\t\t[] option 'Name' selected: True\n"
            "\t\t[] group 'More'\n"
            "\t\t\t[] option 'Date' disabled: True selected: False\n"
            "\t[] listbox 'Tags' multiselectable: True\n"
            "\t\t[] option 't1' selected: False");
}

TEST(AxTree, CheckboxesAndRadios) {
  EXPECT_EQ(body_tree("<label><input type=\"checkbox\" checked> Remember me</label>"
                      "<input type=\"radio\" id=\"r1\" name=\"r\"><label for=\"r1\">Choice one</label>"
                      "<div role=\"checkbox\" aria-checked=\"mixed\">Partial</div>"),
            "\t[] checkbox 'Remember me' checked: true\n"
            "\t[] radio 'Choice one' checked: false\n"
            "\t[] checkbox 'Partial' checked: mixed");
}

TEST(AxTree, ImagesNeedAlt) {
  EXPECT_EQ(body_tree("<img src=a.png alt=\"A cat\"><img src=b.png><img src=c.png alt=\"\">"
                      "<img src=d.png title=\"Titled pic\">"),
            "\t[] img 'A cat'\n\t[] img 'Titled pic'");
}

TEST(AxTree, HeadingsLevelIsNotPrinted) {
  // VWA's IGNORED_ACTREE_PROPERTIES drops `level`; the tree still carries it.
  EXPECT_EQ(body_tree("<h1>Main title</h1><h3>Sub</h3>"), "\t[] heading 'Main title'\n\t[] heading 'Sub'");
  html_document doc(page("T", "<h3>Sub</h3>"));
  form_state st(doc);
  ax_node root = build_ax_tree(doc, st, nullptr);
  std::function<const ax_node*(const ax_node&)> find = [&](const ax_node& n) -> const ax_node* {
    if (n.role == "heading") return &n;
    for (const auto& c : n.children)
      if (auto* f = find(c)) return f;
    return nullptr;
  };
  const ax_node* h = find(root);
  ASSERT_NE(h, nullptr);
  ASSERT_EQ(h->props.size(), 1u);
  EXPECT_EQ(h->props[0].name, "level");
  EXPECT_EQ(h->props[0].value, "3");
}

TEST(AxTree, ListsAreTransparentUnlessNamed) {
  EXPECT_EQ(body_tree("<ul><li>One item</li><li><a href=\"/2\">Two</a></li></ul>"
                      "<ol aria-label=\"Steps\"><li>Step A</li></ol>"),
            "\t[] StaticText 'One item'\n\t[] link 'Two'\n\t[] list 'Steps'\n\t\t[] StaticText 'Step A'");
}

TEST(AxTree, Tables) {
  EXPECT_EQ(body_tree("<table><caption>Prices</caption><tr><th>Item</th><th>Cost</th></tr>"
                      "<tr><td>Tea</td><td>$2</td></tr></table>"),
            "\t[] table 'Prices'\n"
            "\t\t[] row 'Item Cost'\n"
            "\t\t\t[] columnheader 'Item'\n"
            "\t\t\t[] columnheader 'Cost'\n"
            "\t\t[] row 'Tea $2'\n"
            "\t\t\t[] cell 'Tea'\n"
            "\t\t\t[] cell '$2'");
}

TEST(AxTree, Landmarks) {
  EXPECT_EQ(body_tree("<header><a href=\"/\">Logo</a></header><nav><a href=\"/a\">About</a></nav>"
                      "<nav aria-label=\"Footer links\"><a href=\"/b\">Blog</a></nav>"
                      "<main><p>Body text</p></main>"
                      "<form aria-label=\"Search\"><input name=q aria-label=\"Query\"></form>"
                      "<form><input name=z aria-label=\"Zip\"></form>"
                      "<footer>Copyright</footer><aside>Sidebar</aside><section>Plain section</section>"
                      "<section aria-label=\"Named area\">Inside</section><article>Story</article>"),
            "\t[] link 'Logo'\n"
            "\t[] link 'About'\n"
            "\t[] navigation 'Footer links'\n"
            "\t\t[] link 'Blog'\n"
            "\t[] main ''\n"
            "\t\t[] StaticText 'Body text'\n"
            "\t[] form 'Search'\n"
            "\t\t[] textbox 'Query' required: False\n"
            "\t[] textbox 'Zip' required: False\n"
            "\t[] contentinfo ''\n"
            "\t\t[] StaticText 'Copyright'\n"
            "\t[] complementary ''\n"
            "\t\t[] StaticText 'Sidebar'\n"
            "\t[] StaticText 'Plain section'\n"
            "\t[] region 'Named area'\n"
            "\t\t[] StaticText 'Inside'\n"
            "\t[] article ''\n"
            "\t\t[] StaticText 'Story'");
}

TEST(AxTree, StructuralNodesAndText) {
  EXPECT_EQ(body_tree("<div><p>First paragraph <b>bold part</b> end</p><span>Span text</span></div>"
                      "<pre>a  b\n c</pre><p>no&nbsp;break</p>"),
            "\t[] StaticText 'First paragraph'\n"
            "\t[] StaticText 'bold part'\n"
            "\t[] StaticText 'end'\n"
            "\t[] StaticText 'Span text'\n"
            "\t[] StaticText 'a  b\\n c'\n"
            "\t[] StaticText 'no break'");
}

TEST(AxTree, AriaLabelsAndRoles) {
  EXPECT_EQ(body_tree("<div role=\"button\" aria-label=\"Close dialog\">inner x</div>"
                      "<span role=\"link\">Go there</span><div role=\"presentation\">Plain words</div>"
                      "<div role=\"navigation\" aria-label=\"Crumbs\">crumb trail</div>"
                      "<div aria-label=\"Labelled div\">inner words</div>"
                      "<a href=\"/h\" aria-expanded=\"false\" aria-haspopup=\"true\">Menu</a>"
                      "<button aria-pressed=\"true\">Bold</button>"
                      "<div role=\"tab\" aria-selected=\"true\">Tab A</div>"
                      "<div role=\"bogus heading\">Role list</div>"),
            "\t[] button 'Close dialog'\n"
            "\t\t[] StaticText 'inner x'\n"
            "\t[] link 'Go there'\n"
            "\t[] StaticText 'Plain words'\n"
            "\t[] navigation 'Crumbs'\n"
            "\t\t[] StaticText 'crumb trail'\n"
            "\t[] generic 'Labelled div'\n"
            "\t\t[] StaticText 'inner words'\n"
            "\t[] link 'Menu' hasPopup: menu expanded: False\n"
            "\t[] button 'Bold' pressed: true\n"
            "\t[] tab 'Tab A' selected: True\n"
            "\t[] heading 'Role list'");
}

TEST(AxTree, HiddenElementsAreSkipped) {
  EXPECT_EQ(body_tree("<p hidden>H1</p><p style=\"display: none\">H2</p><p style=\"VISIBILITY:hidden\">H3</p>"
                      "<div aria-hidden=\"true\"><a href=\"/x\">H4</a></div><script>var H5;</script>"
                      "<style>.H6{}</style><template><p>H7</p></template><noscript>H8</noscript>"
                      "<input type=\"hidden\" name=\"k\" value=\"H9\"><dialog>H10</dialog>"
                      "<dialog open>Open dialog</dialog><p>Shown</p>"),
            "\t[] dialog ''\n\t\t[] StaticText 'Open dialog'\n\t[] StaticText 'Shown'");
}

TEST(AxTree, FocusedElementAndRoot) {
  html_document doc(page("T", "<input aria-label=\"Q\">"));
  form_state st(doc);
  const GumboNode* input = nullptr;
  for (int i = 0; i < doc.node_count(); ++i)
    if (has_tag(doc.node(i), GUMBO_TAG_INPUT)) input = doc.node(i);
  st.set_value(input, "typed");
  std::string t = strip_ids(render_ax_tree(build_ax_tree(doc, st, input), 0, 100).text);
  EXPECT_EQ(t, "[] RootWebArea 'T'\n\t[] textbox 'Q' focused: True required: False\n\t\t[] StaticText 'typed'");
}

// ---------------------------------------------------------------------------------------
// Printing: repr, the nameless rule, the StaticText dedup rule, the viewport

TEST(AxPrint, PythonRepr) {
  EXPECT_EQ(py_repr("plain"), "'plain'");
  EXPECT_EQ(py_repr("it's"), "\"it's\"");
  EXPECT_EQ(py_repr("a'b\"c"), "'a\\'b\"c'");
  EXPECT_EQ(py_repr("back\\slash"), "'back\\\\slash'");
  EXPECT_EQ(py_repr("l1\nl2\tx"), "'l1\\nl2\\tx'");
  EXPECT_EQ(py_repr("caf\xC3\xA9 \xE2\x80\x8B"), "'caf\xC3\xA9 \\u200b'");
  EXPECT_EQ(py_repr("nb\xC2\xA0sp"), "'nb\\xa0sp'");
  EXPECT_EQ(py_repr(std::string("\x01\xFF", 2)), "'\\x01\\xff'");
}

ax_node text_node(int id, const std::string& text) {
  ax_node n;
  n.id = id;
  n.role = "StaticText";
  n.name = text;
  return n;
}

TEST(AxPrint, StaticTextRepeatingOneOfThreeLinesBeforeIsDropped) {
  ax_node root;
  root.id = 1;
  root.role = "RootWebArea";
  root.name = "R";
  ax_node link;
  link.id = 2;
  link.role = "link";
  link.name = "Alpha beta";
  link.children.push_back(text_node(3, "Alpha beta"));  // repeats its parent line
  root.children.push_back(link);
  root.children.push_back(text_node(4, "Alpha"));   // in the link line, 2 kept lines up
  root.children.push_back(text_node(5, "one"));
  root.children.push_back(text_node(6, "two"));
  root.children.push_back(text_node(7, "three"));
  root.children.push_back(text_node(8, "beta"));    // the link is now 4 kept lines up
  root.children.push_back(text_node(9, "thre"));    // substring of 2 lines up
  ax_rendering r = render_ax_tree(root, 0, 100);
  EXPECT_EQ(r.text,
            "[1] RootWebArea 'R'\n\t[2] link 'Alpha beta'\n\t[5] StaticText 'one'\n"
            "\t[6] StaticText 'two'\n\t[7] StaticText 'three'\n\t[8] StaticText 'beta'");
  // Dropped repeats keep valid ids.
  EXPECT_NE(std::find(r.ids_in_view.begin(), r.ids_in_view.end(), 3), r.ids_in_view.end());
  EXPECT_NE(std::find(r.ids_in_view.begin(), r.ids_in_view.end(), 9), r.ids_in_view.end());
}

TEST(AxPrint, NamelessRule) {
  auto node = [](const std::string& role, const std::string& name) {
    ax_node n;
    n.role = role;
    n.name = name;
    return n;
  };
  for (const char* r : {"generic", "img", "list", "strong", "paragraph", "banner", "navigation",
                        "Section", "LabelText", "Legend", "listitem"})
    EXPECT_FALSE(ax_node_is_printed(node(r, ""))) << r;
  for (const char* r : {"main", "table", "row", "form", "contentinfo", "article", "button"})
    EXPECT_TRUE(ax_node_is_printed(node(r, ""))) << r;
  ax_node li = node("listitem", "");
  li.props.push_back({"selected", "True"});
  EXPECT_FALSE(ax_node_is_printed(li));
  ax_node g = node("generic", "");
  g.props.push_back({"expanded", "False"});
  EXPECT_TRUE(ax_node_is_printed(g));
  ax_node level_only = node("generic", "");
  level_only.props.push_back({"level", "2"});  // ignored properties do not count
  EXPECT_FALSE(ax_node_is_printed(level_only));
}

TEST(AxPrint, ViewportWindowKeepsAncestorsAndIds) {
  std::string body = "<main>";
  for (int i = 0; i < 30; ++i) body += "<p>Line " + std::to_string(i) + "</p>";
  body += "</main>";
  html_document doc(page("T", body));
  form_state st(doc);
  ax_node tree = build_ax_tree(doc, st, nullptr);
  // lines: root 0, main 1, "Line i" at 2 + i
  ax_rendering top = render_ax_tree(tree, 0, 10);
  EXPECT_EQ(top.total_lines, 32);
  EXPECT_NE(top.text.find("'Line 7'"), std::string::npos);
  EXPECT_EQ(top.text.find("'Line 8'"), std::string::npos);
  ax_rendering next = render_ax_tree(tree, 10, 10);
  EXPECT_EQ(next.text.find("'Line 7'"), std::string::npos);
  EXPECT_NE(next.text.find("'Line 8'"), std::string::npos);
  EXPECT_NE(next.text.find("'Line 17'"), std::string::npos);
  EXPECT_EQ(next.text.find("'Line 18'"), std::string::npos);
  EXPECT_EQ(next.text.substr(0, next.text.find('\n')), top.text.substr(0, top.text.find('\n')));
  EXPECT_NE(next.text.find("\t[" + std::to_string(id_of(top.text, "main ''")) + "] main ''"), std::string::npos);
  // Re-rendering the same page gives the same ids.
  ax_rendering again = render_ax_tree(build_ax_tree(doc, st, nullptr), 10, 10);
  EXPECT_EQ(again.text, next.text);
  EXPECT_EQ(id_of(render_ax_tree(tree, 0, 100).text, "'Line 9'"), id_of(next.text, "'Line 9'"));
}

// ---------------------------------------------------------------------------------------
// DOM text

TEST(DomText, InnerTextAndTextContent) {
  html_document doc(page("T", "<div id=a>Hello <b>big</b>\n  world<p>Para one</p><p>Para two</p>"
                              "line<br>break<script>skip()</script><span hidden>gone</span>"
                              "<table><tr><td>c1</td><td>c2</td></tr><tr><td>c3</td></tr></table>"
                              "<pre>  keep\n  this</pre><ul><li>i1</li><li>i2</li></ul></div>"));
  const GumboNode* a = doc.element_by_id("a");
  EXPECT_EQ(inner_text(a), "Hello big world\n\nPara one\n\nPara two\n\nline\nbreak\nc1\tc2\nc3\n  keep\n  this\ni1\ni2");
  std::string tc = text_content(a);
  EXPECT_NE(tc.find("skip()"), std::string::npos);
  EXPECT_NE(tc.find("gone"), std::string::npos);
  EXPECT_EQ(collapse_whitespace("  a \n\t b  "), "a b");
}

// ---------------------------------------------------------------------------------------
// CSS selectors

class CssSelect : public ::testing::Test {
 protected:
  CssSelect()
      : doc_(page("T", "<div id=\"main\" class=\"box big\"><p class=\"a\">one</p><p class=\"b\">two</p>"
                       "<span lang=\"en-US\" data-x=\"hello world\">three</span>"
                       "<ul><li>i1</li><li>i2</li><li>i3</li><li>i4</li></ul></div><p id=\"last\">four</p>"
                       "<template><p>tpl</p></template>")) {}

  // Texts of all matches in document order, joined by ','; "ERR" on a parse error.
  std::string all(const std::string& sel) {
    std::string err;
    auto s = css_selector_list::parse(sel, &err);
    if (!s) return "ERR";
    std::string out;
    for (const GumboNode* n : query_selector_all(doc_.document(), *s)) {
      if (!out.empty()) out.push_back(',');
      out.append(has_tag(n, GUMBO_TAG_UL) || has_tag(n, GUMBO_TAG_DIV) ? tag_name(n) : text_content(n));
    }
    return out;
  }
  std::string error(const std::string& sel) {
    std::string err;
    EXPECT_FALSE(css_selector_list::parse(sel, &err).has_value()) << sel;
    return err;
  }
  html_document doc_;
};

TEST_F(CssSelect, TypeIdClass) {
  EXPECT_EQ(all("p"), "one,two,four");
  EXPECT_EQ(all("P"), "one,two,four");
  EXPECT_EQ(all("#main"), "div");
  EXPECT_EQ(all("div#main.box.big"), "div");
  EXPECT_EQ(all(".box.small"), "");
  EXPECT_EQ(all(".a"), "one");
  EXPECT_EQ(all("*#last"), "four");
}

TEST_F(CssSelect, Attributes) {
  EXPECT_EQ(all("[data-x]"), "three");
  EXPECT_EQ(all("[data-x='hello world']"), "three");
  EXPECT_EQ(all("[data-x=\"hello\"]"), "");
  EXPECT_EQ(all("[data-x^=hel]"), "three");
  EXPECT_EQ(all("[data-x$=rld]"), "three");
  EXPECT_EQ(all("[data-x*='o w']"), "three");
  EXPECT_EQ(all("[data-x~=world]"), "three");
  EXPECT_EQ(all("[lang|=en]"), "three");
  EXPECT_EQ(all("[data-x='HELLO WORLD' i]"), "three");
  EXPECT_EQ(all("[data-x^='']"), "");
  EXPECT_EQ(all("p[class=a]"), "one");
}

TEST_F(CssSelect, Combinators) {
  EXPECT_EQ(all("div > p"), "one,two");
  EXPECT_EQ(all("div p"), "one,two");
  EXPECT_EQ(all("body > p"), "four");
  EXPECT_EQ(all("html p"), "one,two,four");  // not the template's
  EXPECT_EQ(all("p + p"), "two");
  EXPECT_EQ(all("p.a ~ ul"), "ul");
  EXPECT_EQ(all("#main li"), "i1,i2,i3,i4");
  EXPECT_EQ(all("div>ul>li"), "i1,i2,i3,i4");
  EXPECT_EQ(all("p.a, #last"), "one,four");
  EXPECT_EQ(all("#last, p.a"), "one,four");  // document order, not list order
}

TEST_F(CssSelect, PseudoClasses) {
  EXPECT_EQ(all("li:nth-child(2)"), "i2");
  EXPECT_EQ(all("li:nth-child(odd)"), "i1,i3");
  EXPECT_EQ(all("li:nth-child(even)"), "i2,i4");
  EXPECT_EQ(all("li:nth-child(2n+1)"), "i1,i3");
  EXPECT_EQ(all("li:nth-child(-n+2)"), "i1,i2");
  EXPECT_EQ(all("li:nth-child( 3n )"), "i3");
  EXPECT_EQ(all("li:nth-last-child(1)"), "i4");
  EXPECT_EQ(all("li:first-child"), "i1");
  EXPECT_EQ(all("li:last-child"), "i4");
  EXPECT_EQ(all("p:first-child"), "one");
  EXPECT_EQ(all("p:first-of-type"), "one,four");
  EXPECT_EQ(all("p:nth-of-type(2)"), "two");
  EXPECT_EQ(all("span:only-of-type"), "three");
  EXPECT_EQ(all("li:not(:first-child):not(:last-child)"), "i2,i3");
  EXPECT_EQ(all("div :not(li, ul)"), "one,two,three");
}

TEST_F(CssSelect, QuerySelectorReturnsFirstInDocumentOrder) {
  auto s = css_selector_list::parse("p");
  ASSERT_TRUE(s);
  EXPECT_EQ(text_content(query_selector(doc_.document(), *s)), "one");
  auto none = css_selector_list::parse("table");
  EXPECT_EQ(query_selector(doc_.document(), *none), nullptr);
  // An element scope searches only below it.
  auto li = css_selector_list::parse("li");
  EXPECT_EQ(query_selector_all(doc_.element_by_id("last"), *li).size(), 0u);
  EXPECT_EQ(query_selector_all(doc_.element_by_id("main"), *li).size(), 4u);
}

TEST_F(CssSelect, ErrorsNameWhatAndWhere) {
  EXPECT_NE(error("p::before").find("pseudo-elements"), std::string::npos);
  EXPECT_NE(error("a:hover").find("unsupported pseudo-class ':hover'"), std::string::npos);
  EXPECT_NE(error("[").find("position"), std::string::npos);
  EXPECT_NE(error("p >").find("expected a selector"), std::string::npos);
  EXPECT_EQ(error("   "), "empty selector");
  EXPECT_NE(error("a[b=").find("attribute value"), std::string::npos);
  EXPECT_NE(error(":nth-child(x)").find("an+b"), std::string::npos);
  EXPECT_NE(error("p, ").find("expected"), std::string::npos);
  EXPECT_NE(error("p $").find("unexpected '$'"), std::string::npos);
  EXPECT_NE(error("[a='x]").find("unterminated"), std::string::npos);
}

TEST(CssSelectEscapes, EscapedIdentifiers) {
  html_document doc(page("T", "<p id=\"a:b\">colon</p><p class=\"1x\">digit</p>"));
  auto s = css_selector_list::parse("#a\\:b");
  ASSERT_TRUE(s);
  EXPECT_EQ(text_content(query_selector(doc.document(), *s)), "colon");
  auto d = css_selector_list::parse(".\\31 x");
  ASSERT_TRUE(d);
  EXPECT_EQ(text_content(query_selector(doc.document(), *d)), "digit");
}

// ---------------------------------------------------------------------------------------
// Form submission (no network: the request that would be sent)

class FormSubmit : public ::testing::Test {
 protected:
  void load(const std::string& body) {
    doc_ = std::make_unique<html_document>(page("T", body));
    state_ = std::make_unique<form_state>(*doc_);
  }
  const GumboNode* el(const std::string& selector) {
    auto s = css_selector_list::parse(selector);
    EXPECT_TRUE(s.has_value()) << selector;
    return s ? query_selector(doc_->document(), *s) : nullptr;
  }
  http_request submit(const std::string& submitter = "") {
    std::string err;
    auto req = build_form_submission(*doc_, *state_, el("form"), submitter.empty() ? nullptr : el(submitter),
                                     "http://h/dir/page?x=1", &err);
    EXPECT_TRUE(req.has_value()) << err;
    return req.value_or(http_request{});
  }
  std::string error() {
    std::string err;
    EXPECT_FALSE(build_form_submission(*doc_, *state_, el("form"), nullptr, "http://h/p", &err).has_value());
    return err;
  }
  std::unique_ptr<html_document> doc_;
  std::unique_ptr<form_state> state_;
};

TEST_F(FormSubmit, GetReplacesTheActionQueryAndKeepsItsFragment) {
  load("<form action=\"../search?old=1#top\"><input name=q value=\"a b\"></form>");
  http_request r = submit();
  EXPECT_EQ(r.method, "GET");
  EXPECT_EQ(r.url, "http://h/search?q=a+b#top");
  EXPECT_EQ(r.referer, "http://h/dir/page?x=1");
  load("<form><input name=q value=v></form>");  // no action: the document URL
  EXPECT_EQ(submit().url, "http://h/dir/page?q=v");
}

TEST_F(FormSubmit, SubmitterOverridesAndEntries) {
  load("<form action=/a method=get><input name=q value=1>"
       "<button name=b value=x formaction=/other formmethod=post>B</button>"
       "<input type=image name=pos alt=Go><input type=submit name=s value=S></form>");
  http_request r = submit("button");
  EXPECT_EQ(r.method, "POST");
  EXPECT_EQ(r.url, "http://h/other");
  EXPECT_EQ(r.body, "q=1&b=x");
  EXPECT_EQ(submit("input[type=image]").url, "http://h/a?q=1&pos.x=0&pos.y=0");
  EXPECT_EQ(submit("input[type=submit]").url, "http://h/a?q=1&s=S");
  EXPECT_EQ(submit().url, "http://h/a?q=1");  // no submitter: no button entry
  EXPECT_EQ(default_button(*doc_, el("form")), el("button"));
}

TEST_F(FormSubmit, WhichControlsAreSuccessful) {
  load("<form action=/a><input name=on type=checkbox checked><input name=off type=checkbox>"
       "<input name=noname2><input value=unnamed><input name=d disabled value=1>"
       "<fieldset disabled><legend><input name=inlegend value=L></legend><input name=infs value=F></fieldset>"
       "<select name=s1><option>first</option><option>second</option></select>"
       "<select name=s2 multiple><option>m1</option></select>"
       "<select name=s3><option disabled>skip</option><option value=v>shown</option></select>"
       "<textarea name=t>\nline</textarea><input type=file name=f><input type=hidden name=_charset_>"
       "<datalist><input name=indatalist value=x></datalist></form>"
       "<input name=outside form=nope value=o><input name=linked form=f1 value=l>");
  EXPECT_EQ(submit().url, "http://h/a?on=on&noname2=&inlegend=L&s1=first&s3=v&t=line&f=&_charset_=UTF-8");
  load("<form id=f1 action=/a></form><input name=linked form=f1 value=l>");
  EXPECT_EQ(submit().url, "http://h/a?linked=l");
}

TEST_F(FormSubmit, EncodingsAndRefusals) {
  load("<form action=/a method=post enctype=text/plain><input name=a value=\"1 2\"></form>");
  EXPECT_EQ(submit().body, "a=1 2\r\n");
  EXPECT_EQ(submit().content_type, "text/plain");
  load("<form action=\"javascript:go()\"><input name=a></form>");
  EXPECT_NE(error().find("not an http(s) URL"), std::string::npos);
  load("<form method=dialog><input name=a></form>");
  EXPECT_NE(error().find("method=dialog"), std::string::npos);
}

TEST_F(FormSubmit, StateSettersAndReset) {
  load("<form><input type=radio name=r value=1 checked><input type=radio name=r value=2>"
       "<input name=t value=orig><select name=s><option>a</option><option selected>b</option></select></form>"
       "<input type=radio name=r value=3 checked>");
  const GumboNode* r2 = el("input[value='2']");
  state_->set_checked(r2, true);
  EXPECT_FALSE(state_->checked(el("input[value='1']")));
  EXPECT_TRUE(state_->checked(el("input[value='3']")));  // another form owner: another group
  state_->set_value(el("input[name=t]"), "changed");
  state_->choose_option(el("option"));
  EXPECT_EQ(submit().url, "http://h/dir/page?r=2&t=changed&s=a");
  state_->reset(el("form"));
  EXPECT_EQ(submit().url, "http://h/dir/page?r=1&t=orig&s=b");
}

// ---------------------------------------------------------------------------------------
// The browser over the loopback site

class Browser : public ::testing::Test {
 protected:
  Browser() : server_(site) {}
  std::string url(const std::string& p) { return server_.url(p); }
  std::string obs() { return b_.observe().text; }
  int64_t id(const std::string& needle) {
    int64_t i = id_of(obs(), needle);
    EXPECT_GE(i, 0) << "no line with " << needle << " in\n" << obs();
    return i;
  }
  void open(const std::string& p) {
    browser_result r = b_.go_to(url(p));
    ASSERT_TRUE(r.ok()) << r.error;
  }
  test_server server_;
  text_browser b_;
};

TEST_F(Browser, StartsOnABlankTab) {
  browser_observation o = b_.observe();
  EXPECT_EQ(o.text, "Tab 0 (current): \n\n[1] RootWebArea '' focused: True");
  EXPECT_EQ(o.url, "about:blank");
  EXPECT_EQ(o.tabs, std::vector<std::string>{""});
}

TEST_F(Browser, ObservationHeaderTreeAndUrl) {
  open("/dir/index.html");
  browser_observation o = b_.observe();
  EXPECT_EQ(o.url, url("/dir/index.html"));
  EXPECT_EQ(o.tabs, std::vector<std::string>{"Index"});
  EXPECT_EQ(o.text.substr(0, o.text.find("\n\n")), "Tab 0 (current): Index");
  EXPECT_NE(o.text.find("\n\n[1] RootWebArea 'Index' focused: True\n"), std::string::npos);
  EXPECT_NE(o.text.find("navigation 'Main'"), std::string::npos);
  EXPECT_NE(o.text.find("link 'Page two'"), std::string::npos);
  EXPECT_NE(o.text.find("heading 'Welcome'"), std::string::npos);
}

TEST_F(Browser, LinksResolveRelativeUrls) {
  open("/dir/index.html");
  ASSERT_TRUE(b_.click(id("link 'Page two'")).ok());
  EXPECT_EQ(b_.current_url(), url("/dir/page2.html"));
  EXPECT_EQ(b_.observe().tabs[0], "Page two");
  ASSERT_TRUE(b_.click(id("link 'Back home'")).ok());
  EXPECT_EQ(b_.current_url(), url("/dir/index.html"));
  ASSERT_TRUE(b_.click(id("link 'Up one'")).ok());
  EXPECT_EQ(b_.current_url(), url("/up.html"));
  open("/dir/index.html");
  ASSERT_TRUE(b_.click(id("link 'Query link'")).ok());
  EXPECT_EQ(b_.current_url(), url("/dir/index.html?q=1"));
  EXPECT_EQ(prop(b_, "#q"), "query is q=1");
  // The referer is the page the link was on.
  auto log = server_.log();
  EXPECT_EQ(log.back().referer, url("/dir/index.html"));
}

TEST_F(Browser, FragmentLinksStayOnThePage) {
  open("/dir/index.html");
  size_t requests = server_.log().size();
  ASSERT_TRUE(b_.click(id("link 'Jump'")).ok());
  EXPECT_EQ(b_.current_url(), url("/dir/index.html#sec"));
  EXPECT_EQ(server_.log().size(), requests);  // no fetch
}

TEST_F(Browser, BaseHrefIsRespected) {
  open("/base");
  ASSERT_TRUE(b_.click(id("link 'Based link'")).ok());
  EXPECT_EQ(b_.current_url(), url("/dir/page2.html"));
}

TEST_F(Browser, ScriptAndMailLinksDoNothingWithANote) {
  open("/dir/index.html");
  browser_result r = b_.click(id("link 'Script link'"));
  EXPECT_TRUE(r.ok());
  EXPECT_NE(r.note.find("JavaScript"), std::string::npos);
  r = b_.click(id("link 'Mail us'"));
  EXPECT_TRUE(r.ok());
  EXPECT_NE(r.note.find("mailto"), std::string::npos);
  EXPECT_EQ(b_.current_url(), url("/dir/index.html"));
}

TEST_F(Browser, BackAndForward) {
  browser_result r = b_.go_back();
  EXPECT_EQ(r.error, "cannot go back: this tab has no earlier page");
  open("/dir/index.html");
  ASSERT_TRUE(b_.click(id("link 'Page two'")).ok());
  ASSERT_TRUE(b_.go_back().ok());
  EXPECT_EQ(b_.current_url(), url("/dir/index.html"));
  ASSERT_TRUE(b_.go_back().ok());
  EXPECT_EQ(b_.current_url(), "about:blank");
  EXPECT_FALSE(b_.go_back().ok());
  ASSERT_TRUE(b_.go_forward().ok());
  ASSERT_TRUE(b_.go_forward().ok());
  EXPECT_EQ(b_.current_url(), url("/dir/page2.html"));
  r = b_.go_forward();
  EXPECT_EQ(r.error, "cannot go forward: there is no later page in this tab (go_forward works after go_back)");
  // A new page drops the forward entries.
  ASSERT_TRUE(b_.go_back().ok());
  open("/up.html");
  EXPECT_FALSE(b_.go_forward().ok());
}

TEST_F(Browser, HistoryRestoresTypedValues) {
  open("/form-get");
  ASSERT_TRUE(b_.type(id("textbox 'Query'"), "kept", false).ok());
  open("/up.html");
  ASSERT_TRUE(b_.go_back().ok());
  EXPECT_NE(obs().find("StaticText 'kept'"), std::string::npos);
}

TEST_F(Browser, FormGetWithTypedCheckedSelectedAndHiddenValues) {
  open("/form-get");
  ASSERT_TRUE(b_.type(id("textbox 'Query'"), "hello world", false).ok());
  EXPECT_EQ(b_.current_url(), url("/form-get"));  // flag 0: no submit
  ASSERT_TRUE(b_.click(id("checkbox 'Remember me'")).ok());
  ASSERT_TRUE(b_.click(id("option 'Gamma'")).ok());
  ASSERT_TRUE(b_.click(id("radio 'Choice two'")).ok());
  std::string o = obs();
  EXPECT_NE(o.find("checkbox 'Remember me' checked: true"), std::string::npos) << o;
  EXPECT_NE(o.find("radio 'Choice one' checked: false"), std::string::npos) << o;
  EXPECT_NE(o.find("radio 'Choice two' focused: True checked: true"), std::string::npos) << o;
  EXPECT_NE(o.find("option 'Gamma' selected: True"), std::string::npos) << o;
  EXPECT_NE(o.find("option 'Beta' selected: False"), std::string::npos) << o;
  ASSERT_TRUE(b_.click(id("button 'Submit form'")).ok());
  EXPECT_EQ(prop(b_, "#method"), "GET");
  EXPECT_EQ(prop(b_, "#query"), "q=hello+world&h=hv&s=c&c=yes&r=r2&t=init&ro=fixed&go=Go");
  EXPECT_EQ(b_.current_url(), url("/echo?q=hello+world&h=hv&s=c&c=yes&r=r2&t=init&ro=fixed&go=Go"));
}

TEST_F(Browser, FormPostWithEnterSubmission) {
  open("/form-post");
  ASSERT_TRUE(b_.type(id("combobox 'Sort'"), "alp", false).ok());  // prefix of Alpha
  ASSERT_TRUE(b_.type(id("textbox 'Notes'"), " more", false).ok());
  ASSERT_TRUE(b_.type(id("textbox 'Query'"), "q&a", true).ok());  // Enter submits
  EXPECT_EQ(prop(b_, "#method"), "POST");
  EXPECT_EQ(prop(b_, "#body"), "q=q%26a&h=hv&s=a&r=r1&t=init+more&ro=fixed&go=Go");
  EXPECT_EQ(prop(b_, "#ctype"), "application/x-www-form-urlencoded");
  EXPECT_EQ(b_.current_url(), url("/echo"));
}

TEST_F(Browser, ResetButtonAndNoJsButton) {
  open("/form-get");
  ASSERT_TRUE(b_.type(id("textbox 'Query'"), "temp", false).ok());
  browser_result r = b_.click(id("button 'Reset all'"));
  EXPECT_TRUE(r.ok());
  EXPECT_EQ(obs().find("StaticText 'temp'"), std::string::npos);
  r = b_.click(id("button 'Does nothing'"));
  EXPECT_TRUE(r.ok());
  EXPECT_NE(r.note.find("does nothing without JavaScript"), std::string::npos);
  EXPECT_EQ(b_.current_url(), url("/form-get"));
}

TEST_F(Browser, MultipartAndBlankTargetForms) {
  open("/multi");
  ASSERT_TRUE(b_.click(id("button 'Send'")).ok());
  EXPECT_NE(prop(b_, "#ctype").find("multipart/form-data; boundary="), std::string::npos);
  EXPECT_NE(server_.log().back().body.find("name=\"a\"\r\n\r\n1\r\n"), std::string::npos);
  open("/blank-target-form");
  ASSERT_TRUE(b_.click(id("button 'Open'")).ok());
  EXPECT_EQ(b_.tab_count(), 2);
  EXPECT_EQ(b_.current_tab(), 1);
  EXPECT_EQ(prop(b_, "#query"), "a=1");
}

TEST_F(Browser, MultipleSelectTogglesOptions) {
  open("/select-only");
  ASSERT_TRUE(b_.click(id("option 'x'")).ok());
  ASSERT_TRUE(b_.click(id("option 'y'")).ok());  // was selected: now off
  ASSERT_TRUE(b_.click(id("button 'Send'")).ok());
  EXPECT_EQ(prop(b_, "#query"), "m=x");
}

TEST_F(Browser, CookieLoginFlow) {
  open("/account");
  EXPECT_EQ(b_.current_url(), url("/login"));  // not logged in: redirected
  ASSERT_TRUE(b_.type(id("textbox 'Username'"), "alice", false).ok());
  ASSERT_TRUE(b_.type(id("textbox 'Password'"), "secret", false).ok());
  EXPECT_NE(obs().find("StaticText '\xE2\x80\xA2\xE2\x80\xA2\xE2\x80\xA2\xE2\x80\xA2\xE2\x80\xA2\xE2\x80\xA2'"),
            std::string::npos);
  ASSERT_TRUE(b_.click(id("button 'Log in'")).ok());
  EXPECT_EQ(b_.current_url(), url("/account"));  // POST -> Set-Cookie -> 302 -> GET
  EXPECT_NE(obs().find("heading 'Welcome alice'"), std::string::npos);
  ASSERT_EQ(b_.http().cookies().size(), 1u);
  open("/echo");
  EXPECT_EQ(prop(b_, "#cookie"), "session=abc123");  // sent on the next GET
  ASSERT_TRUE(b_.new_tab().ok());
  open("/account");  // tabs share the jar
  EXPECT_EQ(b_.current_url(), url("/account"));
}

TEST_F(Browser, RedirectsErrorsAndStatuses) {
  open("/redirect");
  EXPECT_EQ(b_.current_url(), url("/echo?from=redirect"));
  browser_result r = b_.go_to(url("/missing"));
  EXPECT_TRUE(r.ok());
  EXPECT_EQ(r.note, "the server answered HTTP 404 for " + url("/missing"));
  EXPECT_NE(obs().find("heading 'No such page'"), std::string::npos);
  r = b_.go_to(url("/loop"));
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(b_.current_url(), url("/missing"));  // unchanged on failure
  r = b_.go_to("ftp://example.com/x");
  EXPECT_EQ(r.error, "cannot open 'ftp://example.com/x': only http://, https://, file:// and about:blank URLs are supported");
  r = b_.go_to("  ");
  EXPECT_NE(r.error.find("goto needs a URL"), std::string::npos);
  ASSERT_TRUE(b_.go_to("/up.html").ok());  // a path is relative to the current page
  EXPECT_EQ(b_.current_url(), url("/up.html"));
  ASSERT_TRUE(b_.go_to("about:blank").ok());
  EXPECT_EQ(b_.current_url(), "about:blank");
}

TEST_F(Browser, FileUrls) {
  auto dir = test::temp_dir("browser-file");
  {
    std::ofstream f(dir / "page.html");
    f << page("Local file", "<a href=\"other.html\">Other</a>");
    std::ofstream g(dir / "other.html");
    g << page("Other file", "<p>here</p>");
  }
  ASSERT_TRUE(b_.go_to("file://" + (dir / "page.html").string()).ok());
  EXPECT_EQ(b_.observe().tabs[0], "Local file");
  ASSERT_TRUE(b_.click(id("link 'Other'")).ok());
  EXPECT_EQ(b_.observe().tabs[0], "Other file");
  browser_result r = b_.go_to("file://" + (dir / "missing.html").string());
  EXPECT_NE(r.error.find("no such file"), std::string::npos) << r.error;
}

TEST_F(Browser, EnterOnACheckboxSubmitsSpaceToggles) {
  open("/form-get");
  ASSERT_TRUE(b_.click(id("checkbox 'Remember me'")).ok());
  ASSERT_TRUE(b_.press("Space").ok());
  EXPECT_NE(obs().find("checkbox 'Remember me' focused: True checked: false"), std::string::npos) << obs();
  ASSERT_TRUE(b_.click(id("option 'Alpha'")).ok());
  EXPECT_NE(b_.press("Enter").note.find("does not submit a form from a combobox"), std::string::npos);
  ASSERT_TRUE(b_.click(id("checkbox 'Remember me'")).ok());
  ASSERT_TRUE(b_.press("Enter").ok());
  EXPECT_EQ(prop(b_, "#query"), "q=&h=hv&s=a&c=yes&r=r1&t=init&ro=fixed&go=Go");
}

TEST_F(Browser, NonHtmlContent) {
  open("/plain.txt");
  EXPECT_EQ(b_.observe().tabs[0], "plain.txt");
  EXPECT_NE(obs().find("StaticText 'plain <b>text</b>\\nline two'"), std::string::npos) << obs();
  open("/pic.png");
  EXPECT_NE(obs().find("img 'pic.png'"), std::string::npos);
  open("/bin");
  EXPECT_NE(obs().find("application/octet-stream content (4 bytes)"), std::string::npos);
  open("/latin1");
  EXPECT_EQ(b_.observe().tabs[0], "Caf\xC3\xA9");
  EXPECT_NE(obs().find("StaticText 'na\xC3\xAFve \xE2\x82\xAC'"), std::string::npos) << obs();
  open("/garbage");
  EXPECT_NE(obs().find("RootWebArea"), std::string::npos);
}

TEST_F(Browser, Tabs) {
  open("/dir/index.html");
  ASSERT_TRUE(b_.click(id("link 'New tab link'")).ok());
  EXPECT_EQ(b_.tab_count(), 2);
  EXPECT_EQ(b_.observe().text.substr(0, b_.observe().text.find("\n")), "Tab 0: Index | Tab 1 (current): Echo");
  ASSERT_TRUE(b_.new_tab().ok());
  browser_observation o = b_.observe();
  EXPECT_EQ(o.url, "about:blank");
  EXPECT_EQ(o.tabs, (std::vector<std::string>{"Index", "Echo", ""}));
  ASSERT_TRUE(b_.tab_focus(0).ok());
  EXPECT_EQ(b_.current_url(), url("/dir/index.html"));
  EXPECT_EQ(b_.tab_focus(3).error, "tab 3 does not exist (3 tabs open: use 0 to 2)");
  EXPECT_EQ(b_.tab_focus(-1).error, "tab -1 does not exist (3 tabs open: use 0 to 2)");
  ASSERT_TRUE(b_.close_tab().ok());  // closes tab 0; focus goes to the last tab
  EXPECT_EQ(b_.tab_count(), 2);
  EXPECT_EQ(b_.current_tab(), 1);
  EXPECT_EQ(b_.current_url(), "about:blank");
  ASSERT_TRUE(b_.close_tab().ok());
  ASSERT_TRUE(b_.close_tab().ok());  // the last tab: replaced by a blank one
  EXPECT_EQ(b_.tab_count(), 1);
  EXPECT_EQ(b_.current_url(), "about:blank");
  EXPECT_EQ(b_.tab_focus(1).error, "tab 1 does not exist (1 tab open: use tab_focus [0])");
  // Each tab has its own history.
  open("/up.html");
  ASSERT_TRUE(b_.new_tab().ok());
  EXPECT_FALSE(b_.go_back().ok());
}

TEST_F(Browser, ScrollMovesTheViewportAndKeepsIds) {
  text_browser_options small;
  small.viewport_height_px = 160;  // 10 lines of 16 px
  text_browser b(small);
  ASSERT_TRUE(b.go_to(url("/long")).ok());
  std::string first = b.observe().text;
  EXPECT_NE(first.find("'Line 7'"), std::string::npos);
  EXPECT_EQ(first.find("'Line 8'"), std::string::npos);
  EXPECT_EQ(b.scroll("up").note, "already at the top of the page");
  ASSERT_TRUE(b.scroll("down").ok());
  std::string second = b.observe().text;
  EXPECT_NE(second.find("RootWebArea 'Long'"), std::string::npos);
  EXPECT_NE(second.find("main ''"), std::string::npos);
  EXPECT_NE(second.find("'Line 8'"), std::string::npos);
  EXPECT_EQ(id_of(first, "main ''"), id_of(second, "main ''"));
  // An id above the viewport is refused with the direction to scroll.
  int64_t line0 = id_of(first, "'Line 0'");
  EXPECT_EQ(b.click(line0).error, "no matching element: [" + std::to_string(line0) +
                                      "] is on this page but not in the current viewport; scroll up to bring "
                                      "it into view, or use an id from the observation");
  for (int i = 0; i < 10; ++i) b.scroll("down");
  EXPECT_EQ(b.scroll("down").note, "already at the bottom of the page");
  std::string last = b.observe().text;
  int64_t bottom = id_of(last, "link 'Bottom link'");
  ASSERT_GE(bottom, 0) << last;
  ASSERT_TRUE(b.scroll("up").ok());
  EXPECT_EQ(b.click(bottom).error, "no matching element: [" + std::to_string(bottom) +
                                       "] is on this page but not in the current viewport; scroll down to "
                                       "bring it into view, or use an id from the observation");
  EXPECT_EQ(b.scroll("sideways").error, "cannot scroll 'sideways': the direction is up or down, e.g. scroll [down]");
  ASSERT_TRUE(b.press("PageDown").ok());
  // A fragment scrolls its anchor to the top of the viewport, on load and on the same page.
  ASSERT_TRUE(b.go_to(url("/long#l20")).ok());
  EXPECT_EQ(b.current_url(), url("/long#l20"));
  std::string anchored = b.observe().text;
  EXPECT_NE(anchored.find("'Line 20'"), std::string::npos) << anchored;
  EXPECT_EQ(anchored.find("'Line 19'"), std::string::npos) << anchored;
  ASSERT_TRUE(b.go_to(url("/long#l5")).ok());
  EXPECT_NE(b.observe().text.find("'Line 5'"), std::string::npos);
  EXPECT_EQ(b.observe().text.find("'Line 20'"), std::string::npos);
}

TEST_F(Browser, ActionErrorMessages) {
  open("/form-get");
  EXPECT_EQ(b_.click(4242).error,
            "no matching element: [4242] is not on the current page; ids are listed in the observation");
  EXPECT_EQ(b_.hover(4242).error,
            "no matching element: [4242] is not on the current page; ids are listed in the observation");
  EXPECT_EQ(b_.type(-5, "x", false).error,
            "no matching element: [-5] is not on the current page; ids are listed in the observation");
  int64_t link = id("link 'Plain link'");
  EXPECT_EQ(b_.type(link, "x", false).error,
            "cannot type into [" + std::to_string(link) +
                "]: it is a link, not a textbox; type into a textbox, searchbox or combobox from the observation");
  int64_t text = id("StaticText 'Just text'");
  EXPECT_EQ(b_.type(text, "x", false).error,
            "cannot type into [" + std::to_string(text) +
                "]: it is text (StaticText), not a textbox; type into a textbox, searchbox or combobox from the observation");
  EXPECT_EQ(b_.clear(link).error, "cannot clear [" + std::to_string(link) + "]: it is a link, not a textbox");
  int64_t combo = id("combobox 'Sort'");
  EXPECT_EQ(b_.clear(combo).error,
            "cannot clear [" + std::to_string(combo) + "]: it is a combobox; click one of its options instead");
  EXPECT_EQ(b_.type(combo, "Zeta", false).error,
            "cannot select 'Zeta' in [" + std::to_string(combo) +
                "]: no option matches; its options are 'Alpha', 'Beta', 'Gamma'");
  int64_t dis = id("textbox 'Disabled field'");
  EXPECT_EQ(b_.type(dis, "x", false).error, "cannot type into [" + std::to_string(dis) + "]: the textbox is disabled");
  EXPECT_EQ(b_.click(dis).error, "cannot click [" + std::to_string(dis) + "]: it is disabled");
  int64_t ro = id("textbox 'Read only field'");
  EXPECT_EQ(b_.type(ro, "x", false).error, "cannot type into [" + std::to_string(ro) + "]: the textbox is read-only");
  int64_t rich = id("textbox 'Rich editor'");
  EXPECT_EQ(b_.type(rich, "x", false).error,
            "cannot type into [" + std::to_string(rich) +
                "]: this textbox is not a form field but a widget that needs JavaScript, which the text "
                "browser does not run");
  EXPECT_EQ(b_.press("").error, "press needs a key, e.g. press [Enter] or press [Control+a]");
  browser_result r = b_.press("Tab");
  EXPECT_TRUE(r.ok());
  EXPECT_EQ(r.note, "pressed Tab: it has no effect in the text browser");
  r = b_.click(text);
  EXPECT_TRUE(r.ok());
  EXPECT_NE(r.note.find("not a link, button or form control"), std::string::npos);
  EXPECT_TRUE(b_.hover(link).ok());
  // Nameless structural nodes have no visible id: refused like unknown ids.
  const html_document& doc = b_.document();
  int64_t body = ax_id(doc, doc.body());
  EXPECT_NE(b_.click(body).error.find("is not on the current page"), std::string::npos);
}

TEST_F(Browser, KeyboardEditing) {
  open("/form-get");
  int64_t q = id("textbox 'Query'");
  ASSERT_TRUE(b_.type(q, "abc", false).ok());
  ASSERT_TRUE(b_.type(q, "def", false).ok());  // appends
  EXPECT_NE(obs().find("StaticText 'abcdef'"), std::string::npos);
  EXPECT_NE(obs().find("textbox 'Query' focused: True required: False"), std::string::npos);
  EXPECT_EQ(obs().find("RootWebArea 'Form' focused: True"), std::string::npos);
  ASSERT_TRUE(b_.press("Backspace").ok());
  EXPECT_NE(obs().find("StaticText 'abcde'"), std::string::npos);
  browser_result r = b_.press("Meta+a");
  EXPECT_EQ(r.note, "selected all text in [" + std::to_string(q) + "]; the next type replaces it");
  ASSERT_TRUE(b_.type(q, "new", false).ok());
  EXPECT_NE(obs().find("StaticText 'new'"), std::string::npos);
  EXPECT_EQ(obs().find("abcde"), std::string::npos);
  ASSERT_TRUE(b_.press("Control+A").ok());
  ASSERT_TRUE(b_.press("Delete").ok());
  EXPECT_EQ(obs().find("StaticText 'new'"), std::string::npos);
  ASSERT_TRUE(b_.type(q, "zz", false).ok());
  ASSERT_TRUE(b_.clear(q).ok());
  EXPECT_EQ(obs().find("StaticText 'zz'"), std::string::npos);
  ASSERT_TRUE(b_.type(q, "enter test", false).ok());
  ASSERT_TRUE(b_.press("Enter").ok());  // submits the focused field's form
  EXPECT_NE(prop(b_, "#query").find("q=enter+test"), std::string::npos);
  r = b_.press("Enter");
  EXPECT_NE(r.note.find("no form field has focus"), std::string::npos);
}

TEST_F(Browser, TextareaEnterTypesANewline) {
  open("/form-get");
  int64_t t = id("textbox 'Notes'");
  ASSERT_TRUE(b_.type(t, "x", true).ok());
  EXPECT_EQ(b_.current_url(), url("/form-get"));
  EXPECT_NE(obs().find("StaticText 'initx\\n'"), std::string::npos) << obs();
}

TEST_F(Browser, LabelClickActsOnItsControl) {
  ASSERT_TRUE(b_.go_to(url("/form-get")).ok());
  html_document const& doc = b_.document();
  const GumboNode* label = nullptr;
  for (int i = 0; i < doc.node_count(); ++i)
    if (has_tag(doc.node(i), GUMBO_TAG_LABEL) && text_content(doc.node(i)).find("Remember") != std::string::npos)
      label = doc.node(i);
  ASSERT_NE(label, nullptr);
  std::string err;
  ASSERT_TRUE(b_.click_selector("label:nth-of-type(3)", &err)) << err;  // the checkbox's label
  EXPECT_NE(obs().find("checkbox 'Remember me' focused: True checked: true"), std::string::npos) << obs();
  EXPECT_FALSE(b_.click_selector("#nope", &err));
  EXPECT_EQ(err, "no element matches the selector '#nope' on " + url("/form-get"));
}

TEST_F(Browser, QuerySelectorPropertiesForTheEvaluators) {
  open("/form-get");
  ASSERT_TRUE(b_.type(id("textbox 'Query'"), "typed value", false).ok());
  std::string err;
  EXPECT_EQ(b_.query_selector_property("#q", "value", &err).value_or("?"), "typed value");
  EXPECT_EQ(b_.query_selector_property("select", "value", &err).value_or("?"), "b");
  EXPECT_EQ(b_.query_selector_property("textarea", "value", &err).value_or("?"), "init");
  EXPECT_EQ(b_.query_selector_property("input[name=c]", "value", &err).value_or("?"), "yes");
  EXPECT_EQ(b_.query_selector_property("p", "value", &err).value_or("?"), "");
  EXPECT_EQ(b_.query_selector_property("form", "outerText", &err).value_or("?").substr(0, 5), "Query");
  EXPECT_EQ(b_.query_selector_property("p", "innerText", &err).value_or("?"), "Just text");
  EXPECT_EQ(b_.query_selector_property("label[for=s]", "textContent", &err).value_or("?"), "Sort");
  EXPECT_FALSE(b_.query_selector_property("#none", "outerText", &err).has_value());
  EXPECT_EQ(err, "no element matches the selector '#none' on " + url("/form-get"));
  EXPECT_FALSE(b_.query_selector_property("p::after", "outerText", &err).has_value());
  EXPECT_NE(err.find("invalid CSS selector"), std::string::npos);
  EXPECT_FALSE(b_.query_selector_property("p", "innerHTML", &err).has_value());
  EXPECT_NE(err.find("unsupported property 'innerHTML'"), std::string::npos);
  EXPECT_NE(b_.page_html().find("<form action=\"/echo\" method=\"get\""), std::string::npos);
}

TEST_F(Browser, ProbeForProgramHtml) {
  open("/form-get");
  text_browser_probe probe(b_);
  EXPECT_EQ(probe.current_url(), url("/form-get"));
  EXPECT_EQ(probe.eval_locator("document.querySelector('label[for=\"q\"]').outerText").value_or("?"), "Query");
  EXPECT_EQ(probe.eval_locator("document.querySelector(\"#q\").value;").value_or("?"), "");
  EXPECT_NE(probe.eval_locator("").value_or("").find("<title>Form</title>"), std::string::npos);
  EXPECT_NE(probe.eval_locator("document.body.innerText").value_or("").find("Just text"), std::string::npos);
  EXPECT_FALSE(probe.eval_locator("document.querySelector('#nothing').outerText").has_value());
  EXPECT_FALSE(probe.eval_locator("[...document.querySelectorAll('p')].length").has_value());
  std::string err;
  EXPECT_TRUE(probe.run_prep_action("document.querySelector('input[name=\"c\"]').click();", &err)) << err;
  EXPECT_EQ(probe.eval_locator("document.querySelector('input[name=c]').value").value_or("?"), "yes");
  EXPECT_NE(obs().find("checkbox 'Remember me' focused: True checked: true"), std::string::npos) << obs();
  EXPECT_FALSE(probe.run_prep_action("window.scrollTo(0, 0)", &err));
  EXPECT_NE(err.find("runs no JavaScript"), std::string::npos);
  EXPECT_TRUE(probe.navigate(url("/up.html"), &err));
  EXPECT_EQ(probe.current_url(), url("/up.html"));
  EXPECT_FALSE(probe.navigate(url("/loop"), &err));
  EXPECT_NE(err.find("redirects"), std::string::npos);
}

TEST_F(Browser, ParsedActionsRunThroughApplyAction) {
  open("/dir/index.html");
  int64_t link = id("link 'Page two'");
  action_parse_result p = parse_action("click [" + std::to_string(link) + "]");
  ASSERT_TRUE(p.ok()) << p.error;
  ASSERT_TRUE(apply_action(b_, p.act).ok());
  EXPECT_EQ(b_.current_url(), url("/dir/page2.html"));
  ASSERT_TRUE(apply_action(b_, parse_action("go_back").act).ok());
  ASSERT_TRUE(apply_action(b_, parse_action("scroll [down]").act).ok());
  ASSERT_TRUE(apply_action(b_, parse_action("new_tab").act).ok());
  ASSERT_TRUE(apply_action(b_, parse_action("goto [" + url("/form-get") + "]").act).ok());
  int64_t q = id("textbox 'Query'");
  ASSERT_TRUE(apply_action(b_, parse_action("type [" + std::to_string(q) + "] [via parser] [1]").act).ok());
  EXPECT_NE(prop(b_, "#query").find("q=via+parser"), std::string::npos);
  ASSERT_TRUE(apply_action(b_, parse_action("tab_focus [0]").act).ok());
  EXPECT_EQ(b_.current_url(), url("/dir/index.html"));
  ASSERT_TRUE(apply_action(b_, parse_action("stop [done]").act).ok());
  EXPECT_FALSE(apply_action(b_, action{}).ok());
  EXPECT_EQ(apply_action(b_, parse_action("tab_focus [7]").act).error, "tab 7 does not exist (2 tabs open: use 0 to 1)");
}

// ---------------------------------------------------------------------------------------
// Odd HTML never crashes

void exercise(const std::string& html) {
  html_document doc(html);
  form_state st(doc);
  ax_node tree = build_ax_tree(doc, st, nullptr);
  ax_rendering r = render_ax_tree(tree, 0, 128);
  EXPECT_EQ(r.text.rfind("[1] RootWebArea", 0), 0u);
  (void)inner_text(doc.document());
  (void)text_content(doc.document());
  auto all = css_selector_list::parse("*");
  (void)query_selector_all(doc.document(), *all);
}

TEST(BrowserOddHtml, EmptyAndBroken) {
  exercise("");
  exercise("<");
  exercise("<html");
  exercise("<a href=x><b><i>unclosed <p>para <table><tr><td>cell <ul><li>x");
  exercise("</div></div></p><p>stray end tags</span>");
  exercise("<select><option>no close<option>two</select><textarea>unclosed");
  exercise("<input type=checkbox><input type=radio name=><form><form><input></form>");
  exercise(std::string("nul\0bytes<p>\0</p>", 17));
  exercise("<!-- unterminated comment");
  exercise("<svg><foreignObject><p>inside svg</p></foreignObject></svg><math><mi>x</mi></math>");
  exercise("<my-widget role=button aria-label=\"Custom\">x</my-widget><dialog open>d</dialog>");
}

TEST(BrowserOddHtml, BinaryGarbageAndNonUtf8) {
  std::string g;
  for (int i = 0; i < 20000; ++i) g += static_cast<char>((i * 2654435761u) >> 13);
  exercise(g);
  exercise("<title>\xFF\xFE bad</title><p>\xC3\x28 \xE2\x82 \xF0\x9F</p>");
  html_document doc(page("T", "<p>caf\xE9</p>"));  // latin-1 byte in a UTF-8 page
  form_state st(doc);
  EXPECT_NE(render_ax_tree(build_ax_tree(doc, st, nullptr), 0, 10).text.find("StaticText 'caf"), std::string::npos);
  EXPECT_EQ(decode_to_utf8("caf\xE9", "text/html; charset=\"iso-8859-1\""), "caf\xC3\xA9");
  EXPECT_EQ(decode_to_utf8("caf\xE9", "text/html; charset=utf-8"), "caf\xE9");
}

TEST(BrowserOddHtml, HugeAndDeepPages) {
  std::string wide;
  for (int i = 0; i < 40000; ++i) wide += "<p>Paragraph " + std::to_string(i) + " <a href=\"/l" + std::to_string(i) + "\">link</a></p>";
  ASSERT_GT(wide.size(), 1u << 20);
  auto start = std::chrono::steady_clock::now();
  exercise(wide);
  std::printf("[ odd html ] 1.5 MB page: %lld ms\n", static_cast<long long>(std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start).count()));

  std::string deep;
  for (int i = 0; i < 3000; ++i) deep += "<div><span>";
  deep += "bottom text";
  exercise(deep);  // deeper than kMaxAxDepth: the tail is left out, nothing overflows
}

TEST(BrowserOddHtml, BrowserSurvivesOddPages) {
  test_server server([](const test_request& r) {
    test_response out;
    if (r.path == "/empty") out.body = "";
    else if (r.path == "/nul") out.body = std::string("<p>a\0b</p>", 10);
    else out.body = "<p>Unclosed<p><a href='/x'>link";
    return out;
  });
  text_browser b;
  for (const char* p : {"/empty", "/nul", "/unclosed"}) {
    ASSERT_TRUE(b.go_to(server.url(p)).ok()) << p;
    EXPECT_NE(b.observe().text.find("RootWebArea"), std::string::npos);
  }
  EXPECT_NE(b.observe().text.find("link 'link'"), std::string::npos) << b.observe().text;
}

}  // namespace
}  // namespace kvarena
