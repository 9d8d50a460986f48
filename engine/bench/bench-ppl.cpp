// bench-ppl.cpp: streaming teacher-forced NLL under a policy (bench-ppl.h).
#include "bench-ppl.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <span>

#include "engine-error.h"
#include "process-memory.h"
#include "model.h"

namespace kvarena {

bench_ppl_result run_bench_ppl(const model& m, const std::vector<int32_t>& tokens,
                               const kv_policy_spec& policy, const bench_common& common) {
  if (tokens.size() < 2) throw engine_error("bench ppl: the text must encode to at least 2 tokens");
  const int64_t n = int64_t(tokens.size());
  reset_process_peak();
  const std::unique_ptr<sequence> sp = make_sequence(common.backend, m, bench_session_options(policy, common, n));
  sequence& s = *sp;
  bench_ppl_result r;
  s.on_step([&](const kv_step_stats& st) {
    int64_t k = 0;
    for (int64_t x : st.kept) k = std::max(k, x);
    r.kept_tokens_max = std::max(r.kept_tokens_max, k);
    r.kept_tokens_final = k;
  });
  const double t0 = bench_now_ms();
  s.append(std::span<const int32_t>(tokens.data(), 1));
  double nll = 0;
  const int64_t V = s.n_vocab();
  for (int64_t i = 1; i < n; ++i) {
    nll -= log_softmax_at(s.next_logits(), V, tokens[size_t(i)]);
    if (i + 1 < n) s.append_decode(tokens[size_t(i)]);  // the last token predicts nothing scored
    if (i % 256 == 0) std::fprintf(stderr, "bench ppl: %s: %lld/%lld tokens\n", policy.text.c_str(),
                                   (long long)i, (long long)n);
  }
  const double ms = bench_now_ms() - t0;
  r.n_tokens = n - 1;
  r.nll_mean = nll / double(r.n_tokens);
  r.ppl = std::exp(r.nll_mean);
  const memory_stats mem = s.memory();
  r.peak_kv_bytes = mem.kv_peak_bytes;
  r.peak_kv_host_bytes = mem.kv_host_peak_bytes;
  r.peak_kv_logical_bytes = mem.kv_logical_peak_bytes;
  r.peak_process_bytes = process_peak_bytes(s);
  r.tok_s = ms > 0 ? 1000.0 * double(r.n_tokens) / ms : 0.0;
  return r;
}

}  // namespace kvarena
