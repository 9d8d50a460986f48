// cuda-freekv.cpp: FreeKV's per-layer steps on the CUDA backend (see the header).
#include "cuda-freekv.h"

#include <algorithm>
#include <utility>

#include "cuda-check.h"
#include "engine-error.h"

namespace kvarena {

namespace {
constexpr int64_t k_stage_pages = 64;  // pages per recall staging batch, as the CPU worker: each batch costs a host wait
}

cuda_freekv::cuda_freekv(const kv_policy_options& o, int64_t n_slots, cuda_allocator& a, cudaStream_t compute)
    : n_layers_(o.n_layers), n_heads_(o.n_heads), n_kv_(o.n_kv_heads), hd_(o.head_dim), page_(o.page),
      compute_(compute), pool_(a, o.n_layers, o.n_kv_heads, o.head_dim, o.page, compute),
      recall_(a, o.n_layers, o.n_kv_heads, o.head_dim, o.page, n_slots, k_stage_pages, compute),
      table_(o.n_layers, o.n_kv_heads, n_slots),
      qbuf_(a, size_t(o.n_layers * o.n_heads * o.head_dim), "FreeKV queries (pinned)") {
  qptr_.resize(size_t(n_layers_));
  for (int64_t l = 0; l < n_layers_; ++l) qptr_[size_t(l)] = qbuf_.data() + l * n_heads_ * hd_;
  reset();
}

void cuda_freekv::reset() {
  recall_.synchronize();
  pool_.reset();
  table_.clear();
  pages_.assign(size_t(n_layers_), std::vector<std::vector<int32_t>>(size_t(n_kv_)));
  prefetched_bytes_.assign(size_t(n_layers_), 0);
}

void cuda_freekv::after_append(int64_t layer, int64_t pos0, int64_t n, cuda_kv_store& store) {
  const auto [first, last] = freekv_filled_pages(pos0, n, page_);
  KV_ASSERT(last - first <= 1);  // chunks of at most a page; the digest scratch holds one
  if (first == last) return;
  int64_t N = 0, hs = 0;
  const uint16_t *k16 = nullptr, *v16 = nullptr;
  const bool uniform = store.uniform_fp16(layer, &N, &k16, &v16, &hs);
  KV_ASSERT(uniform);  // freekv's window: the same FP16 rows in every head
  const kv_layer_meta m = store.layer_meta(layer);
  const int64_t r = freekv_window_row(m.heads[0].pos, m.heads[0].n, int64_t(first) * page_, page_);
  KV_ASSERT(r >= 0);  // the window still holds the page's tokens
  pool_.page_filled(layer, first, k16 + r * hd_, v16 + r * hd_, hs);
}

void cuda_freekv::select(int64_t layer, const float* q_last, kv_policy& policy, cuda_kv_store& store,
                         kv_step_stats& st, bool recall) {
  float* qh = qbuf_.data() + layer * n_heads_ * hd_;
  CUDA_CHECK(cudaMemcpyAsync(qh, q_last, size_t(n_heads_ * hd_) * 4, cudaMemcpyDeviceToHost, compute_));
  CUDA_CHECK(cudaStreamSynchronize(compute_));  // the policy reads the query on the host
  // The prefetch of this layer (last step) lands before anything touches its slots again
  // (a device-side wait: the host goes on).
  recall_.wait_layer(layer);
  st.recalled_bytes += std::exchange(prefetched_bytes_[size_t(layer)], size_t(0));
  as_retrieval(policy)->set_digests(layer, pool_.digests(layer));  // waits for the layer's page copies
  const keep_decision d = policy.select(layer, store.layer_meta(layer));
  store.apply(layer, d);
  std::vector<std::vector<int32_t>>& pages = pages_[size_t(layer)];
  if (d.keep_all) {  // dense layer 0: everything stays in the store
    for (auto& p : pages) p.clear();
    return;
  }
  pages = d.pages;
  if (!recall) return;
  if (d.checked) {
    st.checked_heads += n_kv_;
    for (bool c : d.corrected) st.corrected_heads += c;
  }
  // Pages the prefetch did not bring (first step, corrected heads, a new candidate page).
  st.recalled_bytes += recall_.recall(pool_, layer, table_.plan(layer, pages));
  recall_.wait_layer(layer);
}

void cuda_freekv::add_spans(int64_t layer, const cuda_kv_store& store, cu::kv_span_table& t, bool dense) const {
  auto add_page = [&](const uint16_t* kv) {  // (2, page, D): keys, then values
    cu::kv_span_dev sp;
    sp.n = page_;
    sp.k16 = kv;
    sp.v16 = kv + page_ * hd_;
    t.add_span(sp);
  };
  for (int64_t g = 0; g < n_kv_; ++g) {
    t.begin_head();
    if (dense) {
      const std::vector<int32_t> window = store.kept_positions(layer, g);
      const int64_t wstart = window.empty() ? store.seq_len(layer) : window[0];
      KV_ASSERT(wstart % page_ == 0 && wstart / page_ <= pool_.n_pages(layer));
      for (int64_t p = 0; p < wstart / page_; ++p) add_page(pool_.page_data(layer, p, g));
    } else {
      for (const auto& [p, slot] : table_.resident(layer, g, pages_[size_t(layer)][size_t(g)]))
        add_page(recall_.slot_data(layer, g, slot));
    }
    store.add_head_spans(layer, g, t, false);
  }
}

void cuda_freekv::prefetch(int64_t layer, int64_t next_seq_len, kv_policy& policy) {
  const std::vector<std::vector<int32_t>> want = as_retrieval(policy)->speculate(layer, next_seq_len);
  if (want.empty()) return;
  prefetched_bytes_[size_t(layer)] += recall_.recall(pool_, layer, table_.plan(layer, want));
}

int64_t cuda_freekv::page_tokens(int64_t layer, int64_t g) const {
  return int64_t(pages_[size_t(layer)][size_t(g)].size()) * page_;
}

int64_t cuda_freekv::digest_pages(int64_t layer) const { return pool_.n_pages(layer); }

}  // namespace kvarena
