// kv-runtime-retrieval.cpp: the runtime of a retrieval policy (freekv, kv-runtime.h's second
// kind). Per forward call of n tokens and per layer l:
//   append: keeps the chunk's rows; attend then runs the chunk a page of tokens at a time
//           (so the window never holds more than W + one page): wait for layer l's
//           overlapped recall, the page's rows go to the host pool (head-major pages,
//           digested when full) and to the store (the window); select with the page's last
//           query (speculative pages for unflagged heads, redone for heads whose query
//           moved), evict the window's old tokens;
//           decode: recall the missing pages (blocking), attention of the page's queries
//           over page slots + window;
//           prefill (spec: dense, as the paper): attention of the page's queries over every
//           host page before the window + the window, read where they are (no recall: on
//           the CPU the pool is addressable), so the prompt's logits are full KV's;
//           a sliding-window layer reads the same pages and window in position order, each
//           query only its window of them (kv-attention-window.h);
//           after the last page, prefetch the pages the next step will want (chosen with
//           this query): copied by the thread pool in its idle moments while later layers
//           compute (without overlap: the same prefetch, waited for at once).
#include <algorithm>
#include <functional>
#include <memory>

#include "engine-error.h"
#include "kv-freekv-recall.h"
#include "kv-host-pool.h"
#include "kv-runtime.h"

namespace kvarena {

namespace {

// Pages per staging buffer of the blocking recall (two buffers; 512 KiB each at page 32,
// head_dim 128). Each batch costs the gathering and scattering threads a handshake, so
// batches of 8 pages spent more time in the scheduler than in the copies (measured: 16% of
// a step in futex wake-ups when every head is corrected).
constexpr int64_t k_stage_pages = 64;

class kv_retrieval_runtime final : public kv_runtime {
 public:
  explicit kv_retrieval_runtime(const kv_runtime_config& cfg)
      : kv_runtime(cfg), rp_(as_retrieval(*policy_)) {
    KV_ASSERT(rp_ != nullptr);  // needs().host_offload: a retrieval policy
    reset();
  }
  ~kv_retrieval_runtime() override {
    if (idle_pool_) idle_pool_->set_idle_task(nullptr);
  }

  // FreeKV selects with the last query of every page of the chunk.
  bool needs_all_rows() const override { return true; }

  void append(int64_t layer, const float* k, const float* v, int64_t ld) override {
    // Appended page by page in attend(), so the window never holds more than W + p.
    pend_k_ = k, pend_v_ = v, pend_ld_ = ld;
  }

  // The chunk one page of tokens at a time, as a sequence of one-page forward calls would
  // (the layers are independent, so the decisions and attention inputs are the same):
  // append the page's rows (host pool + window), select with its last query, recall (decode)
  // or read every host page in place (prefill: dense), attend its queries. Only the chunk's
  // last page prefetches for the next call.
  void attend(thread_pool& pool, int64_t layer, const float* q, int64_t ldq, int64_t n_q, float scale, float* out,
              int64_t ldo) override {
    KV_ASSERT(n_q == n_);  // needs_all_rows(): every row's query picks its page's pages
    const int64_t page = cfg_.options.page;
    for (int64_t s0 = 0; s0 < n_; s0 += page) {
      const int64_t m = std::min(page, n_ - s0);
      const float* k = pend_k_ + s0 * pend_ld_;
      const float* v = pend_v_ + s0 * pend_ld_;
      cur_.recalled_bytes += worker_->wait(layer);  // the layer's overlapped recall is done
      host_.append(layer, m, k, v, pend_ld_);
      rp_->set_digests(layer, host_.digests(layer));
      store_.append(layer, pos0_ + s0, m, k, v, pend_ld_);
      track();
      const bool dense = !sig_.decode;
      select(pool, layer, q + (s0 + m - 1) * ldq, !dense);
      if (const int64_t window = cfg_.window_of(layer); window > 0) {
        // A sliding-window layer: the same pages and window, in position order, each query
        // seeing only its window of them.
        build_window_spans(layer, dense, pos0_ + s0 - window);
        kv_attend_window(pool, heads_, hpos_, window, pos0_ + s0, hd_, q + s0 * ldq, ldq, m, n_heads_, scale,
                         out + s0 * ldo, ldo, scratch_, wscratch_, 1.0f, false, cfg_.attn_softcap);
        continue;
      }
      if (dense) {
        build_dense_spans(layer);
      } else {
        build_spans(layer);
      }
      kv_attend(pool, heads_, hd_, q + s0 * ldq, ldq, m, n_heads_, scale, out + s0 * ldo, ldo, scratch_, 1.0f, 1.0f,
                cfg_.attn_softcap);
    }
    // The next call's pages are chosen and recalled either way; without overlap the caller
    // waits for the copies here instead of computing on (so both modes fill the same slots
    // in the same order and give bit-identical results: only the timing differs).
    prefetch(pool, layer);
    if (!cfg_.overlap) cur_.recalled_bytes += worker_->wait(layer);
    int64_t kept = 0;
    for (int64_t g = 0; g < n_kv_; ++g) {
      kept = std::max(kept, store_.n_kept(layer, g) + int64_t(pages_[g].size()) * page);
      pages_read_[size_t(layer * n_kv_ + g)] = int64_t(pages_[g].size());
    }
    cur_.kept[size_t(layer)] = kept;
    track();
  }

