// kv-cache-simple.cpp: see kv-cache-simple.h.
#include "kv-cache-simple.h"

#include <algorithm>
#include <cstring>

#include "engine-error.h"
#include "ggml-types.h"

namespace kvarena {

namespace {
constexpr int64_t k_min_capacity = 256;  // tokens allocated on the first reserve
}

kv_cache_simple::kv_cache_simple(int64_t n_layers, int64_t n_kv_heads, int64_t head_dim,
                                 int64_t max_tokens)
    : n_layers_(n_layers), n_kv_heads_(n_kv_heads), head_dim_(head_dim), max_tokens_(max_tokens) {
  KV_ASSERT(n_layers >= 1 && n_kv_heads >= 1 && head_dim >= 1 && max_tokens >= 1);
}

void kv_cache_simple::reserve(int64_t n_tokens) {
  KV_ASSERT(n_tokens <= max_tokens_);
  if (n_tokens <= capacity_) return;
  int64_t cap = std::max(capacity_, std::min(k_min_capacity, max_tokens_));
  while (cap < n_tokens) cap *= 2;
  cap = std::min(cap, max_tokens_);

  const size_t old_total = bytes();
  const size_t per_head_old = size_t(capacity_ * head_dim_);
  const size_t per_head_new = size_t(cap * head_dim_);
  const size_t n_heads_all = size_t(n_layers_ * n_kv_heads_);
  for (std::vector<float>* buf : {&keys_, &values_}) {
    std::vector<float> grown(n_heads_all * per_head_new);
    for (size_t h = 0; h < n_heads_all && per_head_old > 0; ++h) {
      std::memcpy(grown.data() + h * per_head_new, buf->data() + h * per_head_old,
                  per_head_old * sizeof(float));
    }
    buf->swap(grown);
  }
  capacity_ = cap;
  // While values grow, the new keys and both value buffers coexist.
  peak_bytes_ = std::max(peak_bytes_, bytes() + old_total / 2);
}

void kv_cache_simple::store(int64_t layer, int64_t pos0, int64_t n, const float* k,
                            const float* v, int64_t ld) {
  KV_ASSERT(layer >= 0 && layer < n_layers_ && pos0 >= 0 && pos0 + n <= capacity_);
  const size_t hd_bytes = size_t(head_dim_) * sizeof(float);
  for (int64_t g = 0; g < n_kv_heads_; ++g) {
    const size_t off = size_t((layer * n_kv_heads_ + g) * capacity_ + pos0) * size_t(head_dim_);
    float* kd = keys_.data() + off;
    float* vd = values_.data() + off;
    for (int64_t i = 0; i < n; ++i) {
      std::memcpy(kd + i * head_dim_, k + i * ld + g * head_dim_, hd_bytes);
      std::memcpy(vd + i * head_dim_, v + i * ld + g * head_dim_, hd_bytes);
    }
    if (round_f16_) {  // the values an FP16 store would hold
      for (int64_t j = 0; j < n * head_dim_; ++j) {
        kd[j] = fp16_to_fp32(fp32_to_fp16(kd[j]));
        vd[j] = fp16_to_fp32(fp32_to_fp16(vd[j]));
      }
    }
  }
}

kv_view kv_cache_simple::view(int64_t layer, int64_t n_tokens) const {
  KV_ASSERT(n_tokens <= capacity_);
  const size_t off = size_t(layer * n_kv_heads_ * capacity_ * head_dim_);
  kv_view v;
  v.k = keys_.data() + off;
  v.v = values_.data() + off;
  v.n_kv_heads = n_kv_heads_;
  v.head_dim = head_dim_;
  v.head_stride = capacity_ * head_dim_;
  v.n_tokens = n_tokens;
  return v;
}

}  // namespace kvarena
