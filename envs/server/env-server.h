// env-server.h: the env HTTP API (env-api.h lists the routes and bodies; DESIGN.md,
// Contracts): sessions created from a VWA task, stepped with action text, evaluated,
// deleted; many at once, each with its own tenant of the sites (env-sites.h).
//
// Concurrency: requests run on the HTTP server's `http.threads` threads; the steps of one
// session are serialised by the session's mutex (a request that waits longer than
// `session_lock_timeout` for it gets 503 "busy"), different sessions run in parallel.
// Time limits: every socket read and write has `http.io_timeout`; every page fetch of a
// session's browser has `browser.http` connect/total timeouts, so a step or an evaluation
// never hangs on a dead site; sessions idle for `idle_timeout` are closed by a reaper.
// Errors are JSON {"error": {"code", "message"}}: 400 body not JSON, 401 no or a wrong
// bearer token (only when the server has one), 404 unknown session
// or path, 405 wrong method (with Allow), 409 step after the episode ended, 413 body over
// `body_limit_bytes`, 422 invalid task or fields, 502 a site failed, 503 busy or full;
// 400 also when "browser": "chromium" is asked for and Chromium is not installed.
// One exception: a body over 4x the limit (or malformed HTTP) is refused by the HTTP layer
// before the API sees it, with the same status and a short HTML body.
#pragma once
#include <chrono>
#include <cstddef>
#include <memory>
#include <string>

#include "browser/chromium/chromium-browser.h"
#include "browser/chromium/chromium-process.h"
#include "browser/text/text-browser.h"
#include "eval/eval-judge.h"
#include "server/env-sites.h"
#include "sites/http-bearer.h"
#include "sites/http-server.h"

namespace kvarena {

struct env_server_options {
  sites::http_server_options http{"127.0.0.1", 0, 8};  // handlers block on page fetches: threads > cores
  env_sites_options sites;                              // in-process unless sites.external_url is set
  size_t body_limit_bytes = 4u << 20;                   // a task with long references fits easily
  std::chrono::milliseconds idle_timeout{30 * 60 * 1000};
  std::chrono::milliseconds session_lock_timeout{30000};
  size_t max_sessions = 256;
  text_browser_options browser;  // per-session text browser (fetch timeouts, viewport)
  // The chromium backend (a session's "browser": "chromium"): one shared process.
  chromium_options chromium;
  chromium_browser_options chromium_browser;
  // The fuzzy_match judge of every evaluation (--judge-url / --judge-model); null: tasks of
  // VisualWebArena and WebArena that need one are scored `unsupported`, kvarena's own
  // suites use the deterministic judge. Shared by the sessions (judges are thread-safe).
  std::shared_ptr<fuzzy_judge> judge;
  std::string vqa_url;  // page_image_query eval_vqa (--vqa-url); "": unsupported
  // Sessions open http(s) URLs only: a task whose start_url is anything else is refused
  // (422), a link or goto there is an action error. true (--allow-file-urls): file:// too,
  // in the browsers and the image evaluator (common/url-policy.h).
  bool allow_file_urls = false;
  // Not empty: every request must carry "Authorization: Bearer <token>" (else 401), so a
  // server reachable by others drives no browser for them (--token / KVARENA_ENV_TOKEN).
  std::string token;
};

using sites::is_loopback_host;  // sites/http-bearer.h
// "" when a server may bind `host` with `token`; else one line saying why not and what to
// do (a non-loopback address without a token).
std::string bind_refusal(const std::string& host, const std::string& token);

class env_server {
 public:
  explicit env_server(env_server_options opt);
  ~env_server();  // stops
  env_server(const env_server&) = delete;
  env_server& operator=(const env_server&) = delete;

  // Starts the sites (in-process), the HTTP server and the idle reaper. Throws
  // std::runtime_error naming the address when it cannot bind, and when the address is not
  // a loopback one and the server has no token (bind_refusal).
  void start();
  // Stops accepting, finishes nothing new, closes every session (dropping its tenant),
  // stops the sites. Idempotent.
  void stop();

  uint16_t port() const;
  std::string base_url() const;  // "http://127.0.0.1:8090"

  // The API without a socket (tests; the HTTP server calls it on its threads).
  sites::http_response handle(const sites::http_request& req);

  size_t session_count() const;
  size_t reap_idle_sessions();            // what the reaper does periodically
  sites::sites_server* sites_server();     // the in-process sites; null with external sites
  // The Chromium process shared by the chromium sessions; null before the first one.
  std::shared_ptr<chromium_process> chromium();
  const env_server_options& options() const { return opt_; }

 private:
  struct impl;
  env_server_options opt_;
  std::unique_ptr<impl> impl_;
};

}  // namespace kvarena
