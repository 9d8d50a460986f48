// kv-policy-freekv.cpp: FreeKV retrieval; nothing is dropped (the host pool holds it all).
// Per layer and KV head the device holds at most B tokens: a fixed set of (B - W - p) / p
// page slots (the sink pages of the first S tokens, then the k best candidate pages) and
// the recent window (the kv_store's kept tokens: at most W after a step, from a page
// boundary, plus at most one page of new tokens while a chunk is appended), so every
// token is in exactly one of sink pages, candidate pages or the window. Page score for query head q:
// scale * sum_i max(q_i*max_i, q_i*min_i) (Quest's bound, kv-page-bounds.h, over FP16 digests
// the policy keeps per KV head), softmax over candidates, mean over the group. Speculative: attention at step t uses the pages chosen with q_{t-1};
// heads whose mean cosine(q_t, q_{t-1}) over the group is < tau are corrected (chosen with
// q_t). The choice with q_{t-1} is made over the current candidates (the session may run
// it early to overlap the recall); the incremental recall itself is kv-freekv-recall.h.
// Prefill is dense (the runtime reads every earlier page): on a prefill step select() only
// trims the window and chooses with the step's own query, so that the first decode step
// has a previous query and pages to speculate from.
#include <algorithm>
#include <cmath>
#include <numeric>

#include "cpu-kernels.h"
#include "engine-error.h"
#include "ggml-types.h"
#include "kv-page-bounds.h"
#include "kv-policy-registry.h"

namespace kvarena {

namespace {
class kv_policy_freekv final : public kv_retrieval_policy {
 public:
  explicit kv_policy_freekv(const kv_policy_options& o)
      : n_heads_(o.n_heads), n_kv_(o.n_kv_heads), d_(o.head_dim), B_(o.budget),
        S_(o.sinks), W_(o.window), p_(o.page),
        slots_((o.budget - o.window - o.page) / o.page),
        tau_(o.tau), dense0_(o.dense_layer0),
        prev_q_(size_t(o.n_layers)), n_pages_(size_t(o.n_layers), 0),
        dig16_(size_t(o.n_layers * o.n_kv_heads)),
        spec_(size_t(o.n_layers * o.n_kv_heads)),
        corrections_(size_t(o.n_layers), 0), head_steps_(size_t(o.n_layers), 0) {}
  const char* name() const override { return "freekv"; }
  kv_policy_needs needs() const override { return {.queries = true, .host_offload = true}; }
  int64_t budget(int64_t layer, int64_t) const override { return dense0_ && layer == 0 ? -1 : B_; }
  void on_step(const step_signals& s) override {
    queries_ = s.queries;
    decode_ = s.decode;
  }
  // Pages are written once, so only the pages new since the last call are converted.
  void set_digests(int64_t layer, const kv_page_digests& d) override {
    KV_ASSERT(d.page == p_);
    int64_t& have = n_pages_[layer];
    if (d.n_pages == have) return;  // most calls: no page filled since the last one
    if (d.n_pages < have) have = 0;  // a new sequence
    for (int64_t g = 0; g < n_kv_; ++g) {
      std::vector<uint16_t>& h = dig16_[size_t(layer * n_kv_ + g)];
      const size_t need = size_t(d.n_pages * 2 * d_);
      if (need > h.capacity()) h.reserve(std::max(need, h.capacity() + h.capacity() / 4));  // not doubling
      h.resize(need);
      for (int64_t p = have; p < d.n_pages; ++p) {
        const int64_t src = (p * n_kv_ + g) * d_;
        for (int64_t c = 0; c < d_; ++c) {
          h[size_t((p * 2) * d_ + c)] = fp32_to_fp16(d.kmin[src + c]);  // exact: fp16 keys' bounds
          h[size_t((p * 2 + 1) * d_ + c)] = fp32_to_fp16(d.kmax[src + c]);
        }
      }
    }
    have = d.n_pages;
  }
  int64_t page_slots() const override { return slots_; }
  size_t host_bytes() const override {
    size_t b = 0;
    for (const std::vector<uint16_t>& h : dig16_) b += h.capacity() * sizeof(uint16_t);
    return b;
  }
  float correction_rate(int64_t layer) const {
    return head_steps_[layer] ? float(corrections_[layer]) / float(head_steps_[layer]) : 0.f;
  }

