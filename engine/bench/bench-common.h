// bench-common.h: what the KV-policy benchmarks (bench-{ppl,niah,memory,latency,
// confidence-kl}.h) share: the session options that a policy as the user chose it
// (kv_policy_spec, kv-policy-registry.h) turns into, seeded prompt tokens that avoid
// control ids, and small statistics (median, percentiles, Pearson r, Spearman rho). Plain structs: the
// CLI turns results into JSON, the engine has no JSON or SQLite.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "kv/kv-policy-registry.h"  // kv_policy_spec
#include "session.h"

namespace kvarena {

class sequence;
class tokenizer;

// What every policy benchmark takes besides its own parameters.
struct bench_common {
  int threads = 2;
  uint64_t seed = 0;
  std::string backend = "cpu";  // make_sequence's backend (sequence.h)
  int64_t prefill_chunk = 512;  // tokens per forward call while a prompt is appended
};

// Session options that run `p` with n_ctx tokens of context (threads and prefill chunk from
// common, track_confidence as asked).
session_options bench_session_options(const kv_policy_spec& p, const bench_common& common, int64_t n_ctx,
                                      bool track_confidence = false);

// Whether the policy gates its budget on confidence (its registry entry names a
// confidence_option: confkv's tau), and that threshold, resolved (nullopt when it does not).
bool policy_uses_confidence(const kv_policy_spec& p);
std::optional<float> policy_confidence_threshold(const kv_policy_spec& p);

// n token ids drawn from a seeded PRNG, never a control token, EOS or BOS (the same ids on
// every machine for the same seed and vocabulary).
std::vector<int32_t> seeded_prompt_tokens(const tokenizer& tok, int64_t n_vocab, int64_t n, uint64_t seed);

// Statistics over samples (copies: the input order is kept). Empty input: 0.
double stat_mean(const std::vector<double>& v);
double stat_percentile(std::vector<double> v, double q);  // q in [0,1], linear interpolation
inline double stat_median(const std::vector<double>& v) { return stat_percentile(v, 0.5); }
// Pearson correlation of paired samples; 0 when either side is constant or n < 2.
double stat_pearson(const std::vector<double>& x, const std::vector<double>& y);
// Ranks 1..n of v in its order, ties given the average of the ranks they span
// ({10, 20, 20, 5} -> {2, 3.5, 3.5, 1}).
std::vector<double> stat_ranks(const std::vector<double>& v);
// Spearman rank correlation: the Pearson r of the two samples' ranks (stat_ranks, average
// ranks for ties) over the first min(|x|, |y|) pairs; 0 when either side is constant or n < 2.
double stat_spearman(const std::vector<double>& x, const std::vector<double>& y);

// log softmax(logits)[id] in double precision: logits (n_vocab,).
double log_softmax_at(const float* logits, int64_t n_vocab, int32_t id);
// KL(P || Q) in nats between softmax(p_logits) and softmax(q_logits), both (n_vocab,).
double kl_divergence_logits(const float* p_logits, const float* q_logits, int64_t n_vocab);

// Milliseconds since an arbitrary epoch (steady clock).
double bench_now_ms();

}  // namespace kvarena
