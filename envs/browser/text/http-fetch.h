// http-fetch.h: HTTP for the text browser over libcurl: GET and POST, redirects followed
// (the final URL recorded), connect and total timeouts, a response size limit, and a cookie
// jar that lives as long as the http_client (libcurl's in-memory cookie engine on one easy
// handle kept per client). http(s) only unless allow_file_urls (common/url-policy.h). Transport failures come back as messages that say what to do;
// HTTP error statuses (404, 500) are not failures: the page is returned with its status.
// Not thread-safe: one http_client serves one browser, used from one thread at a time.
#pragma once
#include <cstddef>
#include <string>
#include <vector>

namespace kvarena {

struct http_options {
  long connect_timeout_ms = 5000;
  long total_timeout_ms = 20000;
  size_t max_body_bytes = 8u << 20;  // larger responses fail with a message
  int max_redirects = 10;
  std::string user_agent = "kvarena-text-browser/0.1";
  bool allow_file_urls = false;  // file:// too (--allow-file-urls); else http(s) only (url-policy.h)
};

struct http_request {
  std::string method = "GET";  // "GET" or "POST"
  std::string url;
  std::string body;            // POST only
  std::string content_type = "application/x-www-form-urlencoded";  // POST only
  std::string referer;         // sent when not empty
};

struct http_response {
  bool ok = false;         // false: transport failure, see error; true even for 404/500
  std::string error;       // what went wrong and what to do, when !ok
  long status = 0;         // HTTP status of the final response (200 for file://)
  std::string final_url;   // after redirects
  std::string content_type;  // as sent, e.g. "text/html; charset=utf-8"; "" when absent
  std::string body;
};

class http_client {
 public:
  explicit http_client(http_options options = {});
  ~http_client();
  http_client(const http_client&) = delete;
  http_client& operator=(const http_client&) = delete;

  // Never throws for network problems; see http_response::ok / error.
  http_response fetch(const http_request& request);

  // The cookie jar in Netscape cookie-file format, one cookie a line (for tests and for
  // saving a logged-in state), and adding one ("Set-Cookie: ..." or a Netscape line).
  std::vector<std::string> cookies() const;
  void add_cookie(const std::string& line);
  void clear_cookies();

  const http_options& options() const { return options_; }

 private:
  http_options options_;
  void* curl_;  // CURL*, kept for the cookie jar and connection reuse
};

}  // namespace kvarena
