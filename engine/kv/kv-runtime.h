// kv-runtime.h: one sequence's KV cache under a policy, as the forward pass drives it:
// the kv_store (FP16/INT8 kept tokens) and the policy; for FreeKV also the host pool, the
// device page slots and the recall worker (kv-runtime-retrieval.cpp). The forward pass
// calls, per forward call, begin_forward, then per layer append and attend (attend runs the
// policy for that layer at the moment it needs: eviction policies after attention, with the
// attention mass of the chunk; freekv before attention, with the query), then end_forward
// (confkv's gated selection). Only the signals the policy declared (kv_policy_needs) are
// computed. Also the per-step statistics the session reports (kv_step_stats).
// Not here: which tokens a policy keeps (kv-policy-*.cpp), the kernel (kv-attention-cpu.h).
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "kv-attention-cpu.h"
#include "kv-attention-window.h"
#include "kv-policy.h"
#include "kv-store.h"
#include "thread-pool.h"

namespace kvarena {

// What one forward call (a decode step or a prefill chunk) did to the cache.
struct kv_step_stats {
  int64_t step = 0;             // forward calls in this sequence so far (1-based)
  bool decode = false;          // a decode step (one token whose logits gated the policy)
  int64_t n_tokens = 0;         // tokens in this forward call
  int64_t seq_len = 0;          // tokens seen after it
  float confidence = -1.f;      // confidence of the gating logits; -1: not computed
  int64_t budget = -1;          // tokens per layer per KV head the policy allows (mean over layers); -1: unbounded
  std::vector<int64_t> kept;    // (n_layers,) tokens on the device per KV head after the step (max over heads)
  size_t kv_device_bytes = 0;   // KV bytes on the device (store + FreeKV page slots) after the step
  size_t kv_host_bytes = 0;     // FreeKV host pool bytes (0 for other policies)
  size_t kv_logical_bytes = 0;  // logical KV bytes after the step (kv-logical-bytes.h)
  int64_t corrected_heads = 0;  // freekv: (layer, KV head) selections redone this step
  int64_t checked_heads = 0;    // freekv: (layer, KV head) correction tests this step
  size_t recalled_bytes = 0;    // freekv: bytes copied host -> device this step (blocking + overlapped)
  double ms = 0;                // wall time of the forward call
};

// The statistics of a forward call as it starts (every backend's runtime fills in the rest).
kv_step_stats start_step_stats(int64_t step, const step_signals& s, int64_t pos0, int64_t n,
                               int64_t n_layers);
// Closes a forward call's statistics: the caller's ms, the budget (mean over layers at the
// step's sequence length, -1 when a layer is unbounded) and the KV bytes.
void finish_step_stats(kv_step_stats& st, double ms, const kv_policy& p, int64_t n_layers, size_t device_bytes,
                       size_t host_bytes);

struct kv_runtime_config {
  std::string policy;           // a registered policy (kv-policy-registry.h)
  kv_policy_options options;    // shape fields must be set
  int64_t max_chunk = 512;      // most tokens one forward call appends
  bool overlap = true;          // freekv: speculative recall on the worker thread (false: waited for at once)
  bool f32 = false;             // the store's recent tokens in F32 (eviction policies without INT8):
                                // `full` so is the policy-free reference cache
  bool reference = false;       // eviction kind: ref::kv_attend's plain loops instead of the kernel
  // (n_layers,) or empty: layer l's attention window (a sliding-window layer of the model:
  // a query at position p sees keys at positions > p - window; kv-attention-window.h), 0 =
  // the whole causal past. The policy runs on such a layer as on any other; the window
  // applies on top of what it keeps (engine/kv/README.md).
  std::vector<int64_t> layer_window;
  float attn_softcap = 0.0f;    // > 0: attention scores soft-capped (gemma2; kv_attend's softcap)
  int64_t window_of(int64_t layer) const {
    return layer_window.empty() ? 0 : layer_window[size_t(layer)];
  }
};

// One sequence's KV cache under a policy. Two kinds behind one interface, chosen by the
// policy (make_kv_runtime): eviction policies keep their tokens in the kv_store and drop
// some after each chunk (kv-runtime.cpp); a retrieval policy (freekv) keeps everything in a
// host pool and brings pages to the device (kv-runtime-retrieval.cpp). The base class holds
// what both share: the store, the policy, the step statistics, the byte peaks.
class kv_runtime {
 public:
  virtual ~kv_runtime() = default;

