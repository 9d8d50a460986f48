// kv-runtime.cpp: a sequence's KV cache under a policy, driven layer by layer by the
// forward pass (see kv-runtime.h).
//
// Per forward call of n tokens and per layer l:
//   eviction policies (full, window, h2o, confkv, confkv-l):
//     append: store capacity = budget + n, then the chunk's rows go in (FP16);
//     attend: clear the mass column (only when the policy ranks by it), attention over the
//             INT8 + FP16 spans (the kernel adds mass), then select + apply (evict, INT8);
//     policies gated on the step's confidence (confkv, confkv-l) instead select in
//     end_forward, for every layer, once the step's own logits gave c_t (spec: the budget
//     applied when the cache is trimmed after step t comes from c_t);
//   freekv:
//     append: keeps the chunk's rows; attend then runs the chunk a page of tokens at a time
//             (so the window never holds more than W + one page):
//             wait for layer l's overlapped recall, the page's rows go to the host pool
//             (head-major pages, digested when full) and to the store (the window); select
//             with the page's last query (speculative pages for unflagged heads, redone for
//             heads whose query moved), evict the window's old tokens, recall the missing
//             pages (blocking), attention of the page's queries over page slots + window;
//             after the last page, prefetch the pages the next step will want (chosen with
//             this query): copied by the thread pool in its idle moments while later layers
//             compute (without overlap: the same prefetch, waited for at once).
#include "kv-runtime.h"

#include <algorithm>
#include <chrono>
#include <cmath>

#include "engine-error.h"
#include "kv-policy-registry.h"

