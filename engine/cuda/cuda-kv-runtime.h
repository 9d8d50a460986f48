// cuda-kv-runtime.h: one sequence's KV cache under a policy on the CUDA backend, the
// counterpart of kv_runtime (engine/kv/kv-runtime.h): the policy object (the CPU one,
// unchanged) decides from host metadata; the cuda_kv_store holds the tokens on the device.
// Per forward call: begin_forward, then per layer append (device K/V rows), add_spans (the
// layer's heads for the attention launch; clears the mass first when the policy ranks by
// it), the attention itself (the engine's, possibly batched with other sequences), then
// after_attention (fetches the mass, runs select, compacts / INT8-blocks on the device);
// end_forward returns the step's statistics.
// Policies: full, window, h2o, confkv, confkv-l (INT8 included), and freekv: the store holds
// its recent window, cuda_freekv (cuda-freekv.h) the host pool, the page slots and the
// recall; select_pages() runs its policy before the attention with the chunk's last query,
// after_attention() prefetches the next step's pages.
#pragma once
#include <cstdint>
#include <memory>

#include "cuda-freekv.h"
#include "cuda-kv-store.h"
#include "kv/kv-runtime.h"
#include "model.h"

namespace kvarena {

class cuda_kv_runtime {
 public:
  // Throws engine_error for bad options (make_kv_policy).
  cuda_kv_runtime(const kv_runtime_config& cfg, cuda_allocator& a, cudaStream_t st);

  const kv_policy& policy() const { return *policy_; }
  kv_policy_needs needs() const { return needs_; }
  int64_t max_chunk() const { return max_chunk_; }
  bool needs_all_rows() const { return needs_.attention_mass; }

  void begin_forward(const step_signals& s, int64_t pos0, int64_t n);
  void append(int64_t layer, const float* k, const float* v, int64_t ld);
  // freekv (needs().queries): before the layer's attention; q_last: device (n_heads*head_dim)
  // the chunk's last query row.
  void select_pages(int64_t layer, const float* q_last);
  void add_spans(int64_t layer, cu::kv_span_table& t);
  void after_attention(int64_t layer);
  // confidence: of the logits this call produced (decode steps; -1: not computed); a policy
  // gated on it gets on_step now and selects every layer here (kv_runtime::end_forward).
  const kv_step_stats& end_forward(double ms, float confidence = -1.f);
  void reset();

  const kv_step_stats& last() const { return last_; }
  bool decoding() const { return sig_.decode; }  // the forward call in progress is a decode step
  // KV on the device: the store, plus FreeKV's page slots (not its recall staging).
  size_t device_bytes() const { return store_->device_bytes() + (fkv_ ? fkv_->device_bytes() : 0); }
  size_t peak_device_bytes() const { return store_->peak_device_bytes() + (fkv_ ? fkv_->device_bytes() : 0); }
  // FreeKV: the pinned pool, the query buffer and the policy's own copy of the digests.
  size_t host_bytes() const { return fkv_ ? fkv_->host_bytes() + as_retrieval(*policy_)->host_bytes() : 0; }
  // Logical KV bytes, the same definition and code as the CPU runtime's (kv/kv-logical-bytes.h).
  size_t logical_bytes() const;
  size_t peak_logical_bytes() const { return peak_logical_; }
  const cuda_freekv* freekv() const { return fkv_.get(); }
  const cuda_kv_store& store() const { return *store_; }
  cuda_kv_store& store() { return *store_; }

 private:
  void count_kept(int64_t layer);
  kv_layer_meta chunk_meta(int64_t layer);  // the store's meta with rows = this call's tokens
  kv_runtime_config cfg_;
  cuda_allocator* a_;
  cudaStream_t st_;
  std::unique_ptr<kv_policy> policy_;
  kv_policy_needs needs_;
  int64_t n_layers_ = 0, n_kv_ = 0, max_chunk_ = 1;
  std::unique_ptr<cuda_kv_store> store_;
  std::unique_ptr<cuda_freekv> fkv_;  // freekv only
  step_signals sig_;
  int64_t pos0_ = 0, n_ = 0, step_ = 0;
  kv_step_stats last_, cur_;
  size_t peak_logical_ = 0;
};

// The kv_runtime_config a sequence of model config c gets for a policy and its options.
kv_runtime_config cuda_kv_config(const model_config& c, const std::string& policy, const kv_policy_options& o,
                                 int64_t max_chunk);

}  // namespace kvarena
