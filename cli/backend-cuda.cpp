// backend-cuda.cpp: `--backend cuda` for the CLI (see the header). The CUDA calls are
// compiled only with KVARENA_CUDA (cli/CMakeLists.txt links kvarena_cuda then); otherwise
// the entries throw the "built without CUDA" error.
#include "backend-cuda.h"

#include <memory>

#include "engine-error.h"
#include "sequence.h"

#ifdef KVARENA_CUDA
#include <algorithm>
#include <cstdio>
#include <span>

#include "cuda-check.h"
#include "cuda-forward.h"
#include "kv/kv-confidence.h"
#endif

namespace kvarena::cli {

void add_backend_flag(CLI::App* sub, std::string& backend) {
  sub->add_option("--backend", backend, "Inference backend: cpu, or cuda (needs a CUDA build and a GPU)")
      ->check(CLI::IsMember({"cpu", "cuda"}))
      ->capture_default_str();
}

#ifndef KVARENA_CUDA

namespace {
[[noreturn]] void no_cuda() {
  kvarena::check_backend("cuda");  // throws backend_error: built without CUDA
  throw backend_error("--backend cuda: not available");
}
}  // namespace

void check_backend(const std::string& backend) { kvarena::check_backend(backend); }
std::vector<bench_latency_result> cuda_bench_latency(const model&, const tokenizer&, const std::vector<kv_policy_spec>&,
                                                     const bench_common&, const bench_latency_config&) {
  no_cuda();
}

#else

void check_backend(const std::string& backend) { kvarena::check_backend(backend); }

namespace {

cuda_session_options session_options_for(const kv_policy_spec* p, int64_t n_ctx, int64_t chunk) {
  cuda_session_options so;
  so.n_ctx = n_ctx;
  so.prefill_chunk = chunk;
  if (p && !p->name.empty()) {
    so.kv_policy = p->name;
    so.kv = p->options;
    so.kv_overlap = p->overlap;
  }
  return so;
}

// A CUDA session for the shared latency loop: every call synchronises the device.
class cuda_latency_sequence final : public latency_sequence {
 public:
  cuda_latency_sequence(cuda_engine& e, const cuda_session_options& o) : e_(e), s_(e, o) {}
  void prefill(const std::vector<int32_t>& tokens) override {
    s_.append(tokens);
    e_.synchronize();
  }
  void greedy_step() override {
    (void)s_.greedy_next();  // argmax of the last logits (device), then the decode step
    e_.synchronize();
  }
  const kv_step_stats* last_step() const override { return s_.last_step(); }
  memory_stats memory() const override { return s_.memory(); }

 private:
  cuda_engine& e_;
  cuda_session s_;
};
}  // namespace

std::vector<bench_latency_result> cuda_bench_latency(const model& m, const tokenizer& tok,
                                                     const std::vector<kv_policy_spec>& policies,
                                                     const bench_common& common, const bench_latency_config& cfg) {
  cuda_engine_options eo;
  eo.max_chunk = 512, eo.max_batch = 1;
  cuda_engine e(m, eo);
  return run_bench_latency_with(
      m, tok, policies, common, cfg,
      [&](const kv_policy_spec& p, int64_t n_ctx) -> std::unique_ptr<latency_sequence> {
        return std::make_unique<cuda_latency_sequence>(e, session_options_for(&p, n_ctx, eo.max_chunk));
      },
      "cuda");
}

#endif

}  // namespace kvarena::cli
