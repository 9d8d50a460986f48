// http-call.h: one HTTP request with chosen headers over libcurl, for the evaluators'
// calls to APIs (a site's REST API in the func: helpers, an OpenAI-compatible judge). Not
// the browser's client (browser/text/http-fetch.h keeps cookies and follows a page's links);
// this one sends exactly the headers given, keeps nothing between calls, and is
// thread-safe (one easy handle per call). http:// and https:// only (redirects too), and
// the answer's body is capped at max_body_bytes: URLs come from task files and pages.
#pragma once
#include <cstddef>
#include <string>
#include <utility>
#include <vector>

namespace kvarena {

struct http_call_request {
  std::string method = "GET";  // GET or POST
  std::string url;
  std::vector<std::pair<std::string, std::string>> headers;  // ("Authorization", "Bearer x")
  std::string body;                                          // POST only
  long timeout_ms = 60000;
  size_t max_body_bytes = 16u << 20;  // a larger answer fails (ok = false, error says so)
};

struct http_call_response {
  bool ok = false;     // false: no answer (see error); true for any HTTP status
  std::string error;   // "cannot reach http://...: Connection refused"
  long status = 0;
  std::string body;
  std::string retry_after;  // the answer's Retry-After header ("" when none)
};

// Never throws for network problems (see ok / error).
http_call_response http_call(const http_call_request& req);

}  // namespace kvarena
