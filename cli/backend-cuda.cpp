// backend-cuda.cpp: `--backend cuda` for the CLI (see the header). The CUDA calls are
// compiled only with KVARENA_CUDA (cli/CMakeLists.txt links kvarena_cuda then); otherwise
// the entries throw the "built without CUDA" error.
#include "backend-cuda.h"

#include <memory>

#include "engine-error.h"

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
  throw engine_error("this kvarena was built without CUDA (configure with -DKVARENA_CUDA=ON)");
}
}  // namespace

void check_backend(const std::string& backend) {
  if (backend == "cuda") no_cuda();
}
cuda_generate_result cuda_generate(const model&, const tokenizer&, const std::vector<int32_t>&,
                                   const generate_options&, sampler&, const kv_policy_spec*, int64_t) {
  no_cuda();
}
std::vector<bench_latency_result> cuda_bench_latency(const model&, const tokenizer&, const std::vector<kv_policy_spec>&,
                                                     const bench_common&, const bench_latency_config&) {
  no_cuda();
}

#else

void check_backend(const std::string& backend) {
  if (backend == "cuda" && cuda_device_count() == 0)
    throw engine_error("--backend cuda: no CUDA device found (cudaGetDeviceCount reports none: no NVIDIA GPU, "
                       "driver or visible device; check nvidia-smi and CUDA_VISIBLE_DEVICES, or use --backend cpu)");
}

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

// A decode step's token: greedy on the device, else the sampler on the downloaded logits.
int32_t next_token(cuda_engine& e, cuda_session& s, sampler& smp) {
  if (smp.greedy()) return e.argmax(1)[0];
  const std::vector<float>& lg = s.logits();
  return smp.sample(lg.data(), int64_t(lg.size()));
}

}  // namespace

cuda_generate_result cuda_generate(const model& m, const tokenizer& tok, const std::vector<int32_t>& prompt,
                                   const generate_options& g, sampler& smp, const kv_policy_spec* policy,
                                   int64_t n_ctx) {
  cuda_engine_options eo;
  eo.max_chunk = 512, eo.max_batch = 1;
  cuda_engine e(m, eo);
  cuda_session s(e, session_options_for(policy, n_ctx, eo.max_chunk));
  cuda_generate_result out;
  generate_result& r = out.gen;
  double t0 = bench_now_ms();
  s.append(prompt);
  (void)s.logits();  // waits for the prompt
  r.n_prompt = int64_t(prompt.size());
  r.prompt_ms = bench_now_ms() - t0;
  // As session::generate: EOS or a control token ends; a stop string is cut at its start.
  const bool gated = s.sequence().kv() && s.sequence().kv()->needs().logits_confidence;
  t0 = bench_now_ms();
  r.stop_reason = "length";
  for (int64_t step = 0; step < g.max_tokens; ++step) {
    if (s.n_past() >= s.n_ctx()) {
      r.stop_reason = "context";
      break;
    }
    const int32_t id = next_token(e, s, smp);
    if (g.stop_at_eos && (id == tok.eos_id() || tok.is_control(id))) {
      r.stop_reason = "eos";
      break;
    }
    r.tokens.push_back(id);
    s.append_decode(id);
    if (const kv_step_stats* st = s.last_step()) {
      ++out.decode_steps;
      if (gated) out.confidence_sum += st->confidence, ++out.confidence_steps;
    }
    const size_t old = r.text.size();
    r.text += tok.token_to_piece(id);
    const size_t cut = stop_string_cut(r.text, old, g.stop);
    if (cut != std::string::npos) {
      r.text.resize(cut);
      r.stop_reason = "stop";
      break;
    }
  }
  e.synchronize();
  r.generate_ms = bench_now_ms() - t0;
  out.memory = s.memory();
  if (const kv_step_stats* st = s.last_step()) out.kept_final = st->kept;
  return out;
}

namespace {
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
