// test-browser-server.h: the loopback side of the browser tests (test-browser-*.cpp): a
// tiny HTTP/1.1 server on 127.0.0.1 (Boost.Beast, port 0), the test site most tests
// browse, and the `Browser` fixture, a text_browser over that site.
#pragma once
#include <gtest/gtest.h>

#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include <atomic>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "browser/text/text-browser.h"
#include "browser/common/url-util.h"
#include "test-browser-util.h"

namespace kvarena::browser_test {

namespace beast = boost::beast;
namespace bhttp = boost::beast::http;
using tcp = boost::asio::ip::tcp;

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

inline test_response redirect(const std::string& location, int status = 302) {
  test_response r;
  r.status = status;
  r.headers.push_back({"Location", location});
  return r;
}

inline std::string form_page(const std::string& method) {
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
inline test_response site(const test_request& r) {
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

inline std::string prop(text_browser& b, const std::string& selector, const std::string& property = "textContent") {
  std::string err;
  return b.query_selector_property(selector, property, &err).value_or("<" + err + ">");
}

// The browser over the loopback site.
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

}  // namespace kvarena::browser_test
