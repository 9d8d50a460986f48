// http-fetch.cpp: the libcurl side of the text browser. One easy handle per http_client
// holds the cookie jar and the live connections for the browser's lifetime.
#include "http-fetch.h"

#include <curl/curl.h>

#include <stdexcept>

#include "common/curl-body.h"
#include "common/url-policy.h"
#include "browser/common/url-util.h"

namespace kvarena {
namespace {

std::string host_of(const std::string& url) {
  url_parts u = parse_url(url);
  return u.has_authority ? u.authority : url;
}

std::string explain_failure(CURLcode rc, const http_request& req, const http_options& opt,
                            const char* detail, bool overflow) {
  const std::string& url = req.url;
  std::string why = detail && *detail ? detail : curl_easy_strerror(rc);
  switch (rc) {
    case CURLE_COULDNT_CONNECT:
      return "could not connect to " + host_of(url) + " while fetching " + url + " (" + why +
             "): is the site running? Check the URL and the sites map";
    case CURLE_OPERATION_TIMEDOUT:
      return "timed out fetching " + url + " (connect limit " +
             std::to_string(opt.connect_timeout_ms) + " ms, total limit " +
             std::to_string(opt.total_timeout_ms) +
             " ms): the site is slow or not answering; retry, or raise the timeouts";
    case CURLE_COULDNT_RESOLVE_HOST:
      return "could not resolve the host '" + host_of(url) + "' in " + url +
             ": check the URL's spelling (the local sites are on 127.0.0.1)";
    case CURLE_TOO_MANY_REDIRECTS:
      return "more than " + std::to_string(opt.max_redirects) + " redirects fetching " + url +
             " (a redirect loop?)";
    case CURLE_UNSUPPORTED_PROTOCOL:
      return refused_url_reason(url, opt.allow_file_urls).empty()
                 ? "cannot fetch " + url + ": " + why
                 : refused_url_reason(url, opt.allow_file_urls);
    case CURLE_URL_MALFORMAT:
      return "malformed URL '" + url + "': use an absolute http:// URL";
    case CURLE_FILESIZE_EXCEEDED:
      overflow = true;
      break;
    case CURLE_FILE_COULDNT_READ_FILE:
      return "cannot read " + url + ": no such file, or it is not readable";
    case CURLE_GOT_NOTHING:
    case CURLE_RECV_ERROR:
    case CURLE_SEND_ERROR:
    case CURLE_PARTIAL_FILE:
      return "the connection to " + host_of(url) + " broke while fetching " + url + " (" + why +
             "): retry; if it keeps happening the site has crashed";
    default:
      break;
  }
  if (overflow)
    return "the response from " + url + " is larger than the " +
           std::to_string(opt.max_body_bytes) + "-byte limit; it was not loaded";
  return "fetching " + url + " failed: " + why;
}

}  // namespace

http_client::http_client(http_options options) : options_(std::move(options)) {
  curl_init_once();
  curl_ = curl_easy_init();
  if (!curl_) throw std::runtime_error("libcurl: curl_easy_init failed (out of memory?)");
  // Options that never change are set once; fetch() sets the per-request ones. The handle
  // is never curl_easy_reset: that would switch the cookie engine off.
  CURL* c = static_cast<CURL*>(curl_);
  curl_easy_setopt(c, CURLOPT_COOKIEFILE, "");  // in-memory jar
  curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, curl_protocols(options_.allow_file_urls));
  curl_easy_setopt(c, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 1L);
  curl_easy_setopt(c, CURLOPT_MAXREDIRS, static_cast<long>(options_.max_redirects));
  curl_easy_setopt(c, CURLOPT_AUTOREFERER, 1L);
  curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, options_.connect_timeout_ms);
  curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, options_.total_timeout_ms);
  curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(c, CURLOPT_USERAGENT, options_.user_agent.c_str());
  curl_easy_setopt(c, CURLOPT_ACCEPT_ENCODING, "");  // whatever libcurl can decode
  curl_easy_setopt(c, CURLOPT_MAXFILESIZE_LARGE, static_cast<curl_off_t>(options_.max_body_bytes));
  curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, curl_append_capped);
}

http_client::~http_client() { curl_easy_cleanup(static_cast<CURL*>(curl_)); }

http_response http_client::fetch(const http_request& req) {
  CURL* c = static_cast<CURL*>(curl_);
  http_response res;
  curl_body_sink sink{&res.body, options_.max_body_bytes};
  char errbuf[CURL_ERROR_SIZE] = {0};
  if (req.method != "GET" && req.method != "POST") {
    res.error = "unsupported HTTP method '" + req.method + "' for " + req.url + ": use GET or POST";
    return res;
  }
  if (std::string why = refused_url_reason(req.url, options_.allow_file_urls); !why.empty()) {
    res.final_url = req.url;
    res.error = why;
    return res;
  }

  curl_easy_setopt(c, CURLOPT_URL, req.url.c_str());
  curl_easy_setopt(c, CURLOPT_WRITEDATA, &sink);
  curl_easy_setopt(c, CURLOPT_ERRORBUFFER, errbuf);
  curl_easy_setopt(c, CURLOPT_REFERER, req.referer.empty() ? nullptr : req.referer.c_str());

  curl_slist* headers = nullptr;
  headers = curl_slist_append(headers, "Accept: text/html,application/xhtml+xml,*/*;q=0.8");
  headers = curl_slist_append(headers, "Expect:");  // no 100-continue round trip
  if (req.method == "POST") {
    curl_easy_setopt(c, CURLOPT_POST, 1L);
    curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(req.body.size()));
    curl_easy_setopt(c, CURLOPT_COPYPOSTFIELDS, req.body.c_str());
    headers = curl_slist_append(headers, ("Content-Type: " + req.content_type).c_str());
  } else {
    curl_easy_setopt(c, CURLOPT_HTTPGET, 1L);
  }
  curl_easy_setopt(c, CURLOPT_HTTPHEADER, headers);

  CURLcode rc = curl_easy_perform(c);
  curl_easy_setopt(c, CURLOPT_HTTPHEADER, nullptr);  // headers and errbuf die with this call
  curl_easy_setopt(c, CURLOPT_ERRORBUFFER, nullptr);
  curl_easy_setopt(c, CURLOPT_WRITEDATA, nullptr);
  curl_slist_free_all(headers);

  char* final_url = nullptr;
  curl_easy_getinfo(c, CURLINFO_EFFECTIVE_URL, &final_url);
  res.final_url = final_url ? final_url : req.url;
  if (rc != CURLE_OK) {
    res.body.clear();
    res.error = explain_failure(rc, req, options_, errbuf, sink.overflow);
    return res;
  }
  curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &res.status);
  if (res.status == 0) res.status = 200;  // file://
  char* type = nullptr;
  curl_easy_getinfo(c, CURLINFO_CONTENT_TYPE, &type);
  res.content_type = type ? type : "";
  res.ok = true;
  return res;
}

std::vector<std::string> http_client::cookies() const {
  std::vector<std::string> out;
  curl_slist* list = nullptr;
  curl_easy_getinfo(static_cast<CURL*>(curl_), CURLINFO_COOKIELIST, &list);
  for (curl_slist* p = list; p; p = p->next) out.emplace_back(p->data);
  curl_slist_free_all(list);
  return out;
}

void http_client::add_cookie(const std::string& line) {
  curl_easy_setopt(static_cast<CURL*>(curl_), CURLOPT_COOKIELIST, line.c_str());
}

void http_client::clear_cookies() {
  curl_easy_setopt(static_cast<CURL*>(curl_), CURLOPT_COOKIELIST, "ALL");
}

}  // namespace kvarena
