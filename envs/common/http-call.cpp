// http-call.cpp: see http-call.h.
#include "common/http-call.h"

#include <curl/curl.h>

#include <mutex>

namespace kvarena {
namespace {

size_t append_body(char* data, size_t size, size_t n, void* out) {
  static_cast<std::string*>(out)->append(data, size * n);
  return size * n;
}

void init_curl_once() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

}  // namespace

http_call_response http_call(const http_call_request& req) {
  init_curl_once();
  http_call_response res;
  CURL* curl = curl_easy_init();
  if (!curl) {
    res.error = "libcurl could not start a request to " + req.url;
    return res;
  }
  curl_slist* headers = nullptr;
  for (const auto& [name, value] : req.headers) headers = curl_slist_append(headers, (name + ": " + value).c_str());
  char curl_error[CURL_ERROR_SIZE] = {0};
  curl_easy_setopt(curl, CURLOPT_URL, req.url.c_str());
  curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, append_body);
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, &res.body);
  curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, curl_error);
  curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, req.timeout_ms);
  curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS, 10000L);
  curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(curl, CURLOPT_FOLLOWLOCATION, 1L);
  curl_easy_setopt(curl, CURLOPT_MAXREDIRS, 5L);
  if (req.method == "POST") {
    curl_easy_setopt(curl, CURLOPT_POST, 1L);
    curl_easy_setopt(curl, CURLOPT_POSTFIELDS, req.body.c_str());
    curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE, static_cast<long>(req.body.size()));
  }
  CURLcode rc = curl_easy_perform(curl);
  if (rc == CURLE_OK) {
    res.ok = true;
    curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &res.status);
  } else {
    res.error = "cannot reach " + req.url + ": " + (curl_error[0] ? curl_error : curl_easy_strerror(rc));
  }
  curl_slist_free_all(headers);
  curl_easy_cleanup(curl);
  return res;
}

}  // namespace kvarena
