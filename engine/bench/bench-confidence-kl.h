// bench-confidence-kl.h: `kvarena bench confidence-kl`: CONF-KV's mechanistic check
// (specs/kv-policies.md). Greedy generation under a policy; at every `every`-th step t
// the next-token distribution P_full (the policy's session, over every token so far) is
// compared with P_ablated, the distribution of a fresh plain session over the same tokens
// with a span of `ablate` tokens removed: tokens[0, b) + tokens[e, t] for the removed span
// [b, e) (positions close up, as when the tokens were never there):
//   - span `recent` (the CONF-KV paper's test, the default): the `ablate` tokens right
//     before the current one, [t - ablate, t); sampled once t - ablate >= 1 (the first
//     token, BOS with most vocabularies, always stays).
//   - span `distant`: `ablate` tokens far back, starting just after the first quarter of
//     the prompt: [d, d + ablate) with d = max(1, n_prompt / 4); sampled once the span ends
//     at least `ablate` tokens before the current one (d + ablate <= t - ablate), so it never
//     overlaps the tokens `recent` would remove.
// The KL direction: `full-ablated` (the default, as the paper) is KL(P_full || P_ablated),
// `ablated-full` is KL(P_ablated || P_full); nats either way. Reports the Pearson r and the
// Spearman rank correlation (average ranks for ties) between the confidence of P_full and
// that KL: the paper finds Pearson r = -0.77 on a trained GPT-2.
// With a text (`--text`), the tokens are the text's, teacher-forced (each appended as a
// decode step, so the policy is gated as in generation): the prompt is its first n_prompt
// tokens, and a trained model is measured on text it models rather than on its own greedy
// continuation of random ids.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "bench-common.h"

namespace kvarena {

class tokenizer;

enum class ckl_span { recent, distant };
enum class ckl_direction { full_ablated, ablated_full };

// "recent" / "distant", "full-ablated" / "ablated-full" (the CLI's spellings); parse throws
// engine_error naming the valid ones.
ckl_span parse_ckl_span(const std::string& s);
ckl_direction parse_ckl_direction(const std::string& s);
const char* ckl_span_name(ckl_span s);
const char* ckl_direction_name(ckl_direction d);

struct bench_confidence_kl_config {
  int64_t n_prompt = 16;  // seeded random prompt tokens, or the text's first tokens
  int64_t n_gen = 256;    // generated (or, with text, teacher-forced) steps; fewer when the text ends
  std::vector<int32_t> text;  // (n,) token ids; empty: random prompt + greedy generation
  int64_t every = 8;
  int64_t ablate = 32;
  ckl_span span = ckl_span::recent;
  ckl_direction direction = ckl_direction::full_ablated;
};

// The span [first, second) of positions removed when the current token sits at position t
// (see the header comment), or nullopt when t is not sampled because the span does not fit.
std::optional<std::pair<int64_t, int64_t>> confidence_kl_ablated_span(const bench_confidence_kl_config& cfg,
                                                                      int64_t t);
// Where the distant span starts: max(1, n_prompt / 4).
int64_t confidence_kl_distant_start(const bench_confidence_kl_config& cfg);

struct bench_confidence_kl_sample {
  int64_t pos = 0;  // position t of the current token
  int64_t ablated_from = 0, ablated_to = 0;  // the removed span [from, to)
  double confidence = 0;
  double kl = 0;    // nats, in cfg.direction
};

struct bench_confidence_kl_result {
  double pearson_r = 0;     // confidence vs KL
  double spearman_r = 0;    // the same pairs' rank correlation
  int64_t n_samples = 0;
  double kl_mean = 0;
  double confidence_mean = 0;
  std::vector<bench_confidence_kl_sample> samples;
};

bench_confidence_kl_result run_bench_confidence_kl(const model& m, const tokenizer& tok,
                                                   const kv_policy_spec& policy, const bench_common& common,
                                                   const bench_confidence_kl_config& cfg);

}  // namespace kvarena
