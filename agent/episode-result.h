// episode-result.h: what one agent episode (one task, one policy, one seed) produced, as
// the runner stores it (results DB: a task row, step rows, a sampled KV trace). Plain
// structs, no behaviour.
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "eval/evaluator.h"

namespace kvarena {

// Which model figures are known. The embedded engine measures them all; an endpoint
// (agent-model-openai.h) only what its usage reports. Not reported: stored NULL, not 0.
struct reported_figures {
  bool tokens = true;      // prompt and generated tokens
  bool kv_tokens = true;   // tokens kept in the KV cache
  bool kv_bytes = true;    // allocated KV bytes
  bool host_device = true; // FreeKV's host KV bytes and the device total (weights + KV + scratch)
  bool kv_logical = true;  // logical KV bytes
  bool process = true;     // the model process's resident bytes
};

// One agent step: one model call and one env step.
struct step_record {
  int index = 0;                 // 0-based
  std::string url;               // the page the action was chosen on
  std::string output;            // the model's reply (stop string cut)
  std::string observation;       // the observation text the model was shown (after truncation)
  std::string screenshot_png;    // its Set-of-Marks screenshot (PNG bytes; "" unless the session's observation is som)
  std::string action;            // canonical action text ("click [12]"), "none" on a parse failure
  bool parsed = false;           // the reply held a valid action
  std::optional<std::string> action_error;  // the parse error, or what the env refused
  int64_t obs_tokens = 0;        // observation tokens shown (after truncation)
  bool obs_truncated = false;
  int64_t prompt_tokens = 0;     // tokens prefilled for this step (full mode: only the new ones)
  int64_t generated_tokens = 0;  // tokens sampled
  std::string gen_stop;          // why generation ended: eos|stop|length|context
  int64_t kv_tokens = 0;         // tokens kept per KV head after the step, max over layers
  int64_t seq_len = 0;           // tokens in the session's sequence after the step
  size_t kv_bytes = 0;           // KV bytes on the device after the step
  size_t kv_host_bytes = 0;      // FreeKV host pool bytes after the step
  size_t kv_logical_bytes = 0;   // logical KV bytes after the step (engine/kv/kv-logical-bytes.h)
  size_t process_bytes = 0;      // the process's resident bytes after the step's model call (VmRSS)
  float confidence = -1.f;       // mean confidence of the step's decode steps; -1: none computed
  int64_t budget = -1;           // the policy's budget after the step; -1: unbounded / no policy
  double latency_ms = 0;         // model time: prefill_ms + decode_ms
  double prefill_ms = 0;
  double decode_ms = 0;
  double env_ms = 0;             // the env step call
  reported_figures reported;
  int model_retries = -1;        // an endpoint's failed tries before its answer; -1: no endpoint
  std::string model_retry_log;   // what they were ("HTTP 429 (waited 1000 ms)"), "" none
};

// One sample of the KV cache over the episode (every prefill chunk, every k-th decode step,
// the last forward call of every step), for the KV-size plot of a task.
struct kv_trace_point {
  int step = 0;               // agent step the forward call belongs to
  int64_t forward_call = 0;   // forward calls in the episode so far (1-based)
  int64_t token_index = 0;    // tokens run through the model in the episode so far (every
                              // re-prefill of mode last counts)
  int64_t seq_len = 0;        // tokens in the sequence after the call
  int64_t kv_tokens = 0;      // kept tokens per KV head, max over layers
  size_t kv_bytes = 0;
  size_t kv_host_bytes = 0;
  size_t kv_logical_bytes = 0;
  int64_t budget = -1;
  float confidence = -1.f;    // of the call's gating logits; -1: none
  bool decode = false;        // a decode step (else a prefill chunk)
};

struct episode_result {
  int64_t task_id = 0;
  // "done": the episode ended (stop, an early-stop rule, a full context) and was evaluated;
  // "timeout": the episode's wall-clock limit ended it (evaluated too);
  // "error": the model or the env failed, or the first prompt does not fit n_ctx; `error`
  // says where and why; not evaluated.
  std::string status = "error";
  std::string end_reason;       // "stop", the early-stop rule's text, "Context full ...", "Timeout ..."
  bool success = false;         // evaluation score == 1
  double score = 0;
  int steps = 0;                // env steps taken
  std::string answer;           // what was evaluated ("Early stop: <reason>" after an early stop)
  std::string final_url;
  int64_t prompt_tokens = 0;    // sum over steps
  int64_t generated_tokens = 0;
  size_t peak_kv_bytes = 0;       // most KV bytes on the device at any time
  size_t peak_kv_host_bytes = 0;  // most FreeKV host pool bytes
  size_t peak_device_bytes = 0;   // weights + KV peak + scratch
  size_t peak_kv_logical_bytes = 0;  // most logical KV bytes after any forward call
  size_t peak_process_bytes = 0;  // resident high-water of the process during the episode
                                  // (+ the device's allocated high-water on CUDA)
  double wall_ms = 0;
  double prefill_ms = 0;
  double decode_ms = 0;
  double env_ms = 0;            // env calls: create, steps, evaluate
  std::string error;            // "" unless status is error
  reported_figures reported;    // of the tokens and peaks above
  int64_t model_calls = -1;     // an endpoint's requests in all (retries included); -1: no endpoint
  int64_t model_retries = -1;   // of which retries; -1: no endpoint
  std::string history_mode;     // "last" or "full"
  std::string chat_template;    // its name
  std::string kv_policy;        // session_options::kv_policy ("" = the plain cache)
  eval_result evaluation;       // the evaluators' details (when evaluated)
  std::vector<step_record> step_records;
  std::vector<kv_trace_point> kv_trace;
};

}  // namespace kvarena
