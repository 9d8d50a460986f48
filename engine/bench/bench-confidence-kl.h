// bench-confidence-kl.h: `kvarena bench confidence-kl`: CONF-KV's mechanistic check
// (specs/kv-policies.md). Greedy generation under a policy; at every `every`-th step t
// (once at least ablate + 1 tokens precede the current one) the next-token distribution
// P_full is compared with P_ablated, the distribution of a fresh plain session over the
// same tokens with the `ablate` tokens before the current token removed
// (tokens[0, t - ablate) + tokens[t]). Reports the Pearson r between the confidence of
// P_full and KL(P_full || P_ablated): the paper finds r = -0.77 on a trained GPT-2.
// With a text (`--text`), the tokens are the text's, teacher-forced (each appended as a
// decode step, so the policy is gated as in generation): the prompt is its first n_prompt
// tokens, and a trained model is measured on text it models rather than on its own greedy
// continuation of random ids.
#pragma once
#include <cstdint>
#include <vector>

#include "bench-common.h"

namespace kvarena {

class tokenizer;

struct bench_confidence_kl_config {
  int64_t n_prompt = 16;  // seeded random prompt tokens, or the text's first tokens
  int64_t n_gen = 256;    // generated (or, with text, teacher-forced) steps; fewer when the text ends
  std::vector<int32_t> text;  // (n,) token ids; empty: random prompt + greedy generation
  int64_t every = 8;
  int64_t ablate = 32;
};

struct bench_confidence_kl_sample {
  int64_t pos = 0;  // position t of the current token
  double confidence = 0;
  double kl = 0;    // nats
};

struct bench_confidence_kl_result {
  double pearson_r = 0;
  int64_t n_samples = 0;
  double kl_mean = 0;
  double confidence_mean = 0;
  std::vector<bench_confidence_kl_sample> samples;
};

bench_confidence_kl_result run_bench_confidence_kl(const model& m, const tokenizer& tok,
                                                   const kv_policy_spec& policy, const bench_common& common,
                                                   const bench_confidence_kl_config& cfg);

}  // namespace kvarena
