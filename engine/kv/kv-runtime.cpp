// kv-runtime.cpp: a sequence's KV cache under a policy, driven layer by layer by the
// forward pass (see kv-runtime.h).
//
// Per forward call of n tokens and per layer l:
//   eviction policies (full, window, h2o, confkv, confkv-l):
//     append: store capacity = budget + n, then the chunk's rows go in (FP16);
//     attend: clear the mass column (only when the policy ranks by it), attention over the
//             INT8 + FP16 spans (the kernel adds mass; a sliding-window layer: each query
//             over its window of them), then select + apply (evict, INT8); a sliding-window
//             layer then also drops what no later query's window reaches;
//     policies gated on the step's confidence (confkv, confkv-l) instead select in
//     end_forward, for every layer, once the step's own logits gave c_t (spec: the budget
//     applied when the cache is trimmed after step t comes from c_t);
//   freekv (kv-runtime-retrieval.cpp):
//     append: keeps the chunk's rows; attend then runs the chunk a page of tokens at a time
//             (so the window never holds more than W + one page):
//             wait for layer l's overlapped recall, the page's rows go to the host pool
//             (head-major pages, digested when full) and to the store (the window); select
//             with the page's last query (speculative pages for unflagged heads, redone for
//             heads whose query moved), evict the window's old tokens; decode: recall the
//             missing pages (blocking), attention of the page's queries over page slots +
//             window; prefill: dense attention over every host page + window (no recall);
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

std::unique_ptr<kv_runtime> make_kv_retrieval_runtime(const kv_runtime_config& cfg);  // kv-runtime-retrieval.cpp

kv_runtime::kv_runtime(const kv_runtime_config& cfg) : cfg_(cfg) {
  const kv_policy_options& o = cfg.options;
  policy_ = make_kv_policy(cfg.policy, o);  // validates, throws engine_error
  needs_ = policy_->needs();
  n_layers_ = o.n_layers, n_heads_ = o.n_heads, n_kv_ = o.n_kv_heads, hd_ = o.head_dim;
  max_chunk_ = std::max<int64_t>(1, cfg.max_chunk);
  if (!cfg.layer_window.empty() && int64_t(cfg.layer_window.size()) != n_layers_)
    throw engine_error("kv runtime: layer_window has " + std::to_string(cfg.layer_window.size()) +
                       " entries for " + std::to_string(n_layers_) + " layers");
}

kv_store_config kv_runtime::store_config() const {
  const kv_policy_options& o = cfg_.options;
  kv_store_config sc;
  sc.n_layers = n_layers_, sc.n_kv_heads = n_kv_, sc.head_dim = hd_;
  sc.group = n_heads_ / n_kv_;
  sc.int8 = o.int8 && kv_policy_supports_int8(cfg_.policy);  // the registry: which policies take --kv-int8
  sc.fp16_window = o.int8_window;
  sc.f32 = cfg_.f32;
  if (sc.f32 && sc.int8) throw engine_error("an F32 KV store cannot hold INT8 tokens (drop --kv-int8)");
  return sc;
}

void kv_runtime::reset() {
  if (step_ > 0) policy_ = make_kv_policy(cfg_.policy, cfg_.options);  // fresh policy state
  store_ = kv_store(store_config());
  reset_kind();
  heads_.assign(size_t(n_kv_), {});
  step_ = 0, pos0_ = 0, n_ = 0;
  last_ = cur_ = {};
  peak_device_ = device_bytes(), peak_host_ = host_bytes(), peak_logical_ = 0;
}

size_t kv_runtime::device_bytes() const { return store_.device_bytes(); }
size_t kv_runtime::peak_device_bytes() const { return std::max(peak_device_, device_bytes()); }

size_t kv_runtime::logical_bytes() const {
  kv_logical_layout L;
  L.head_dim = hd_;
  L.page = cfg_.options.page;
  L.state_bytes_per_token = needs_.attention_mass ? sizeof(float) : 0;  // the score column
  size_t b = 0;
  for (int64_t l = 0; l < n_layers_; ++l)
    for (int64_t g = 0; g < n_kv_; ++g) {
      kv_head_counts c = store_.counts(l, g);
      add_counts(l, g, c);
      b += kv_logical_head_bytes(L, c);
    }
  return b;
}

void kv_runtime::track() {
  peak_device_ = std::max(peak_device_, device_bytes());
  peak_host_ = std::max(peak_host_, host_bytes());
}

void kv_runtime::begin_forward(const step_signals& s, int64_t pos0, int64_t n) {
  KV_ASSERT(n >= 1 && n <= max_chunk_);
  sig_ = s;
  on_begin(sig_);
  pos0_ = pos0, n_ = n;
  cur_ = start_step_stats(++step_, s, pos0, n, n_layers_);
  cur_.confidence = -1.f;  // set by end_forward: the confidence of this step's logits
  if (!needs_.logits_confidence) policy_->on_step(sig_);  // gated policies: in end_forward
}

