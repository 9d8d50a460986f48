// sequence.h: the backend-neutral token sequence. Everything above the engine (generate,
// the agent loop, the runner, the benchmarks) drives a model through this interface; a
// backend (cpu: session.h; cuda: engine/cuda/, in builds with KVARENA_CUDA) implements it
// and is chosen by name through make_sequence(). The orchestration that is the same on
// every backend lives here once: generate() (prompt, sampling, EOS / control tokens, stop
// strings, context end).
//
// A sequence holds one token sequence on one model under one KV policy
// (session_options::kv_policy): append tokens (chunked prefill), one decode step (whose
// logits gate the policy), the logits of the last position, per-forward-call KV statistics
// (last_step, on_step), memory, reset.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "kv/kv-runtime.h"  // kv_step_stats
#include "memory-stats.h"
#include "sampler.h"

namespace kvarena {

class tokenizer;
struct model;
struct session_options;

struct generate_result;

struct generate_options {
  int64_t max_tokens = 128;         // most new tokens
  std::vector<std::string> stop;    // stop when the text contains one; it is cut from the result
  bool stop_at_eos = true;          // stop at EOS or any control token (not part of the result)
  // Called after each sampled token was appended and the stop strings checked (r: the
  // result so far); false stops the generation with stop_reason "cancelled" (a server's
  // client went away or its deadline passed). Empty: never stops.
  std::function<bool(const generate_result& r)> on_token;
};

struct generate_result {
  std::string text;             // generated text, without the stop string
  std::vector<int32_t> tokens;  // sampled tokens (all appended to the sequence; EOS not included)
  std::string stop_reason;      // "eos", "stop", "length", "context" or "cancelled" (on_token)
  int64_t n_prompt = 0;         // prompt tokens appended by this call
  double prompt_ms = 0;         // time to append the prompt
  double generate_ms = 0;       // time for the sampled tokens
};

class sequence {
 public:
  virtual ~sequence() = default;
  // Runs the tokens through the model in chunks, extending the sequence.
  virtual void append(std::span<const int32_t> tokens) = 0;
  // Appends one token as a decode step: the logits it produces gate the policy.
  virtual void append_decode(int32_t token) = 0;
  // Logits of the last appended position: (n_vocab,). Valid once n_past() > 0. (A device
  // backend copies them to the host here, so it is not const.)
  virtual const float* next_logits() = 0;
  // The next token under `s` (greedy may run on the device), not yet appended.
  virtual int32_t choose_next(sampler& s);
  // choose_next, appended as a decode step; returns it.
  int32_t decode_next(sampler& s) {
    const int32_t t = choose_next(s);
    append_decode(t);
    return t;
  }
  virtual int64_t n_past() const = 0;
  virtual int64_t n_ctx() const = 0;
  virtual int64_t n_vocab() const = 0;
  // Starts a new sequence: forgets the tokens, keeps the memory already allocated.
  virtual void reset() = 0;
  virtual memory_stats memory() const = 0;
  // The KV statistics of the last forward call, and a callback after every forward call.
  virtual const kv_step_stats& last_step() const = 0;
  virtual void on_step(std::function<void(const kv_step_stats&)> fn) = 0;
  // Blocks until queued work is done (device backends; timing).
  virtual void synchronize() {}
  virtual const char* backend() const = 0;
};

// Appends the prompt, then samples until max_tokens, a stop string, EOS (or any control
// token: Llama-3's <|eot_id|>, ChatML's <|im_end|>) or a full context.
generate_result generate(sequence& seq, const tokenizer& tok, std::span<const int32_t> prompt,
                         const generate_options& opt, sampler& s);

// Where a generation must be cut for its stop strings after a piece was appended to `text`
// (which had `old` characters before): the earliest match that can start in the new piece
// or straddle the previous one, or npos.
size_t stop_string_cut(const std::string& text, size_t old, const std::vector<std::string>& stops);

// --- backends ---------------------------------------------------------------------------

using sequence_factory = std::function<std::unique_ptr<sequence>(const model&, const session_options&)>;

// A backend by name: `check` throws engine_error (one line naming what is missing) when it
// cannot run here; `make` builds a sequence. "cpu" is always registered.
struct backend_entry {
  std::string name;
  std::function<void()> check;
  sequence_factory make;
};
void register_backend(backend_entry b);
// The registered names ("cpu", "cuda" in CUDA builds).
std::vector<std::string> backend_names();
// Throws backend_error unless the backend exists and can run here: call it before loading
// a model, so a user learns at once. "cuda" without a CUDA build or without a device says
// which.
void check_backend(std::string_view name);
std::unique_ptr<sequence> make_sequence(std::string_view backend, const model& m, const session_options& opt);

// The process's resident high-water since the last reset_process_peak() (process-memory.h),
// plus, on a device backend, the device's allocated high-water (memory().peak_total_bytes):
// the peak_process_bytes of a task or a bench run.
size_t process_peak_bytes(const sequence& s);

}  // namespace kvarena
