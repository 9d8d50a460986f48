// serve-request.cpp: request bodies -> serve_request (serve-request.h). One of the two files
// of serve/ that include nlohmann/json (serve-response.cpp writes the answers).
#include "serve-request.h"

#include <cmath>
#include <limits>

#include <nlohmann/json.hpp>

#include "common/json-nesting.h"
#include "serve-error.h"

namespace kvarena::serve {
namespace {

using json = nlohmann::json;

[[noreturn]] void bad(const std::string& param, const std::string& what) { throw serve_error(400, param + ": " + what, param); }

const char* type_name(const json& v) {
  if (v.is_number_integer()) return "an integer";
  if (v.is_number()) return "a number";
  if (v.is_string()) return "a string";
  if (v.is_boolean()) return "a boolean";
  if (v.is_array()) return "an array";
  if (v.is_object()) return "an object";
  return "null";
}

double number(const json& v, const std::string& param) {
  if (!v.is_number()) bad(param, std::string("must be a number (got ") + type_name(v) + ")");
  return v.get<double>();
}

// An integer, also written as 5.0; within [lo, hi].
int64_t integer(const json& v, const std::string& param, int64_t lo, int64_t hi) {
  if (v.is_number_unsigned() && v.get<uint64_t>() > uint64_t(std::numeric_limits<int64_t>::max()))
    bad(param, "is out of range");
  double d = 0;
  if (v.is_number_integer()) {
    const int64_t x = v.get<int64_t>();
    if (x < lo || x > hi) bad(param, "must be in [" + std::to_string(lo) + ", " + std::to_string(hi) + "] (got " + std::to_string(x) + ")");
    return x;
  }
  d = number(v, param);
  if (d != std::floor(d)) bad(param, "must be an integer (got " + v.dump() + ")");
  if (d < double(lo) || d > double(hi)) bad(param, "must be in [" + std::to_string(lo) + ", " + std::to_string(hi) + "] (got " + v.dump() + ")");
  return int64_t(d);
}

bool boolean(const json& v, const std::string& param) {
  if (!v.is_boolean()) bad(param, std::string("must be true or false (got ") + type_name(v) + ")");
  return v.get<bool>();
}

std::string string(const json& v, const std::string& param) {
  if (!v.is_string()) bad(param, std::string("must be a string (got ") + type_name(v) + ")");
  return v.get<std::string>();
}

// No request of the OpenAI API nests deeper than this (messages -> content parts -> text).
constexpr int k_max_body_depth = 64;

json parse_body(std::string_view body) {
  if (!json_nesting_within(body, k_max_body_depth))
    throw serve_error(400, "the request body nests deeper than " + std::to_string(k_max_body_depth) +
                               " levels of [ and {; no request of this API needs that");
  json j = json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded())
    throw serve_error(400, "the request body is not valid JSON (send a JSON object with Content-Type: application/json)");
  if (!j.is_object()) throw serve_error(400, std::string("the request body must be a JSON object (got ") + type_name(j) + ")");
  return j;
}

// "content": a string, null, or an array of parts of which only text parts are read.
std::string message_content(const json& c, const std::string& param) {
  if (c.is_null()) return "";
  if (c.is_string()) return c.get<std::string>();
  if (!c.is_array()) bad(param, std::string("must be a string or an array of content parts (got ") + type_name(c) + ")");
  std::string text;
  for (size_t i = 0; i < c.size(); ++i) {
    const std::string p = param + "[" + std::to_string(i) + "]";
    const json& part = c[i];
    if (!part.is_object()) bad(p, std::string("must be an object {\"type\": \"text\", \"text\": ...} (got ") + type_name(part) + ")");
    const auto t = part.find("type");
    if (t == part.end()) bad(p + ".type", "is missing");
    const std::string type = string(*t, p + ".type");
    if (type != "text")
      bad(p + ".type", "'" + type + "' is not supported: this server runs a text-only model (send text parts only)");
    const auto x = part.find("text");
    if (x == part.end()) bad(p + ".text", "is missing");
    text += string(*x, p + ".text");
  }
  return text;
}

std::vector<chat_message> messages(const json& j) {
  const auto it = j.find("messages");
  if (it == j.end()) bad("messages", "is missing (give an array of {\"role\", \"content\"})");
  if (!it->is_array()) bad("messages", std::string("must be an array (got ") + type_name(*it) + ")");
  if (it->empty()) bad("messages", "is empty (give at least one message)");
  std::vector<chat_message> out;
  for (size_t i = 0; i < it->size(); ++i) {
    const std::string p = "messages[" + std::to_string(i) + "]";
    const json& m = (*it)[i];
    if (!m.is_object()) bad(p, std::string("must be an object (got ") + type_name(m) + ")");
    const auto r = m.find("role");
    if (r == m.end()) bad(p + ".role", "is missing");
    std::string role = string(*r, p + ".role");
    if (role == "developer") role = "system";
    if (role != "system" && role != "user" && role != "assistant")
      bad(p + ".role", "'" + role + "' is not supported (system, developer, user or assistant)");
    const auto c = m.find("content");
    if (c == m.end()) bad(p + ".content", "is missing");
    if (m.contains("tool_calls") && !m["tool_calls"].is_null() && !(m["tool_calls"].is_array() && m["tool_calls"].empty()))
      bad(p + ".tool_calls", "tool calls are not supported");
    out.push_back({role, message_content(*c, p + ".content")});
  }
  return out;
}

void prompt(const json& j, serve_request& r) {
  const auto it = j.find("prompt");
  if (it == j.end()) bad("prompt", "is missing (give a string)");
  if (it->is_string()) {
    r.prompt = it->get<std::string>();
    return;
  }
  if (!it->is_array()) bad("prompt", std::string("must be a string, an array of one string or of token ids (got ") + type_name(*it) + ")");
  if (it->empty()) bad("prompt", "is empty");
  if ((*it)[0].is_string()) {
    if (it->size() != 1) bad("prompt", "one prompt per request (this server answers n = 1)");
    r.prompt = (*it)[0].get<std::string>();
    return;
  }
  r.prompt_is_tokens = true;
  for (size_t i = 0; i < it->size(); ++i)
    r.prompt_tokens.push_back(int32_t(integer((*it)[i], "prompt[" + std::to_string(i) + "]", 0, std::numeric_limits<int32_t>::max())));
}

// A field that asks for what this server cannot do: refused unless it has its neutral value.
void refuse_unless_neutral(const json& j) {
  if (auto it = j.find("n"); it != j.end() && !it->is_null() && integer(*it, "n", 1, 1 << 20) != 1)
    bad("n", "only n = 1 is supported (send several requests)");
  for (const char* k : {"logprobs", "echo"})
    if (auto it = j.find(k); it != j.end() && !it->is_null() && !(it->is_boolean() && !it->get<bool>()) &&
                             !(it->is_number_integer() && it->get<int64_t>() == 0))
      bad(k, "is not supported");
  for (const char* k : {"frequency_penalty", "presence_penalty"})
    if (auto it = j.find(k); it != j.end() && !it->is_null() && number(*it, k) != 0.0)
      bad(k, "is not supported (only 0)");
  if (auto it = j.find("tools"); it != j.end() && !it->is_null() && !(it->is_array() && it->empty()))
    bad("tools", "tool calls are not supported");
  if (auto it = j.find("suffix"); it != j.end() && !it->is_null() && !(it->is_string() && it->get<std::string>().empty()))
    bad("suffix", "is not supported");
}

void kv_object(const json& j, serve_request& r) {
  const auto it = j.find("kv");
  if (it == j.end() || it->is_null()) return;
  if (!it->is_object())
    bad("kv", std::string("must be an object such as {\"policy\": \"window\", \"window\": 512} (got ") + type_name(*it) + ")");
  r.has_kv = true;
  for (const auto& [key, v] : it->items()) {
    kv_field f;
    f.key = key;
    if (v.is_boolean()) f.value = v.get<bool>();
    else if (v.is_string()) f.value = v.get<std::string>();
    else if (v.is_number()) {
      f.value = v.get<double>();
      f.integral = v.is_number_integer() || v.get<double>() == std::floor(v.get<double>());
    } else
      bad("kv." + key, std::string("must be a number, a string or a boolean (got ") + type_name(v) + ")");
    r.kv.push_back(std::move(f));
  }
}

void common(const json& j, serve_request& r) {
  refuse_unless_neutral(j);
  if (auto it = j.find("model"); it != j.end() && !it->is_null()) r.model = string(*it, "model");
  if (auto it = j.find("temperature"); it != j.end() && !it->is_null()) {
    const double t = number(*it, "temperature");
    if (!(t >= 0 && t <= 2)) bad("temperature", "must be in [0, 2] (got " + it->dump() + ")");
    r.sampling.temperature = float(t);
  }
  if (auto it = j.find("top_p"); it != j.end() && !it->is_null()) {
    const double p = number(*it, "top_p");
    if (!(p > 0 && p <= 1)) bad("top_p", "must be in (0, 1] (got " + it->dump() + ")");
    r.sampling.top_p = float(p);
  }
  if (auto it = j.find("top_k"); it != j.end() && !it->is_null())
    r.sampling.top_k = int32_t(integer(*it, "top_k", 0, std::numeric_limits<int32_t>::max()));
  if (auto it = j.find("seed"); it != j.end() && !it->is_null())
    r.sampling.seed = uint64_t(integer(*it, "seed", std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max()));
  for (const char* k : {"max_tokens", "max_completion_tokens"})
    if (auto it = j.find(k); it != j.end() && !it->is_null()) r.max_tokens = integer(*it, k, 1, int64_t(1) << 31);
  if (auto it = j.find("stop"); it != j.end() && !it->is_null()) {
    if (it->is_string()) {
      r.stop.push_back(it->get<std::string>());
    } else if (it->is_array()) {
      if (it->size() > 16) bad("stop", "at most 16 stop strings (got " + std::to_string(it->size()) + ")");
      for (size_t i = 0; i < it->size(); ++i) r.stop.push_back(string((*it)[i], "stop[" + std::to_string(i) + "]"));
    } else {
      bad("stop", std::string("must be a string or an array of strings (got ") + type_name(*it) + ")");
    }
    for (const auto& s : r.stop)
      if (s.empty()) bad("stop", "a stop string is empty");
  }
  if (auto it = j.find("stream"); it != j.end() && !it->is_null()) r.stream = boolean(*it, "stream");
  if (auto it = j.find("stream_options"); it != j.end() && !it->is_null()) {
    if (!it->is_object()) bad("stream_options", std::string("must be an object (got ") + type_name(*it) + ")");
    if (auto u = it->find("include_usage"); u != it->end() && !u->is_null())
      r.include_usage = boolean(*u, "stream_options.include_usage");
  }
  if (auto it = j.find("ignore_eos"); it != j.end() && !it->is_null()) r.ignore_eos = boolean(*it, "ignore_eos");
  kv_object(j, r);
}

}  // namespace

serve_request parse_chat_request(std::string_view body) {
  const json j = parse_body(body);
  serve_request r;
  r.kind = request_kind::chat;
  common(j, r);
  r.messages = messages(j);
  return r;
}

serve_request parse_completion_request(std::string_view body) {
  const json j = parse_body(body);
  serve_request r;
  r.kind = request_kind::completion;
  common(j, r);
  prompt(j, r);
  return r;
}

}  // namespace kvarena::serve