  const kv_policy& policy() const { return *policy_; }
  kv_policy_needs needs() const { return needs_; }
  // Most tokens one forward call may carry.
  int64_t max_chunk() const { return max_chunk_; }
  // Whether attention must run for every row of the chunk in every layer (the policy runs
  // in every layer: mass of every row, or freekv's selection with every page's last query).
  virtual bool needs_all_rows() const = 0;

  // One forward call of n tokens at positions [pos0, pos0 + n).
  void begin_forward(const step_signals& s, int64_t pos0, int64_t n);
  // Keys (after RoPE) and values of the chunk for `layer`: (n, n_kv_heads*head_dim) rows, ld apart.
  virtual void append(int64_t layer, const float* k, const float* v, int64_t ld) = 0;
  // Attention of the chunk's last n_q queries q: (n_q, n_heads, head_dim), rows ldq apart,
  // into out (same shape, ldo apart); runs the policy for `layer`.
  virtual void attend(thread_pool& pool, int64_t layer, const float* q, int64_t ldq, int64_t n_q, float scale,
                      float* out, int64_t ldo) = 0;
  // Closes the step: statistics (ms is the caller's). confidence: confidence_from_logits of
  // the logits this call produced (decode steps; -1 when not computed). A policy gated on
  // it (needs().logits_confidence) gets on_step with it now and selects every layer here.
  const kv_step_stats& end_forward(double ms, float confidence = -1.f);

  void reset();  // a new sequence; memory already allocated is kept where it can be
  const kv_step_stats& last() const { return last_; }

  virtual size_t device_bytes() const;  // the store (+ freekv's page slots)
  size_t peak_device_bytes() const;     // the most device_bytes() was after any append or step
  virtual size_t host_bytes() const { return 0; }  // freekv: pool, digest copy, staging
  size_t peak_host_bytes() const { return peak_host_; }
  // Logical KV bytes (kv-logical-bytes.h) now, and the most after any forward call (each
  // prefill chunk is one) since the sequence started.
  size_t logical_bytes() const;
  size_t peak_logical_bytes() const { return peak_logical_; }
  const kv_store& store() const { return store_; }

 protected:
  // Throws engine_error (from make_kv_policy) for bad options.
  explicit kv_runtime(const kv_runtime_config& cfg);
  // The store's configuration for a new sequence (the kind adds its capacities).
  virtual kv_store_config store_config() const;
  virtual void reset_kind() {}  // the kind's state for a new sequence (after the store)
  virtual void on_begin(step_signals&) {}  // e.g. freekv: the query buffers into the signals
  // What a head holds besides the store's counts (freekv: page slots read, digests).
  virtual void add_counts(int64_t layer, int64_t head, kv_head_counts& c) const {}
  void track();
  void select_layer(int64_t layer);  // select + apply (eviction kind); kept statistics
  // A sliding-window layer (eviction kind): drops the kept tokens no later query can see
  // (positions <= the next position - window), whatever the policy chose.
  void drop_out_of_window(int64_t layer);

  kv_runtime_config cfg_;
  std::unique_ptr<kv_policy> policy_;
  kv_policy_needs needs_;
  int64_t n_layers_ = 0, n_heads_ = 0, n_kv_ = 0, hd_ = 0, max_chunk_ = 0;
  kv_store store_;
  std::vector<kv_attn_head> heads_;  // (n_kv_heads,) spans of the current layer
  kv_attend_scratch scratch_;
  kv_window_scratch wscratch_;       // sliding-window layers
  std::vector<const int32_t*> hpos_;  // (n_kv_heads,) positions of heads_' tokens (window layers)
  // step state
  step_signals sig_;
  int64_t pos0_ = 0, n_ = 0, step_ = 0;
  kv_step_stats last_, cur_;
  size_t peak_device_ = 0, peak_host_ = 0, peak_logical_ = 0;
};

// The runtime for cfg.policy: eviction or retrieval by what the policy needs. Throws
// engine_error for bad options.
std::unique_ptr<kv_runtime> make_kv_runtime(const kv_runtime_config& cfg);

}  // namespace kvarena
