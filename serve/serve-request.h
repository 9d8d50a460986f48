// serve-request.h: the bodies of POST /v1/chat/completions and /v1/completions, parsed and
// checked field by field. What is accepted (OpenAI's names and types):
//   chat:        messages [{role: system|developer|user|assistant, content: string | [{type:
//                "text", text}] | null}] (developer is read as system)
//   completions: prompt: string | [string] (one) | [int, ...] (token ids)
//   both:        model (any string), temperature [0,2] (default 1), top_p (0,1] (default 1),
//                max_tokens / max_completion_tokens >= 1 (default: until the context ends),
//                stop: string | [string] (at most 16), seed (integer), stream (bool),
//                stream_options {include_usage: bool}, n (1 only), and kvarena's extensions:
//                top_k >= 0, ignore_eos (bool: EOS and end-of-turn tokens do not end the
//                reply, only max_tokens, a given stop or the context end; as llama-server's,
//                for benchmarks), kv {policy, option: value, ...}
//                (serve-kv.h reads it).
// Fields that ask for something this server cannot do (n > 1, logprobs, tools, penalties
// other than 0, images) are refused, not ignored; other unknown fields are ignored, as
// OpenAI-compatible servers do. Malformed JSON, a wrong type or a value out of range:
// serve_error 400 naming the field. No JSON library in this header (serve-request.cpp has it).
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "chat-template.h"
#include "sampler.h"

namespace kvarena::serve {

// One entry of the request's "kv" object, as JSON gave it.
struct kv_field {
  std::string key;
  std::variant<double, bool, std::string> value;
  bool integral = false;  // a JSON integer (not 1.5)
};

enum class request_kind { chat, completion };

struct serve_request {
  request_kind kind = request_kind::chat;
  std::string model;
  std::vector<chat_message> messages;  // chat
  std::string prompt;                  // completion, as text
  std::vector<int32_t> prompt_tokens;  // completion, as token ids (prompt_is_tokens)
  bool prompt_is_tokens = false;
  sampler_options sampling{1.0f, 1.0f, 0, 0};  // OpenAI's defaults: temperature 1, top_p 1
  std::optional<int64_t> max_tokens;
  std::vector<std::string> stop;
  bool stream = false;
  bool include_usage = false;  // stream_options.include_usage
  bool ignore_eos = false;
  bool has_kv = false;         // a "kv" object was given
  std::vector<kv_field> kv;
};

// Throw serve_error(400, ..., param) on anything malformed.
serve_request parse_chat_request(std::string_view body);
serve_request parse_completion_request(std::string_view body);

}  // namespace kvarena::serve
