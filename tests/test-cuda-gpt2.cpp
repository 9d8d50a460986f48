// test-cuda-gpt2.cpp: gpt2 on the CUDA backend, label `gpu`; skips (GTEST_SKIP) without a
// device. The logits of a chunked prompt and decode steps against the CPU forward are in
// test-cuda.cpp (CudaForward.LogitsMatchTheCpuForward, case gpt2-tied-f32); here: batched
// decode (each row at its own position: position embeddings gathered per row) against the
// CPU forward of each sequence, an untied F16 model, and the learned-position limit.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "cuda-check.h"
#include "cuda-test-util.h"
#include "cuda-forward.h"
#include "engine-error.h"
#include "model-forward.h"
#include "model-random.h"
#include "test-util.h"

using namespace kvarena;
using kvarena::test::cpu_logits_all;

namespace {

std::unique_ptr<model> random_gpt2(const std::string& name, int64_t n_ctx) {
  random_model_spec s;
  s.arch = model_arch::gpt2, s.dim = 128, s.n_layers = 2, s.n_heads = 4, s.n_kv_heads = 0, s.ffn_dim = 512;
  s.n_vocab = 384, s.n_ctx = n_ctx, s.type = ggml_type::f16, s.seed = 17, s.tie_output = false, s.output_scale = 3.f;
  s.with_tokenizer = false;
  const std::string path = (test::temp_dir("models") / (name + ".gguf")).string();
  write_random_model(s, path);
  return load_model(path);
}

// Within 2% of the CPU logits' largest magnitude (F16 weights and activations on the GPU).
void expect_logits_close(const float* got, const float* want, int64_t V, const std::string& what) {
  float spread = 1.f;
  for (int64_t i = 0; i < V; ++i) spread = std::max(spread, std::fabs(want[i]));
  int64_t bad = 0;
  for (int64_t i = 0; i < V; ++i) bad += !(std::fabs(got[i] - want[i]) <= 2e-2f * spread);
  EXPECT_EQ(bad, 0) << what << " (tolerance " << 2e-2f * spread << ")";
}

}  // namespace

TEST(CudaGpt2, BatchedDecodeMatchesTheCpuForwardPerSequence) {
  REQUIRE_GPU();
  auto m = random_gpt2("gpt2-batch", 256);
  const int64_t V = m->config.n_vocab;
  cuda_engine_options eo;
  eo.max_chunk = 32, eo.max_batch = 3;
  cuda_engine e(*m, eo);
  std::mt19937 rng(2);
  const std::vector<int64_t> prompt_len = {5, 40, 17};  // rows at different positions
  const int64_t steps = 12;
  std::vector<std::vector<int32_t>> toks;
  std::vector<std::unique_ptr<cuda_sequence>> seqs;
  std::vector<cuda_sequence*> ptrs;
  for (int64_t p : prompt_len) {
    toks.emplace_back(size_t(p + steps));
    for (auto& t : toks.back()) t = int32_t(rng() % uint32_t(V));
    seqs.push_back(std::make_unique<cuda_sequence>(e, 128));
    for (int64_t i = 0; i < p; i += 32)
      e.forward(*seqs.back(), toks.back().data() + i, std::min<int64_t>(32, p - i), false);
    ptrs.push_back(seqs.back().get());
  }
  std::vector<std::vector<float>> want;
  for (const auto& t : toks) want.push_back(cpu_logits_all(*m, t));
  std::vector<float> got(static_cast<size_t>(V));
  for (int64_t s = 0; s < steps; ++s) {
    std::vector<int32_t> next;
    for (size_t b = 0; b < toks.size(); ++b) next.push_back(toks[b][size_t(prompt_len[b] + s)]);
    e.forward_batch(ptrs, next.data(), true);
    for (size_t b = 0; b < toks.size(); ++b) {
      e.logits(int64_t(b), got.data());
      expect_logits_close(got.data(), &want[b][size_t((prompt_len[b] + s) * V)], V,
                          "step " + std::to_string(s) + " row " + std::to_string(b));
    }
  }
}

TEST(CudaGpt2, PositionsPastTheLearnedTableAreAnEngineError) {
  REQUIRE_GPU();
  auto m = random_gpt2("gpt2-limit", 32);
  cuda_engine e(*m);
  cuda_sequence s(e, 64);  // capacity over the model's 32 learned positions
  std::vector<int32_t> toks(32, 1);
  e.forward(s, toks.data(), 32, true);
  const int32_t one = 1;
  EXPECT_THROW(e.forward(s, &one, 1, true), engine_error);
}
