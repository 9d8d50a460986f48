// env-session.h: one env session: a task with its placeholders filled, a browser, the
// episode's early-stop rules and answer. Plain calls, no HTTP and no JSON (env-server.h
// maps requests onto them).
//
// Not thread-safe by itself: the server holds `mutex()` around every call, so the steps
// of one session run one at a time while different sessions run in parallel.
#pragma once
#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "server/env-browsers.h"
#include "eval/early-stop.h"
#include "eval/evaluator.h"
#include "task/task.h"
#include "server/env-api.h"
#include "server/env-sites.h"

namespace kvarena {

// The env server has no tokenizer: max_obs_tokens is applied as a character budget of
// k_obs_chars_per_token characters a token (English text and accessibility-tree lines
// average about 4 characters a token for BPE tokenizers). The agent side, which has the
// model's tokenizer, truncates exactly afterwards; this cut only bounds what travels.
inline constexpr int64_t k_obs_chars_per_token = 4;

// `text` cut to max_tokens * k_obs_chars_per_token bytes, never inside a UTF-8 sequence.
std::string truncate_observation(std::string text, int64_t max_tokens);

struct env_session_options {
  bool som = false;  // observations carry a Set-of-Marks screenshot
  bool screenshot = false;  // observations carry the viewport's screenshot, unmarked (the text stays the tree)
  std::optional<int64_t> max_obs_tokens;  // none: the whole observation
  early_stop_config early_stop;
  std::shared_ptr<fuzzy_judge> judge;  // null: see env_server_options::judge
  std::string vqa_url;
  bool allow_file_urls = false;  // the image evaluator's local images (env_server_options')
};

struct env_login {
  std::string site;      // "classifieds"
  std::string base_url;  // the site's base URL in this session
  std::string username;
  // A site served elsewhere (--site NAME=URL, a request's "sites"): its own login form
  // with VWA's account (site-login.h); else kvarena's login form and seeded password.
  bool site_form = false;
};

class env_session {
 public:
  env_session(std::string id, task t, env_sites::lease lease, env_session_options opt,
              std::unique_ptr<session_browser> browser);

  // Logs in (through each site's login form) and opens the task's start tabs, the first
  // one focused. Throws env_api_error: 502 when a site cannot be reached or refuses the
  // login.
  void start(const std::vector<env_login>& logins);

  env_observation observe();
  // One action: parsed (a malformed one is an action_error, not a failure), run, recorded
  // for the early-stop rules. `stop [answer]` and an early stop end the episode (done);
  // a step after that throws env_api_error(409).
  env_step_result step(const std::string& action_text);
  // Scores the episode on the current page with `answer`, or the stored stop / early-stop
  // answer when absent ("" when the episode has none), with the sites' func: helpers
  // (eval/vwa-helpers/site-eval-helpers.h) and the deterministic fuzzy judge. program_html targets
  // may navigate the session's browser.
  eval_result evaluate(const std::optional<std::string>& answer);
  env_session_info info() const;

  const std::string& id() const { return id_; }
  const env_sites::lease& lease() const { return lease_; }
  std::timed_mutex& mutex() { return mu_; }
  // Set (under the mutex) when the session leaves the table; a request that found the
  // session just before then sees it and answers 404 instead of using a dropped tenant.
  bool closed() const { return closed_; }
  void mark_closed() { closed_ = true; }

  // Idle bookkeeping for the reaper, readable without the mutex.
  void touch() { last_used_ns_ = now_ns(); }
  std::chrono::steady_clock::duration idle_for() const {
    return std::chrono::steady_clock::duration(now_ns() - last_used_ns_.load());
  }

 private:
  static int64_t now_ns() { return std::chrono::steady_clock::now().time_since_epoch().count(); }
  void finish(std::string answer, std::string reason);

  std::string id_;
  task task_;
  env_sites::lease lease_;
  env_session_options opt_;
  std::unique_ptr<session_browser> browser_;
  early_stop_rules rules_;
  bool done_ = false;
  bool closed_ = false;
  std::optional<std::string> answer_, reason_;
  std::timed_mutex mu_;
  std::atomic<int64_t> last_used_ns_{now_ns()};
};

}  // namespace kvarena
