// bench-latency.cpp: interleaved decode latency across policies (bench-latency.h).
#include "bench-latency.h"

#include <cstdio>
#include <memory>

#include "engine-error.h"
#include "sampler.h"

namespace kvarena {

std::vector<bench_latency_result> run_bench_latency(const model& m, const tokenizer& tok,
                                                    const std::vector<kv_policy_spec>& policies,
                                                    const bench_common& common, const bench_latency_config& cfg) {
  if (cfg.contexts.empty()) throw engine_error("bench latency: give at least one context length");
  if (cfg.steps < 1) throw engine_error("bench latency: --steps must be >= 1");
  std::vector<bench_latency_result> out;
  for (int64_t ctx : cfg.contexts) {
    if (ctx < 1) throw engine_error("bench latency: context " + std::to_string(ctx) + " must be >= 1");
    const std::vector<int32_t> prompt = seeded_prompt_tokens(tok, m.config.n_vocab, ctx, common.seed);
    // Sessions live side by side for the whole context so their steps can interleave.
    std::vector<std::unique_ptr<session>> ss;
    std::vector<bench_latency_result> rs(policies.size());
    for (size_t p = 0; p < policies.size(); ++p) {
      ss.push_back(std::make_unique<session>(m, bench_session_options(policies[p], common.threads,
                                                                      ctx + cfg.steps + 1)));
      const double t0 = bench_now_ms();
      ss[p]->append(prompt);
      rs[p].prefill_ms = bench_now_ms() - t0;
      rs[p].policy = p;
      rs[p].context = ctx;
      std::fprintf(stderr, "bench latency: context %lld: %s prefilled in %.0f ms\n", (long long)ctx,
                   policies[p].text.c_str(), rs[p].prefill_ms);
    }
    std::vector<std::vector<double>> ms(policies.size());
    std::vector<double> recalled(policies.size(), 0.0), corrected(policies.size(), 0.0),
        checked(policies.size(), 0.0);
    sampler greedy;
    for (int64_t i = 0; i < cfg.steps; ++i) {
      for (size_t p = 0; p < policies.size(); ++p) {
        const double t0 = bench_now_ms();
        ss[p]->decode_next(greedy);
        ms[p].push_back(bench_now_ms() - t0);
        const kv_step_stats& st = ss[p]->last_step();
        recalled[p] += double(st.recalled_bytes);
        corrected[p] += double(st.corrected_heads);
        checked[p] += double(st.checked_heads);
      }
    }
    for (size_t p = 0; p < policies.size(); ++p) {
      bench_latency_result& r = rs[p];
      r.step_ms_median = stat_median(ms[p]);
      r.step_ms_p10 = stat_percentile(ms[p], 0.1);
      r.step_ms_p90 = stat_percentile(ms[p], 0.9);
      const memory_stats mem = ss[p]->memory();
      r.peak_kv_bytes = mem.kv_peak_bytes;
      r.kv_device_bytes = ss[p]->last_step().kv_device_bytes;
      r.kv_host_bytes = mem.kv_host_bytes;
      r.recalled_bytes_per_step_mean = recalled[p] / double(cfg.steps);
      r.correction_rate = checked[p] > 0 ? corrected[p] / checked[p] : 0.0;
      out.push_back(r);
    }
  }
  return out;
}

}  // namespace kvarena