namespace kvarena {

kv_step_stats start_step_stats(int64_t step, const step_signals& s, int64_t pos0, int64_t n,
                               int64_t n_layers) {
  kv_step_stats st;
  st.step = step;
  st.decode = s.decode;
  st.n_tokens = n;
  st.seq_len = pos0 + n;
  st.confidence = s.decode ? s.confidence : -1.f;
  st.kept.assign(size_t(n_layers), 0);
  return st;
}

void finish_step_stats(kv_step_stats& st, double ms, const kv_policy& p, int64_t n_layers, size_t device_bytes,
                       size_t host_bytes) {
  st.ms = ms;
  int64_t sum = 0;
  for (int64_t l = 0; l < n_layers && sum >= 0; ++l) {
    const int64_t b = p.budget(l, st.seq_len);
    sum = b < 0 ? -1 : sum + b;
  }
  st.budget = sum < 0 ? -1 : sum / n_layers;
  st.kv_device_bytes = device_bytes;
  st.kv_host_bytes = host_bytes;
}

namespace {
// Pages per staging buffer of the blocking recall (two buffers; 512 KiB each at page 32,
// head_dim 128). Each batch costs the gathering and scattering threads a handshake, so
// batches of 8 pages spent more time in the scheduler than in the copies (measured: 16% of
// a step in futex wake-ups when every head is corrected).
constexpr int64_t k_stage_pages = 64;
}  // namespace

kv_runtime::kv_runtime(const kv_runtime_config& cfg) : cfg_(cfg) {
  const kv_policy_options& o = cfg.options;
  policy_ = make_kv_policy(cfg.policy, o);  // validates, throws engine_error
  needs_ = policy_->needs();
  n_layers_ = o.n_layers, n_heads_ = o.n_heads, n_kv_ = o.n_kv_heads, hd_ = o.head_dim;
  freekv_ = needs_.host_offload;
  max_chunk_ = std::max<int64_t>(1, cfg.max_chunk);  // freekv: appended a page at a time
  reset();
}

kv_runtime::~kv_runtime() {
  if (idle_pool_) idle_pool_->set_idle_task(nullptr);
}

void kv_runtime::reset() {
  const kv_policy_options& o = cfg_.options;
  if (step_ > 0) policy_ = make_kv_policy(cfg_.policy, o);  // fresh policy state
  kv_store_config sc;
  sc.n_layers = n_layers_, sc.n_kv_heads = n_kv_, sc.head_dim = hd_;
  sc.group = n_heads_ / n_kv_;
  sc.int8 = o.int8 && kv_policy_supports_int8(cfg_.policy);  // the registry: which policies take --kv-int8
  sc.fp16_window = o.int8_window;
  if (freekv_) sc.layer_capacity.assign(size_t(n_layers_), o.window + o.page);  // + one page appended
  store_ = kv_store(sc);
  if (freekv_) {
    if (o.dense_layer0) store_.set_capacity(0, 0);
    host_ = kv_host_pool(n_layers_, n_kv_, hd_, o.page);
    dev_ = kv_device_pages(n_layers_, n_kv_, hd_, o.page, policy_->page_slots());
    if (!worker_) worker_ = std::make_unique<kv_recall_worker>(k_stage_pages, host_.page_elems());
    for (int64_t l = 0; l < n_layers_; ++l) worker_->wait(l);  // nothing of the old sequence in flight
    qbuf_.assign(size_t(n_layers_ * n_heads_ * hd_), 0.f);
    qptr_.resize(size_t(n_layers_));
    for (int64_t l = 0; l < n_layers_; ++l) qptr_[l] = qbuf_.data() + l * n_heads_ * hd_;
  }
  heads_.assign(size_t(n_kv_), {});
  pages_.assign(size_t(n_kv_), {});
  pages_read_.assign(size_t(n_layers_ * n_kv_), 0);
  step_ = 0, pos0_ = 0, n_ = 0;
  last_ = cur_ = {};
  peak_device_ = device_bytes(), peak_host_ = host_bytes(), peak_logical_ = 0;
}

size_t kv_runtime::device_bytes() const {
  return store_.device_bytes() + (freekv_ ? dev_.device_bytes() : 0);
}
size_t kv_runtime::host_bytes() const {  // pool, the policy's digest copy, recall staging
  return freekv_ ? host_.host_bytes() + policy_->host_bytes() + worker_->staging_bytes() : 0;
}
size_t kv_runtime::logical_bytes() const {
  kv_logical_layout L;
  L.head_dim = hd_;
  L.page = cfg_.options.page;
  L.state_bytes_per_token = needs_.attention_mass ? sizeof(float) : 0;  // the score column
  size_t b = 0;
  for (int64_t l = 0; l < n_layers_; ++l) {
    const int64_t digests = freekv_ ? host_.digests(l).n_pages : 0;
    for (int64_t g = 0; g < n_kv_; ++g) {
      kv_head_counts c = store_.counts(l, g);
      if (freekv_) c.pages = pages_read_[size_t(l * n_kv_ + g)], c.digests = digests;
      b += kv_logical_head_bytes(L, c);
    }
  }
  return b;
}
size_t kv_runtime::peak_device_bytes() const { return std::max(peak_device_, device_bytes()); }

void kv_runtime::track() {
  peak_device_ = std::max(peak_device_, device_bytes());
  peak_host_ = std::max(peak_host_, host_bytes());
}

void kv_runtime::begin_forward(const step_signals& s, int64_t pos0, int64_t n) {
  KV_ASSERT(n >= 1 && n <= max_chunk_);
  sig_ = s;
  if (freekv_) sig_.queries = qptr_;
  pos0_ = pos0, n_ = n;
  cur_ = start_step_stats(++step_, s, pos0, n, n_layers_);
  cur_.confidence = -1.f;  // set by end_forward: the confidence of this step's logits
  if (!needs_.logits_confidence) policy_->on_step(sig_);  // gated policies: in end_forward
}

void kv_runtime::append(int64_t layer, const float* k, const float* v, int64_t ld) {
  if (freekv_) {  // appended page by page in attend(), so the window never holds more than W + p
    pend_k_ = k, pend_v_ = v, pend_ld_ = ld;
    return;
  }
  // Room for the kept tokens plus this chunk, and no more: the budget bounds the allocation.
  const int64_t b = policy_->budget(layer, pos0_ + n_);
  int64_t kept = 0;
  for (int64_t g = 0; g < n_kv_; ++g) kept = std::max(kept, store_.n_kept(layer, g));
  store_.set_capacity(layer, b < 0 ? 0 : std::max(b, kept) + n_);
  store_.append(layer, pos0_, n_, k, v, ld);
  track();
}

void kv_runtime::attend(thread_pool& pool, int64_t layer, const float* q, int64_t ldq, int64_t n_q,
                        float scale, float* out, int64_t ldo) {
  KV_ASSERT(n_q >= 1 && n_q <= n_);
  if (freekv_) {
    attend_freekv(pool, layer, q, ldq, n_q, scale, out, ldo);
    return;
  }
  const bool mass = needs_.attention_mass;
  if (mass) store_.clear_mass(layer);
  for (int64_t g = 0; g < n_kv_; ++g) heads_[g] = kv_attn_head_from_view(store_.head_view(layer, g), mass);
  kv_attend(pool, heads_, hd_, q, ldq, n_q, n_heads_, scale, out, ldo, scratch_);
  if (!needs_.logits_confidence) select_layer(layer);  // gated policies: in end_forward
  track();
}

void kv_runtime::select_layer(int64_t layer) {
  store_.apply(layer, policy_->select(layer, store_.layer_meta(layer)));
  int64_t kept = 0;
  for (int64_t g = 0; g < n_kv_; ++g) kept = std::max(kept, store_.n_kept(layer, g));
  cur_.kept[size_t(layer)] = kept;
}

// FreeKV runs the chunk one page of tokens at a time, as a sequence of one-page forward calls
// would (the layers are independent, so the decisions and attention inputs are the same):
// append the page's rows (host pool + window), select with its last query, recall, attend its
// queries. Only the chunk's last page prefetches for the next call.
void kv_runtime::attend_freekv(thread_pool& pool, int64_t layer, const float* q, int64_t ldq, int64_t n_q,
                               float scale, float* out, int64_t ldo) {
  KV_ASSERT(n_q == n_);  // needs_all_rows(): every row's query picks its page's pages
  const int64_t page = cfg_.options.page;
  for (int64_t s0 = 0; s0 < n_; s0 += page) {
    const int64_t m = std::min(page, n_ - s0);
    const float* k = pend_k_ + s0 * pend_ld_;
    const float* v = pend_v_ + s0 * pend_ld_;
    cur_.recalled_bytes += worker_->wait(layer);  // the layer's overlapped recall is done
    host_.append(layer, m, k, v, pend_ld_);
    policy_->set_digests(layer, host_.digests(layer));
    store_.append(layer, pos0_ + s0, m, k, v, pend_ld_);
    track();
    run_freekv_select(pool, layer, q + (s0 + m - 1) * ldq);
    build_freekv_spans(layer);
    kv_attend(pool, heads_, hd_, q + s0 * ldq, ldq, m, n_heads_, scale, out + s0 * ldo, ldo, scratch_);
  }
  // The next call's pages are chosen and recalled either way; without overlap the caller
  // waits for the copies here instead of computing on (so both modes fill the same slots in
  // the same order and give bit-identical results: only the timing differs).
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

// Spans per KV head: the wanted pages' slots in slot order, neighbouring slots as one span
// (attention does not depend on the order of keys every query sees, and page tokens all
// precede the window), then the store's window.
void kv_runtime::build_freekv_spans(int64_t layer) {
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

void kv_runtime::run_freekv_select(thread_pool& pool, int64_t layer, const float* q_last) {
  float* qb = qbuf_.data() + layer * n_heads_ * hd_;
  std::copy(q_last, q_last + n_heads_ * hd_, qb);
  const keep_decision d = policy_->select(layer, store_.layer_meta(layer));
  store_.apply(layer, d);
  if (d.keep_all) {  // dense layer 0: everything stays in the store
    for (auto& p : pages_) p.clear();
    return;
  }
  pages_ = d.pages;
  if (d.checked) {
    cur_.checked_heads += n_kv_;
    for (bool c : d.corrected) cur_.corrected_heads += c;
  }
  // Pages the prefetch did not bring (first step, corrected heads, a new candidate page).
  const std::vector<kv_page_copy> jobs = dev_.plan(layer, pages_);
  cur_.recalled_bytes += worker_->recall(host_, layer, dev_, jobs);
}

void kv_runtime::prefetch(thread_pool& pool, int64_t layer) {
  std::vector<std::vector<int32_t>> want = policy_->speculate(layer, pos0_ + n_ + 1, &pool);
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

const kv_step_stats& kv_runtime::end_forward(double ms, float confidence) {
  if (needs_.logits_confidence) {
    // The step's own confidence picks the budget this step's trim applies (decode steps;
    // a prefill chunk keeps the last decode step's budget), then every layer selects with
    // the attention mass this call left in the store.
    const auto t0 = std::chrono::steady_clock::now();
    sig_.confidence = confidence < 0 ? 0.f : confidence;
    policy_->on_step(sig_);
    for (int64_t l = 0; l < n_layers_; ++l) select_layer(l);
    track();
    ms += std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  }
  cur_.confidence = sig_.decode ? confidence : -1.f;
  finish_step_stats(cur_, ms, *policy_, n_layers_, device_bytes(), host_bytes());
  cur_.kv_logical_bytes = logical_bytes();
  peak_logical_ = std::max(peak_logical_, cur_.kv_logical_bytes);
  last_ = cur_;
  return last_;
}

}  // namespace kvarena
