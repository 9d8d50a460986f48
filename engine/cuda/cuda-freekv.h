// cuda-freekv.h: FreeKV's per-layer steps on the CUDA backend, driven by cuda_kv_runtime
// (the order is kv_runtime's for freekv, engine/kv/kv-runtime.cpp):
//   after_append  pages the chunk completed: digest + device -> host copy (cuda-freekv-pool.h)
//   select        this step's last query to the host; the CPU policy object chooses the
//                 pages (speculative pages of the previous step for heads whose query did
//                 not move, redone for the others) and which window tokens stay; the
//                 pages not resident are recalled now (cuda-freekv-recall.h) and the compute
//                 stream waits for them on the device
//   add_spans     per KV head: its page slots in page order (all before the window), then the
//                 store's window rows; in prefill (dense, as the paper) every host page
//                 before the window instead, read from the pinned pool in place
//   prefetch      after the attention: the pages the next step will likely want, chosen with
//                 this query, recalled on the recall streams while the step goes on
// The device holds at most B tokens per layer and KV head: n_slots = (B - W - p) / p page
// slots plus the store's window (W + one chunk of at most p tokens).
// Not here: the policy's decisions (kv-policy-freekv.cpp), the store (cuda-kv-store.h).
#pragma once
#include <cstdint>
#include <memory>
#include <vector>

#include <cuda_runtime_api.h>

#include "cuda-freekv-plan.h"
#include "cuda-freekv-pool.h"
#include "cuda-freekv-recall.h"
#include "cuda-kv-store.h"
#include "kv/kv-runtime.h"

namespace kvarena {

class cuda_freekv {
 public:
  cuda_freekv(const kv_policy_options& o, int64_t n_slots, cuda_allocator& a, cudaStream_t compute);

  // Host queries the policy reads (step_signals::queries): (n_layers,) pointers to (n_heads*D).
  const std::vector<const float*>& query_ptrs() const { return qptr_; }
  // The chunk [pos0, pos0 + n) was appended to `layer` of store (at most one page completes).
  void after_append(int64_t layer, int64_t pos0, int64_t n, cuda_kv_store& store);
  // q_last: device (n_heads*D) the chunk's last query of `layer`. Runs the policy, evicts the
  // window's old tokens, recalls missing pages; counts into st.
  // recall false (a prefill step, whose attention is dense): the policy runs and the window
  // is trimmed, but nothing is recalled or counted (the prefetch brings the next step's pages).
  void select(int64_t layer, const float* q_last, kv_policy& policy, cuda_kv_store& store, kv_step_stats& st,
              bool recall = true);
  // dense (prefill, spec): every host page before the window, read in place from the pinned
  // pool (device-addressable under unified addressing), instead of the page slots.
  void add_spans(int64_t layer, const cuda_kv_store& store, cu::kv_span_table& t, bool dense = false) const;
  // next_seq_len: the sequence length the next step will see.
  void prefetch(int64_t layer, int64_t next_seq_len, kv_policy& policy);
  // Tokens on the device for head g of `layer` held in page slots for this step's attention.
  int64_t page_tokens(int64_t layer, int64_t g) const;
  // (n_kv,) ascending host page ids this step's attention of `layer` reads.
  const std::vector<std::vector<int32_t>>& pages(int64_t layer) const { return pages_[size_t(layer)]; }

  int64_t digest_pages(int64_t layer) const;  // full pages with a digest
  size_t device_bytes() const { return recall_.device_bytes(); }  // page slots
  size_t staging_bytes() const { return recall_.staging_bytes(); }
  size_t host_bytes() const { return pool_.host_bytes() + qbuf_.bytes(); }
  const freekv_slot_table& slots() const { return table_; }
  void reset();

 private:
  int64_t n_layers_, n_heads_, n_kv_, hd_, page_;
  cudaStream_t compute_;
  cuda_freekv_pool pool_;
  cuda_freekv_recall recall_;
  freekv_slot_table table_;
  cuda_pinned_buffer<float> qbuf_;                   // (n_layers, n_heads*D) this step's last query per layer
  std::vector<const float*> qptr_;                   // (n_layers,) into qbuf_
  std::vector<std::vector<std::vector<int32_t>>> pages_;  // (n_layers, n_kv) pages this step's attention reads
  std::vector<size_t> prefetched_bytes_;             // (n_layers,) issued by the last prefetch, counted at select
};

}  // namespace kvarena
