// http-message.h: the plain request/response structs that site handlers see, and the URL
// helpers they need (percent-decoding, query/form/cookie parsing, encoding for links).
// No Boost here on purpose: only http-server.cpp includes Beast; everything else works on
// these structs, so handlers compile fast and can be unit-tested without sockets.
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace kvarena::sites {

// Ordered name/value pairs (query string, form body, cookies). Names may repeat; get()
// returns the first occurrence, as browsers and most frameworks do.
class param_list {
 public:
  void add(std::string name, std::string value) { items_.emplace_back(std::move(name), std::move(value)); }
  bool has(std::string_view name) const;
  std::string get(std::string_view name, std::string_view fallback = "") const;
  std::vector<std::string> get_all(std::string_view name) const;
  const std::vector<std::pair<std::string, std::string>>& items() const { return items_; }
  bool empty() const { return items_.empty(); }

 private:
  std::vector<std::pair<std::string, std::string>> items_;
};

class http_body_stream;  // http-stream.h

// Captures of a route pattern such as /item/{id} (already percent-decoded).
using path_params = std::map<std::string, std::string, std::less<>>;

struct http_request {
  std::string method;   // "GET", "POST", ... (HEAD arrives as GET; the server drops the body)
  std::string target;   // request-target exactly as received: "/main/classifieds/search?q=bike"
  std::string path;     // decoded path without the query: "/main/classifieds/search"
  param_list query;     // decoded query parameters
  param_list form;      // decoded application/x-www-form-urlencoded body (empty otherwise)
  param_list cookies;   // from the Cookie header(s)
  std::map<std::string, std::string, std::less<>> headers;  // lowercase names; repeats joined by ", "
  std::string body;     // raw body (already limited by the server)

  std::string header(std::string_view lowercase_name) const;
};

struct http_response {
  int status = 200;
  std::string content_type = "text/html; charset=utf-8";
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;  // extra headers; Set-Cookie may repeat
  // Set: the response comes later from another thread (http-stream.h); the fields above
  // are then ignored.
  std::shared_ptr<http_body_stream> stream;

  static http_response html(std::string body, int status = 200);
  static http_response json(std::string body, int status = 200);
  static http_response text(std::string body, int status = 200);
  // 303 See Other by default: after a POST the browser follows with a GET.
  static http_response redirect(std::string location, int status = 303);
  // A short HTML page "<status> <reason>" with one escaped sentence saying what to do.
  static http_response error(int status, std::string_view message);
  // {"error": {"code": status, "message": ...}} (the env API's error shape).
  static http_response json_error(int status, std::string_view message);

  // HttpOnly, SameSite=Lax. max_age_s: -1 session cookie, 0 delete now.
  void set_cookie(std::string_view name, std::string_view value, std::string_view path, int max_age_s = -1);
  void add_header(std::string name, std::string value) { headers.emplace_back(std::move(name), std::move(value)); }
};

// "Not Found" for 404 and so on; "Unknown" for codes it does not know.
std::string_view status_reason(int status);

// Percent-decoding. plus_as_space: '+' means ' ' (query strings and form bodies).
// nullopt on a malformed escape ("%zz", a truncated "%4").
std::optional<std::string> percent_decode(std::string_view s, bool plus_as_space);
// Percent-encoding of a query component / form value (RFC 3986 unreserved kept);
// space_as_plus: ' ' -> '+' as browsers submit forms (the sites' canonical query spelling).
std::string url_encode(std::string_view s, bool space_as_plus = false);
// "a=1&b=x%20y" -> pairs; false on a malformed escape.
bool parse_urlencoded(std::string_view s, param_list& out);
// "a=b; c=d" -> pairs (values kept verbatim, surrounding quotes stripped).
void parse_cookie_header(std::string_view s, param_list& out);

// Splits an origin-form request-target into its decoded path and query. Rejects (returns
// an error message) what no site should ever see: not starting with '/', malformed
// escapes, "." or ".." segments (also when encoded as %2e), encoded '/' or '\' inside a
// segment, NUL and other control characters. The returned path never contains "//".
struct parsed_target {
  std::string path;
  param_list query;
};
std::optional<std::string> parse_target(std::string_view target, parsed_target& out);

// Splits a decoded path into its segments: "/a/b/" -> {"a", "b"}.
std::vector<std::string_view> split_path(std::string_view path);

}  // namespace kvarena::sites
