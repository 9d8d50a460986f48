// bench-memory.cpp: KV memory over a long greedy generation (bench-memory.h).
#include "bench-memory.h"

#include <algorithm>
#include <cstdio>

#include "engine-error.h"
#include "process-memory.h"
#include "sampler.h"

namespace kvarena {

bench_memory_result run_bench_memory(const model& m, const tokenizer& tok, const kv_policy_spec& policy,
                                     const bench_common& common, const bench_memory_config& cfg) {
  if (cfg.n_prompt < 1) throw engine_error("bench memory: --n-prompt must be >= 1");
  if (cfg.n_gen < 1) throw engine_error("bench memory: --n-gen must be >= 1");
  if (cfg.trace_every < 1) throw engine_error("bench memory: --trace-every must be >= 1");
  reset_process_peak();
  const std::unique_ptr<sequence> sp =
      make_sequence(common.backend, m, bench_session_options(policy, common, cfg.n_prompt + cfg.n_gen + 1, true));
  sequence& s = *sp;
  bench_memory_result r;
  std::vector<double> conf;
  int64_t confident = 0, decode_steps = 0;
  const std::optional<float> threshold = policy_confidence_threshold(policy);
  const bool gated = threshold.has_value();
  const float tau = threshold.value_or(0.f);  // counted only when gated
  s.on_step([&](const kv_step_stats& st) {
    for (int64_t k : st.kept) r.kept_tokens_max = std::max(r.kept_tokens_max, k);
    if (!st.decode) return;
    ++decode_steps;
    if (st.confidence >= 0) {
      conf.push_back(st.confidence);
      confident += st.confidence >= tau;
    }
    if (decode_steps % cfg.trace_every == 0)
      r.trace.push_back({decode_steps, st.seq_len, st.kv_device_bytes, st.kv_logical_bytes, st.budget, st.confidence});
  });
  s.append(seeded_prompt_tokens(tok, s.n_vocab(), cfg.n_prompt, common.seed));
  sampler greedy;
  for (int64_t i = 0; i < cfg.n_gen; ++i) {
    s.append_decode(s.choose_next(greedy));
    if ((i + 1) % 512 == 0)
      std::fprintf(stderr, "bench memory: %s: %lld/%lld steps\n", policy.text.c_str(), (long long)(i + 1),
                   (long long)cfg.n_gen);
  }
  const memory_stats mem = s.memory();
  r.peak_kv_bytes = mem.kv_peak_bytes;
  r.peak_kv_host_bytes = mem.kv_host_peak_bytes;
  r.peak_kv_logical_bytes = mem.kv_logical_peak_bytes;
  r.peak_process_bytes = process_peak_bytes(s);
  r.final_kv_bytes = mem.kv_bytes;
  r.confidence_mean = stat_mean(conf);
  if (gated && !conf.empty()) r.confident_fraction = double(confident) / double(conf.size());
  return r;
}

}  // namespace kvarena
