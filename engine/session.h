// session.h: the CPU backend's sequence (sequence.h): one token sequence on one model:
// append tokens (chunked prefill), read the logits of the last position (or of every
// position on request), sample and decode. Owns the forward state (KV cache, thread pool,
// scratch) and reports live and peak memory. User errors (token id out of range, context
// overflow, bad options) throw engine_error naming the value and the limit.
// session_options are every backend's options (make_sequence takes them).
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "kv/kv-policy.h"
#include "kv/kv-runtime.h"
#include "memory-stats.h"
#include "model-forward.h"
#include "model.h"
#include "sampler.h"
#include "sequence.h"

namespace kvarena {

class tokenizer;

struct session_options {
  int n_threads = 1;
  int64_t n_ctx = 0;            // most tokens the sequence may hold; 0: the model's context length
  int64_t prefill_chunk = 512;  // tokens per forward call while appending
  bool all_logits = false;      // keep the logits of every appended position (all_logits())
  bool reference = false;       // plain-loop reference kernels (tests)
  bool gelu_f16_table = false;  // ggml's F16-rounded GELU (tests that match llama.cpp)
  // KV-cache policy. "": no policy, the plain cache: `full` over an F32 kv_store (the path
  // compared with llama.cpp); full|window|h2o|confkv|confkv-l|freekv: the kv_store (FP16,
  // INT8 with confkv --kv-int8) under that policy. kv: its options (the session fills in
  // the model shape). Every path runs the same store and attention kernel.
  std::string kv_policy;
  kv_policy_options kv;
  bool kv_overlap = true;         // freekv: speculative recall overlapped on a worker thread
  bool track_confidence = false;  // confidence of every decode step even if the policy ignores it
  // Sequences of the process (the runner's --batch N items) whose decode steps a device
  // backend may run together as one batched forward call (decode-batcher.h); 1: alone.
  // The CPU session runs each sequence on its own threads and ignores it.
  int decode_batch = 1;
};

class session final : public sequence {
 public:
  session(const model& m, const session_options& opt = {});

  // Runs the tokens through the model in chunks of prefill_chunk, extending the sequence.
  void append(std::span<const int32_t> tokens) override;
  // Appends one token as a decode step: the logits it produces gate the policy (confkv's
  // confidence, kv_runtime::end_forward). Teacher-forced scoring appends this way.
  void append_decode(int32_t token) override;
  // kvarena::generate on this session.
  generate_result generate(const tokenizer& tok, std::span<const int32_t> prompt,
                           const generate_options& opt, sampler& s) {
    return kvarena::generate(*this, tok, prompt, opt, s);
  }
  const float* next_logits() override { return logits(); }
  const char* backend() const override { return "cpu"; }

  // Logits of the last appended position: (n_vocab,). Valid once n_past() > 0.
  const float* logits() const;
  // Logits of every position appended since the start or reset(): (n_past, n_vocab);
  // only with session_options::all_logits.
  const std::vector<float>& all_logits() const { return all_logits_; }

  int64_t n_past() const override { return n_past_; }
  int64_t n_ctx() const override { return opt_.n_ctx; }
  int64_t n_vocab() const override { return model_.config.n_vocab; }
  const model& get_model() const { return model_; }
  const session_options& options() const { return opt_; }

  // Starts a new sequence: forgets the tokens but keeps the memory already allocated.
  void reset() override;
  memory_stats memory() const override;

  // The KV policy's per-step signals: the last forward call, and a callback run after
  // every forward call (decode step or prefill chunk); without a policy, those of the
  // plain cache (`full` over F32).
  const kv_step_stats& last_step() const override { return last_step_; }
  void on_step(std::function<void(const kv_step_stats&)> fn) override { on_step_ = std::move(fn); }
  const kv_policy* policy() const;  // nullptr without one
  const kv_runtime* kv() const;     // the policy's cache (store, host pool); nullptr without one
                                    // (the plain cache is internal)

 private:
  const model& model_;
  session_options opt_;
  std::unique_ptr<forward_state> state_;
  std::vector<float> logits_;      // (n_vocab,) of the last position
  std::vector<float> all_logits_;  // (n_past, n_vocab) with all_logits
  int64_t n_past_ = 0;
  size_t weights_bytes_ = 0;
  kv_step_stats last_step_;
  std::function<void(const kv_step_stats&)> on_step_;
  // Checks the ids and the context, then runs the tokens (decode: one token gating the policy).
  void append_tokens(std::span<const int32_t> tokens, bool decode);
  void forward_chunks(std::span<const int32_t> tokens, bool decode);
};


}  // namespace kvarena
