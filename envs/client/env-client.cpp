// env-client.cpp: libcurl transport, retries and error messages of the env client
// (see env-client.h). Bodies go through server/env-api.h.
#include "client/env-client.h"

#include <curl/curl.h>

#include <algorithm>
#include <cstring>
#include <thread>

#include "sites/http-message.h"

namespace kvarena {
namespace {

void global_init() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

size_t on_body(char* data, size_t size, size_t n, void* user) {
  static_cast<std::string*>(user)->append(data, size * n);
  return size * n;
}

std::string port_of(const std::string& base_url) {
  size_t scheme = base_url.find("://");
  size_t host_start = scheme == std::string::npos ? 0 : scheme + 3;
  size_t colon = base_url.rfind(':');
  if (colon == std::string::npos || colon < host_start) return "";
  std::string port = base_url.substr(colon + 1);
  port = port.substr(0, port.find('/'));
  return port;
}

// One attempt's outcome.
struct attempt {
  CURLcode code = CURLE_OK;
  bool sent = false;  // the request (or part of it) was sent: the server may have acted on it
  long status = 0;
  std::string body;
  std::string error;  // transport failure, readable
};

}  // namespace

env_client::env_client(std::string base_url, env_client_options opt) : base_url_(std::move(base_url)), opt_(opt) {
  while (!base_url_.empty() && base_url_.back() == '/') base_url_.pop_back();
  if (base_url_.rfind("http://", 0) != 0 && base_url_.rfind("https://", 0) != 0)
    throw std::invalid_argument("env server URL '" + base_url_ +
                                "' is not an http:// URL (e.g. http://127.0.0.1:8090, as `kvarena env-server` prints)");
  if (opt_.tries < 1) opt_.tries = 1;
  global_init();
}

env_client::~env_client() {
  for (void* h : pool_) curl_easy_cleanup(static_cast<CURL*>(h));
}

void* env_client::acquire_handle() {
  {
    std::lock_guard lock(pool_mu_);
    if (!pool_.empty()) {
      void* h = pool_.back();
      pool_.pop_back();
      return h;
    }
  }
  CURL* h = curl_easy_init();
  if (!h) throw env_client_error("libcurl could not create a handle (out of memory?)", 0);
  return h;
}

void env_client::release_handle(void* h) {
  std::lock_guard lock(pool_mu_);
  pool_.push_back(h);
}

env_client::raw_response env_client::request(const std::string& method, const std::string& path,
                                             const std::string& body, retry_policy policy) {
  const std::string url = base_url_ + path;
  auto once = [&]() {
    attempt a;
    CURL* h = static_cast<CURL*>(acquire_handle());
    curl_easy_reset(h);  // keeps the live connections
    char errbuf[CURL_ERROR_SIZE] = {0};
    curl_slist* headers = nullptr;
    headers = curl_slist_append(headers, "Content-Type: application/json");
    headers = curl_slist_append(headers, "Accept: application/json");
    headers = curl_slist_append(headers, "Expect:");
    if (!opt_.token.empty()) headers = curl_slist_append(headers, ("Authorization: Bearer " + opt_.token).c_str());
    curl_easy_setopt(h, CURLOPT_URL, url.c_str());
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, headers);
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, opt_.connect_timeout_ms);
    curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, opt_.total_timeout_ms);
    curl_easy_setopt(h, CURLOPT_ERRORBUFFER, errbuf);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, &a.body);
    curl_easy_setopt(h, CURLOPT_USERAGENT, "kvarena-env-client/0.1");
    if (method == "GET") {
      curl_easy_setopt(h, CURLOPT_HTTPGET, 1L);
    } else {
      if (method != "POST") curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, method.c_str());
      if (method == "POST" || !body.empty()) {
        curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(body.size()));
        curl_easy_setopt(h, CURLOPT_POSTFIELDS, body.data());
      }
    }
    a.code = curl_easy_perform(h);
    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &a.status);
    // Whether any byte of the request left: only then may the server have acted on it.
    long request_bytes = 0;
    curl_easy_getinfo(h, CURLINFO_REQUEST_SIZE, &request_bytes);
    a.sent = request_bytes > 0 || a.status > 0;
    if (a.code != CURLE_OK) {
      long os_errno = 0;
      curl_easy_getinfo(h, CURLINFO_OS_ERRNO, &os_errno);
      if (a.code == CURLE_COULDNT_CONNECT && os_errno != 0) a.error = std::strerror(static_cast<int>(os_errno));
      else if (errbuf[0]) a.error = errbuf;
      else a.error = curl_easy_strerror(a.code);
      if (a.code == CURLE_COULDNT_CONNECT || a.code == CURLE_COULDNT_RESOLVE_HOST) a.sent = false;
    }
    curl_slist_free_all(headers);
    release_handle(h);
    return a;
  };

  raw_response out;
  attempt a;
  long wait_ms = opt_.backoff_ms;
  for (int t = 1; t <= opt_.tries; ++t) {
    a = once();
    out.tries = t;
    bool retry;
    if (a.code != CURLE_OK)
      retry = !a.sent || policy == retry_policy::transport_and_5xx;
    else
      retry = policy == retry_policy::transport_and_5xx ? a.status >= 500 : a.status == 503;
    if (!retry || t == opt_.tries) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(wait_ms));
    wait_ms = std::min<long>(wait_ms * 2, 5000);
  }
  if (a.code != CURLE_OK) {
    std::string tries = std::to_string(out.tries) + (out.tries == 1 ? " try" : " tries");
    if (!a.sent) {
      std::string port = port_of(base_url_);
      throw env_client_error("env server at " + base_url_ + " unreachable after " + tries + ": " + a.error +
                                 "; start it with `kvarena env-server" + (port.empty() ? "" : " --port " + port) +
                                 "` (or pass the right URL)",
                             0);
    }
    throw env_client_error("env server at " + base_url_ + " gave no answer to " + method + " " + path + " (" +
                               tries + "): " + a.error +
                               (a.code == CURLE_OPERATION_TIMEDOUT
                                    ? "; raise the client's total timeout, or look at the server's log"
                                    : "; look at the server's log"),
                           0);
  }
  out.status = a.status;
  out.body = std::move(a.body);
  return out;
}