void kv_runtime::select_layer(int64_t layer) {
  kv_layer_meta meta = store_.layer_meta(layer);
  meta.rows = n_;
  store_.apply(layer, policy_->select(layer, meta));
  drop_out_of_window(layer);
  int64_t kept = 0;
  for (int64_t g = 0; g < n_kv_; ++g) kept = std::max(kept, store_.n_kept(layer, g));
  cur_.kept[size_t(layer)] = kept;
}

void kv_runtime::drop_out_of_window(int64_t layer) {
  const int64_t window = cfg_.window_of(layer);
  if (window <= 0) return;
  // The next query is at pos0_ + n_ or later and sees positions > pos0_ + n_ - window only.
  const int32_t oldest = int32_t(pos0_ + n_ - window + 1);
  keep_decision d;
  d.keep_all = false;
  d.keep.resize(size_t(n_kv_));
  bool any = false;
  for (int64_t g = 0; g < n_kv_; ++g) {
    const kv_head_view v = store_.head_view(layer, g);
    const int64_t lo = std::lower_bound(v.pos, v.pos + v.n(), oldest) - v.pos;
    any = any || lo > 0;
    for (int64_t t = lo; t < v.n(); ++t) d.keep[size_t(g)].push_back(int32_t(t));
  }
  if (any) store_.apply(layer, d);
}

const kv_step_stats& kv_runtime::end_forward(double ms, float confidence) {
  if (needs_.logits_confidence) {
    // The step's own confidence picks the budget this step's trim applies (decode steps;
    // a prefill chunk runs at the policy's loose budget), then every layer selects with
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

namespace {

// Eviction policies (full, window, h2o, confkv, confkv-l): the store holds every kept token;
// after each layer's attention (or, gated on confidence, after the step's logits) the policy
// drops some.
class kv_eviction_runtime final : public kv_runtime {
 public:
  explicit kv_eviction_runtime(const kv_runtime_config& cfg) : kv_runtime(cfg) { reset(); }

  // Policies that rank by attention mass need the attention of every row of the chunk, also
  // in the last layer where only the last row's logits are wanted.
  bool needs_all_rows() const override { return needs_.attention_mass; }

  void append(int64_t layer, const float* k, const float* v, int64_t ld) override {
    // Room for the kept tokens plus this chunk, and no more: the budget bounds the allocation.
    const int64_t b = policy_->budget(layer, pos0_ + n_);
    int64_t kept = 0;
    for (int64_t g = 0; g < n_kv_; ++g) kept = std::max(kept, store_.n_kept(layer, g));
    store_.set_capacity(layer, b < 0 ? 0 : std::max(b, kept) + n_);
    store_.append(layer, pos0_, n_, k, v, ld);
    track();
  }

  void attend(thread_pool& pool, int64_t layer, const float* q, int64_t ldq, int64_t n_q, float scale, float* out,
              int64_t ldo) override {
    KV_ASSERT(n_q >= 1 && n_q <= n_);
    const bool mass = needs_.attention_mass;
    if (mass) store_.clear_mass(layer);
    const int64_t window = cfg_.window_of(layer);
    hpos_.resize(size_t(n_kv_));
    for (int64_t g = 0; g < n_kv_; ++g) {
      const kv_head_view view = store_.head_view(layer, g);
      heads_[g] = kv_attn_head_from_view(view, mass);
      hpos_[size_t(g)] = view.pos;
    }
    if (window > 0) {  // a sliding-window layer: each query sees its window of what is kept
      kv_attend_window(pool, heads_, hpos_, window, pos0_ + n_ - n_q, hd_, q, ldq, n_q, n_heads_, scale, out, ldo,
                       scratch_, wscratch_, policy_->mass_decay(), cfg_.reference, cfg_.attn_softcap);
    } else if (cfg_.reference) {
      ref::kv_attend(heads_, hd_, q, ldq, n_q, n_heads_, scale, out, ldo, policy_->mass_decay(), 1.0f,
                     cfg_.attn_softcap);
    } else {
      kv_attend(pool, heads_, hd_, q, ldq, n_q, n_heads_, scale, out, ldo, scratch_, policy_->mass_decay(), 1.0f,
                cfg_.attn_softcap);
    }
    if (!needs_.logits_confidence) select_layer(layer);  // gated policies: in end_forward
    track();
  }
};

}  // namespace

std::unique_ptr<kv_runtime> make_kv_runtime(const kv_runtime_config& cfg) {
  // The kind follows what the policy needs: a host pool means retrieval.
  const bool retrieval = make_kv_policy(cfg.policy, cfg.options)->needs().host_offload;
  if (retrieval) {
    if (cfg.f32) throw engine_error("policy " + cfg.policy + " keeps its pages in FP16: no F32 store");
    return make_kv_retrieval_runtime(cfg);
  }
  return std::make_unique<kv_eviction_runtime>(cfg);
}

}  // namespace kvarena
