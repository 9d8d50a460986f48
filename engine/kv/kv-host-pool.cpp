// kv-host-pool.cpp: page writes (token-major -> head-major, fp32 -> fp16) and digests.
#include "kv-host-pool.h"

#include <algorithm>
#include <cstring>

#include "engine-error.h"
#include "ggml-types.h"

namespace kvarena {

kv_host_pool::kv_host_pool(int64_t n_layers, int64_t n_kv_heads, int64_t head_dim, int64_t page)
    : n_kv_heads_(n_kv_heads), head_dim_(head_dim), page_(page), layers_(size_t(n_layers)) {
  KV_ASSERT(n_layers > 0 && n_kv_heads > 0 && head_dim > 0 && page > 0);
  for (layer_pool& L : layers_) {
    L.pend_k.resize(size_t(page * n_kv_heads * head_dim));
    L.pend_v.resize(size_t(page * n_kv_heads * head_dim));
  }
}

void kv_host_pool::append(int64_t layer, int64_t n, const float* k, const float* v, int64_t ld) {
  layer_pool& L = layers_[layer];
  const int64_t row = n_kv_heads_ * head_dim_;
  for (int64_t t = 0; t < n; ++t) {
    std::memcpy(&L.pend_k[L.n_pend * row], k + t * ld, size_t(row) * 4);
    std::memcpy(&L.pend_v[L.n_pend * row], v + t * ld, size_t(row) * 4);
    if (++L.n_pend == page_) flush(L);
  }
}

namespace {
// Grows by a quarter (not std::vector's doubling), so the pool holds about the cache's
// bytes, not up to twice them.
template <class T>
void grow_to(std::vector<T>& v, size_t n) {
  if (n > v.capacity()) v.reserve(std::max(n, v.capacity() + v.capacity() / 4));
  v.resize(n);
}
}  // namespace

void kv_host_pool::flush(layer_pool& L) {
  const int64_t d = head_dim_, p = page_, row = n_kv_heads_ * d, pg = L.n_pages;
  grow_to(L.data, size_t((pg + 1) * n_kv_heads_ * 2 * p * d));
  grow_to(L.kmin, size_t((pg + 1) * row));
  grow_to(L.kmax, size_t((pg + 1) * row));
  for (int64_t g = 0; g < n_kv_heads_; ++g) {
    uint16_t* dst = &L.data[size_t((pg * n_kv_heads_ + g) * 2 * p * d)];  // (2, p, d)
    float* mn = &L.kmin[size_t(pg * row + g * d)];
    float* mx = &L.kmax[size_t(pg * row + g * d)];
    for (int64_t c = 0; c < d; ++c) mn[c] = 1e30f, mx[c] = -1e30f;
    for (int64_t t = 0; t < p; ++t)
      for (int64_t c = 0; c < d; ++c) {
        const uint16_t kh = fp32_to_fp16(L.pend_k[t * row + g * d + c]);
        dst[t * d + c] = kh;
        dst[(p + t) * d + c] = fp32_to_fp16(L.pend_v[t * row + g * d + c]);
        // The digest bounds the keys as they will be recalled (fp16).
        const float kf = fp16_to_fp32(kh);
        mn[c] = std::min(mn[c], kf);
        mx[c] = std::max(mx[c], kf);
      }
  }
  L.n_pages = pg + 1;
  L.n_pend = 0;
}

const uint16_t* kv_host_pool::page_data(int64_t layer, int64_t page, int64_t head) const {
  const layer_pool& L = layers_[layer];
  KV_ASSERT(page >= 0 && page < L.n_pages && head >= 0 && head < n_kv_heads_);
  return &L.data[size_t((page * n_kv_heads_ + head) * 2 * page_ * head_dim_)];
}

kv_page_digests kv_host_pool::digests(int64_t layer) const {
  const layer_pool& L = layers_[layer];
  return {L.n_pages, page_, L.kmin.data(), L.kmax.data()};
}

size_t kv_host_pool::host_bytes() const {
  size_t b = 0;
  for (const layer_pool& L : layers_)
    b += L.data.capacity() * sizeof(uint16_t) +
         (L.kmin.capacity() + L.kmax.capacity() + L.pend_k.capacity() + L.pend_v.capacity()) *
             sizeof(float);
  return b;
}

}  // namespace kvarena