  size_t device_bytes() const override { return store_.device_bytes() + dev_.device_bytes(); }
  // The pool, the policy's digest copy, the recall staging.
  size_t host_bytes() const override {
    return host_.host_bytes() + rp_->host_bytes() + (worker_ ? worker_->staging_bytes() : 0);
  }

 protected:
  kv_store_config store_config() const override {
    kv_store_config sc = kv_runtime::store_config();
    const kv_policy_options& o = cfg_.options;
    sc.layer_capacity.assign(size_t(n_layers_), o.window + o.page);  // + one page appended
    return sc;
  }
  void reset_kind() override {
    const kv_policy_options& o = cfg_.options;
    rp_ = as_retrieval(*policy_);  // reset() made a fresh policy
    if (o.dense_layer0) store_.set_capacity(0, 0);
    // The old sequence's queued copies (the last step's prefetch) finish first, from the pool
    // and into the device pages they were planned on, before either is replaced.
    if (worker_)
      for (int64_t l = 0; l < n_layers_; ++l) worker_->wait(l);
    host_ = kv_host_pool(n_layers_, n_kv_, hd_, o.page);
    dev_ = kv_device_pages(n_layers_, n_kv_, hd_, o.page, rp_->page_slots());
    if (!worker_) worker_ = std::make_unique<kv_recall_worker>(k_stage_pages, host_.page_elems());
    qbuf_.assign(size_t(n_layers_ * n_heads_ * hd_), 0.f);
    qptr_.resize(size_t(n_layers_));
    for (int64_t l = 0; l < n_layers_; ++l) qptr_[l] = qbuf_.data() + l * n_heads_ * hd_;
    pages_.assign(size_t(n_kv_), {});
    pages_read_.assign(size_t(n_layers_ * n_kv_), 0);
  }
  void on_begin(step_signals& s) override { s.queries = qptr_; }
  void add_counts(int64_t layer, int64_t head, kv_head_counts& c) const override {
    c.pages = pages_read_[size_t(layer * n_kv_ + head)];
    c.digests = host_.digests(layer).n_pages;
  }

