// judge-openai.h: the fuzzy judge behind `--judge-url URL`: an OpenAI-compatible chat
// completions endpoint (OpenAI, vLLM, llama.cpp's server, ...) asked VWA's questions
// (judge-prompt.h) with temperature 0, as VWA asks GPT-4. The URL is the endpoint itself
// (".../v1/chat/completions") or a server's base URL, to which /v1/chat/completions is
// added. OPENAI_API_KEY, when set, is sent as the bearer token. Thread-safe.
#pragma once
#include <string>

#include "common/openai-chat.h"  // chat_completions_url
#include "eval/eval-judge.h"

namespace kvarena {

struct openai_judge_options {
  std::string url;
  std::string model = "gpt-4-1106-preview";  // VWA's judge; servers of one model ignore it
  std::string api_key;                       // "" = $OPENAI_API_KEY, if set
  long timeout_ms = 120000;
  int max_tokens = 768;
};

class openai_judge : public fuzzy_judge {
 public:
  // std::invalid_argument when the URL is not http(s)://...
  explicit openai_judge(openai_judge_options opt);
  judge_result judge(const judge_request& req) override;
  std::string name() override { return "openai:" + opt_.model + "@" + opt_.url; }

 private:
  openai_judge_options opt_;
};

}  // namespace kvarena
