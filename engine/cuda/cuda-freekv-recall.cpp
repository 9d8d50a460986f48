// cuda-freekv-recall.cpp: FreeKV's double-buffered recall into the device page slots.
#include "cuda-freekv-recall.h"

#include <cstring>

#include "cuda-check.h"
#include "cuda-freekv-plan.h"
#include "cuda-kernels.h"
#include "engine-error.h"

namespace kvarena {

cuda_freekv_recall::cuda_freekv_recall(cuda_allocator& a, int64_t n_layers, int64_t n_kv_heads, int64_t head_dim,
                                       int64_t page, int64_t n_slots, int64_t stage_pages, cudaStream_t compute)
    : n_kv_(n_kv_heads), n_slots_(n_slots), page_elems_(2 * page * head_dim), stage_pages_(stage_pages),
      compute_(compute), layer_done_(size_t(2 * n_layers), nullptr) {
  KV_ASSERT(n_layers > 0 && n_kv_heads > 0 && n_slots >= 0 && stage_pages > 0);
  for (int s = 0; s < 2; ++s) {
    CUDA_CHECK(cudaStreamCreateWithFlags(&stream_[s], cudaStreamNonBlocking));
    CUDA_CHECK(cudaEventCreateWithFlags(&staged_[s], cudaEventDisableTiming));
    hstage_[s] = cuda_pinned_buffer<uint16_t>(a, size_t(stage_pages * page_elems_), "FreeKV recall staging (pinned)");
    dstage_[s] = cuda_buffer<uint16_t>(a, size_t(stage_pages * page_elems_), "FreeKV recall staging");
    hidx_[s] = cuda_pinned_buffer<int32_t>(a, size_t(2 * stage_pages), "FreeKV recall rows (pinned)");
    didx_[s] = cuda_buffer<int32_t>(a, size_t(2 * stage_pages), "FreeKV recall rows");
  }
  CUDA_CHECK(cudaEventCreateWithFlags(&before_, cudaEventDisableTiming));
  for (cudaEvent_t& e : layer_done_) CUDA_CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
  if (n_slots > 0)
    slots_ = cuda_buffer<uint16_t>(a, size_t(n_layers * n_kv_heads * n_slots * page_elems_), "FreeKV page slots");
}

cuda_freekv_recall::~cuda_freekv_recall() {
  for (cudaStream_t s : stream_)
    if (s) (void)cudaStreamSynchronize(s);
  for (cudaEvent_t e : layer_done_)
    if (e) (void)cudaEventDestroy(e);
  if (before_) (void)cudaEventDestroy(before_);
  for (int s = 0; s < 2; ++s) {
    if (staged_[s]) (void)cudaEventDestroy(staged_[s]);
    if (stream_[s]) (void)cudaStreamDestroy(stream_[s]);
  }
}

const uint16_t* cuda_freekv_recall::slot_data(int64_t layer, int64_t head, int64_t slot) const {
  return slots_.data() + ((layer * n_kv_ + head) * n_slots_ + slot) * page_elems_;
}

size_t cuda_freekv_recall::staging_bytes() const {
  size_t b = 0;
  for (int s = 0; s < 2; ++s) b += hstage_[s].bytes() + dstage_[s].bytes() + hidx_[s].bytes() + didx_[s].bytes();
  return b;
}

size_t cuda_freekv_recall::recall(const cuda_freekv_pool& pool, int64_t layer, const std::vector<kv_page_copy>& jobs) {
  if (jobs.empty()) return 0;
  KV_ASSERT(pool.page_elems() == page_elems_);
  // Slots being overwritten may still be read by attention enqueued before this recall.
  CUDA_CHECK(cudaEventRecord(before_, compute_));
  for (cudaStream_t s : stream_) CUDA_CHECK(cudaStreamWaitEvent(s, before_, 0));
  const size_t page_bytes = size_t(page_elems_) * sizeof(uint16_t);
  bool used[2] = {false, false};
  for (const freekv_recall_batch& b : freekv_recall_batches(int64_t(jobs.size()), stage_pages_)) {
    const int s = b.buffer;
    // The host refills pinned buffer s only once its previous upload is done.
    CUDA_CHECK(cudaEventSynchronize(staged_[s]));
    uint16_t* st = hstage_[s].data();
    int32_t* idx = hidx_[s].data();
    const int64_t n = b.j1 - b.j0;
    for (int64_t j = b.j0; j < b.j1; ++j) {
      const kv_page_copy& c = jobs[size_t(j)];
      std::memcpy(st + (j - b.j0) * page_elems_, pool.page_data(layer, c.page, c.head), page_bytes);
      idx[j - b.j0] = int32_t(j - b.j0);
      idx[stage_pages_ + (j - b.j0)] = int32_t((layer * n_kv_ + c.head) * n_slots_ + c.slot);
    }
    CUDA_CHECK(cudaMemcpyAsync(dstage_[s].data(), st, size_t(n) * page_bytes, cudaMemcpyHostToDevice, stream_[s]));
    CUDA_CHECK(cudaMemcpyAsync(didx_[s].data(), idx, size_t(2 * stage_pages_) * 4, cudaMemcpyHostToDevice,
                               stream_[s]));
    CUDA_CHECK(cudaEventRecord(staged_[s], stream_[s]));
    // Scatter on the same stream: the device staging buffer s is only ever used on stream s.
    cu::gather_rows(dstage_[s].data(), slots_.data(), int64_t(page_bytes), didx_[s].data(),
                    didx_[s].data() + stage_pages_, n, stream_[s]);
    used[s] = true;
  }
  for (int s = 0; s < 2; ++s)
    if (used[s]) CUDA_CHECK(cudaEventRecord(layer_done_[size_t(2 * layer + s)], stream_[s]));
  return jobs.size() * page_bytes;
}

void cuda_freekv_recall::wait_layer(int64_t layer) {
  // Events never recorded count as complete: a layer without recalls costs nothing.
  for (int s = 0; s < 2; ++s) CUDA_CHECK(cudaStreamWaitEvent(compute_, layer_done_[size_t(2 * layer + s)], 0));
}

void cuda_freekv_recall::synchronize() {
  for (cudaStream_t s : stream_) CUDA_CHECK(cudaStreamSynchronize(s));
}

}  // namespace kvarena