  keep_decision select(int64_t layer, const kv_layer_meta& meta) override {
    keep_decision d;
    if (dense0_ && layer == 0) return d;
    const int64_t s = meta.seq_len;
    const int64_t wstart = window_start(s, n_pages_[layer]);
    const int64_t n_sink = std::min(S_ / p_, wstart / p_);
    const int64_t n_cand = wstart / p_ - n_sink;  // candidates: pages [n_sink, wstart / p)
    const int64_t k = slots_ - n_sink;

    d.keep_all = false;
    d.keep.resize(size_t(n_kv_));
    d.pages.resize(size_t(n_kv_));
    d.corrected.assign(size_t(n_kv_), false);
    const float* q = layer < int64_t(queries_.size()) ? queries_[layer] : nullptr;
    KV_ASSERT(q != nullptr);  // needs().queries: the session must pass them
    std::vector<float>& prev = prev_q_[layer];
    // Speculation and correction are for decode steps: a prefill page (whose attention is
    // dense) chooses with its own query, and nothing is tested or counted.
    const bool have_prev = decode_ && !prev.empty();
    d.checked = have_prev;
    for (int64_t g = 0; g < n_kv_; ++g) {
      const kv_head_meta& h = meta.heads[g];
      for (int64_t i = 0; i < h.n; ++i)
        if (h.pos[i] >= wstart) d.keep[g].push_back(int32_t(i));
      // The correction test runs every step (when all candidates fit it costs no recall).
      const bool correct = have_prev && group_cosine(q, prev.data(), g) < tau_;
      if (have_prev) {
        corrections_[layer] += correct;
        head_steps_[layer] += 1;
        d.corrected[g] = correct;
      }
      const speculation& sp = spec_[size_t(layer * n_kv_ + g)];
      if (!correct && have_prev && sp.valid && sp.n_sink == n_sink && sp.n_cand == n_cand) {
        d.pages[g] = sp.pages;  // speculate() already chose with this query over these candidates
      } else {
        d.pages[g] = choose(correct || !have_prev ? q : prev.data(), layer, g, n_sink, n_cand, k);
      }
    }
    for (int64_t g = 0; g < n_kv_; ++g) spec_[size_t(layer * n_kv_ + g)].valid = false;
    prev.assign(q, q + n_heads_ * d_);
    return d;
  }

  std::vector<std::vector<int32_t>> speculate(int64_t layer, int64_t next_seq_len,
                                              thread_pool* pool) override {
    if (dense0_ && layer == 0) return {};
    const std::vector<float>& prev = prev_q_[layer];
    if (prev.empty()) return {};
    const int64_t wstart = window_start(next_seq_len, n_pages_[layer]);
    const int64_t n_sink = std::min(S_ / p_, wstart / p_);
    const int64_t n_cand = wstart / p_ - n_sink;
    std::vector<std::vector<int32_t>> pages(static_cast<size_t>(n_kv_));
    // Heads are independent: each writes only its own pages and speculation entry.
    auto heads = [&](int64_t g0, int64_t g1) {
      for (int64_t g = g0; g < g1; ++g) {
        pages[g] = choose(prev.data(), layer, g, n_sink, n_cand, slots_ - n_sink);
        spec_[size_t(layer * n_kv_ + g)] = {true, n_sink, n_cand, pages[g]};
      }
    };
    if (pool && pool->size() > 1 && n_kv_ > 1 && n_cand > slots_ - n_sink) {
      pool->run([&](int ith, int nth) {
        int64_t g0, g1;
        split_range(n_kv_, ith, nth, g0, g1);
        heads(g0, g1);
      });
    } else {
      heads(0, n_kv_);
    }
    return pages;
  }

