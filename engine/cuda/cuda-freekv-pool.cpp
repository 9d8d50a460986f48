// cuda-freekv-pool.cpp: FreeKV's pinned host pool, filled by device -> host page copies.
#include "cuda-freekv-pool.h"

#include <algorithm>
#include <cstring>

#include "cuda-check.h"
#include "cuda-kernels.h"
#include "engine-error.h"

namespace kvarena {

cuda_freekv_pool::cuda_freekv_pool(cuda_allocator& a, int64_t n_layers, int64_t n_kv_heads, int64_t head_dim,
                                   int64_t page, cudaStream_t compute)
    : a_(&a), n_kv_(n_kv_heads), head_dim_(head_dim), page_(page), compute_(compute),
      layers_(size_t(n_layers)) {
  KV_ASSERT(n_layers > 0 && n_kv_heads > 0 && head_dim > 0 && page > 0);
  CUDA_CHECK(cudaStreamCreateWithFlags(&copy_, cudaStreamNonBlocking));
  CUDA_CHECK(cudaEventCreateWithFlags(&written_, cudaEventDisableTiming));
  for (layer_pool& L : layers_) CUDA_CHECK(cudaEventCreateWithFlags(&L.copied, cudaEventDisableTiming));
  dig_ = cuda_buffer<float>(a, size_t(n_layers * 2 * n_kv_heads * head_dim), "FreeKV page digest");
}

cuda_freekv_pool::~cuda_freekv_pool() {
  if (copy_) (void)cudaStreamSynchronize(copy_);
  for (layer_pool& L : layers_)
    if (L.copied) (void)cudaEventDestroy(L.copied);
  if (written_) (void)cudaEventDestroy(written_);
  if (copy_) (void)cudaStreamDestroy(copy_);
}

void cuda_freekv_pool::page_filled(int64_t layer, int32_t page_id, const uint16_t* k16, const uint16_t* v16,
                                   int64_t head_stride) {
  layer_pool& L = layers_[size_t(layer)];
  KV_ASSERT(page_id == L.n_copied);  // pages fill in order
  const int64_t D = head_dim_, c = page_id / chunk_pages_, o = page_id % chunk_pages_;
  if (c >= int64_t(L.chunks.size())) {
    L.chunks.emplace_back(*a_, size_t(chunk_pages_ * page_block()), "FreeKV host pool (pinned)");
    L.dchunks.emplace_back(*a_, size_t(chunk_pages_ * 2 * n_kv_ * D), "FreeKV page digests (pinned)");
  }
  // The digest scratch of this layer is read by the previous page's copy: digests() waited
  // for it before this layer's store was touched again, so it is free.
  float* dmin = dig_.data() + layer * 2 * n_kv_ * D;
  float* dmax = dmin + n_kv_ * D;
  cu::page_digest(k16, head_stride, n_kv_, page_, D, dmin, dmax, compute_);
  CUDA_CHECK(cudaEventRecord(written_, compute_));
  CUDA_CHECK(cudaStreamWaitEvent(copy_, written_, 0));
  // Head g's K rows -> (page_id, g, 0, :, :), V rows -> (page_id, g, 1, :, :): one 2-D copy
  // each over the heads (the transposition to head-major pages is this copy).
  uint16_t* dst = L.chunks[size_t(c)].data() + o * page_block();
  const size_t row = size_t(page_ * D) * 2, dpitch = size_t(page_elems()) * 2, spitch = size_t(head_stride) * 2;
  CUDA_CHECK(cudaMemcpy2DAsync(dst, dpitch, k16, spitch, row, size_t(n_kv_), cudaMemcpyDeviceToHost, copy_));
  CUDA_CHECK(cudaMemcpy2DAsync(dst + page_ * D, dpitch, v16, spitch, row, size_t(n_kv_), cudaMemcpyDeviceToHost, copy_));
  float* ddst = L.dchunks[size_t(c)].data() + o * 2 * n_kv_ * D;
  CUDA_CHECK(cudaMemcpyAsync(ddst, dmin, size_t(2 * n_kv_ * D) * 4, cudaMemcpyDeviceToHost, copy_));
  CUDA_CHECK(cudaEventRecord(L.copied, copy_));
  ++L.n_copied;
}

kv_page_digests cuda_freekv_pool::digests(int64_t layer) {
  layer_pool& L = layers_[size_t(layer)];
  if (L.n_drained < L.n_copied) {
    CUDA_CHECK(cudaEventSynchronize(L.copied));
    const int64_t nd = n_kv_ * head_dim_;
    L.kmin.resize(size_t(L.n_copied * nd));
    L.kmax.resize(size_t(L.n_copied * nd));
    for (int64_t p = L.n_drained; p < L.n_copied; ++p) {
      const float* src = L.dchunks[size_t(p / chunk_pages_)].data() + (p % chunk_pages_) * 2 * nd;
      std::memcpy(L.kmin.data() + p * nd, src, size_t(nd) * 4);
      std::memcpy(L.kmax.data() + p * nd, src + nd, size_t(nd) * 4);
    }
    L.n_drained = L.n_copied;
  }
  kv_page_digests d;
  d.n_pages = L.n_drained, d.page = page_, d.kmin = L.kmin.data(), d.kmax = L.kmax.data();
  return d;
}

const uint16_t* cuda_freekv_pool::page_data(int64_t layer, int64_t page_id, int64_t head) const {
  const layer_pool& L = layers_[size_t(layer)];
  KV_ASSERT(page_id >= 0 && page_id < L.n_drained);
  return L.chunks[size_t(page_id / chunk_pages_)].data() + (page_id % chunk_pages_) * page_block() +
         head * page_elems();
}

size_t cuda_freekv_pool::host_bytes() const {
  size_t b = 0;
  for (const layer_pool& L : layers_) {
    for (const auto& c : L.chunks) b += c.bytes();
    for (const auto& c : L.dchunks) b += c.bytes();
    b += (L.kmin.capacity() + L.kmax.capacity()) * sizeof(float);
  }
  return b;
}

void cuda_freekv_pool::reset() {
  CUDA_CHECK(cudaStreamSynchronize(copy_));
  for (layer_pool& L : layers_) {
    L.n_copied = L.n_drained = 0;
    L.kmin.clear(), L.kmax.clear();
  }
}

}  // namespace kvarena
