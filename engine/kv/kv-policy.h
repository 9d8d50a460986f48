// kv-policy.h: the KV-cache policy interface. A policy decides, never stores: each step it
// sees the signals it declared it needs (kv_policy_needs; the session computes only those),
// and per layer it returns which kept tokens stay, where they live (FP16 or INT8), and for
// freekv which host pages must be on the device. Memory is kv_store's (kv-store.h).
// One file per policy: kv-policy-{full,window,h2o,confkv,freekv}.cpp, each with the class and
// its describe function (its options, defaults, ranges, factory), listed in the registry
// (kv-policy-registry.h); make_kv_policy is the only way to build one, and it validates the
// options. How to add a policy: README.md in this folder.
//
// How a session drives one (per forward chunk; only the signals in needs() are computed):
//   on_step({decode, confidence, queries}): before the layers; a policy gated on the step's
//     confidence (needs().logits_confidence) gets it after the forward, with c_t of the
//     logits this step produced, and selects every layer then (kv_runtime::end_forward)
//   per layer l: store.append(l, ...)  [+ host_pool.append, set_digests(l, pool.digests(l))]
//     eviction policies: store.clear_mass(l); attention over store.head_view(l, h) adds mass;
//                        then store.apply(l, select(l, store.layer_meta(l)))
//     freekv (a kv_retrieval_policy): after the q projection, before attention: d = select(l, meta);
//             store.apply(l, d); recall dev.plan(l, d.pages); attention reads the window
//             (store) and the page slots (kv_device_pages).
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "kv-store.h"
#include "thread-pool.h"

namespace kvarena {

struct kv_policy_needs {
  bool attention_mass = false;     // per-key attention probability from the kernel
  bool queries = false;            // the last token's query vectors per layer
  bool host_offload = false;       // a host pool of head-major pages (kv-host-pool.h)
  bool logits_confidence = false;  // confidence_from_logits of each decode step
};

// What the session hands the policy once per forward step (a decode step or a prefill chunk).
struct step_signals {
  bool decode = true;        // false for a prefill chunk (no logits of its own)
  float confidence = 0.f;    // confidence_from_logits of this step (decode, when needed)
  // queries[l]: (n_heads, head_dim) the last token's query of layer l (when needed)
  std::vector<const float*> queries;
};

// Page digests of one layer (freekv): per page and KV head, per-channel key min and max.
struct kv_page_digests {
  int64_t n_pages = 0;            // full pages in the host pool
  int64_t page = 32;              // tokens per page
  const float* kmin = nullptr;    // (n_pages, n_kv_heads, head_dim)
  const float* kmax = nullptr;    // (n_pages, n_kv_heads, head_dim)
};

struct keep_decision {
  bool keep_all = true;                 // nothing evicted in this layer
  std::vector<std::vector<int32_t>> keep;  // (n_kv_heads,) ascending kept indices that stay
  int64_t fp16_window = -1;             // the W most recent stay FP16, older INT8; -1: all FP16
  // freekv: (n_kv_heads,) ascending host page ids to have on the device for this step's
  // attention, and which heads were corrected (selection redone with this step's query).
  std::vector<std::vector<int32_t>> pages;
  std::vector<bool> corrected;
  bool checked = false;                 // freekv: the correction test ran (a previous query existed)
};

// The options of every policy in one struct (a policy reads the fields its registry entry
// lists; kv-policy-registry.h has each one's name, default, range and help). A field's
// default here is the default of every policy that takes it, or a placeholder that
// resolve_kv_options turns into each policy's automatic value.
struct kv_policy_options {
  // Model shape (required).
  int64_t n_layers = 0, n_heads = 0, n_kv_heads = 0, head_dim = 0;
  // window; freekv also reads `window` (its recent window W)
  int64_t window = 512;
  int64_t sinks = -1;           // -1: automatic (per policy, resolve_kv_options)
  // h2o: tokens; 0 = 10% of the sequence seen so far
  int64_t heavy = 0, recent = 0;
  // confkv / confkv-l
  float tau = -2.f;             // -2: automatic (per policy, resolve_kv_options)
  int64_t n_high = 256, n_low = 1024, protect = 64;
  float ema_decay = 0.9f, beta = 0.1f;
  bool int8 = false;
  int64_t int8_window = 128;
  // freekv
  int64_t budget = 2048, page = 32;  // freekv: device tokens per layer and KV head; page size
  bool dense_layer0 = false;
  // Options of policies that have no field above (registry extra_option), by name.
  std::map<std::string, double> extra;
};

class kv_policy {
 public:
  virtual ~kv_policy() = default;
  virtual const char* name() const = 0;
  virtual kv_policy_needs needs() const = 0;
  virtual void on_step(const step_signals&) {}
  // Most tokens layer `layer` may hold per head after select once seq_len tokens were seen
  // (the store's capacity must be at least this plus the next chunk); for freekv, kept
  // tokens plus recalled pages. <0: unbounded.
  virtual int64_t budget(int64_t layer, int64_t seq_len) const = 0;
  // Folds the last chunk's attention mass into meta's scores, then decides.
  virtual keep_decision select(int64_t layer, const kv_layer_meta& meta) = 0;
  // How the attention kernel weighs a chunk's query rows in the mass it adds
  // (kv_attend's mass_decay): query i of n_q gets mass_decay^(n_q - 1 - i). 1: a plain sum
  // (h2o); confkv: its EMA decay, so that one chunk of R rows advances the EMA R times.
  virtual float mass_decay() const { return 1.0f; }
};

// Eviction policies (full, window, h2o, confkv, confkv-l) are plain kv_policy objects: they
// keep or drop the store's tokens. A retrieval policy (freekv, needs().host_offload) drops
// nothing: the whole cache lives in a host pool and select() also names the host pages the
// device must hold (keep_decision::pages). It has these hooks besides.
class kv_retrieval_policy : public kv_policy {
 public:
  // The host page digests select() scores pages with.
  virtual void set_digests(int64_t layer, const kv_page_digests&) = 0;
  // The pages (per KV head, ascending) the next step's select() will most likely want for
  // `layer` without correction, chosen now with this step's query, so their recall can
  // overlap the rest of this step. Empty: nothing to prefetch. With a pool, the KV heads are
  // scored on its threads.
  virtual std::vector<std::vector<int32_t>> speculate(int64_t layer, int64_t next_seq_len,
                                                      thread_pool* pool = nullptr) = 0;
  // Device page slots per layer and KV head (sinks + retrieved pages).
  virtual int64_t page_slots() const = 0;
  // Host bytes the policy itself holds for the cache (its FP16 copy of the digests).
  virtual size_t host_bytes() const = 0;
};

// p as a retrieval policy; nullptr for an eviction policy.
inline kv_retrieval_policy* as_retrieval(kv_policy& p) { return dynamic_cast<kv_retrieval_policy*>(&p); }
inline const kv_retrieval_policy* as_retrieval(const kv_policy& p) {
  return dynamic_cast<const kv_retrieval_policy*>(&p);
}

// The common shape of most policies: keep sinks (pos < sinks) and the `recent` newest tokens,
// and fill the rest of the budget with the highest-ranked others (ties: the newer wins).
// A policy writes update_scores (fold this step's mass) and rank, and the three sizes.
class kv_policy_topk : public kv_policy {
 public:
  keep_decision select(int64_t layer, const kv_layer_meta& meta) override;
  int64_t budget(int64_t layer, int64_t seq_len) const final { return budget_for(layer, seq_len); }