 private:
  int64_t group() const { return n_heads_ / n_kv_; }
  // Window start: page-aligned from above so the window holds at most W tokens, and never
  // past the last full host page (tokens not yet paged stay in the window).
  int64_t window_start(int64_t s, int64_t n_pages) const {
    const int64_t w = std::max<int64_t>(0, (s - W_ + p_ - 1) / p_ * p_);
    return std::min(w, n_pages * p_);
  }
  // The sink pages, then the k best of the n_cand candidate pages [n_sink, n_sink + n_cand)
  // under query q (all of them when they fit).
  std::vector<int32_t> choose(const float* q, int64_t layer, int64_t g, int64_t n_sink, int64_t n_cand,
                              int64_t k) const {
    std::vector<int32_t> pages(static_cast<size_t>(n_sink));
    std::iota(pages.begin(), pages.end(), 0);
    if (n_cand <= k) {
      for (int64_t j = 0; j < n_cand; ++j) pages.push_back(int32_t(n_sink + j));
    } else {
      const std::vector<int32_t> top = top_pages(q, layer, g, n_sink, n_cand, k);
      pages.insert(pages.end(), top.begin(), top.end());
    }
    return pages;
  }
  // Mean over KV head g's query heads of cosine(a_h, b_h), clamped to [-1, 1].
  float group_cosine(const float* a, const float* b, int64_t g) const {
    double sum = 0;
    for (int64_t h = g * group(); h < (g + 1) * group(); ++h) {
      double ab = 0, aa = 0, bb = 0;
      for (int64_t c = 0; c < d_; ++c) {
        const double x = a[h * d_ + c], y = b[h * d_ + c];
        ab += x * y, aa += x * x, bb += y * y;
      }
      sum += aa > 0 && bb > 0 ? ab / std::sqrt(aa * bb) : 0.0;
    }
    return float(std::clamp(sum / double(group()), -1.0, 1.0));
  }
  // The k best of the candidate pages [c0, c0 + n) for KV head g under query q (n_heads, d),
  // ascending ids. With one query head per KV head the softmax is skipped: it keeps the order.
  std::vector<int32_t> top_pages(const float* q, int64_t layer, int64_t g, int64_t c0, int64_t n,
                                 int64_t k) const {
    const int64_t G = group();
    thread_local std::vector<float> bounds, score;  // (G, n), (n,): speculate runs on pool threads
    bounds.resize(size_t(G * n));
    score.assign(size_t(n), 0.f);
    const uint16_t* dig = dig16_[size_t(layer * n_kv_ + g)].data() + c0 * 2 * d_;
    kv_page_bounds(q + g * G * d_, G, dig, n, d_, 1.f / std::sqrt(float(d_)), bounds.data(), n);
    if (G == 1) {
      score.assign(bounds.begin(), bounds.end());
    } else {
      for (int64_t h = 0; h < G; ++h) {
        float* b = bounds.data() + h * n;
        softmax(b, n);
        for (int64_t j = 0; j < n; ++j) score[j] += b[j] / float(G);
      }
    }
    std::vector<int32_t> idx(static_cast<size_t>(n));
    std::iota(idx.begin(), idx.end(), 0);
    std::nth_element(idx.begin(), idx.begin() + (k - 1), idx.end(), [&](int32_t a, int32_t b) {
      return score[a] != score[b] ? score[a] > score[b] : a < b;
    });
    std::vector<int32_t> out(idx.begin(), idx.begin() + k);
    for (int32_t& j : out) j += int32_t(c0);
    std::sort(out.begin(), out.end());
    return out;
  }