 private:
  // Spans per KV head: the wanted pages' slots in slot order, neighbouring slots as one span
  // (attention does not depend on the order of keys every query sees, and page tokens all
  // precede the window), then the store's window.
  void build_spans(int64_t layer) {
    const int64_t page = cfg_.options.page;
    for (int64_t g = 0; g < n_kv_; ++g) {
      kv_attn_head& h = heads_[g];
      h.spans.clear();
      auto wanted = [&](int32_t p) { return p >= 0 && std::binary_search(pages_[g].begin(), pages_[g].end(), p); };
      int64_t found = 0;
      for (int64_t s = 0; s < dev_.n_slots();) {
        if (!wanted(dev_.slot_page(layer, g, s))) {
          ++s;
          continue;
        }
        int64_t e = s + 1;
        while (e < dev_.n_slots() && wanted(dev_.slot_page(layer, g, e))) ++e;
        kv_span sp;
        sp.n = (e - s) * page;
        sp.k16 = dev_.slot_k(layer, g, s);
        sp.v16 = dev_.slot_v(layer, g, s);
        h.spans.push_back(sp);
        found += e - s;
        s = e;
      }
      KV_ASSERT(found == int64_t(pages_[g].size()));  // all recalled before attention
      const kv_attn_head store_part = kv_attn_head_from_view(store_.head_view(layer, g), false);
      h.spans.insert(h.spans.end(), store_part.spans.begin(), store_part.spans.end());
    }
  }

  // Prefill: every host page before the window (read in the pool: (2, page, head_dim) per
  // page and KV head, keys then values), then the window; each token exactly once.
  void build_dense_spans(int64_t layer) {
    const int64_t page = cfg_.options.page;
    for (int64_t g = 0; g < n_kv_; ++g) {
      kv_attn_head& h = heads_[g];
      h.spans.clear();
      const kv_head_view w = store_.head_view(layer, g);
      const int64_t wstart = w.n() > 0 ? w.pos[0] : store_.seq_len(layer);
      KV_ASSERT(wstart % page == 0 && wstart / page <= host_.n_pages(layer));
      for (int64_t p = 0; p < wstart / page; ++p) {
        kv_span sp;
        sp.n = page;
        sp.k16 = host_.page_data(layer, p, g);
        sp.v16 = sp.k16 + page * hd_;
        h.spans.push_back(sp);
      }
      const kv_attn_head store_part = kv_attn_head_from_view(w, false);
      h.spans.insert(h.spans.end(), store_part.spans.begin(), store_part.spans.end());
    }
  }

