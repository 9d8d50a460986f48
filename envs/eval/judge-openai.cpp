// judge-openai.cpp: see judge-openai.h.
#include "eval/judge-openai.h"

#include <cstdlib>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "common/http-call.h"
#include "eval/judge-prompt.h"

namespace kvarena {

std::string chat_completions_url(const std::string& url) {
  std::string u = url;
  while (!u.empty() && u.back() == '/') u.pop_back();
  const std::string tail = "/chat/completions";
  if (u.size() >= tail.size() && u.compare(u.size() - tail.size(), tail.size(), tail) == 0) return u;
  if (u.size() >= 3 && u.compare(u.size() - 3, 3, "/v1") == 0) return u + tail;
  return u + "/v1" + tail;
}

openai_judge::openai_judge(openai_judge_options opt) : opt_(std::move(opt)) {
  if (opt_.url.rfind("http://", 0) != 0 && opt_.url.rfind("https://", 0) != 0)
    throw std::invalid_argument("--judge-url '" + opt_.url +
                                "': expected an http(s) URL of an OpenAI-compatible server, e.g. "
                                "http://127.0.0.1:8000/v1/chat/completions");
  opt_.url = chat_completions_url(opt_.url);
  if (opt_.api_key.empty())
    if (const char* k = std::getenv("OPENAI_API_KEY")) opt_.api_key = k;
}

judge_result openai_judge::judge(const judge_request& req) {
  using json = nlohmann::json;
  json messages = json::array();
  for (const judge_message& m : judge_messages(req)) messages.push_back({{"role", m.role}, {"content", m.content}});
  http_call_request call;
  call.method = "POST";
  call.url = opt_.url;
  call.timeout_ms = opt_.timeout_ms;
  call.headers = {{"Content-Type", "application/json"}};
  if (!opt_.api_key.empty()) call.headers.push_back({"Authorization", "Bearer " + opt_.api_key});
  call.body = json{{"model", opt_.model},
                   {"messages", messages},
                   {"temperature", 0},
                   {"top_p", 1.0},
                   {"max_tokens", opt_.max_tokens}}
                  .dump(-1, ' ', false, json::error_handler_t::replace);
  http_call_response res = http_call(call);
  judge_result out;
  if (!res.ok) {
    out.error = res.error;
    return out;
  }
  if (res.status != 200) {
    out.error = opt_.url + " answered HTTP " + std::to_string(res.status) + ": " + res.body.substr(0, 300);
    return out;
  }
  json j = json::parse(res.body, nullptr, false);
  const json* content = nullptr;
  if (j.is_object() && j.contains("choices") && j["choices"].is_array() && !j["choices"].empty()) {
    const json& c = j["choices"][0];
    if (c.contains("message") && c["message"].contains("content") && c["message"]["content"].is_string())
      content = &c["message"]["content"];
  }
  if (!content) {
    out.error = opt_.url + " answered without choices[0].message.content: " + res.body.substr(0, 300);
    return out;
  }
  out.reply = content->get<std::string>();
  return out;
}

}  // namespace kvarena
