// judge-openai.cpp: see judge-openai.h.
#include "eval/judge-openai.h"

#include <cstdlib>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "common/openai-chat.h"
#include "eval/judge-prompt.h"

namespace kvarena {

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
  openai_chat_options call;
  call.url = opt_.url;
  call.api_key = opt_.api_key;
  call.timeout_ms = opt_.timeout_ms;
  const std::string body = json{{"model", opt_.model},
                                {"messages", messages},
                                {"temperature", 0},
                                {"top_p", 1.0},
                                {"max_tokens", opt_.max_tokens}}
                               .dump(-1, ' ', false, json::error_handler_t::replace);
  const openai_chat_result res = openai_chat(call, body);
  judge_result out;
  if (!res.ok) {
    out.error = res.error;
    return out;
  }
  out.reply = res.content;
  return out;
}

}  // namespace kvarena
