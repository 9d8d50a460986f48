// env-api-json.cpp: the env API bodies <-> JSON text (see env-api.h). The only file of the
// env server and client that includes nlohmann/json.
#include <nlohmann/json.hpp>

#include "common/json-nesting.h"
#include "server/env-api.h"

namespace kvarena {
namespace {

using json = nlohmann::json;

constexpr int k_max_body_depth = 64;

std::string dump(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }

const char* type_name(const json& j) { return j.type_name(); }  // "object", "null", ...

// The body as a JSON object; "" counts as {} when empty_ok.
json parse_object(std::string_view text, bool empty_ok = false) {
  if (empty_ok && text.find_first_not_of(" \t\r\n") == std::string_view::npos) return json::object();
  // nlohmann's dump and compare recurse: no body of this API nests more than a VWA task does.
  if (!json_nesting_within(text, k_max_body_depth))
    throw env_api_error(400, "the body is not acceptable JSON: it nests deeper than " +
                                 std::to_string(k_max_body_depth) + " levels");
  json j;
  try {
    j = json::parse(text);
  } catch (const json::exception& e) {  // parse_error, and out_of_range 406: a number past a double
    throw env_api_error(400, std::string("the body is not valid JSON: ") + e.what() +
                                 " (send one JSON object, UTF-8, with Content-Type: application/json)");
  }
  if (!j.is_object())
    throw env_api_error(422, std::string("the body must be a JSON object, not ") + type_name(j));
  return j;
}

[[noreturn]] void wrong_type(const std::string& field, const char* expected, const json& got) {
  throw env_api_error(422, "field \"" + field + "\" must be " + expected + ", not " + type_name(got));
}

// nullptr when absent or null.
const json* find(const json& obj, const char* name) {
  auto it = obj.find(name);
  return it == obj.end() || it->is_null() ? nullptr : &*it;
}

const json& need(const json& obj, const char* name, const char* what) {
  const json* v = find(obj, name);
  if (!v) throw env_api_error(422, std::string("field \"") + name + "\" is missing: it must be " + what);
  return *v;
}

std::string get_string(const json& v, const std::string& field) {
  if (!v.is_string()) wrong_type(field, "a string", v);
  return v.get<std::string>();
}

std::optional<std::string> opt_string(const json& obj, const char* name) {
  const json* v = find(obj, name);
  if (!v) return std::nullopt;
  return get_string(*v, name);
}

int64_t get_int(const json& v, const std::string& field) {
  if (!v.is_number_integer()) wrong_type(field, "an integer", v);
  return v.get<int64_t>();
}

// An integer in lo..hi; anything else (a float, a string, a number past int64 either way)
// is 422 naming the field and the range.
int64_t get_int_in(const json& v, const std::string& field, int64_t lo, int64_t hi, const std::string& hint = "") {
  const std::string range = "an integer in " + std::to_string(lo) + ".." + std::to_string(hi) + hint;
  if (!v.is_number_integer()) wrong_type(field, range.c_str(), v);
  const bool fits = !(v.is_number_unsigned() && v.get<uint64_t>() > static_cast<uint64_t>(INT64_MAX));
  const int64_t x = fits ? v.get<int64_t>() : INT64_MAX;
  if (!fits || x < lo || x > hi)
    throw env_api_error(422, "field \"" + field + "\" must be " + range + ", not " + v.dump());
  return x;
}

double get_number(const json& v, const std::string& field) {
  if (!v.is_number()) wrong_type(field, "a number", v);
  return v.get<double>();
}

bool get_bool(const json& v, const std::string& field) {
  if (!v.is_boolean()) wrong_type(field, "true or false", v);
  return v.get<bool>();
}

std::map<std::string, std::string> get_string_map(const json& v, const std::string& field) {
  if (!v.is_object()) wrong_type(field, "an object of strings", v);
  std::map<std::string, std::string> out;
  for (auto it = v.begin(); it != v.end(); ++it) out[it.key()] = get_string(it.value(), field + "." + it.key());
  return out;
}

std::vector<std::string> get_string_list(const json& v, const std::string& field) {
  if (!v.is_array()) wrong_type(field, "a list of strings", v);
  std::vector<std::string> out;
  for (size_t i = 0; i < v.size(); ++i) out.push_back(get_string(v[i], field + "[" + std::to_string(i) + "]"));
  return out;
}

json observation_json(const env_observation& o) {
  json j = {{"text", o.text}, {"url", o.url}, {"tabs", o.tabs}};
  if (!o.screenshot_png_base64.empty()) j["screenshot"] = o.screenshot_png_base64;
  return j;
}

env_observation observation_from(const json& obj) {
  const json& o = need(obj, "observation", "an object {\"text\", \"url\", \"tabs\"}");
  if (!o.is_object()) wrong_type("observation", "an object", o);
  env_observation out;
  out.text = get_string(need(o, "text", "a string"), "observation.text");
  out.url = get_string(need(o, "url", "a string"), "observation.url");
  if (const json* tabs = find(o, "tabs")) out.tabs = get_string_list(*tabs, "observation.tabs");
  out.screenshot_png_base64 = opt_string(o, "screenshot").value_or("");
  return out;
}

json nullable(const std::optional<std::string>& s) { return s ? json(*s) : json(nullptr); }

eval_status status_from(const json& obj, const std::string& field) {
  const json* v = find(obj, "status");
  if (!v) return eval_status::scored;
  std::string s = get_string(*v, field);
  if (s == "scored") return eval_status::scored;
  if (s == "unsupported") return eval_status::unsupported;
  throw env_api_error(422, "field \"" + field + "\" must be \"scored\" or \"unsupported\", not \"" + s + "\"");
}

}  // namespace

// ---- create

std::string to_json_text(const env_create_request& r) {
  json task;
  try {
    task = json::parse(r.task_json);
  } catch (const json::exception& e) {  // out_of_range 406 (a number past a double) too
    throw env_api_error(400, std::string("the task is not valid JSON: ") + e.what());
  }
  if (!task.is_object()) throw env_api_error(400, std::string("the task must be one JSON object, not ") + type_name(task));
  json j = {{"task", std::move(task)}, {"browser", r.browser}};
  if (r.observation != "text") j["observation"] = r.observation;
  if (!r.sites.empty()) j["sites"] = r.sites;
  if (r.max_obs_tokens) j["max_obs_tokens"] = *r.max_obs_tokens;
  if (r.early_stop)
    j["early_stop"] = {{"max_steps", r.early_stop->max_steps},
                       {"parse_failures", r.early_stop->parse_failures},
                       {"repeated_actions", r.early_stop->repeated_actions}};
  return dump(j);
}

void from_json_text(std::string_view text, env_create_request& out) {
  json j = parse_object(text);
  const json& task = need(j, "task", "the VWA task object");
  if (!task.is_object()) wrong_type("task", "one VWA task object", task);
  out.task_json = dump(task);
  out.browser = opt_string(j, "browser").value_or("text");
  out.observation = opt_string(j, "observation").value_or("text");
  if (out.observation != "text" && out.observation != "som" && out.observation != "screenshot")
    throw env_api_error(422, "field \"observation\" must be \"text\", \"som\" (Set-of-Marks: the text and a "
                             "screenshot with the elements numbered) or \"screenshot\" (the accessibility tree and "
                             "the screenshot unmarked), not '" + out.observation + "'");
  if (const json* sites = find(j, "sites")) out.sites = get_string_map(*sites, "sites");
  if (const json* m = find(j, "max_obs_tokens"))
    out.max_obs_tokens = get_int_in(*m, "max_obs_tokens", 1, k_max_obs_tokens_limit, " (omit it for no limit)");
  if (const json* es = find(j, "early_stop")) {
    if (!es->is_object()) wrong_type("early_stop", "an object", *es);
    early_stop_config cfg;
    auto int_field = [&](const char* name, int& into) {
      if (const json* v = find(*es, name))
        into = static_cast<int>(get_int_in(*v, std::string("early_stop.") + name, 0, k_max_early_stop_limit,
                                           " (0 turns the rule off)"));
    };
    int_field("max_steps", cfg.max_steps);
    int_field("parse_failures", cfg.parse_failures);
    int_field("repeated_actions", cfg.repeated_actions);
    out.early_stop = cfg;
  }
}

std::string to_json_text(const env_created& r) {
  return dump({{"session_id", r.session_id}, {"observation", observation_json(r.observation)}});
}

void from_json_text(std::string_view text, env_created& out) {
  json j = parse_object(text);
  out.session_id = get_string(need(j, "session_id", "a string"), "session_id");
  out.observation = observation_from(j);
}

// ---- step

std::string to_json_text(const env_step_request& r) { return dump({{"action", r.action}}); }

void from_json_text(std::string_view text, env_step_request& out) {
  json j = parse_object(text);
  out.action = get_string(need(j, "action", "the action text, e.g. \"click [12]\""), "action");
}

std::string to_json_text(const env_step_result& r) {
  json j = {{"observation", observation_json(r.observation)},
            {"action_error", nullable(r.action_error)},
            {"done", r.done}};
  if (r.answer) j["answer"] = *r.answer;
  if (r.reason) j["reason"] = *r.reason;
  return dump(j);
}

void from_json_text(std::string_view text, env_step_result& out) {
  json j = parse_object(text);
  out.observation = observation_from(j);
  out.action_error = opt_string(j, "action_error");
  out.done = get_bool(need(j, "done", "true or false"), "done");
  out.answer = opt_string(j, "answer");
  out.reason = opt_string(j, "reason");
}

// ---- evaluate

std::string to_json_text(const env_evaluate_request& r) {
  json j = json::object();
  if (r.answer) j["answer"] = *r.answer;
  return dump(j);
}

void from_json_text(std::string_view text, env_evaluate_request& out) {
  json j = parse_object(text, /*empty_ok=*/true);
  out.answer = opt_string(j, "answer");
}

std::string to_json_text(const eval_result& r) {
  json evaluators = json::array();
  for (const auto& e : r.evaluators)
    evaluators.push_back(
        {{"type", e.type}, {"score", e.score}, {"detail", e.detail}, {"status", eval_status_name(e.status)}});
  return dump({{"score", r.score},
               {"success", r.success},
               {"status", eval_status_name(r.status)},
               {"evaluators", std::move(evaluators)},
               {"judge", r.judge.empty() ? json(nullptr) : json(r.judge)},
               {"notes", r.notes}});
}

void from_json_text(std::string_view text, eval_result& out) {
  json j = parse_object(text);
  out.score = get_number(need(j, "score", "a number"), "score");
  out.success = get_bool(need(j, "success", "true or false"), "success");
  out.status = status_from(j, "status");
  out.evaluators.clear();
  const json& list = need(j, "evaluators", "a list");
  if (!list.is_array()) wrong_type("evaluators", "a list", list);
  for (size_t i = 0; i < list.size(); ++i) {
    std::string where = "evaluators[" + std::to_string(i) + "]";
    const json& e = list[i];
    if (!e.is_object()) wrong_type(where, "an object", e);
    evaluator_result r;
    r.type = get_string(need(e, "type", "a string"), where + ".type");
    r.score = get_number(need(e, "score", "a number"), where + ".score");
    r.detail = opt_string(e, "detail").value_or("");
    r.status = status_from(e, where + ".status");
    out.evaluators.push_back(std::move(r));
  }
  out.judge = opt_string(j, "judge").value_or("");
  out.notes.clear();
  if (const json* notes = find(j, "notes")) out.notes = get_string_list(*notes, "notes");
}

// ---- session info, health, delete

std::string to_json_text(const env_session_info& r) {
  json j = {{"session_id", r.session_id}, {"task_id", r.task_id}, {"tenant", r.tenant},
            {"sites", r.sites},           {"steps", r.steps},     {"done", r.done}};
  if (r.answer) j["answer"] = *r.answer;
  if (r.reason) j["reason"] = *r.reason;
  return dump(j);
}

void from_json_text(std::string_view text, env_session_info& out) {
  json j = parse_object(text);
  out.session_id = get_string(need(j, "session_id", "a string"), "session_id");
  out.task_id = get_int(need(j, "task_id", "an integer"), "task_id");
  out.tenant = opt_string(j, "tenant").value_or("");
  if (const json* sites = find(j, "sites")) out.sites = get_string_map(*sites, "sites");
  out.steps = get_int(need(j, "steps", "an integer"), "steps");
  out.done = get_bool(need(j, "done", "true or false"), "done");
  out.answer = opt_string(j, "answer");
  out.reason = opt_string(j, "reason");
}

std::string to_json_text(const env_health& r) {
  return dump({{"status", r.status},
               {"sessions", r.sessions},
               {"max_sessions", r.max_sessions},
               {"sites_mode", r.sites_mode},
               {"sites", r.sites},
               {"browsers", r.browsers}});
}

void from_json_text(std::string_view text, env_health& out) {
  json j = parse_object(text);
  out.status = get_string(need(j, "status", "a string"), "status");
  out.sessions = get_int(need(j, "sessions", "an integer"), "sessions");
  if (const json* m = find(j, "max_sessions")) out.max_sessions = get_int(*m, "max_sessions");
  out.sites_mode = opt_string(j, "sites_mode").value_or("");
  if (const json* s = find(j, "sites")) out.sites = get_string_list(*s, "sites");
  if (const json* b = find(j, "browsers")) out.browsers = get_string_list(*b, "browsers");
}

std::string to_json_text(const env_deleted& r) { return dump({{"session_id", r.session_id}, {"deleted", true}}); }

void from_json_text(std::string_view text, env_deleted& out) {
  json j = parse_object(text);
  out.session_id = get_string(need(j, "session_id", "a string"), "session_id");
}

// ---- errors

std::string to_json_text(const env_api_error& e) {
  json err = {{"code", e.status()}, {"message", e.what()}};
  if (!e.details().empty()) err["details"] = e.details();
  return dump({{"error", std::move(err)}});
}

env_api_error parse_error_body(int status, std::string_view body) {
  try {
    json j = parse_object(body);
    const json* err = find(j, "error");
    if (err && err->is_object()) {
      const json* msg = find(*err, "message");
      std::vector<std::string> details;
      if (const json* d = find(*err, "details"); d && d->is_array())
        for (const auto& item : *d)
          if (item.is_string()) details.push_back(item.get<std::string>());
      if (msg && msg->is_string()) return env_api_error(status, msg->get<std::string>(), std::move(details));
    }
  } catch (const env_api_error&) {
    // not the error shape: fall through
  }
  // An HTML error page (the HTTP layer answers 413/431/400 before the API sees the
  // request) or a proxy's page: keep a short, readable excerpt.
  std::string excerpt;
  bool in_tag = false;
  for (char c : body) {
    if (c == '<') in_tag = true;
    else if (c == '>') { in_tag = false; excerpt += ' '; }
    else if (!in_tag) excerpt += (c == '\n' || c == '\r' || c == '\t') ? ' ' : c;
  }
  std::string squeezed;
  for (char c : excerpt)
    if (!(c == ' ' && (squeezed.empty() || squeezed.back() == ' '))) squeezed += c;
  while (!squeezed.empty() && squeezed.back() == ' ') squeezed.pop_back();
  if (squeezed.size() > 300) squeezed = squeezed.substr(0, 300) + "...";
  return env_api_error(status, "HTTP " + std::to_string(status) + (squeezed.empty() ? "" : ": " + squeezed));
}

}  // namespace kvarena
