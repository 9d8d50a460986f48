// serve-response.h: the JSON bodies `kvarena serve` answers with, in OpenAI's shapes:
// chat.completion / text_completion objects, their stream chunks, the model list, errors.
// `usage` carries OpenAI's prompt_tokens / completion_tokens / total_tokens and kvarena's:
//   kv_policy              the policy and its effective options as a label ("window:window=64:sinks=0")
//   kv_options             the same options as an object
//   peak_kv_logical_bytes  the most logical KV bytes the sequence held (kv/kv-logical-bytes.h)
//   peak_kv_bytes          the most KV memory it had allocated
//   kv_kept_tokens         tokens kept per KV head after the last step (max over layers)
//   queue_ms, prompt_ms, decode_ms   waiting for a worker, the prompt's prefill, the tokens
//   stop_reason            eos, stop, length, context or deadline
// Generated text need not be valid UTF-8 at a cut: invalid bytes become U+FFFD.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>

#include "kv/kv-policy-registry.h"
#include "serve-error.h"
#include "serve-request.h"
#include "serve-scheduler.h"

namespace kvarena::serve {

// What every answer to one request shares.
struct answer_head {
  request_kind kind = request_kind::chat;
  std::string id;       // "chatcmpl-..." / "cmpl-..."
  int64_t created = 0;  // unix seconds
  std::string model;
};

std::string completion_body(const answer_head& h, const serve_outcome& o, const kv_policy_spec& kv);
// A stream chunk: delta text (role: the first chunk of a chat, with role "assistant");
// finish: "" while going on, else the finish_reason.
std::string chunk_body(const answer_head& h, std::string_view delta, bool role, std::string_view finish);
// The last chunk of a stream with stream_options.include_usage: no choices, the usage.
std::string usage_chunk_body(const answer_head& h, const serve_outcome& o, const kv_policy_spec& kv);
std::string error_body(const serve_error& e);
std::string models_body(const std::string& model_id, int64_t created);
std::string health_body(const std::string& model_id, int parallel, int active, int queued, int queue_limit,
                        int64_t served, int64_t cancelled);

}  // namespace kvarena::serve
