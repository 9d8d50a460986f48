// serve-response.cpp: the answers' JSON (serve-response.h). One of the two files of serve/
// that include nlohmann/json (serve-request.cpp reads the requests).
#include "serve-response.h"

#include <nlohmann/json.hpp>

namespace kvarena::serve {
namespace {

using json = nlohmann::ordered_json;

std::string dump(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }

json kv_options_json(const kv_policy_spec& kv) {
  json j = json::object();
  for (const kv_option_value& v : kv_effective_options(kv)) {
    if (v.type == kv_option_type::real) j[v.key] = std::stod(kv_num(v.value));
    else j[v.key] = int64_t(v.value);
  }
  return j;
}

json usage_json(const serve_outcome& o, const kv_policy_spec& kv) {
  const int64_t completion = int64_t(o.result.tokens.size());
  return {{"prompt_tokens", o.prompt_tokens},
          {"completion_tokens", completion},
          {"total_tokens", o.prompt_tokens + completion},
          {"kv_policy", kv.name.empty() ? std::string("none") : kv.text},
          {"kv_options", kv_options_json(kv)},
          {"peak_kv_logical_bytes", o.peak_kv_logical_bytes},
          {"peak_kv_bytes", o.peak_kv_bytes},
          {"kv_kept_tokens", o.kv_kept_tokens},
          {"queue_ms", o.queue_ms},
          {"prompt_ms", o.result.prompt_ms},
          {"decode_ms", o.result.generate_ms},
          {"stop_reason", o.stop_reason}};
}

json head_json(const answer_head& h, bool chunk) {
  const bool chat = h.kind == request_kind::chat;
  return {{"id", h.id},
          {"object", chat ? (chunk ? "chat.completion.chunk" : "chat.completion") : "text_completion"},
          {"created", h.created},
          {"model", h.model},
          {"system_fingerprint", "kvarena-" KVARENA_VERSION}};
}

}  // namespace

std::string completion_body(const answer_head& h, const serve_outcome& o, const kv_policy_spec& kv) {
  json j = head_json(h, false);
  json choice;
  if (h.kind == request_kind::chat) {
    choice = {{"index", 0},
              {"message", {{"role", "assistant"}, {"content", o.result.text}}},
              {"logprobs", nullptr},
              {"finish_reason", o.finish}};
  } else {
    choice = {{"text", o.result.text}, {"index", 0}, {"logprobs", nullptr}, {"finish_reason", o.finish}};
  }
  j["choices"] = json::array({choice});
  j["usage"] = usage_json(o, kv);
  return dump(j);
}

std::string chunk_body(const answer_head& h, std::string_view delta, bool role, std::string_view finish) {
  json j = head_json(h, true);
  json choice;
  const json fin = finish.empty() ? json(nullptr) : json(std::string(finish));
  if (h.kind == request_kind::chat) {
    json d = json::object();
    if (role) d["role"] = "assistant";
    if (role || !delta.empty() || finish.empty()) d["content"] = std::string(delta);
    choice = {{"index", 0}, {"delta", d}, {"logprobs", nullptr}, {"finish_reason", fin}};
  } else {
    choice = {{"text", std::string(delta)}, {"index", 0}, {"logprobs", nullptr}, {"finish_reason", fin}};
  }
  j["choices"] = json::array({choice});
  return dump(j);
}

std::string usage_chunk_body(const answer_head& h, const serve_outcome& o, const kv_policy_spec& kv) {
  json j = head_json(h, true);
  j["choices"] = json::array();
  j["usage"] = usage_json(o, kv);
  return dump(j);
}

std::string error_body(const serve_error& e) {
  json err = {{"message", e.what()}, {"type", e.type()}, {"param", e.param().empty() ? json(nullptr) : json(e.param())},
              {"code", nullptr}};
  return dump(json{{"error", err}});
}

std::string models_body(const std::string& model_id, int64_t created) {
  json m = {{"id", model_id}, {"object", "model"}, {"created", created}, {"owned_by", "kvarena"}};
  return dump(json{{"object", "list"}, {"data", json::array({m})}});
}

std::string health_body(const std::string& model_id, int parallel, int active, int queued, int queue_limit,
                        int64_t served, int64_t cancelled) {
  return dump(json{{"status", "ok"},
                   {"model", model_id},
                   {"slots", {{"parallel", parallel}, {"active", active}, {"queued", queued}, {"queue_limit", queue_limit},
                              {"served", served}, {"cancelled", cancelled}}}});
}

}  // namespace kvarena::serve
