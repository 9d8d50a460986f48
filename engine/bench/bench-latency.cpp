// bench-latency.cpp: interleaved decode latency across policies (bench-latency.h).
#include "bench-latency.h"

#include <cstdio>
#include <memory>

#include "engine-error.h"
#include "sampler.h"
#include "sequence.h"

namespace kvarena {

std::vector<bench_latency_result> run_bench_latency(const model& m, const tokenizer& tok,
                                                    const std::vector<kv_policy_spec>& policies,
                                                    const bench_common& common, const bench_latency_config& cfg) {
  if (cfg.contexts.empty()) throw engine_error("bench latency: give at least one context length");
  if (cfg.steps < 1) throw engine_error("bench latency: --steps must be >= 1");
  const std::string name = common.backend == "cpu" ? "bench latency" : "bench latency (" + common.backend + ")";
  std::vector<bench_latency_result> out;
  for (int64_t ctx : cfg.contexts) {
    if (ctx < 1) throw engine_error("bench latency: context " + std::to_string(ctx) + " must be >= 1");
    const std::vector<int32_t> prompt = seeded_prompt_tokens(tok, m.config.n_vocab, ctx, common.seed);
    // Sequences live side by side for the whole context so their steps can interleave.
    std::vector<std::unique_ptr<sequence>> ss;
    std::vector<bench_latency_result> rs(policies.size());
    for (size_t p = 0; p < policies.size(); ++p) {
      ss.push_back(make_sequence(common.backend, m, bench_session_options(policies[p], common, ctx + cfg.steps + 1)));
      const double t0 = bench_now_ms();
      ss[p]->append(prompt);
      ss[p]->synchronize();
      rs[p].prefill_ms = bench_now_ms() - t0;
      rs[p].policy = p;
      rs[p].context = ctx;
      std::fprintf(stderr, "%s: context %lld: %s prefilled in %.0f ms\n", name.c_str(), (long long)ctx,
                   policies[p].text.c_str(), rs[p].prefill_ms);
    }
    sampler greedy;
    std::vector<std::vector<double>> ms(policies.size());
    std::vector<double> recalled(policies.size(), 0.0), corrected(policies.size(), 0.0),
        checked(policies.size(), 0.0);
    for (int64_t i = 0; i < cfg.steps; ++i) {
      for (size_t p = 0; p < policies.size(); ++p) {
        const double t0 = bench_now_ms();
        ss[p]->append_decode(ss[p]->choose_next(greedy));  // the argmax of the last logits
        ss[p]->synchronize();
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
      const kv_step_stats& st = ss[p]->last_step();
      r.kv_device_bytes = st.kv_device_bytes ? st.kv_device_bytes : mem.kv_bytes;
      r.kv_host_bytes = mem.kv_host_bytes;
      r.recalled_bytes_per_step_mean = recalled[p] / double(cfg.steps);
      r.correction_rate = checked[p] > 0 ? corrected[p] / checked[p] : 0.0;
      out.push_back(r);
    }
  }
  return out;
}

}  // namespace kvarena
