// cuda-freekv-pool.h: FreeKV's host pool on the CUDA backend: the whole KV in pinned host
// memory, in kv_host_pool's head-major page layout (per page and KV head, K then V of
// `page` tokens: 2*page*head_dim fp16), written once per page by an asynchronous
// device -> host copy on a copy stream when the page fills, plus the page digests (per
// channel key min/max, computed on the device by cu::page_digest and copied back with the
// page) that the CPU policy object scores pages with.
// Ordering: the copy stream waits (event) for the compute stream's write of the page's rows;
// digests(layer) waits (host) for that layer's copies, so the rows may be moved or evicted
// from the device window after it returns. The pool grows by chunks of pinned pages (no
// reallocation, no copy of what is there).
// Not here: which pages go back to the device, the recall (cuda-freekv-recall.h).
#pragma once
#include <cstdint>
#include <vector>

#include <cuda_runtime_api.h>

#include "cuda-memory.h"
#include "kv/kv-policy.h"

namespace kvarena {

class cuda_freekv_pool {
 public:
  cuda_freekv_pool(cuda_allocator& a, int64_t n_layers, int64_t n_kv_heads, int64_t head_dim, int64_t page,
                   cudaStream_t compute);
  ~cuda_freekv_pool();
  cuda_freekv_pool(const cuda_freekv_pool&) = delete;
  cuda_freekv_pool& operator=(const cuda_freekv_pool&) = delete;

  // Page `page_id` (the next one of `layer`) is complete in the device rows k16/v16 (head g's
  // `page` tokens at + g*head_stride, (page, head_dim) F16 each), written by work already
  // enqueued on the compute stream: digest it there, copy page and digest to the host on
  // the copy stream.
  void page_filled(int64_t layer, int32_t page_id, const uint16_t* k16, const uint16_t* v16, int64_t head_stride);
  // Waits for the layer's copies; the digests of every page copied so far, for the policy.
  // The pointers stay valid until the next call for this layer.
  kv_page_digests digests(int64_t layer);

  int64_t n_pages(int64_t layer) const { return layers_[size_t(layer)].n_copied; }  // copied or in flight
  int64_t page() const { return page_; }
  int64_t page_elems() const { return 2 * page_ * head_dim_; }  // fp16 values per head page
  // (2, page, head_dim) pinned: keys of the page's tokens, then values. Valid once digests()
  // of the layer covered the page.
  const uint16_t* page_data(int64_t layer, int64_t page_id, int64_t head) const;
  size_t host_bytes() const;  // pinned chunks + host digests
  void reset();               // a new sequence (waits for copies in flight, keeps the chunks)

 private:
  static constexpr int64_t chunk_pages_ = 64;
  struct layer_pool {
    std::vector<cuda_pinned_buffer<uint16_t>> chunks;  // each (chunk_pages, n_kv, 2, page, D)
    std::vector<cuda_pinned_buffer<float>> dchunks;    // each (chunk_pages, 2, n_kv, D): min, max
    std::vector<float> kmin, kmax;                     // (n_drained, n_kv, D) what the policy reads
    int64_t n_copied = 0, n_drained = 0;
    cudaEvent_t copied = nullptr;                      // the layer's last copy on the copy stream
  };
  int64_t page_block() const { return n_kv_ * page_elems(); }  // fp16 values per page, all heads

  cuda_allocator* a_;
  int64_t n_kv_, head_dim_, page_;
  cudaStream_t compute_, copy_ = nullptr;
  cudaEvent_t written_ = nullptr;  // compute stream: the page's rows are written
  cuda_buffer<float> dig_;         // (n_layers, 2, n_kv, D) device digest of the layer's last page
  std::vector<layer_pool> layers_; // (n_layers,)
};

}  // namespace kvarena
