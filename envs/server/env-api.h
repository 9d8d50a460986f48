// env-api.h: the env HTTP API's request and response bodies (DESIGN.md, Contracts) as plain
// structs, and their JSON text in both directions. The server (env-server.h) and the
// client (client/env-client.h) share these functions, so the two sides can never disagree
// on a field name. nlohmann/json stays inside env-api-json.cpp.
//
//   POST   /v1/sessions                {"task": {VWA task}, "browser": "text"|"chromium",
//                                       "observation": "text"|"som"|"screenshot"?,
//                                       "sites": {"shopping": "http://..."}?, "max_obs_tokens"?,
//                                       "early_stop": {"max_steps", "parse_failures",
//                                       "repeated_actions"}?}
//          -> 201 {"session_id", "observation": {"text", "url", "tabs": [..], "screenshot"?}}
//          (screenshot: with "observation": "som", a PNG in base64 of the viewport with the
//          elements' [id]s drawn on, every observation; needs "browser": "chromium"; the
//          text is then VWA's Set-of-Marks list "[id] [TAG] [text]" under the tab header;
//          with "observation": "screenshot", the viewport unmarked and the text the tree)
//   POST   /v1/sessions/{id}/step      {"action": "click [12]"}
//          -> 200 {"observation", "action_error": null|"...", "done",
//                  "answer"?, "reason"?}       (answer and reason only once done)
//   POST   /v1/sessions/{id}/evaluate  {"answer"?}
//          -> 200 {"score", "success", "status", "evaluators": [{"type", "score", "detail",
//                  "status"}], "judge", "notes"}
//   DELETE /v1/sessions/{id}           -> 200 {"session_id", "deleted": true}
//   GET    /v1/sessions/{id}           -> 200 {"session_id", "task_id", "tenant", "sites",
//                                              "steps", "done", "answer"?, "reason"?}
//   GET    /v1/health                  -> 200 {"status": "ok", "sessions", "max_sessions",
//                                              "sites_mode", "sites": [..], "browsers": [..]}
//   errors -> 4xx/5xx {"error": {"code", "message", "details"?: [..]}}
//
// Every JSON text written here is dumped with invalid UTF-8 replaced by U+FFFD (a model
// can emit raw bytes in an action; they must not make the server or the client throw).
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "eval/early-stop.h"
#include "eval/evaluator.h"

namespace kvarena {

// A 4xx/5xx of the env API: thrown inside the server and turned into its error body at the
// handler boundary; also what parsing a body throws (400: not JSON, 422: wrong fields).
class env_api_error : public std::runtime_error {
 public:
  env_api_error(int status, const std::string& message, std::vector<std::string> details = {})
      : std::runtime_error(message), status_(status), details_(std::move(details)) {}
  int status() const { return status_; }
  const std::vector<std::string>& details() const { return details_; }

 private:
  int status_;
  std::vector<std::string> details_;  // e.g. the task loader's validation messages
};

struct env_observation {
  std::string text;               // "Tab 0 (current): <title>\n\n<tree>", maybe truncated
  std::string url;                // the current tab's URL
  std::vector<std::string> tabs;  // every tab's title, in tab order
  std::string screenshot_png_base64;  // Set-of-Marks sessions only; "" otherwise
};

// The ranges of the numeric request fields (a value outside is 422 naming the field and
// the range); the task's viewport_size is checked by the server (env-server.cpp).
inline constexpr int64_t k_max_obs_tokens_limit = 10'000'000;
inline constexpr int64_t k_max_early_stop_limit = 100'000;
inline constexpr int64_t k_max_viewport_width_px = 100'000;   // a page's whole height fits (tests
inline constexpr int64_t k_max_viewport_height_px = 100'000;  // compare layouts at 20000)

struct env_create_request {
  std::string task_json;        // the "task" object as compact JSON text
  std::string browser = "text";      // or "chromium"
  std::string observation = "text";  // or "som": VWA's [id] [TAG] [text] list plus a marked screenshot;
                                     // or "screenshot": the tree plus the screenshot unmarked
  std::map<std::string, std::string> sites;  // site name -> base URL, overriding the server's
  std::optional<int64_t> max_obs_tokens;     // 1..k_max_obs_tokens_limit
  std::optional<early_stop_config> early_stop;
};

struct env_created {
  std::string session_id;
  env_observation observation;
};

struct env_step_request {
  std::string action;
};

struct env_step_result {
  env_observation observation;
  std::optional<std::string> action_error;  // parse failure or what the browser refused
  bool done = false;
  std::optional<std::string> answer;  // once done: what evaluate scores by default
  std::optional<std::string> reason;  // once done: "stop", or the early-stop rule's text
};

struct env_evaluate_request {
  std::optional<std::string> answer;  // absent: the session's stop / early-stop answer
};

// evaluate's response is eval_result (eval/evaluator.h).

struct env_session_info {
  std::string session_id;
  int64_t task_id = 0;
  std::string tenant;  // "" when the sites are external (no tenant)
  std::map<std::string, std::string> sites;  // the URLs the placeholders were filled with
  int64_t steps = 0;
  bool done = false;
  std::optional<std::string> answer, reason;
};

struct env_health {
  std::string status = "ok";
  int64_t sessions = 0;
  int64_t max_sessions = 0;
  std::string sites_mode;            // "in-process" or "external"
  std::vector<std::string> sites;    // site names served
  std::vector<std::string> browsers;  // "text", and "chromium" when installed
};

struct env_deleted {
  std::string session_id;
};

// JSON text of each body. Never throws (invalid UTF-8 is replaced), except
// to_json_text(env_create_request) which throws env_api_error(400) when task_json is not
// one JSON object.
std::string to_json_text(const env_create_request& r);
std::string to_json_text(const env_created& r);
std::string to_json_text(const env_step_request& r);
std::string to_json_text(const env_step_result& r);
std::string to_json_text(const env_evaluate_request& r);
std::string to_json_text(const eval_result& r);
std::string to_json_text(const env_session_info& r);
std::string to_json_text(const env_health& r);
std::string to_json_text(const env_deleted& r);
// {"error": {"code", "message", "details"?}}
std::string to_json_text(const env_api_error& e);

// Bodies from JSON text. Throw env_api_error: 400 with the JSON parser's message when the
// text is not JSON (or nests deeper than 64), 422 naming the field when a field is
// missing or has the wrong type. Unknown fields are ignored. An empty evaluate body means
// {}.
void from_json_text(std::string_view text, env_create_request& out);
void from_json_text(std::string_view text, env_created& out);
void from_json_text(std::string_view text, env_step_request& out);
void from_json_text(std::string_view text, env_step_result& out);
void from_json_text(std::string_view text, env_evaluate_request& out);
void from_json_text(std::string_view text, eval_result& out);
void from_json_text(std::string_view text, env_session_info& out);
void from_json_text(std::string_view text, env_health& out);
void from_json_text(std::string_view text, env_deleted& out);

// An error body back into an env_api_error with `status`; a body that is not the error
// shape (an HTML page from a proxy) gives "HTTP <status>" and the body's first line.
env_api_error parse_error_body(int status, std::string_view body);

}  // namespace kvarena
