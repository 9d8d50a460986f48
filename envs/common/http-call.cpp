// http-call.cpp: see http-call.h.
#include "common/http-call.h"
#include "common/curl-body.h"
#include "common/url-policy.h"

#include <curl/curl.h>

#include <cctype>
#include <string>

namespace kvarena {

namespace {

// CURLOPT_HEADERFUNCTION: keeps the Retry-After header's value (of the last response, after
// redirects). Header names are case-insensitive.
size_t keep_retry_after(char* data, size_t size, size_t count, void* user) {
  const size_t n = size * count;
  std::string line(data, n);
  static constexpr char k_name[] = "retry-after:";
  if (line.size() > sizeof k_name - 1) {
    bool match = true;
    for (size_t i = 0; i + 1 < sizeof k_name && match; ++i)
      match = static_cast<char>(std::tolower(static_cast<unsigned char>(line[i]))) == k_name[i];
    if (match) {
      std::string v = line.substr(sizeof k_name - 1);
      while (!v.empty() && std::isspace(static_cast<unsigned char>(v.front()))) v.erase(v.begin());
      while (!v.empty() && std::isspace(static_cast<unsigned char>(v.back()))) v.pop_back();
      *static_cast<std::string*>(user) = v;
    }
  }
  return n;
}

}  // namespace

http_call_response http_call(const http_call_request& req) {
  curl_init_once();
  http_call_response res;
  if (std::string why = refused_url_reason(req.url, false); !why.empty()) {
    res.error = why;
    return res;
  }
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
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, curl_append_capped);
  curl_body_sink sink{&res.body, req.max_body_bytes};
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, &sink);
  curl_easy_setopt(curl, CURLOPT_HEADERFUNCTION, keep_retry_after);
  curl_easy_setopt(curl, CURLOPT_HEADERDATA, &res.retry_after);
  curl_easy_setopt(curl, CURLOPT_PROTOCOLS_STR, curl_protocols(false));
  curl_easy_setopt(curl, CURLOPT_REDIR_PROTOCOLS_STR, curl_protocols(false));
  curl_easy_setopt(curl, CURLOPT_MAXFILESIZE_LARGE, static_cast<curl_off_t>(req.max_body_bytes));
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
  } else if (sink.overflow || rc == CURLE_FILESIZE_EXCEEDED) {
    res.body.clear();
    res.error = "the answer of " + req.url + " is larger than the " + std::to_string(req.max_body_bytes) +
                "-byte limit; it was not read";
  } else {
    res.body.clear();
    res.error = "cannot reach " + req.url + ": " + (curl_error[0] ? curl_error : curl_easy_strerror(rc));
  }
  curl_slist_free_all(headers);
  curl_easy_cleanup(curl);
  return res;
}

}  // namespace kvarena
