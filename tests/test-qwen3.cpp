// test-qwen3.cpp: the qwen3 architecture (llama/qwen2 layout, no q/k/v biases, NEOX RoPE,
// RMSNorm of every q and k head after the projections and before RoPE), checked against
// llama.cpp itself: tests/fixtures/qwen3-f32.* (made by tests/fixtures/make_qwen3_fixture.py,
// the exact record; a random F32 qwen3 written by ../shared/tools/llamaref's
// make_random_gguf.py and llama.cpp v0.4.0's logits at every position of 64 tokens).
//
//  - Loading: arch, NEOX RoPE, the per-head norm weights, no biases; a qwen3 file without
//    attn_q_norm is refused by name.
//  - Logits: every CPU kernel variant, prefill (one forward) and token-by-token decode,
//    every position, against llama.cpp; the same run without the q/k norm must be far off
//    (so the test sees the norm).
//  - Every registered KV policy runs a session on the file (budgets small enough to evict).
//  - `kvarena model check`: "supported" for the qwen3 file (exit 0); for the same file with
//    general.architecture patched to 'mamba', and for a YaRN-scaled file, the reason (exit 1).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sys/wait.h>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cpu-kernels.h"
#include "engine-error.h"
#include "forward-fixture.h"
#include "gguf-writer.h"
#include "kv/kv-policy-registry.h"
#include "kv-policy-session.h"
#include "model.h"
#include "session.h"
#include "llamacpp-logits-fixture.h"
#include "test-util.h"

