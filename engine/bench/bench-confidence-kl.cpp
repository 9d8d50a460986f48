// bench-confidence-kl.cpp: confidence vs the KL shift from ablating a span of context
// (bench-confidence-kl.h).
#include "bench-confidence-kl.h"

#include <algorithm>
#include <cstdio>
#include <span>

#include "engine-error.h"
#include "kv/kv-confidence.h"
#include "sampler.h"

namespace kvarena {

ckl_span parse_ckl_span(const std::string& s) {
  if (s == "recent") return ckl_span::recent;
  if (s == "distant") return ckl_span::distant;
  throw engine_error("bench confidence-kl: unknown ablated span '" + s + "' (valid: recent, distant)");
}

ckl_direction parse_ckl_direction(const std::string& s) {
  if (s == "full-ablated") return ckl_direction::full_ablated;
  if (s == "ablated-full") return ckl_direction::ablated_full;
  throw engine_error("bench confidence-kl: unknown KL direction '" + s + "' (valid: full-ablated, ablated-full)");
}

const char* ckl_span_name(ckl_span s) { return s == ckl_span::recent ? "recent" : "distant"; }
const char* ckl_direction_name(ckl_direction d) {
  return d == ckl_direction::full_ablated ? "full-ablated" : "ablated-full";
}

int64_t confidence_kl_distant_start(const bench_confidence_kl_config& cfg) {
  return std::max<int64_t>(1, cfg.n_prompt / 4);
}

std::optional<std::pair<int64_t, int64_t>> confidence_kl_ablated_span(const bench_confidence_kl_config& cfg,
                                                                      int64_t t) {
  if (cfg.span == ckl_span::recent) {
    if (t - cfg.ablate < 1) return std::nullopt;
    return std::make_pair(t - cfg.ablate, t);
  }
  const int64_t d = confidence_kl_distant_start(cfg);
  if (d + cfg.ablate > t - cfg.ablate) return std::nullopt;
  return std::make_pair(d, d + cfg.ablate);
}

bench_confidence_kl_result run_bench_confidence_kl(const model& m, const tokenizer& tok,
                                                   const kv_policy_spec& policy, const bench_common& common,
                                                   const bench_confidence_kl_config& cfg) {
  if (cfg.n_prompt < 1 || cfg.n_gen < 1 || cfg.every < 1 || cfg.ablate < 1)
    throw engine_error("bench confidence-kl: --n-prompt, --n-gen, --every and --ablate must be >= 1");
  const int64_t total = cfg.n_prompt + cfg.n_gen + 1;
  const std::unique_ptr<sequence> sp = make_sequence(common.backend, m, bench_session_options(policy, common, total, true));
  sequence& s = *sp;
  kv_policy_spec plain;  // the ablated reference runs without a policy: the plain cache
  const std::unique_ptr<sequence> refp = make_sequence(common.backend, m, bench_session_options(plain, common, total));
  sequence& ref = *refp;
  const int64_t V = s.n_vocab();

  const bool forced = !cfg.text.empty();
  if (forced && int64_t(cfg.text.size()) <= cfg.n_prompt)
    throw engine_error("bench confidence-kl: the text has " + std::to_string(cfg.text.size()) +
                       " tokens, not more than --n-prompt " + std::to_string(cfg.n_prompt));
  std::vector<int32_t> tokens = forced ? std::vector<int32_t>(cfg.text.begin(), cfg.text.begin() + cfg.n_prompt)
                                       : seeded_prompt_tokens(tok, V, cfg.n_prompt, common.seed);
  s.append(tokens);
  sampler greedy;
  bench_confidence_kl_result r;
  std::vector<double> cs, kls;
  std::vector<int32_t> ablated;
  for (int64_t step = 1; step <= cfg.n_gen; ++step) {
    if (forced) {
      if (tokens.size() >= cfg.text.size()) break;  // the text ended
      const int32_t next = cfg.text[tokens.size()];
      s.append_decode(next);
      tokens.push_back(next);
    } else {
      tokens.push_back(s.decode_next(greedy));
    }
    const int64_t t = int64_t(tokens.size()) - 1;  // position of the current token
    if (step % cfg.every != 0) continue;
    const auto span = confidence_kl_ablated_span(cfg, t);
    if (!span) continue;
    // tokens[0, b) + tokens[e, t]: the span [b, e) removed, the current token last.
    ablated.assign(tokens.begin(), tokens.begin() + span->first);
    ablated.insert(ablated.end(), tokens.begin() + span->second, tokens.end());
    ref.reset();
    ref.append(ablated);
    bench_confidence_kl_sample smp;
    smp.pos = t;
    smp.ablated_from = span->first;
    smp.ablated_to = span->second;
    smp.confidence = confidence_from_logits(s.next_logits(), V);
    smp.kl = cfg.direction == ckl_direction::full_ablated ? kl_divergence_logits(s.next_logits(), ref.next_logits(), V)
                                                          : kl_divergence_logits(ref.next_logits(), s.next_logits(), V);
    cs.push_back(smp.confidence);
    kls.push_back(smp.kl);
    r.samples.push_back(smp);
  }
  r.n_samples = int64_t(r.samples.size());
  r.pearson_r = stat_pearson(cs, kls);
  r.spearman_r = stat_spearman(cs, kls);
  r.kl_mean = stat_mean(kls);
  r.confidence_mean = stat_mean(cs);
  std::fprintf(stderr, "bench confidence-kl: %s: %lld samples (span %s, KL %s), Pearson r = %.3f, Spearman = %.3f\n",
               policy.text.c_str(), (long long)r.n_samples, ckl_span_name(cfg.span), ckl_direction_name(cfg.direction),
               r.pearson_r, r.spearman_r);
  return r;
}

}  // namespace kvarena
