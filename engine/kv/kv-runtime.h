// kv-runtime.h: one sequence's KV cache under a policy, as the forward pass drives it:
// the kv_store (FP16/INT8 kept tokens), the policy, and for FreeKV the host pool, the
// device page slots and the recall worker. The forward pass calls, per forward call,
// begin_forward, then per layer append and attend (attend runs the policy for that layer
// at the moment it needs: eviction policies after attention, with the attention mass of
// the chunk; freekv before attention, with the query), then end_forward. Only the signals
// the policy declared (kv_policy_needs) are computed. Also the per-step statistics the
// session reports (kv_step_stats).
// Not here: which tokens a policy keeps (kv-policy-*.cpp), the kernel (kv-attention-cpu.h).
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "kv-attention-cpu.h"
#include "kv-freekv-recall.h"
#include "kv-host-pool.h"
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
};

class kv_runtime {
 public:
  // Throws engine_error (from make_kv_policy) for bad options.
  explicit kv_runtime(const kv_runtime_config& cfg);
  ~kv_runtime();

  const kv_policy& policy() const { return *policy_; }
  kv_policy_needs needs() const { return needs_; }
  // Most tokens one forward call may carry (freekv appends them a page at a time).
  int64_t max_chunk() const { return max_chunk_; }
  // Eviction policies that rank by attention mass need the attention of every row of the
  // chunk, also in the last layer where only the last row's logits are wanted.
  // FreeKV selects with the last query of every page of the chunk.
  bool needs_all_rows() const { return needs_.attention_mass || freekv_; }

  // One forward call of n tokens at positions [pos0, pos0 + n).
  void begin_forward(const step_signals& s, int64_t pos0, int64_t n);
  // Keys (after RoPE) and values of the chunk for `layer`: (n, n_kv_heads*head_dim) rows, ld apart.
  void append(int64_t layer, const float* k, const float* v, int64_t ld);
  // Attention of the chunk's last n_q queries q: (n_q, n_heads, head_dim), rows ldq apart,
  // into out (same shape, ldo apart); runs the policy for `layer`.
  void attend(thread_pool& pool, int64_t layer, const float* q, int64_t ldq, int64_t n_q, float scale,
              float* out, int64_t ldo);
  // Closes the step: statistics (ms is the caller's). confidence: confidence_from_logits of
  // the logits this call produced (decode steps; -1 when not computed). A policy gated on
  // it (needs().logits_confidence) gets on_step with it now and selects every layer here.
  const kv_step_stats& end_forward(double ms, float confidence = -1.f);

  void reset();  // a new sequence; memory already allocated is kept where it can be
  const kv_step_stats& last() const { return last_; }

  size_t device_bytes() const;       // store + page slots
  size_t peak_device_bytes() const;  // the most device_bytes() was after any append or step
  size_t host_bytes() const;
  size_t peak_host_bytes() const { return peak_host_; }
  // Logical KV bytes (kv-logical-bytes.h) now, and the most after any forward call (each
  // prefill chunk is one) since the sequence started.
  size_t logical_bytes() const;
  size_t peak_logical_bytes() const { return peak_logical_; }
  const kv_store& store() const { return store_; }

 private:
  void track();
  void select_layer(int64_t layer);  // select + apply for an eviction policy; kept statistics
  void run_freekv_select(thread_pool& pool, int64_t layer, const float* q_last);
  void prefetch(thread_pool& pool, int64_t layer);
  void attend_freekv(thread_pool& pool, int64_t layer, const float* q, int64_t ldq, int64_t n_q, float scale,
                     float* out, int64_t ldo);
  void build_freekv_spans(int64_t layer);

  kv_runtime_config cfg_;
  std::unique_ptr<kv_policy> policy_;
  kv_policy_needs needs_;
  int64_t n_layers_ = 0, n_heads_ = 0, n_kv_ = 0, hd_ = 0, max_chunk_ = 0;
  kv_store store_;
  // freekv
  bool freekv_ = false;
  kv_host_pool host_;
  kv_device_pages dev_;
  std::unique_ptr<kv_recall_worker> worker_;
  // Overlap: the pool that attend() runs on copies queued pages in its idle moments; the
  // runtime clears the task before it goes (the pool must outlive the runtime, as in
  // forward_state).
  std::function<bool()> idle_task_;
  thread_pool* idle_pool_ = nullptr;
  const float* pend_k_ = nullptr;           // the chunk's rows append() handed over (n, kv_dim)
  const float* pend_v_ = nullptr;
  int64_t pend_ld_ = 0;
  std::vector<float> qbuf_;                 // (n_layers, n_heads*head_dim) this step's last query per layer
  std::vector<const float*> qptr_;          // (n_layers,) into qbuf_
  std::vector<kv_attn_head> heads_;         // (n_kv_heads,) spans of the current layer
  std::vector<std::vector<int32_t>> pages_; // (n_kv_heads,) device-resident pages for this layer's attention
  std::vector<int64_t> pages_read_;         // (n_layers, n_kv_heads) pages the last attention read
  kv_attend_scratch scratch_;
  // step state
  step_signals sig_;
  int64_t pos0_ = 0, n_ = 0, step_ = 0;
  kv_step_stats last_, cur_;
  size_t peak_device_ = 0, peak_host_ = 0, peak_logical_ = 0;
};

}  // namespace kvarena
