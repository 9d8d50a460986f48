// test-forward.cpp: the forward pass and the GGUF model loader.
//  - against llama.cpp: golden logits in tests/fixtures (scripts/make-fixtures.sh) for
//    random llama (MHA F32, GQA F16, Q8_0), qwen2 (F32, tied output) and gpt2 (F32) models,
//    every position of a 64-token sequence, within the tolerances stated per type below;
//  - against our own plain reference path (ref kernels + ref attention), every arch/type;
//  - chunked prefill (chunks of 1, 7, 64) vs one chunk vs token-by-token decode;
//  - the attention kernel over F32 spans (the plain cache) vs ref::kv_attend over GQA shapes
//    and odd head sizes;
//  - a llama2.c checkpoint vs the GGUF with the same weights;
//  - loader errors: unknown architecture, wrong shape, missing tensor.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "kv/kv-attention-cpu.h"
#include "cpu-kernels.h"
#include "engine-error.h"
#include "forward-fixture.h"
#include "gguf-reader.h"
#include "gguf-writer.h"
#include "model-forward.h"
#include "model-random.h"
#include "model.h"
#include "session.h"
#include "test-util.h"

namespace kvarena {
namespace {

using test::all_logits;
using test::compare;

// ---- tolerances (relative: max |ours - theirs| <= tol * max(1, max |theirs|)) ----
//
// Against llama.cpp (measured on the committed fixtures, AVX-512 kernels, in brackets):
//  F32 weights: 1e-4. Both engines compute in F32; only summation order differs.
//    [llama-mha-f32 5.3e-7, qwen2-f32-tied 6.2e-7]
//  gpt2 F32: ggml evaluates GELU through an F16 lookup table (y = fp16(gelu(fp16(x)))), a
//    1e-3-relative rounding per activation that we do not copy by default. With our
//    `gelu_f16_table` option (the same rounding): 1e-4 [2.5e-5]; with the exact GELU: 1e-3
//    [1.2e-4].
//  F16 weights: llama.cpp rounds the activations to F16 before F16 matmuls (2^-11
//    relative per element); we keep them F32: 2e-3 [2.7e-4].
//  Q8_0 weights: both engines round activations to Q8_0 (per block of 32, step
//    amax/127). Tiny F32 differences flip some of those roundings, and each flip moves an
//    activation by a whole quantisation step (~0.8% of its block's largest value), so two
//    correct engines differ by about the Q8_0 activation noise itself, not F32 rounding:
//    3e-2 [7.8e-3, and our own reference path differs from our optimised one by 7.5e-3
//    for the same reason], plus the argmax must agree wherever llama.cpp's top two logits
//    are further apart than the tolerance.
constexpr double tol_f32 = 1e-4;
constexpr double tol_gpt2_exact_gelu = 1e-3;
constexpr double tol_f16 = 2e-3;
constexpr double tol_q8_0 = 3e-2;
// Our optimised path vs our reference path, and chunking vs decode (same engine, different
// summation orders and matvec/GEMM paths): 1e-5 for F32/F16. For Q8_0 the integer dot
// products of the decode path and the float GEMM differ by F32 rounding, which flips
// activation roundings as above: tol_q8_0.
constexpr double tol_self = 1e-5;

double self_tol(ggml_type t) { return t == ggml_type::q8_0 || t == ggml_type::q4_0 ? tol_q8_0 : tol_self; }

// ---- fixtures vs llama.cpp ----

struct fixture_case {
  const char* name;
  double tol;
  bool gelu_f16_table;
};

class LlamaCppFixture : public ::testing::TestWithParam<fixture_case> {};

TEST_P(LlamaCppFixture, AllPositionsMatch) {
  const fixture_case& c = GetParam();
  const auto f = test::load_forward_fixture(c.name);
  const std::string path = test::regenerate_fixture_model(f, c.name);
  auto m = load_model(path);
  ASSERT_EQ(m->config.n_vocab, f.n_vocab);
  session_options so;
  so.n_threads = 2;
  so.gelu_f16_table = c.gelu_f16_table;
  const auto ours = all_logits(*m, f.tokens, so);
  const auto d = compare(ours, f.logits);
  std::printf("[fixture %s] max |diff| %.3g, max |logit| %.3g, relative %.3g (tolerance %.1g)\n", c.name,
              d.max_abs_diff, d.max_abs_ref, d.rel(), c.tol);
  EXPECT_LE(d.rel(), c.tol);

  // Argmax agreement wherever llama.cpp's top two logits are clearly apart.
  const double margin = 2 * c.tol * std::max(1.0, d.max_abs_ref);
  for (int64_t p = 0; p < f.n_positions; ++p) {
    const float* ref = f.logits.data() + p * f.n_vocab;
    const float* our = ours.data() + p * f.n_vocab;
    const int32_t ra = argmax(ref, f.n_vocab);
    float second = -INFINITY;
    for (int64_t v = 0; v < f.n_vocab; ++v) {
      if (v != ra) second = std::max(second, ref[v]);
    }
    if (ref[ra] - second > margin) {
      EXPECT_EQ(argmax(our, f.n_vocab), ra) << "position " << p;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    Forward, LlamaCppFixture,
    ::testing::Values(fixture_case{"llama-mha-f32", tol_f32, false},
                      fixture_case{"llama-gqa-f16", tol_f16, false},
                      fixture_case{"llama-q8_0", tol_q8_0, false},
                      fixture_case{"qwen2-f32-tied", tol_f32, false},
                      fixture_case{"gpt2-f32", tol_f32, true},
                      fixture_case{"gpt2-f32", tol_gpt2_exact_gelu, false}),
    [](const auto& info) {
      std::string n = std::string(info.param.name) + (info.param.gelu_f16_table ? "_gelu_f16" : "");
      for (char& ch : n) {
        if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
      }
      return n;
    });

// ---- our optimised path vs our reference path; chunking ----

struct arch_case {
  const char* name;
  random_model_spec spec;
};

random_model_spec make_spec(model_arch a, int64_t dim, int64_t heads, int64_t kv_heads, int64_t ffn,
                            ggml_type t, bool tied, uint64_t seed) {
  random_model_spec s;
  s.arch = a;
  s.dim = dim;
  s.n_layers = 2;
  s.n_heads = heads;
  s.n_kv_heads = kv_heads;
  s.ffn_dim = ffn;
  s.n_vocab = 320;
  s.n_ctx = 256;
  s.type = t;
  s.tie_output = tied;
  s.seed = seed;
  return s;
}

std::vector<arch_case> arch_cases() {
  return {
      {"llama_f32_mha", make_spec(model_arch::llama, 64, 4, 4, 160, ggml_type::f32, false, 1)},
      {"llama_f16_gqa", make_spec(model_arch::llama, 128, 8, 2, 256, ggml_type::f16, true, 2)},
      {"llama_q8_0", make_spec(model_arch::llama, 64, 2, 1, 128, ggml_type::q8_0, false, 3)},
      {"llama_bf16_hd80", make_spec(model_arch::llama, 160, 2, 1, 96, ggml_type::bf16, false, 4)},
      {"qwen2_f32", make_spec(model_arch::qwen2, 96, 6, 2, 192, ggml_type::f32, true, 5)},
      {"gpt2_f32", make_spec(model_arch::gpt2, 64, 4, 0, 256, ggml_type::f32, false, 6)},
      {"gpt2_f16", make_spec(model_arch::gpt2, 96, 3, 0, 192, ggml_type::f16, true, 7)},
  };
}

std::vector<int32_t> some_tokens(int64_t n, int64_t vocab, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<int32_t> t(static_cast<size_t>(n));
  for (auto& x : t) x = int32_t(rng() % uint64_t(vocab));
  return t;
}

class ForwardArch : public ::testing::TestWithParam<arch_case> {
 protected:
  void SetUp() override {
    const auto& c = GetParam();
    path_ = (test::temp_dir(std::string("fwd-") + c.name) / "m.gguf").string();
    write_random_model(c.spec, path_);
    model_ = load_model(path_);
    tokens_ = some_tokens(64, c.spec.n_vocab, 42);
  }
  std::string path_;
  std::unique_ptr<model> model_;
  std::vector<int32_t> tokens_;
};

TEST_P(ForwardArch, OptimisedMatchesReference) {
  session_options opt;
  opt.n_threads = 2;
  session_options ref;
  ref.reference = true;
  const auto a = all_logits(*model_, tokens_, opt);
  const auto b = all_logits(*model_, tokens_, ref);
  const auto d = compare(a, b);
  std::printf("[%s] optimised vs reference: max |diff| %.3g (relative %.3g)\n", GetParam().name,
              d.max_abs_diff, d.rel());
  EXPECT_LE(d.rel(), self_tol(GetParam().spec.type));
}

TEST_P(ForwardArch, ChunkedPrefillMatchesOneChunkAndDecode) {
  const double tol = self_tol(GetParam().spec.type);
  session_options so;
  so.n_threads = 2;
  so.prefill_chunk = 64;
  const auto one_chunk = all_logits(*model_, tokens_, so);
  for (int64_t chunk : {1, 7, 64}) {
    so.prefill_chunk = chunk;
    const auto d = compare(all_logits(*model_, tokens_, so), one_chunk);
    EXPECT_LE(d.rel(), tol) << "prefill chunk " << chunk;
  }
  // Token by token through logits() (the decode path, last-position logits only).
  session_options dec;
  dec.n_threads = 2;
  session s(*model_, dec);
  std::vector<float> by_token;
  for (int32_t t : tokens_) {
    s.append(std::span<const int32_t>(&t, 1));
    by_token.insert(by_token.end(), s.logits(), s.logits() + s.n_vocab());
  }
  const auto d = compare(by_token, one_chunk);
  EXPECT_LE(d.rel(), tol) << "token by token";
}

TEST_P(ForwardArch, LastLogitsMatchAllLogitsAndThreadsAgree) {
  // Chunked prefill where only the last chunk's last row gets logits (the fast path that
  // skips the last layer's work for other rows) must equal the full computation.
  session_options so;
  so.prefill_chunk = 24;
  so.n_threads = 1;
  const auto all = all_logits(*model_, tokens_, so);
  for (int threads : {1, 2, 3}) {
    session_options lo;
    lo.prefill_chunk = 24;
    lo.n_threads = threads;
    session s(*model_, lo);
    s.append(tokens_);
    const int64_t V = s.n_vocab();
    const std::vector<float> last(s.logits(), s.logits() + V);
    const std::vector<float> want(all.end() - V, all.end());
    EXPECT_LE(compare(last, want).rel(), self_tol(GetParam().spec.type)) << threads << " threads";
  }
}

INSTANTIATE_TEST_SUITE_P(Forward, ForwardArch, ::testing::ValuesIn(arch_cases()),
                         [](const auto& info) { return std::string(info.param.name); });

// ---- the attention kernel over F32 spans (the plain cache) vs its reference ----

struct attn_case {
  int64_t n_heads, n_kv_heads, head_dim, n_tokens, n_q;
  int threads;
};

// One F32 span per KV head over k, v: (n_kv_heads, stride) floats, token t of head g at
// g * stride + t * head_dim.
std::vector<kv_attn_head> f32_heads(const std::vector<float>& k, const std::vector<float>& v, int64_t n_kv,
                                    int64_t stride, int64_t n_tokens) {
  std::vector<kv_attn_head> heads(static_cast<size_t>(n_kv));
  for (int64_t g = 0; g < n_kv; ++g) {
    kv_span s;
    s.n = n_tokens;
    s.k32 = k.data() + g * stride;
    s.v32 = v.data() + g * stride;
    heads[size_t(g)].spans.push_back(s);
  }
  return heads;
}

TEST(Attention, F32SpansMatchReference) {
  const attn_case cases[] = {
      {4, 4, 16, 1, 1, 1},   {4, 4, 16, 37, 1, 2},   {12, 4, 64, 300, 1, 2},  {12, 4, 64, 300, 300, 2},
      {8, 2, 4, 50, 17, 2},  {6, 2, 80, 129, 33, 3}, {2, 1, 128, 70, 70, 1},  {14, 2, 64, 100, 40, 2},
      {3, 3, 20, 64, 64, 2}, {5, 1, 8, 16, 5, 2},
  };
  std::mt19937 rng(7);
  std::normal_distribution<float> nd(0.0f, 1.0f);
  const std::string variant = cpu_kernel_variant();
  for (const auto& name : cpu_kernel_variants_supported()) {
    set_cpu_kernel_variant(name);
    for (const auto& c : cases) {
      const int64_t capacity = c.n_tokens + 13;  // head stride larger than the valid tokens
      std::vector<float> k(size_t(c.n_kv_heads * capacity * c.head_dim)), v(k.size());
      for (auto& x : k) x = nd(rng);
      for (auto& x : v) x = nd(rng);
      const int64_t q_stride = c.n_heads * c.head_dim + 5;  // rows with padding
      std::vector<float> q(size_t(c.n_q * q_stride));
      for (auto& x : q) x = 2.0f * nd(rng);
      const auto heads = f32_heads(k, v, c.n_kv_heads, capacity * c.head_dim, c.n_tokens);
      const float scale = 1.0f / std::sqrt(float(c.head_dim));
      const int64_t out_stride = c.n_heads * c.head_dim;
      std::vector<float> out(size_t(c.n_q * out_stride), NAN), want(out.size(), NAN);
      thread_pool pool(c.threads);
      kv_attend_scratch scratch;
      kv_attend(pool, heads, c.head_dim, q.data(), q_stride, c.n_q, c.n_heads, scale, out.data(), out_stride, scratch);
      ref::kv_attend(heads, c.head_dim, q.data(), q_stride, c.n_q, c.n_heads, scale, want.data(), out_stride);
      const auto d = compare(out, want);
      EXPECT_LE(d.max_abs_diff, 1e-5) << name << ": heads " << c.n_heads << "/" << c.n_kv_heads
                                      << " head_dim " << c.head_dim << " tokens " << c.n_tokens
                                      << " queries " << c.n_q;
    }
  }
  set_cpu_kernel_variant(variant);
}

TEST(Attention, CausalMaskIgnoresLaterKeys) {
  // Changing keys/values after a query's position must not change its output.
  const int64_t H = 4, G = 2, hd = 16, n = 20;
  std::mt19937 rng(3);
  std::normal_distribution<float> nd(0.0f, 1.0f);
  std::vector<float> k(size_t(G * n * hd)), v(k.size()), q(size_t(n * H * hd));
  for (auto* b : {&k, &v, &q}) {
    for (auto& x : *b) x = nd(rng);
  }
  thread_pool pool(2);
  kv_attend_scratch scratch;
  std::vector<float> a(q.size()), b(q.size());
  kv_attend(pool, f32_heads(k, v, G, n * hd, n), hd, q.data(), H * hd, n, H, 0.25f, a.data(), H * hd, scratch);
  for (int64_t g = 0; g < G; ++g) {
    for (int64_t d = 0; d < hd; ++d) k[size_t((g * n + n - 1) * hd + d)] += 5.0f;  // last token only
  }
  kv_attend(pool, f32_heads(k, v, G, n * hd, n), hd, q.data(), H * hd, n, H, 0.25f, b.data(), H * hd, scratch);
  for (int64_t i = 0; i < (n - 1) * H * hd; ++i) ASSERT_EQ(a[size_t(i)], b[size_t(i)]) << i;
  bool last_changed = false;
  for (int64_t i = (n - 1) * H * hd; i < n * H * hd; ++i) last_changed |= a[size_t(i)] != b[size_t(i)];
  EXPECT_TRUE(last_changed);
}

TEST(Attention, LargeScoresStayFinite) {
  // Scores of +-1e4 overflow exp() without the max subtraction.
  const int64_t hd = 16, n = 9;
  std::vector<float> k(size_t(n * hd), 30.0f), v(size_t(n * hd));
  for (int64_t t = 0; t < n; ++t) {
    for (int64_t d = 0; d < hd; ++d) v[size_t(t * hd + d)] = float(t);
  }
  std::vector<float> q(static_cast<size_t>(hd), 25.0f), out(static_cast<size_t>(hd));
  thread_pool pool(1);
  kv_attend_scratch scratch;
  kv_attend(pool, f32_heads(k, v, 1, n * hd, n), hd, q.data(), hd, 1, 1, 1.0f, out.data(), hd, scratch);
  for (float x : out) EXPECT_NEAR(x, 4.0f, 1e-4);  // equal scores: mean of 0..8
}

// ---- llama2.c checkpoint vs GGUF ----

TEST(Forward, Llama2cCheckpointMatchesGguf) {
  random_model_spec s = make_spec(model_arch::llama, 64, 4, 2, 160, ggml_type::f32, false, 9);
  s.n_vocab = 320;
  const auto dir = test::temp_dir("llama2c-vs-gguf");
  for (bool tied : {true, false}) {
    s.tie_output = tied;
    const std::string gguf = (dir / "m.gguf").string(), bin = (dir / "m.bin").string();
    write_random_model(s, gguf);
    write_llama2c_checkpoint(s, bin);
    auto a = load_model(gguf);
    auto b = load_model(bin);
    ASSERT_FALSE(b->gguf) << "load_model must pick the llama2.c loader by magic";
    const auto tokens = some_tokens(40, s.n_vocab, 5);
    // llama2.c fixes eps (1e-5) and the RoPE base (10000), as the generator's defaults do.
    const auto d = compare(all_logits(*b, tokens), all_logits(*a, tokens));
    EXPECT_LE(d.rel(), 1e-6) << (tied ? "shared classifier" : "separate classifier");
  }
}

// ---- loader ----

// Writes a GGUF with the tensors (zero data) and keys of `spec`, after `edit` changes them.
using tensor_list = std::vector<random_tensor_plan>;
std::string write_edited(const random_model_spec& spec, const std::string& name,
                         const std::function<void(gguf_writer&, tensor_list&)>& edit) {
  const model_config c = random_model_config(spec);
  const std::string a = model_arch_name(spec.arch);
  gguf_writer w;
  w.set_string("general.architecture", a);
  w.set_u32(a + ".context_length", uint32_t(c.n_ctx));
  w.set_u32(a + ".embedding_length", uint32_t(c.dim));
  w.set_u32(a + ".block_count", uint32_t(c.n_layers));
  w.set_u32(a + ".feed_forward_length", uint32_t(c.ffn_dim));
  w.set_u32(a + ".attention.head_count", uint32_t(c.n_heads));
  w.set_u32(a + ".attention.head_count_kv", uint32_t(c.n_kv_heads));
  w.set_f32(a + ".attention.layer_norm_rms_epsilon", 1e-5f);
  tensor_list tensors = random_model_tensors(spec);
  edit(w, tensors);
  for (const auto& t : tensors) {
    w.add_tensor(t.name, t.type, t.ne, std::vector<uint8_t>(gguf_writer::tensor_bytes(t.name, t.type, t.ne)));
  }
  const std::string path = (test::temp_dir("loader-" + name) / "m.gguf").string();
  w.write(path);
  return path;
}

std::string load_error(const std::string& path) {
  try {
    load_model(path);
  } catch (const engine_error& e) {
    return e.what();
  }
  return "";
}

TEST(Loader, ReadsConfigAndTiesOutput) {
  random_model_spec s = make_spec(model_arch::qwen2, 96, 6, 2, 192, ggml_type::f16, true, 1);
  const std::string path = (test::temp_dir("loader-ok") / "m.gguf").string();
  write_random_model(s, path);
  auto m = load_model(path);
  const auto want = random_model_config(s);
  EXPECT_EQ(m->config.arch, model_arch::qwen2);
  EXPECT_EQ(m->config.dim, 96);
  EXPECT_EQ(m->config.n_heads, 6);
  EXPECT_EQ(m->config.n_kv_heads, 2);
  EXPECT_EQ(m->config.head_dim, 16);
  EXPECT_EQ(m->config.rope_dims, want.rope_dims);
  EXPECT_TRUE(m->config.rope_neox);
  EXPECT_EQ(m->config.n_vocab, s.n_vocab);
  EXPECT_EQ(m->output.data, m->tok_embd.data);
  EXPECT_TRUE(m->layers[1].bk);
  // Tied output counted once: the file's tensor bytes.
  size_t file_tensor_bytes = 0;
  for (const auto& t : m->gguf->tensors()) file_tensor_bytes += t.nbytes;
  EXPECT_EQ(m->weight_bytes(), file_tensor_bytes);
}

TEST(Loader, UnknownArchitectureListsSupported) {
  auto s = make_spec(model_arch::llama, 64, 4, 4, 128, ggml_type::f32, false, 1);
  const auto path = write_edited(s, "arch", [](gguf_writer& w, tensor_list&) {
    w.set_string("general.architecture", "mamba");
  });
  const std::string e = load_error(path);
  EXPECT_NE(e.find(path), std::string::npos) << e;
  EXPECT_NE(e.find("'mamba'"), std::string::npos) << e;
  EXPECT_NE(e.find("llama, qwen2, qwen3, gemma2, gemma3, phi3, gpt2"), std::string::npos) << e;
}

TEST(Loader, WrongShapeNamesTensorAndShapes) {
  auto s = make_spec(model_arch::llama, 64, 4, 4, 128, ggml_type::f32, false, 1);
  const auto path = write_edited(s, "shape", [](gguf_writer&, tensor_list& ts) {
    for (auto& t : ts) {
      if (t.name == "blk.1.attn_k.weight") t.ne = {64, 32};
    }
  });
  EXPECT_EQ(load_error(path), path + ": tensor 'blk.1.attn_k.weight' has shape {64, 32}, expected {64, 64}");
}

TEST(Loader, MissingTensorIsNamed) {
  auto s = make_spec(model_arch::gpt2, 64, 4, 0, 128, ggml_type::f32, false, 1);
  const auto path = write_edited(s, "missing", [](gguf_writer& w, tensor_list& ts) {
    w.set_f32("gpt2.attention.layer_norm_epsilon", 1e-5f);
    std::erase_if(ts, [](const random_tensor_plan& t) { return t.name == "blk.0.ffn_up.bias"; });
  });
  const std::string e = load_error(path);
  EXPECT_NE(e.find("missing tensor 'blk.0.ffn_up.bias'"), std::string::npos) << e;
}

TEST(Loader, BadHeadCountsAreRejected) {
  auto s = make_spec(model_arch::llama, 64, 4, 4, 128, ggml_type::f32, false, 1);
  const auto path = write_edited(s, "heads", [](gguf_writer& w, tensor_list&) {
    w.set_u32("llama.attention.head_count_kv", 3);
  });
  EXPECT_NE(load_error(path).find("not a multiple of head_count_kv 3"), std::string::npos) << load_error(path);
}

TEST(Loader, NotAModelFile) {
  const auto dir = test::temp_dir("loader-missing");
  EXPECT_NE(load_error((dir / "nope.gguf").string()).find("nope.gguf"), std::string::npos);
}

}  // namespace
}  // namespace kvarena
