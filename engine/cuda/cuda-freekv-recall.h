// cuda-freekv-recall.h: FreeKV's device page slots and the recall host -> device.
// Slots: per layer and KV head, n_slots pages in the host pool's page layout (K then V of
// `page` tokens, (2, page, head_dim) F16), read by the span attention directly.
// Recall: the jobs (planned by freekv_slot_table: only pages new to the device) go in
// batches through two pinned staging buffers, each with its own stream: the host gathers
// batch b into pinned buffer b % 2 while batch b - 1 is uploaded on the other stream, and
// each uploaded batch is scattered into its slots on the device by a gather kernel on the
// same stream. The recall streams first wait (event) for the compute work enqueued before
// the recall (the previous attention may still read the slots being overwritten); the
// compute stream waits for a layer's recalls (events, no host wait) with wait_layer(),
// right away for the pages attention needs now, only at the next step for a prefetch.
// The host waits only for a staging buffer's previous upload before refilling it.
// Not here: which pages (the policy), the slot bookkeeping (cuda-freekv-plan.h).
#pragma once
#include <cstdint>
#include <vector>

#include <cuda_runtime_api.h>

#include "cuda-freekv-pool.h"
#include "cuda-memory.h"
#include "kv/kv-freekv-recall.h"

namespace kvarena {

class cuda_freekv_recall {
 public:
  // stage_pages: pages per staging batch (two pinned + two device staging buffers).
  cuda_freekv_recall(cuda_allocator& a, int64_t n_layers, int64_t n_kv_heads, int64_t head_dim, int64_t page,
                     int64_t n_slots, int64_t stage_pages, cudaStream_t compute);
  ~cuda_freekv_recall();
  cuda_freekv_recall(const cuda_freekv_recall&) = delete;
  cuda_freekv_recall& operator=(const cuda_freekv_recall&) = delete;

  // (2, page, head_dim) F16 on the device.
  const uint16_t* slot_data(int64_t layer, int64_t head, int64_t slot) const;
  // Enqueues the copies of jobs (host pages of `layer` in pool -> their slots); returns the
  // bytes that will move. The compute stream does not wait for them until wait_layer(layer).
  size_t recall(const cuda_freekv_pool& pool, int64_t layer, const std::vector<kv_page_copy>& jobs);
  // The compute stream waits (on the device) for every recall of `layer` enqueued so far.
  void wait_layer(int64_t layer);
  void synchronize();  // host waits for every recall (reset, teardown)

  size_t device_bytes() const { return slots_.bytes(); }  // the page slots
  size_t staging_bytes() const;                            // pinned + device staging, index arrays

 private:
  int64_t n_kv_, n_slots_, page_elems_, stage_pages_;
  cudaStream_t compute_, stream_[2] = {nullptr, nullptr};
  cudaEvent_t before_ = nullptr;                     // compute stream: work enqueued before a recall
  cudaEvent_t staged_[2] = {nullptr, nullptr};       // pinned staging b uploaded (host may refill)
  std::vector<cudaEvent_t> layer_done_;              // (n_layers, 2): the layer's last recall per stream
  cuda_buffer<uint16_t> slots_;                      // (n_layers, n_kv, n_slots, 2, page, D)
  cuda_pinned_buffer<uint16_t> hstage_[2];           // (stage_pages, 2, page, D) each
  cuda_buffer<uint16_t> dstage_[2];                  // (stage_pages, 2, page, D) each
  cuda_pinned_buffer<int32_t> hidx_[2];              // (2, stage_pages): staging row, slot row
  cuda_buffer<int32_t> didx_[2];                     // (2, stage_pages)
};

}  // namespace kvarena
