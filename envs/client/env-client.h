// env-client.h: the env HTTP API (server/env-api.h) from the agent's side, over libcurl.
// One call per route; bodies are the structs of env-api.h, so the client and the server
// share one JSON mapping.
//
// Failures throw env_client_error with a message that says what to do, e.g.
//   env server at http://127.0.0.1:9 unreachable after 3 tries: Connection refused; start
//   it with `kvarena env-server --port 9` (or pass the right URL)
// Retries, with exponential backoff: a connection that could not be made (the request
// never reached the server) is retried for every call; 5xx answers and broken connections
// are retried for every call except step, which retries only on 503 (the server says it
// did not run the action): repeating a step that may have run would act twice. 4xx
// answers are never retried.
// Thread-safe: calls from several threads use separate libcurl handles (a small pool that
// keeps connections alive).
#pragma once
#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "task/task.h"
#include "server/env-api.h"

namespace kvarena {

struct env_client_options {
  long connect_timeout_ms = 3000;
  long total_timeout_ms = 120000;  // one request; an evaluation may open several pages
  int tries = 3;                   // attempts in all for a retryable failure (1 = no retry)
  long backoff_ms = 250;           // before the 2nd try; doubled for each further try (max 5 s)
  std::string token;               // sent as "Authorization: Bearer <token>" when not empty
};

// What a create request may set besides the task (env-api.h).
struct env_create_options {
  std::string browser = "text";      // or "chromium"
  std::string observation = "text";  // or "som", or "screenshot" (env-api.h)
  std::map<std::string, std::string> sites;  // site name -> base URL overrides
  std::optional<int64_t> max_obs_tokens;
  std::optional<early_stop_config> early_stop;
};

class env_client_error : public std::runtime_error {
 public:
  env_client_error(const std::string& message, int http_status, std::vector<std::string> details = {})
      : std::runtime_error(message), http_status_(http_status), details_(std::move(details)) {}
  // The HTTP status the server answered; 0 when no answer came (unreachable, timeout).
  int http_status() const { return http_status_; }
  const std::vector<std::string>& details() const { return details_; }  // e.g. task problems

 private:
  int http_status_;
  std::vector<std::string> details_;
};

class env_client {
 public:
  // base_url: "http://127.0.0.1:8090" (a trailing '/' is ignored). std::invalid_argument
  // when it is not an http:// URL.
  explicit env_client(std::string base_url, env_client_options opt = {});
  ~env_client();
  env_client(const env_client&) = delete;
  env_client& operator=(const env_client&) = delete;

  // task_json: one VWA task object; env_client_error(status 0) when it is not JSON.
  env_created create_session(const std::string& task_json, const env_create_options& opt = {});
  env_created create_session(const task& t, const env_create_options& opt = {});
  env_step_result step(const std::string& session_id, const std::string& action);
  eval_result evaluate(const std::string& session_id, const std::optional<std::string>& answer = std::nullopt);
  // false when the server does not know the session (already closed).
  bool close(const std::string& session_id);
  env_session_info session_info(const std::string& session_id);
  env_health health();

  // The low level: one request with the retry policy, any status returned as is (no
  // throw for 4xx/5xx); throws env_client_error only when no answer came.
  enum class retry_policy { transport_and_5xx, unsent_and_503 };
  struct raw_response {
    long status = 0;
    std::string body;
    int tries = 0;
  };
  raw_response request(const std::string& method, const std::string& path, const std::string& body,
                       retry_policy policy = retry_policy::transport_and_5xx);

  const std::string& base_url() const { return base_url_; }

 private:
  // The parsed body of a 2xx answer; env_client_error naming the call otherwise.
  template <class T>
  T call(const std::string& method, const std::string& path, const std::string& body, retry_policy policy);
  void* acquire_handle();
  void release_handle(void* h);

  std::string base_url_;
  env_client_options opt_;
  std::mutex pool_mu_;
  std::vector<void*> pool_;  // idle CURL* handles
};

}  // namespace kvarena
