// agent-model-openai.h: `kvarena run --agent-url URL`: an OpenAI-compatible chat completions
// endpoint (vLLM, SGLang, llama.cpp's llama-server, an API, `kvarena serve`) as the agent's
// model (agent-model.h). Each step sends the conversation the embedded engine would be fed
// as chat messages (history last: system + examples + this step's message; full: every turn
// so far) with the run's sampling (temperature, top_p, max_tokens = --max-new-tokens, the
// item's seed, stop strings), and, with images "som" (or "screenshot"), the step's Set-of-Marks
// (or unmarked) screenshot as an image_url content part (a data: URL of the PNG) after the
// last message's text.
// Retries: envs/common/openai-chat.h (429, 5xx, no answer; Retry-After honoured); a step
// whose endpoint still fails, or answers no chat completion, is the item's error.
//
// Recorded per step: the endpoint's usage (prompt_tokens, completion_tokens), the latency
// of the answered request, the retries and what they were. Memory: only what the usage
// reports in kvarena's extra fields (usage or usage.kvarena, as kvarena serve writes them:
// peak_kv_logical_bytes, peak_kv_bytes (allocated), kv_kept_tokens (or kept_tokens),
// prompt_ms / decode_ms); the rest is not reported (NULL in the results file, "not
// reported by the endpoint" in the report). With --policies each item's requests carry its
// policy as kvarena serve's "kv" object (model_context::endpoint_kv_json).
#pragma once
#include <functional>
#include <memory>
#include <string>

#include "agent-model.h"

namespace kvarena {

struct openai_agent_options {
  std::string url;               // the endpoint or the server's base URL (chat_completions_url)
  std::string model;             // the request's "model" ("" sends the URL's host-side default "default")
  std::string api_key;           // bearer token; "" none
  // "som" / "screenshot": the step's screenshot (Set-of-Marks or unmarked, as the env session's
  // observation gives it) as an image part; "none": text only.
  std::string images = "none";
  int tries = 5;                 // requests per step at most (retries included)
  long backoff_ms = 1000;        // before the 2nd try, doubled for each further one
  long max_wait_ms = 60000;      // cap of one wait (Retry-After included)
  long timeout_ms = 600000;      // one request
  std::function<void(long ms)> sleep;  // how to wait between tries (tests); empty: sleep
};

// std::invalid_argument for a URL that is not http(s):// or images other than som/none.
std::shared_ptr<const agent_model> make_openai_agent_model(openai_agent_options opt);

}  // namespace kvarena