namespace kvarena {
namespace {

using variant_guard = test::kernel_variant_guard;
using test::max_abs_diff;

const std::string k_model = "qwen3-f32.gguf";

struct qwen3_fixture : test::llamacpp_logits {
  std::vector<int32_t> tokens;  // (64,) the sequence the logits are of
};

qwen3_fixture load_fixture() {
  qwen3_fixture f{test::load_llamacpp_logits("qwen3-f32", k_model, "make_qwen3_fixture.py"), {}};
  f.tokens = f.header.at("tokens").get<std::vector<int32_t>>();
  return f;
}

// Logits at every position of `tokens`, by prefill or by decode.
std::vector<float> run_logits(const model& m, const std::vector<int32_t>& tokens, bool decode) {
  return test::session_logits(m, tokens, 0, decode);
}

double max_abs(const std::vector<float>& a) {
  double m = 0;
  for (float x : a) m = std::max(m, double(std::fabs(x)));
  return m;
}

TEST(Qwen3, LoadsWithPerHeadQkNorm) {
  const auto m = load_model(test::fixture_path(k_model));
  const model_config& c = m->config;
  EXPECT_EQ(c.arch, model_arch::qwen3);
  EXPECT_STREQ(model_arch_name(c.arch), "qwen3");
  EXPECT_TRUE(c.rope_neox);  // llama.cpp's rope type for qwen3 is NEOX
  EXPECT_EQ(c.head_dim, 16);
  EXPECT_EQ(c.n_kv_heads, 2);
  for (const layer_weights& L : m->layers) {
    ASSERT_TRUE(L.q_norm);
    ASSERT_TRUE(L.k_norm);
    EXPECT_EQ(L.q_norm.ne[0], c.head_dim);
    EXPECT_EQ(L.k_norm.ne[0], c.head_dim);
    EXPECT_FALSE(L.bq);
    EXPECT_FALSE(L.bk);
    EXPECT_FALSE(L.bv);
  }
}

// Tolerance: F32 weights and an F32 KV cache on both sides, so what differs is the order
// of float sums (llama.cpp's SIMD reductions vs ours) in the matmuls, norms and softmax:
// ~1e-6 relative per op (test-forward's F32 files agree to ~5e-7 relative). The logits
// here are O(1) (max |logit| about 0.5-1); measured max |diff| ~1e-7 (engine/README.md).
// 1e-5 absolute leaves room for summation order and is far below what leaving out the
// q/k norm does (>= 1e-2 on this file: checked below, the test must see the norm).
constexpr double k_tol = 1e-5;

TEST(Qwen3, LogitsMatchLlamaCppAtEveryPosition) {
  const qwen3_fixture f = load_fixture();
  auto m = load_model(test::fixture_path(k_model));
  std::printf("[qwen3] max |logit| (llama.cpp) %.3g\n", max_abs(f.logits));
  variant_guard guard;
  for (const std::string& v : cpu_kernel_variants_supported()) {
    set_cpu_kernel_variant(v);
    for (bool decode : {false, true}) {
      const double d = max_abs_diff(run_logits(*m, f.tokens, decode), f.logits);
      std::printf("[qwen3] %-8s %-7s vs llama.cpp: max |diff| %.3g over 64 positions\n", v.c_str(),
                  decode ? "decode" : "prefill", d);
      EXPECT_LE(d, k_tol) << v << (decode ? " decode" : " prefill");
    }
  }
  // Without the per-head q/k norm the logits must be far off: the test sees the norm.
  for (layer_weights& L : m->layers) L.q_norm = L.k_norm = tensor_view{};
  const double without = max_abs_diff(run_logits(*m, f.tokens, false), f.logits);
  std::printf("[qwen3] without the q/k norm: max |diff| %.3g\n", without);
  EXPECT_GT(without, 1e-2);
}

TEST(Qwen3, FileWithoutQNormIsRefusedByName) {
  // A config-only qwen3 file with one block whose attn_q_norm is missing.
  const std::string path = (test::temp_dir("qwen3-no-qnorm") / "q.gguf").string();
  gguf_writer w;
  w.set_string("general.architecture", "qwen3");
  w.set_u32("qwen3.context_length", 64);
  w.set_u32("qwen3.embedding_length", 8);
  w.set_u32("qwen3.block_count", 1);
  w.set_u32("qwen3.feed_forward_length", 16);
  w.set_u32("qwen3.attention.head_count", 2);
  const std::vector<float> z8(8 * 8, 0.f), z16(8 * 16, 0.f), one(8, 1.f);
  w.add_tensor_f32("token_embd.weight", ggml_type::f32, {8, 8}, z8);
  w.add_tensor_f32("output_norm.weight", ggml_type::f32, {8}, one);
  for (const char* t : {"attn_q.weight", "attn_k.weight", "attn_v.weight", "attn_output.weight"})
    w.add_tensor_f32(std::string("blk.0.") + t, ggml_type::f32, {8, 8}, z8);
  w.add_tensor_f32("blk.0.attn_norm.weight", ggml_type::f32, {8}, one);
  w.add_tensor_f32("blk.0.ffn_norm.weight", ggml_type::f32, {8}, one);
  w.add_tensor_f32("blk.0.ffn_gate.weight", ggml_type::f32, {8, 16}, z16);
  w.add_tensor_f32("blk.0.ffn_up.weight", ggml_type::f32, {8, 16}, z16);
  w.add_tensor_f32("blk.0.ffn_down.weight", ggml_type::f32, {16, 8}, z16);
  w.write(path);
  try {
    load_model(path);
    FAIL() << "loaded";
  } catch (const engine_error& e) {
    EXPECT_NE(std::string(e.what()).find("blk.0.attn_q_norm.weight"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("qwen3"), std::string::npos) << e.what();
  }
}

// Every registered KV policy runs on the qwen3 file: the 64-token prompt in chunks of 16,
// then 32 teacher-forced decode steps, with budgets small enough that each evicts.
TEST(Qwen3, EveryKvPolicyRuns) {
  const qwen3_fixture f = load_fixture();
  const auto m = load_model(test::fixture_path(k_model));
  const std::vector<std::string> names = kv_policy_names();
  ASSERT_FALSE(names.empty());
  const std::vector<int32_t> forced = test::kv_policy_forced_tokens(f.tokens);
  for (const std::string& name : names) {
    SCOPED_TRACE(name);
    const session_options o = test::kv_policy_session_options(name);
    session s(*m, o);
    s.append(f.tokens);
    // The last prompt position saw the whole prompt (the policy selects after a chunk):
    // `full` matches llama.cpp within its FP16 store's bound.
    std::vector<float> last(s.logits(), s.logits() + s.n_vocab());
    if (name == "full") {
      const std::vector<float> ref(f.logits.end() - s.n_vocab(), f.logits.end());
      const double d = max_abs_diff(last, ref);
      std::printf("[qwen3] full (FP16 KV) last prompt position vs llama.cpp: %.3g\n", d);
      EXPECT_LE(d, 1e-3 * std::max(1.0, max_abs(ref)));
    }
    double worst = 0;
    for (int32_t t : forced) {
      s.append_decode(t);
      for (int64_t i = 0; i < s.n_vocab(); ++i) worst = std::max(worst, double(std::fabs(s.logits()[i])));
    }
    EXPECT_TRUE(std::isfinite(worst)) << name;
    EXPECT_GT(worst, 0.0) << name;
    EXPECT_EQ(s.n_past(), 64 + 32);
    std::printf("[qwen3] policy %-10s ran: %lld tokens, max |logit| %.3g\n", name.c_str(),
                static_cast<long long>(s.n_past()), worst);
  }
}

// Runs `kvarena model check PATH`: (exit status, stdout).
std::pair<int, std::string> model_check(const std::string& path) {
  const std::string cmd = std::string(KVARENA_BIN) + " model check '" + path + "' 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return {-1, ""};
  std::string out;
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  const int st = pclose(p);
  return {WIFEXITED(st) ? WEXITSTATUS(st) : -1, out};
}

TEST(ModelCheck, Qwen3FileIsSupported) {
  const auto [rc, out] = model_check(test::fixture_path(k_model));
  EXPECT_EQ(rc, 0) << out;
  EXPECT_NE(out.find("architecture:  qwen3"), std::string::npos) << out;
  EXPECT_NE(out.find("tensor types:  f32 x25"), std::string::npos) << out;
  EXPECT_NE(out.find("context:       256"), std::string::npos) << out;
  EXPECT_NE(out.find("\nsupported\n"), std::string::npos) << out;
  EXPECT_EQ(out.find("not supported"), std::string::npos) << out;
}

TEST(ModelCheck, UnknownArchitectureIsOneReasonAndExit1) {
  // The fixture with general.architecture's value (the first "qwen3" string) renamed.
  std::string data = test::read_file(test::fixture_path(k_model));
  const std::string from = std::string("\x05\0\0\0\0\0\0\0qwen3", 13);
  const size_t at = data.find(from);
  ASSERT_NE(at, std::string::npos);
  data.replace(at + 8, 5, "mamba");
  const std::string path = (test::temp_dir("check-mamba") / "mamba.gguf").string();
  std::ofstream(path, std::ios::binary) << data;
  const auto [rc, out] = model_check(path);
  EXPECT_EQ(rc, 1) << out;
  EXPECT_NE(out.find("not supported: architecture 'mamba' is not supported"), std::string::npos) << out;
  EXPECT_EQ(out.find("\nsupported\n"), std::string::npos) << out;
}

TEST(ModelCheck, YarnScalingIsAReason) {
  const std::string path = (test::temp_dir("check-yarn") / "yarn.gguf").string();
  gguf_writer w;
  w.set_string("general.architecture", "llama");
  w.set_u32("llama.context_length", 128);
  w.set_u32("llama.embedding_length", 64);
  w.set_u32("llama.block_count", 1);
  w.set_u32("llama.feed_forward_length", 128);
  w.set_u32("llama.attention.head_count", 1);
  w.set_string("llama.rope.scaling.type", "yarn");
  w.set_f32("llama.rope.scaling.factor", 4.0f);
  w.write(path);
  const auto [rc, out] = model_check(path);
  EXPECT_EQ(rc, 1) << out;
  EXPECT_NE(out.find("rope scaling:  yarn"), std::string::npos) << out;
  EXPECT_NE(out.find("RoPE scaling type 'yarn'"), std::string::npos) << out;
  EXPECT_NE(out.find("tokenizer.ggml.model"), std::string::npos) << out;  // no vocabulary: a second reason
}

}  // namespace
}  // namespace kvarena
