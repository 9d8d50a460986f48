// openai-chat.h: one call of an OpenAI-compatible chat completions endpoint (OpenAI, vLLM,
// SGLang, llama.cpp's llama-server, `kvarena serve`), shared by the evaluator's judge
// (--judge-url, eval/judge-openai.h) and the agent (--agent-url, agent/agent-model-openai.h):
// the URL completed to .../v1/chat/completions, the bearer token, bounded retries with
// exponential backoff on 429, 5xx and no answer (a Retry-After in seconds is honoured,
// capped), then choices[0].message.content and the answer's usage object. Other answers
// (4xx, a body without choices[0].message.content) fail at once: trying again would get
// the same. Thread-safe; never throws.
#pragma once
#include <functional>
#include <string>
#include <vector>

namespace kvarena {

struct openai_chat_options {
  std::string url;               // the endpoint (chat_completions_url() of what the user gave)
  std::string api_key;           // sent as "Authorization: Bearer KEY"; "" sends none
  long timeout_ms = 120000;      // one try
  int tries = 1;                 // attempts in all (1: no retry)
  long backoff_ms = 1000;        // wait before the 2nd try, doubled for each further one
  long max_wait_ms = 60000;      // cap of one wait, Retry-After included
  std::function<void(long ms)> sleep;  // how to wait (tests); empty: sleep the thread
};

// A try that failed and was tried again.
struct openai_chat_retry {
  long status = 0;     // HTTP status; 0: no answer
  std::string error;   // "HTTP 429: {...}" or "cannot reach ...: Connection refused"
  long waited_ms = 0;  // the wait before the next try (Retry-After's when given)
};

struct openai_chat_result {
  bool ok = false;
  std::string error;          // when !ok: the URL, the tries and the last answer (status, body head)
  long status = 0;            // the last try's HTTP status (0: no answer)
  std::string content;        // choices[0].message.content
  std::string finish_reason;  // choices[0].finish_reason ("" when absent)
  std::string usage_json;     // the answer's "usage" object as JSON text; "" when it has none
  int tries = 0;              // requests sent
  std::vector<openai_chat_retry> retries;  // the failed tries before the last one
  double latency_ms = 0;      // the last try's request time
};

// Posts `body_json` (a chat completions request) to opt.url.
openai_chat_result openai_chat(const openai_chat_options& opt, const std::string& body_json);

// "http://h:8000" -> "http://h:8000/v1/chat/completions"; ".../v1" gets "/chat/completions";
// a URL already ending in /chat/completions is kept.
std::string chat_completions_url(const std::string& url);

// The retries of a call as one line: "HTTP 429 (waited 1000 ms); HTTP 503 (waited 2000 ms)".
std::string format_retries(const std::vector<openai_chat_retry>& retries);

}  // namespace kvarena