template <class T>
T env_client::call(const std::string& method, const std::string& path, const std::string& body, retry_policy policy) {
  raw_response r = request(method, path, body, policy);
  if (r.status < 200 || r.status >= 300) {
    env_api_error e = parse_error_body(static_cast<int>(r.status), r.body);
    std::string msg = "env server: " + method + " " + path + " -> " + std::to_string(r.status) + ": " + e.what();
    for (size_t i = 0; i < e.details().size() && i < 20; ++i) msg += "\n  " + e.details()[i];
    if (r.tries > 1) msg += " (after " + std::to_string(r.tries) + " tries)";
    throw env_client_error(msg, static_cast<int>(r.status), e.details());
  }
  T out;
  try {
    from_json_text(r.body, out);
  } catch (const env_api_error& e) {
    throw env_client_error("env server at " + base_url_ + " answered " + method + " " + path +
                               " with an unexpected body (" + e.what() +
                               "); is that URL a kvarena env server of the same version?",
                           static_cast<int>(r.status));
  }
  return out;
}

namespace {
std::string session_path(const std::string& id, const char* tail = "") {
  return "/v1/sessions/" + sites::url_encode(id) + tail;
}
}  // namespace

env_created env_client::create_session(const std::string& task_json, const env_create_options& opt) {
  env_create_request req;
  req.task_json = task_json;
  req.browser = opt.browser;
  req.observation = opt.observation;
  req.sites = opt.sites;
  req.max_obs_tokens = opt.max_obs_tokens;
  req.early_stop = opt.early_stop;
  std::string body;
  try {
    body = to_json_text(req);
  } catch (const env_api_error& e) {
    throw env_client_error(std::string("cannot create a session: ") + e.what(), 0);
  }
  return call<env_created>("POST", "/v1/sessions", body, retry_policy::transport_and_5xx);
}

env_created env_client::create_session(const task& t, const env_create_options& opt) {
  return create_session(task_to_json(t, -1), opt);
}

env_step_result env_client::step(const std::string& session_id, const std::string& action) {
  return call<env_step_result>("POST", session_path(session_id, "/step"), to_json_text(env_step_request{action}),
                               retry_policy::unsent_and_503);
}

eval_result env_client::evaluate(const std::string& session_id, const std::optional<std::string>& answer) {
  return call<eval_result>("POST", session_path(session_id, "/evaluate"), to_json_text(env_evaluate_request{answer}),
                           retry_policy::transport_and_5xx);
}

bool env_client::close(const std::string& session_id) {
  try {
    call<env_deleted>("DELETE", session_path(session_id), "", retry_policy::transport_and_5xx);
    return true;
  } catch (const env_client_error& e) {
    if (e.http_status() == 404) return false;
    throw;
  }
}

env_session_info env_client::session_info(const std::string& session_id) {
  return call<env_session_info>("GET", session_path(session_id), "", retry_policy::transport_and_5xx);
}

env_health env_client::health() {
  return call<env_health>("GET", "/v1/health", "", retry_policy::transport_and_5xx);
}

}  // namespace kvarena
