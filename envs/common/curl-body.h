// curl-body.h: what every libcurl caller in envs shares: the one global init, and a body
// sink that stops the transfer (CURLE_WRITE_ERROR) once a response would pass its byte cap.
// Used by the text browser's fetch (browser/text/http-fetch.cpp) and the evaluator's HTTP calls
// (common/http-call.cpp).
#pragma once
#include <curl/curl.h>

#include <cstddef>
#include <mutex>
#include <string>

namespace kvarena {

inline void curl_init_once() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

// CURLOPT_WRITEDATA of curl_append_capped: the body so far and its cap; overflow says why a
// transfer that ended in CURLE_WRITE_ERROR stopped.
struct curl_body_sink {
  std::string* body;
  size_t limit;
  bool overflow = false;
};

// CURLOPT_WRITEFUNCTION: appends to sink->body unless that would pass sink->limit.
inline size_t curl_append_capped(char* data, size_t size, size_t count, void* user) {
  auto* sink = static_cast<curl_body_sink*>(user);
  const size_t n = size * count;
  if (sink->body->size() + n > sink->limit) {
    sink->overflow = true;
    return 0;  // libcurl stops with CURLE_WRITE_ERROR
  }
  sink->body->append(data, n);
  return n;
}

}  // namespace kvarena
