// bench-common.h: what the KV-policy benchmarks (bench-{ppl,niah,memory,latency,
// confidence-kl}.h) share: a policy as the user chose it (name + options), the session
// options it turns into, seeded prompt tokens that avoid control ids, and small statistics
// (median, percentiles, Pearson r). Plain structs: the CLI turns results into JSON, the
// engine has no JSON or SQLite.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "kv/kv-policy.h"
#include "session.h"

namespace kvarena {

class tokenizer;

// One policy to run: "freekv:budget=2048:window=512" -> name "freekv" and its options
// (the shape fields stay 0: the session fills them in from the model).
struct kv_policy_spec {
  std::string text;            // as the user wrote it (labels in logs)
  std::string name;            // full|window|h2o|confkv|confkv-l|freekv; "" = plain F32 cache
  kv_policy_options options;
  bool overlap = true;         // freekv: speculative recall overlapped with compute
};

// What every policy benchmark takes besides its own parameters.
struct bench_common {
  int threads = 2;
  uint64_t seed = 0;
  std::string backend = "cpu";  // make_sequence's backend (sequence.h)
};

// Session options that run `p` with n_ctx tokens of context (track_confidence as asked).
session_options bench_session_options(const kv_policy_spec& p, int threads, int64_t n_ctx,
                                      bool track_confidence = false);

// Whether the policy gates its budget on confidence (confkv, confkv-l), and its tau then.
bool policy_uses_confidence(const kv_policy_spec& p);
float confkv_tau(const kv_policy_spec& p);

// n token ids drawn from a seeded PRNG, never a control token, EOS or BOS (the same ids on
// every machine for the same seed and vocabulary).
std::vector<int32_t> seeded_prompt_tokens(const tokenizer& tok, int64_t n_vocab, int64_t n, uint64_t seed);

// Statistics over samples (copies: the input order is kept). Empty input: 0.
double stat_mean(const std::vector<double>& v);
double stat_percentile(std::vector<double> v, double q);  // q in [0,1], linear interpolation
inline double stat_median(const std::vector<double>& v) { return stat_percentile(v, 0.5); }
// Pearson correlation of paired samples; 0 when either side is constant or n < 2.
double stat_pearson(const std::vector<double>& x, const std::vector<double>& y);

// log softmax(logits)[id] in double precision: logits (n_vocab,).
double log_softmax_at(const float* logits, int64_t n_vocab, int32_t id);
// KL(P || Q) in nats between softmax(p_logits) and softmax(q_logits), both (n_vocab,).
double kl_divergence_logits(const float* p_logits, const float* q_logits, int64_t n_vocab);

// Milliseconds since an arbitrary epoch (steady clock).
double bench_now_ms();

}  // namespace kvarena