  // A sliding-window layer's spans, in position order, with their positions (hpos_): the
  // pages build_spans (decode: the recalled slots) or build_dense_spans (prefill: the pool)
  // would read, one span per page, leaving out the pages wholly at or before `oldest` (no
  // query of this page of the chunk sees them), then the store's window.
  void build_window_spans(int64_t layer, bool dense, int64_t oldest) {
    const int64_t page = cfg_.options.page;
    hpos_.resize(size_t(n_kv_));
    hposbuf_.resize(size_t(n_kv_));
    for (int64_t g = 0; g < n_kv_; ++g) {
      kv_attn_head& h = heads_[g];
      h.spans.clear();
      std::vector<int32_t>& P = hposbuf_[size_t(g)];
      P.clear();
      const kv_head_view w = store_.head_view(layer, g);
      // (page id, keys): values follow the keys at page * head_dim (pool) or in the slot's values.
      std::vector<std::pair<int32_t, kv_span>>& pg = pagebuf_;
      pg.clear();
      if (dense) {
        const int64_t wstart = w.n() > 0 ? w.pos[0] : store_.seq_len(layer);
        for (int64_t p = 0; p < wstart / page; ++p) {
          kv_span sp;
          sp.n = page;
          sp.k16 = host_.page_data(layer, p, g);
          sp.v16 = sp.k16 + page * hd_;
          pg.push_back({int32_t(p), sp});
        }
      } else {
        for (int64_t s = 0; s < dev_.n_slots(); ++s) {
          const int32_t p = dev_.slot_page(layer, g, s);
          if (p < 0 || !std::binary_search(pages_[g].begin(), pages_[g].end(), p)) continue;
          kv_span sp;
          sp.n = page;
          sp.k16 = dev_.slot_k(layer, g, s);
          sp.v16 = dev_.slot_v(layer, g, s);
          pg.push_back({p, sp});
        }
        std::sort(pg.begin(), pg.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
      }
      for (const auto& [p, sp] : pg) {
        if ((int64_t(p) + 1) * page - 1 <= oldest) continue;  // before every query's window
        h.spans.push_back(sp);
        for (int64_t j = 0; j < page; ++j) P.push_back(int32_t(int64_t(p) * page + j));
      }
      const kv_attn_head store_part = kv_attn_head_from_view(w, false);
      h.spans.insert(h.spans.end(), store_part.spans.begin(), store_part.spans.end());
      P.insert(P.end(), w.pos, w.pos + w.n());
      hpos_[size_t(g)] = P.data();
    }
  }

  // recall: bring the chosen pages to the device now (decode); a dense prefill page reads
  // the pool instead, and the prefetch after the chunk brings what the next step wants.
  void select(thread_pool& pool, int64_t layer, const float* q_last, bool recall) {
    float* qb = qbuf_.data() + layer * n_heads_ * hd_;
    std::copy(q_last, q_last + n_heads_ * hd_, qb);
    const keep_decision d = policy_->select(layer, store_.layer_meta(layer));
    store_.apply(layer, d);
    if (d.keep_all) {  // dense layer 0: everything stays in the store
      for (auto& p : pages_) p.clear();
      return;
    }
    pages_ = d.pages;
    if (!recall) return;
    if (d.checked) {
      cur_.checked_heads += n_kv_;
      for (bool c : d.corrected) cur_.corrected_heads += c;
    }
    // Pages the prefetch did not bring (first step, corrected heads, a new candidate page).
    const std::vector<kv_page_copy> jobs = dev_.plan(layer, pages_);
    cur_.recalled_bytes += worker_->recall(host_, layer, dev_, jobs);
  }

  void prefetch(thread_pool& pool, int64_t layer) {
    std::vector<std::vector<int32_t>> want = rp_->speculate(layer, pos0_ + n_ + 1, &pool);
    if (want.empty()) return;
    std::vector<kv_page_copy> jobs = dev_.plan(layer, want);
    worker_->submit(host_, layer, dev_, std::move(jobs));
    if (cfg_.overlap && idle_pool_ != &pool) {
      if (idle_pool_) idle_pool_->set_idle_task(nullptr);
      idle_task_ = [w = worker_.get()] { return w->help_one(); };
      pool.set_idle_task(&idle_task_);
      idle_pool_ = &pool;
    }
  }

  kv_retrieval_policy* rp_;  // policy_ as the retrieval policy it is
  kv_host_pool host_;
  kv_device_pages dev_;
  std::unique_ptr<kv_recall_worker> worker_;
  // Overlap: the pool that attend() runs on copies queued pages in its idle moments; the
  // runtime clears the task before it goes (the pool must outlive the runtime, as in
  // forward_state).
  std::function<bool()> idle_task_;
  thread_pool* idle_pool_ = nullptr;
  const float* pend_k_ = nullptr;            // the chunk's rows append() handed over (n, kv_dim)
  const float* pend_v_ = nullptr;
  int64_t pend_ld_ = 0;
  std::vector<float> qbuf_;                  // (n_layers, n_heads*head_dim) this step's last query per layer
  std::vector<const float*> qptr_;           // (n_layers,) into qbuf_
  std::vector<std::vector<int32_t>> pages_;  // (n_kv_heads,) device-resident pages for this layer's attention
  std::vector<int64_t> pages_read_;          // (n_layers, n_kv_heads) pages the last attention read
  std::vector<std::vector<int32_t>> hposbuf_;  // (n_kv_heads,) window layers: positions of heads_' tokens
  std::vector<std::pair<int32_t, kv_span>> pagebuf_;  // build_window_spans scratch: (page id, span)
};

}  // namespace

std::unique_ptr<kv_runtime> make_kv_retrieval_runtime(const kv_runtime_config& cfg) {
  return std::make_unique<kv_retrieval_runtime>(cfg);
}

}  // namespace kvarena