 protected:
  virtual void update_scores(int64_t layer, const kv_layer_meta& meta) {}
  virtual float rank(const kv_layer_meta& meta, const kv_head_meta& h, int64_t i) const {
    return h.score[i];
  }
  virtual int64_t sinks(int64_t layer) const { return 0; }
  virtual int64_t recent(int64_t layer, int64_t seq_len) const = 0;
  virtual int64_t budget_for(int64_t layer, int64_t seq_len) const = 0;  // <0: unbounded
  virtual int64_t fp16_window() const { return -1; }

 private:
  std::vector<char> kept_;                        // select() scratch: (n,) kept flags
  std::vector<std::pair<float, int32_t>> rest_;   // select() scratch: (rank, index) candidates
};

// Builds a registered policy by name (kv-policy-registry.h): resolves the automatic
// defaults, checks the model shape, the policy's rules and every option's range. Throws
// engine_error naming the bad option and the valid range, or the valid policies.
std::unique_ptr<kv_policy> make_kv_policy(const std::string& name, const kv_policy_options& opt);

// Fails fast (engine_error naming the missing signals) when the engine cannot provide what
// the policy needs, e.g. h2o on a backend whose attention kernel emits no attention mass.
void check_kv_policy_needs(const kv_policy& policy, const kv_policy_needs& provided);

// Per-layer budgets of confkv-l (PyramidKV): budget B and protected P per layer on average;
// min = (B-P)/20, max = 2(B-P) - min, linear from layer 0 (max) to the last (min), plus P;
// rounded down, the remainder given to the first layers so the sum is exactly n_layers*B.
std::vector<int64_t> pyramid_budgets(int64_t budget, int64_t protect, int64_t n_layers);

}  // namespace kvarena
