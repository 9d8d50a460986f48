// cuda-kv-runtime.cpp: a policy driving the device store (see the header); the order of
// operations is kv-runtime.cpp's, for the eviction policies and for freekv.
#include "cuda-kv-runtime.h"

#include <algorithm>

#include "engine-error.h"
#include "kv/kv-policy-registry.h"
#include "model.h"

namespace kvarena {

kv_runtime_config cuda_kv_config(const model_config& c, const std::string& policy, const kv_policy_options& o,
                                 int64_t max_chunk) {
  kv_runtime_config rc;
  rc.policy = policy;
  rc.options = o;
  rc.options.n_layers = c.n_layers;
  rc.options.n_heads = c.n_heads;
  rc.options.n_kv_heads = c.n_kv_heads;
  rc.options.head_dim = c.head_dim;
  rc.max_chunk = max_chunk;
  return rc;
}

cuda_kv_runtime::cuda_kv_runtime(const kv_runtime_config& cfg, cuda_allocator& a, cudaStream_t st)
    : cfg_(cfg), a_(&a), st_(st) {
  policy_ = make_kv_policy(cfg.policy, cfg.options);  // validates, throws engine_error
  needs_ = policy_->needs();
  n_layers_ = cfg.options.n_layers, n_kv_ = cfg.options.n_kv_heads;
  max_chunk_ = std::max<int64_t>(1, cfg.max_chunk);
  if (needs_.host_offload) max_chunk_ = std::min(max_chunk_, cfg.options.page);  // the window grows by at most a page
  reset();
}

void cuda_kv_runtime::reset() {
  const kv_policy_options& o = cfg_.options;
  if (step_ > 0) policy_ = make_kv_policy(cfg_.policy, o);  // fresh policy state
  kv_store_config sc;
  sc.n_layers = n_layers_, sc.n_kv_heads = n_kv_, sc.head_dim = o.head_dim;
  sc.group = o.n_heads / o.n_kv_heads;
  sc.int8 = o.int8 && kv_policy_supports_int8(cfg_.policy);  // the registry: which policies take --kv-int8
  sc.fp16_window = o.int8_window;
  if (needs_.host_offload) {
    sc.layer_capacity.assign(size_t(n_layers_), o.window + max_chunk_);
    if (o.dense_layer0) sc.layer_capacity[0] = 0;
    if (!fkv_) fkv_ = std::make_unique<cuda_freekv>(o, as_retrieval(*policy_)->page_slots(), *a_, st_);
    fkv_->reset();
  }
  store_ = std::make_unique<cuda_kv_store>(sc, *a_, st_);
  step_ = 0, pos0_ = 0, n_ = 0;
  last_ = cur_ = {};
  peak_logical_ = 0;
}

void cuda_kv_runtime::begin_forward(const step_signals& s, int64_t pos0, int64_t n) {
  KV_ASSERT(n >= 1 && n <= max_chunk_);
  sig_ = s;
  if (fkv_) sig_.queries = fkv_->query_ptrs();
  pos0_ = pos0, n_ = n;
  cur_ = start_step_stats(++step_, s, pos0, n, n_layers_);
  cur_.confidence = -1.f;
  if (!needs_.logits_confidence) policy_->on_step(sig_);  // gated policies: in end_forward (as kv_runtime)
}

void cuda_kv_runtime::append(int64_t layer, const float* k, const float* v, int64_t ld) {
  if (fkv_) {  // the store's capacity is the window plus a chunk, fixed
    store_->append(layer, pos0_, n_, k, v, ld);
    fkv_->after_append(layer, pos0_, n_, *store_);
    return;
  }
  // Room for the kept tokens plus this chunk, and no more: the budget bounds the allocation.
  const int64_t b = policy_->budget(layer, pos0_ + n_);
  int64_t kept = 0;
  for (int64_t g = 0; g < n_kv_; ++g) kept = std::max(kept, store_->n_kept(layer, g));
  store_->set_capacity(layer, b < 0 ? 0 : std::max(b, kept) + n_);
  store_->append(layer, pos0_, n_, k, v, ld);
}

void cuda_kv_runtime::select_pages(int64_t layer, const float* q_last) {
  KV_ASSERT(fkv_ != nullptr);
  fkv_->select(layer, q_last, *policy_, *store_, cur_, sig_.decode);  // prefill: dense, no recall
}

void cuda_kv_runtime::add_spans(int64_t layer, cu::kv_span_table& t) {
  if (fkv_) {
    fkv_->add_spans(layer, *store_, t, !sig_.decode);
    return;
  }
  if (needs_.attention_mass) store_->clear_mass(layer);
  store_->add_spans(layer, t, needs_.attention_mass);
}

void cuda_kv_runtime::after_attention(int64_t layer) {
  if (fkv_) {
    if (cfg_.overlap) fkv_->prefetch(layer, pos0_ + n_ + 1, *policy_);
  } else {
    if (needs_.attention_mass) store_->fetch_mass(layer);
    if (needs_.logits_confidence) return;  // gated: selects in end_forward, with c_t
    store_->apply(layer, policy_->select(layer, chunk_meta(layer)));
  }
  count_kept(layer);
}

kv_layer_meta cuda_kv_runtime::chunk_meta(int64_t layer) {
  kv_layer_meta m = store_->layer_meta(layer);
  m.rows = n_;  // the mass is of this call's n_ query rows
  return m;
}

void cuda_kv_runtime::count_kept(int64_t layer) {
  int64_t kept = 0;
  for (int64_t g = 0; g < n_kv_; ++g)
    kept = std::max(kept, store_->n_kept(layer, g) + (fkv_ ? fkv_->page_tokens(layer, g) : 0));
  cur_.kept[size_t(layer)] = kept;
}

size_t cuda_kv_runtime::logical_bytes() const {
  kv_logical_layout L;
  L.head_dim = cfg_.options.head_dim;
  L.page = cfg_.options.page;
  L.state_bytes_per_token = needs_.attention_mass ? sizeof(float) : 0;  // the score column
  size_t b = 0;
  for (int64_t l = 0; l < n_layers_; ++l)
    for (int64_t g = 0; g < n_kv_; ++g) {
      kv_head_counts c = store_->counts(l, g);
      if (fkv_) c.pages = int64_t(fkv_->pages(l)[size_t(g)].size()), c.digests = fkv_->digest_pages(l);
      b += kv_logical_head_bytes(L, c);
    }
  return b;
}

const kv_step_stats& cuda_kv_runtime::end_forward(double ms, float confidence) {
  if (needs_.logits_confidence) {  // as kv_runtime::end_forward: c_t picks this step's budget
    sig_.confidence = confidence < 0 ? 0.f : confidence;
    policy_->on_step(sig_);
    for (int64_t l = 0; l < n_layers_; ++l) {
      store_->apply(l, policy_->select(l, chunk_meta(l)));
      count_kept(l);
    }
  }
  cur_.confidence = sig_.decode ? confidence : -1.f;
  finish_step_stats(cur_, ms, *policy_, n_layers_, device_bytes(), host_bytes());
  cur_.kv_logical_bytes = logical_bytes();
  peak_logical_ = std::max(peak_logical_, cur_.kv_logical_bytes);
  last_ = cur_;
  return last_;
}

}  // namespace kvarena
