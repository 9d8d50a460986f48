// bench-confidence-kl.cpp: confidence vs the KL shift from ablating recent context
// (bench-confidence-kl.h).
#include "bench-confidence-kl.h"

#include <cstdio>
#include <span>

#include "engine-error.h"
#include "kv/kv-confidence.h"
#include "sampler.h"

namespace kvarena {

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
    if (step % cfg.every != 0 || t - cfg.ablate < 1) continue;
    ablated.assign(tokens.begin(), tokens.begin() + (t - cfg.ablate));
    ablated.push_back(tokens[size_t(t)]);
    ref.reset();
    ref.append(ablated);
    bench_confidence_kl_sample smp;
    smp.pos = t;
    smp.confidence = confidence_from_logits(s.next_logits(), V);
    smp.kl = kl_divergence_logits(s.next_logits(), ref.next_logits(), V);
    cs.push_back(smp.confidence);
    kls.push_back(smp.kl);
    r.samples.push_back(smp);
  }
  r.n_samples = int64_t(r.samples.size());
  r.pearson_r = stat_pearson(cs, kls);
  r.kl_mean = stat_mean(kls);
  r.confidence_mean = stat_mean(cs);
  std::fprintf(stderr, "bench confidence-kl: %s: %lld samples, r = %.3f\n", policy.text.c_str(),
               (long long)r.n_samples, r.pearson_r);
  return r;
}

}  // namespace kvarena
