// kv-host-pool.h: FreeKV's host copy of the whole KV, in head-major pages. A page is `page`
// tokens (32); per page and KV head, K then V of its tokens are contiguous (2*page*head_dim
// fp16 values), so recalling one head's page is one contiguous copy. The transposition from
// the token-major rows the forward pass produces happens here, once, when a page fills.
// Also the page digests (per-channel key min and max) freekv scores pages with.
// Not here: which pages go to the device (kv-policy-freekv.cpp), the copy (kv-freekv-recall.h).
#pragma once
#include <cstdint>
#include <vector>

#include "kv-policy.h"

namespace kvarena {

class kv_host_pool {
 public:
  kv_host_pool() = default;
  kv_host_pool(int64_t n_layers, int64_t n_kv_heads, int64_t head_dim, int64_t page);

  // Appends n tokens to `layer`: k, v token-major rows (n, n_kv_heads*head_dim), ld floats
  // apart. Whole pages are written (fp16, head-major) and digested as soon as they fill.
  void append(int64_t layer, int64_t n, const float* k, const float* v, int64_t ld);

  int64_t n_pages(int64_t layer) const { return layers_[layer].n_pages; }
  int64_t page() const { return page_; }
  int64_t head_dim() const { return head_dim_; }
  int64_t n_kv_heads() const { return n_kv_heads_; }
  int64_t page_elems() const { return 2 * page_ * head_dim_; }  // fp16 values per head page
  // (2, page, head_dim): keys of the page's tokens, then values.
  const uint16_t* page_data(int64_t layer, int64_t page, int64_t head) const;
  kv_page_digests digests(int64_t layer) const;
  size_t host_bytes() const;  // allocated: pages, digests, the partial-page staging

 private:
  struct layer_pool {
    std::vector<uint16_t> data;      // (n_pages, n_kv_heads, 2, page, head_dim)
    std::vector<float> kmin, kmax;   // (n_pages, n_kv_heads, head_dim)
    std::vector<float> pend_k, pend_v;  // (page, n_kv_heads*head_dim) tokens of the unfilled page
    int64_t n_pend = 0, n_pages = 0;
  };
  void flush(layer_pool& L);
  int64_t n_kv_heads_ = 0, head_dim_ = 0, page_ = 32;
  std::vector<layer_pool> layers_;  // (n_layers,)
};

}  // namespace kvarena