  int64_t n_heads_, n_kv_, d_, B_, S_, W_, p_, slots_;
  float tau_;
  bool dense0_;
  std::vector<const float*> queries_;            // (n_layers,) this step's (n_heads, d)
  bool decode_ = true;                           // this step is a decode step (else prefill)
  std::vector<std::vector<float>> prev_q_;       // (n_layers,) (n_heads*d) last step's query
  std::vector<int64_t> n_pages_;                 // (n_layers,) full host pages (digests seen)
  // (n_layers * n_kv_heads,) each (n_pages, 2, d) fp16: per page the key minima then maxima.
  std::vector<std::vector<uint16_t>> dig16_;
  // The pages speculate() chose per (layer, KV head) with the last query, and over which
  // candidates (a contiguous range: the sink count and the candidate count identify it);
  // select() reuses them for a head that is not corrected instead of scoring twice.
  struct speculation {
    bool valid = false;
    int64_t n_sink = 0, n_cand = 0;
    std::vector<int32_t> pages;
  };
  std::vector<speculation> spec_;                // (n_layers * n_kv_heads,)
  std::vector<int64_t> corrections_, head_steps_;  // (n_layers,) counts over heads and steps
};
}  // namespace

kv_policy_desc describe_freekv() {
  kv_policy_desc d;
  d.summary = "everything in a host pool; sink pages, the best pages for the query and a recent window on the device";
  d.options = {
      int_option("budget", &kv_policy_options::budget, "device tokens per layer"),
      int_option("sinks", &kv_policy_options::sinks, "sink tokens, a multiple of --page")
          .at_least(0, "tokens")
          .automatic_default([](const kv_policy_options&) { return 512.0; }),
      int_option("window", &kv_policy_options::window, "recent window W").at_least(0, "tokens"),
      int_option("page", &kv_policy_options::page, "tokens per page").at_least(1, "tokens"),
      real_option("tau", &kv_policy_options::tau, "correction cosine")
          .in(-1, 1)
          .automatic_default([](const kv_policy_options&) { return 0.9f; }),
      flag_option("dense-layer0", &kv_policy_options::dense_layer0, "layer 0 keeps its whole cache on the device"),
      // Kept in the spec, not in kv_policy_options: the runtime's overlap switch.
      spec_option(
          "no-overlap", kv_option_type::flag, [](const kv_policy_spec& p) { return p.overlap ? 0.0 : 1.0; },
          [](kv_policy_spec& p, double v) { p.overlap = v == 0; },
          "recall pages synchronously (no speculative overlap)"),
  };
  // The page sizes (before the ranges; a page below 1 is left to its range check).
  d.check = [](const std::string& name, const kv_policy_options& o) {
    if (o.page < 1) return;
    const int64_t S = o.sinks;
    if (S % o.page || o.window % o.page || o.budget % o.page || o.window < 0)
      kv_policy_error(name, "budget, sinks and window must be multiples of the page (" + kv_num(double(o.page)) +
                                " tokens) (got budget=" + kv_num(double(o.budget)) + ", sinks=" + kv_num(double(S)) +
                                ", window=" + kv_num(double(o.window)) + ")");
    if (o.budget < S + o.window + o.page)
      kv_policy_error(name, "budget " + kv_num(double(o.budget)) +
                                " is smaller than sinks + window + one page of new tokens (" + kv_num(double(S)) +
                                " + " + kv_num(double(o.window)) + " + " + kv_num(double(o.page)) + ")");
  };
  // The device tokens after a forward call (B less the page of new tokens B makes room for
  // inside one) plus the page digests (one FP16 token's bytes per page and KV head, so
  // ceil(seq_len / page) tokens' worth at the end of the sequence) fit the budget; sinks
  // and window a quarter each (whole pages), the rest page slots for retrieval.
  d.spend_budget = [](kv_policy_options& o, int64_t tokens, int64_t seq_len) {
    const int64_t p = std::max<int64_t>(1, o.page);
    const int64_t digests = (seq_len + p - 1) / p;
    const int64_t kept = (tokens - digests) / p * p;
    const int64_t B = kept + p;
    if (kept < 2 * p)
      kv_policy_error("freekv", "a budget of " + kv_num(double(tokens)) + " tokens, less " + kv_num(double(digests)) +
                                    " tokens' worth of page digests for " + kv_num(double(seq_len)) +
                                    " tokens, leaves under 2 pages (a sink page and a window page) on the device");
    o.budget = B;
    o.sinks = std::max(p, kept / 4 / p * p);
    o.window = std::max(p, kept / 4 / p * p);
  };
  d.make = [](const kv_policy_options& o) { return std::make_unique<kv_policy_freekv>(o); };
  return d;
}

}  // namespace kvarena
