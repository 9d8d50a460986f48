// kv-cache-simple.h: the plain full KV cache: every token's key and value for every layer,
// F32, keys stored after RoPE at their true positions. Capacity grows geometrically up to
// max_tokens as tokens arrive, so a short session holds little memory. A later kv_store
// (with policies that evict and quantise) replaces this; attention only sees kv_view.
#pragma once
#include <cstdint>
#include <vector>

#include "attention-cpu.h"

namespace kvarena {

class kv_cache_simple {
 public:
  kv_cache_simple() = default;
  kv_cache_simple(int64_t n_layers, int64_t n_kv_heads, int64_t head_dim, int64_t max_tokens);

  // Makes room for n_tokens in every layer (grows capacity by doubling, capped at
  // max_tokens; copies the kept tokens). n_tokens <= max_tokens.
  void reserve(int64_t n_tokens);

  // Writes keys/values of n tokens at positions [pos0, pos0 + n) of `layer`:
  // k, v: (n, n_kv_heads * head_dim), rows ld floats apart. Needs reserve(pos0 + n) first.
  void store(int64_t layer, int64_t pos0, int64_t n, const float* k, const float* v, int64_t ld);

  // The first n_tokens tokens of `layer` as attention reads them.
  kv_view view(int64_t layer, int64_t n_tokens) const;

  // Store keys/values rounded through FP16 (tests compare with the FP16 kv_store this way).
  void set_round_f16(bool on) { round_f16_ = on; }
  void clear() {}  // tokens are overwritten in place; capacity is kept for the next sequence

  int64_t capacity() const { return capacity_; }
  int64_t max_tokens() const { return max_tokens_; }
  size_t bytes() const { return (keys_.size() + values_.size()) * sizeof(float); }  // allocated
  size_t peak_bytes() const { return peak_bytes_; }
  // Bytes one token occupies across all layers (keys + values).
  size_t bytes_per_token() const { return size_t(2 * n_layers_ * n_kv_heads_ * head_dim_) * sizeof(float); }

 private:
  int64_t n_layers_ = 0, n_kv_heads_ = 0, head_dim_ = 0, max_tokens_ = 0;
  int64_t capacity_ = 0;
  std::vector<float> keys_;    // (n_layers, n_kv_heads, capacity, head_dim)
  std::vector<float> values_;  // (n_layers, n_kv_heads, capacity, head_dim)
  size_t peak_bytes_ = 0;
  bool round_f16_ = false;
};

}  // namespace kvarena
