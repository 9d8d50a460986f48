// test-forward-shared.cpp: the forward pass on a real-format model from ../shared/models
// (label `model`): llama-2-tiny-random.gguf (llama, width 8, 1 block, 2 heads, RoPE dims
// 4, F16 matrices, Llama-2's 32,000-token vocabulary) against llama.cpp's logits
// (tests/fixtures/forward-llama-2-tiny-random.*: 512 sampled vocab columns per position
// plus argmax and logsumexp of the full row, from scripts/make-fixtures.sh).
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "forward-fixture.h"
#include "model.h"
#include "sampler.h"
#include "session.h"
#include "test-util.h"

namespace kvarena {
namespace {

// F16 weights: llama.cpp rounds the activations to F16 for F16 matmuls, we keep F32
// (see test-forward.cpp): 2e-3 relative to max(1, max |logit|). Measured: see the output.
constexpr double tol_f16 = 2e-3;

TEST(ForwardShared, TinyRandomLlamaMatchesLlamaCpp) {
  KVARENA_REQUIRE_SHARED_MODELS();
  const auto f = test::load_forward_fixture("llama-2-tiny-random");
  const std::string path = test::shared_models_dir() + "/llama-2-tiny-random.gguf";
  ASSERT_EQ(test::fnv1a64_file_hex(path), f.header.at("model_fnv1a64").get<std::string>())
      << path << " is not the file the fixture was made from";
  auto m = load_model(path);
  ASSERT_EQ(m->config.n_vocab, f.n_vocab);

  session_options so;
  so.n_threads = 2;
  so.prefill_chunk = 16;  // several chunks, as a long prompt would run
  const auto ours = test::all_logits(*m, f.tokens, so);
  const auto cols = f.header.at("vocab_sample").get<std::vector<int64_t>>();
  const auto ref_argmax = f.header.at("argmax").get<std::vector<int64_t>>();
  const auto ref_lse = f.header.at("logsumexp").get<std::vector<double>>();

  std::vector<float> sampled;
  for (int64_t p = 0; p < f.n_positions; ++p) {
    for (int64_t c : cols) sampled.push_back(ours[size_t(p * f.n_vocab + c)]);
  }
  const auto d = test::compare(sampled, f.logits);
  std::printf("[fixture llama-2-tiny-random] max |diff| %.3g over %zu sampled logits, relative %.3g "
              "(tolerance %.1g)\n", d.max_abs_diff, sampled.size(), d.rel(), tol_f16);
  EXPECT_LE(d.rel(), tol_f16);

  const double abs_tol = tol_f16 * std::max(1.0, d.max_abs_ref);
  for (int64_t p = 0; p < f.n_positions; ++p) {
    const float* row = ours.data() + p * f.n_vocab;
    // Our logit at llama.cpp's argmax is (within tolerance) our maximum.
    const float mx = row[argmax(row, f.n_vocab)];
    EXPECT_GE(row[ref_argmax[size_t(p)]], mx - abs_tol) << "position " << p;
    double s = 0;
    for (int64_t v = 0; v < f.n_vocab; ++v) s += std::exp(double(row[v]) - mx);
    EXPECT_NEAR(mx + std::log(s), ref_lse[size_t(p)], abs_tol) << "logsumexp at position " << p;
  }
}

}  // namespace
}  // namespace kvarena
