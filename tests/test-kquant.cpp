// test-kquant.cpp: the K-quant tensor types (Q2_K..Q6_K) and RoPE scaling, checked against
// llama.cpp itself (fixtures made by tests/fixtures/make_kquant_fixtures.py, which is the
// exact record of the commands; llama.cpp v0.4.0 through ../shared/tools/llamaref).
//
//  - Dequantisation: random super-blocks and llama.cpp's dequantize_row_<type> output for
//    them (libggml-base.so via ctypes): ours must be bit-identical, in the reference
//    (dequantize_row_ref) and in every CPU kernel variant's get_row.
//  - Q8_K activation rounding: quantize_row_q8_K_ref's blocks, bit-identical.
//  - Matmul: every variant, decode (matrix-vector) and prefill (GEMM) token counts, against
//    a double-precision product of the reference dequantisation with the same Q8_K-rounded
//    activations: both sides then compute the same sum, so the bound is float rounding only.
//  - Logits: files quantized by llama.cpp's own quantizer (Q4_K_M, Q5_K_M, Q6_K, Q3_K_M,
//    Q2_K, and a Q4_0 file whose output.weight is Q6_K) at every position of 64 tokens,
//    prefill and token-by-token decode, against llama.cpp's logits (tolerances below).
//  - RoPE: Llama 3 rope_freqs.weight and linear scaling against llama.cpp at positions
//    448..511 (where a missing factor shows); YaRN refused by name.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cpu-kernels.h"
#include "cpu-kernels-impl.h"
#include "engine-error.h"
#include "forward-fixture.h"
#include "ggml-types.h"
#include "gguf-writer.h"
#include "model.h"
#include "session.h"
#include "llamacpp-logits-fixture.h"
#include "test-util.h"

namespace kvarena {
namespace {

struct dequant_fixture {
  nlohmann::json header;
  std::string bin;
};

const dequant_fixture& dq_fixture() {
  static const dequant_fixture f = [] {
    dequant_fixture d;
    const std::string text = test::read_file(test::fixture_path("kquant-dequant.json"));
    if (text.empty()) throw engine_error("kquant-dequant.json missing (tests/fixtures/make_kquant_fixtures.py)");
    d.header = nlohmann::json::parse(text);
    d.bin = test::read_file(test::fixture_path("kquant-dequant.bin"));
    if (d.bin.size() != d.header.at("bytes").get<size_t>()) throw engine_error("kquant-dequant.bin: wrong size");
    return d;
  }();
  return f;
}

using variant_guard = test::kernel_variant_guard;
using test::max_abs_diff;
using test::rms_diff;
using test::session_logits;

uint32_t float_bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

TEST(KQuant, TypeTable) {
  for (auto [id, name, bytes] : std::vector<std::tuple<uint32_t, const char*, size_t>>{
           {10, "q2_k", 84}, {11, "q3_k", 110}, {12, "q4_k", 144}, {13, "q5_k", 176}, {14, "q6_k", 210}}) {
    const auto t = ggml_type_from_u32(id);
    ASSERT_TRUE(t) << id;
    EXPECT_STREQ(ggml_traits(*t).name, name);
    EXPECT_EQ(ggml_traits(*t).block_elems, 256);
    EXPECT_EQ(ggml_row_bytes(*t, 512), 2 * bytes);
    EXPECT_TRUE(ggml_is_k_quant(*t));
    EXPECT_FALSE(ggml_type_from_name(name)) << "K-quants are read only";
    std::vector<float> x(256, 1.0f);
    std::vector<uint8_t> out(bytes);
    EXPECT_THROW(quantize_row_ref(*t, x.data(), out.data(), 256), engine_error);
  }
}

// Reference dequantisation and every variant's get_row vs llama.cpp, bit for bit.
TEST(KQuant, DequantMatchesLlamaCpp) {
  const auto& f = dq_fixture();
  const int nblk = f.header.at("blocks_per_type").get<int>();
  variant_guard guard;
  for (const auto& t : f.header.at("types")) {
    const auto type = *ggml_type_from_u32(t.at("ggml_type").get<uint32_t>());
    const size_t bb = t.at("block_bytes").get<size_t>(), off = t.at("offset").get<size_t>();
    const auto* blocks = reinterpret_cast<const uint8_t*>(f.bin.data() + off);
    std::vector<float> want(size_t(nblk) * 256);
    std::memcpy(want.data(), f.bin.data() + off + bb * nblk, want.size() * 4);
    std::vector<float> got(want.size());
    dequantize_row_ref(type, blocks, got.data(), nblk * 256);
    int bad = 0;
    for (size_t i = 0; i < want.size(); ++i)
      if (float_bits(got[i]) != float_bits(want[i]) && bad++ < 5)
        ADD_FAILURE() << ggml_traits(type).name << " ref element " << i << ": " << got[i] << " vs llama.cpp " << want[i];
    // The same blocks as one row of a matrix, through each kernel variant.
    tensor_view w;
    w.name = "test";
    w.type = type;
    w.n_dims = 2;
    w.ne[0] = nblk * 256;
    w.ne[1] = 1;
    w.data = blocks;
    w.nbytes = bb * nblk;
    for (const std::string& v : cpu_kernel_variants_supported()) {
      set_cpu_kernel_variant(v);
      std::fill(got.begin(), got.end(), -1.0f);
      get_row(w, 0, got.data());
      int badv = 0;
      for (size_t i = 0; i < want.size(); ++i)
        if (float_bits(got[i]) != float_bits(want[i]) && badv++ < 5)
          ADD_FAILURE() << ggml_traits(type).name << " " << v << " get_row element " << i << ": " << got[i]
                        << " vs llama.cpp " << want[i];
    }
  }
}

TEST(KQuant, Q8KRoundingMatchesLlamaCpp) {
  const auto& f = dq_fixture();
  const auto& h = f.header.at("q8_k");
  const int rows = h.at("rows").get<int>();
  const size_t off = h.at("offset").get<size_t>();
  std::vector<float> x(size_t(rows) * 256);
  std::memcpy(x.data(), f.bin.data() + off, x.size() * 4);
  std::vector<cpu::block_q8k> got(static_cast<size_t>(rows));
  cpu::quantize_q8k(x.data(), got.data(), int64_t(x.size()));
  for (int r = 0; r < rows; ++r) {
    const char* want = f.bin.data() + off + x.size() * 4 + size_t(r) * 292;
    float d;
    std::memcpy(&d, want, 4);
    EXPECT_EQ(float_bits(got[size_t(r)].d), float_bits(d)) << "row " << r;
    EXPECT_EQ(std::memcmp(got[size_t(r)].q, want + 4, 256), 0) << "row " << r << " quants";
    EXPECT_EQ(std::memcmp(got[size_t(r)].bsums, want + 260, 32), 0) << "row " << r << " bsums";
  }
}

// Random K-quant weights: random bytes with fp16 scales of sane magnitudes (any bit
// pattern of the rest is a valid block).
std::vector<uint8_t> random_kquant(ggml_type t, int64_t in, int64_t out, std::mt19937& rng) {
  const size_t bb = ggml_traits(t).block_bytes, nb = size_t(in / 256);
  std::vector<uint8_t> bytes(bb * nb * size_t(out));
  for (auto& b : bytes) b = uint8_t(rng());
  std::vector<size_t> halves;  // byte offsets of the fp16 fields in a block
  switch (t) {
    case ggml_type::q2_k: halves = {80, 82}; break;
    case ggml_type::q3_k: halves = {108}; break;
    case ggml_type::q4_k:
    case ggml_type::q5_k: halves = {0, 2}; break;
    default: halves = {208}; break;
  }
  for (size_t b = 0; b < nb * size_t(out); ++b)
    for (size_t o : halves) {
      const uint16_t h = uint16_t((rng() & 1) << 15 | (6 + rng() % 5) << 10 | (rng() & 0x3ff));
      std::memcpy(bytes.data() + b * bb + o, &h, 2);
    }
  return bytes;
}

const ggml_type k_types[] = {ggml_type::q2_k, ggml_type::q3_k, ggml_type::q4_k, ggml_type::q5_k,
                             ggml_type::q6_k};

// Every variant, matrix-vector (1..4 tokens, groups of 4 + remainder) and GEMM (16, 37
// tokens), against sum_i w_i * xr_i in double with xr = the Q8_K-rounded activations.
// Both compute the same products; the only difference is float rounding of the sums:
// |y - y_exact| <= 1e-5 * sum|w_i xr_i| + 1e-6 (about 256 ulps of the magnitude sum).
TEST(KQuant, MatmulMatchesReference) {
  variant_guard guard;
  thread_pool pool(2);
  std::mt19937 rng(7);
  const int64_t in = 768, out = 37;
  for (ggml_type t : k_types) {
    std::vector<uint8_t> wb = random_kquant(t, in, out, rng);
    tensor_view w;
    w.name = std::string("test.") + ggml_traits(t).name;
    w.type = t;
    w.n_dims = 2;
    w.ne[0] = in;
    w.ne[1] = out;
    w.data = wb.data();
    w.nbytes = wb.size();
    std::vector<float> wf(size_t(in * out));
    for (int64_t o = 0; o < out; ++o) dequantize_row_ref(t, wb.data() + size_t(o) * ggml_row_bytes(t, in), wf.data() + o * in, in);
    for (int64_t n_tok : {1, 2, 3, 4, 5, 9, 16, 37}) {
      std::uniform_real_distribution<float> u(-2.0f, 2.0f);
      std::vector<float> x(size_t(n_tok * in));
      for (auto& v : x) v = u(rng);
      std::vector<float> xr(x.size());
      std::vector<cpu::block_q8k> q(size_t(n_tok * in / 256));
      cpu::quantize_q8k(x.data(), q.data(), n_tok * in);
      for (size_t b = 0; b < q.size(); ++b)
        for (int i = 0; i < 256; ++i) xr[b * 256 + size_t(i)] = q[b].d * float(q[b].q[i]);
      for (const std::string& v : cpu_kernel_variants_supported()) {
        set_cpu_kernel_variant(v);
        std::vector<float> y(size_t(n_tok * out), NAN);
        matmul(pool, w, x.data(), n_tok, y.data());
        int bad = 0;
        for (int64_t tk = 0; tk < n_tok; ++tk)
          for (int64_t o = 0; o < out; ++o) {
            double s = 0, mag = 0;
            for (int64_t i = 0; i < in; ++i) {
              s += double(wf[size_t(o * in + i)]) * xr[size_t(tk * in + i)];
              mag += std::fabs(double(wf[size_t(o * in + i)]) * xr[size_t(tk * in + i)]);
            }
            const double got = y[size_t(tk * out + o)];
            if (!(std::fabs(got - s) <= 1e-5 * mag + 1e-6) && bad++ < 3)
              ADD_FAILURE() << ggml_traits(t).name << " " << v << " n_tok " << n_tok << " t " << tk << " o " << o
                            << ": " << got << " vs " << s << " (sum|w x| " << mag << ")";
          }
      }
    }
  }
}

TEST(KQuant, RowsNotMultipleOf256Refused) {
  thread_pool pool(1);
  std::vector<uint8_t> wb(144 * 2);
  tensor_view w;
  w.name = "odd";
  w.type = ggml_type::q4_k;
  w.n_dims = 2;
  w.ne[0] = 128;  // not a super-block
  w.ne[1] = 2;
  w.data = wb.data();
  w.nbytes = wb.size();
  std::vector<float> x(128), y(2);
  try {
    matmul(pool, w, x.data(), 1, y.data());
    FAIL() << "no error";
  } catch (const engine_error& e) {
    EXPECT_NE(std::string(e.what()).find("256"), std::string::npos) << e.what();
  }
}

// ---- logits against llama.cpp --------------------------------------------------------

using kq_logits_fixture = test::llamacpp_logits;

kq_logits_fixture load_kq(const std::string& name) {
  return test::load_llamacpp_logits("kq-" + name, "kq-" + name + ".gguf", "make_kquant_fixtures.py");
}

struct logits_case {
  const char* name;
  double tol;      // max |ours - llama.cpp| over all positions and vocab entries
  double rms_tol;  // root mean square of ours - llama.cpp over the same
};

// Tolerances. The logits of these random files are O(1) (max |logit| about 1.5-3). Both
// engines dequantise identically (bit-exact, above) and round activations to Q8_K the same
// way (bit-exact), so what differs is the order of float sums (llama.cpp's SIMD integer /
// float reductions vs ours) and F32 attention / norm details: ~1e-6 relative per matmul
// on its own. But an activation that lies within float rounding of a Q8_K rounding
// boundary may round to the neighbouring integer on one side only: one element moves by
// d = amax/127 (~1% of the largest activation of its block), which shifts a logit by up to
// ~1e-3 of its magnitude. Measured max |diff| per type is in engine/README.md (1e-5..1e-4);
// the bounds leave room for a few such flips but are far below what a wrong scale, a
// swapped nibble or a missing offset does (>= 0.05 on these files: checked by breaking each).
const logits_case k_logits_cases[] = {
    {"q4_k_m", 2e-2, 1e-3}, {"q5_k_m", 2e-2, 1e-3}, {"q6_k", 2e-2, 1e-3},
    {"q3_k_m", 2e-2, 1e-3}, {"q2_k", 2e-2, 1e-3},   {"q4_0", 2e-2, 1e-3},
};

class KQuantLogits : public ::testing::TestWithParam<logits_case> {};

TEST_P(KQuantLogits, MatchLlamaCpp) {
  const logits_case& c = GetParam();
  const kq_logits_fixture f = load_kq(c.name);
  const auto m = load_model(test::fixture_path("kq-" + std::string(c.name) + ".gguf"));
  const auto tokens = f.header.at("tokens").get<std::vector<int32_t>>();
  variant_guard guard;
  for (const std::string& v : cpu_kernel_variants_supported()) {
    set_cpu_kernel_variant(v);
    for (bool decode : {false, true}) {
      const std::vector<float> got = session_logits(*m, tokens, 0, decode);
      const double d = max_abs_diff(got, f.logits), r = rms_diff(got, f.logits);
      EXPECT_LE(d, c.tol) << c.name << " " << v << (decode ? " decode" : " prefill");
      EXPECT_LE(r, c.rms_tol) << c.name << " " << v << (decode ? " decode" : " prefill");
      std::printf("[kquant] %-7s %-8s %-7s vs llama.cpp: max |diff| %.3g, rms %.3g\n", c.name, v.c_str(),
                  decode ? "decode" : "prefill", d, r);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Files, KQuantLogits, ::testing::ValuesIn(k_logits_cases),
                         [](const auto& info) { return std::string(info.param.name); });

// The Q4_0 file llama.cpp's quantizer writes keeps output.weight in Q6_K.
TEST(KQuant, Q4_0FileHasQ6KOutput) {
  const auto m = load_model(test::fixture_path("kq-q4_0.gguf"));
  EXPECT_EQ(m->output.type, ggml_type::q6_k);
  EXPECT_EQ(m->layers[0].wq.type, ggml_type::q4_0);
}

// ---- RoPE scaling ----------------------------------------------------------------------

// F32 files: the engines agree to ~1e-6 on F32 llama files (test-forward: 5e-7 relative);
// measured here 2.4e-7 (rope_freqs) and 1.8e-7 (linear). 2e-5 absolute over these 64
// positions of O(1) logits leaves room for the angle computation (llama.cpp forms the
// angles in float, we in double) and is well below what dropping the scaling does
// (3.4e-4 without rope_freqs at positions 448..511, more without the linear factor):
// checked in each test, so a test that cannot see the scaling fails.
TEST(RopeScaling, Llama3FreqFactorsMatchLlamaCpp) {
  const kq_logits_fixture f = load_kq("rope-freqs");
  auto m = load_model(test::fixture_path("kq-rope-freqs.gguf"));
  ASSERT_EQ(m->config.rope_freq_factors.size(), size_t(m->config.rope_dims / 2));
  EXPECT_EQ(m->config.rope_freq_factors.front(), 1.0f);
  EXPECT_EQ(m->config.rope_freq_factors.back(), 8.0f);
  const auto tokens = f.header.at("tokens").get<std::vector<int32_t>>();
  const int64_t first = f.header.at("first_position").get<int64_t>();
  for (bool decode : {false, true}) {
    const double d = max_abs_diff(session_logits(*m, tokens, first, decode), f.logits);
    std::printf("[rope] llama3 rope_freqs %s: max |diff| vs llama.cpp = %.3g\n", decode ? "decode" : "prefill", d);
    EXPECT_LE(d, 2e-5) << (decode ? "decode" : "prefill");
  }
  m->config.rope_freq_factors.clear();  // the test must see a missing factor
  const double without = max_abs_diff(session_logits(*m, tokens, first, false), f.logits);
  std::printf("[rope] without the factors: %.3g\n", without);
  EXPECT_GT(without, 1e-4);
}

TEST(RopeScaling, LinearMatchesLlamaCpp) {
  const kq_logits_fixture f = load_kq("rope-linear");
  auto m = load_model(test::fixture_path("kq-rope-linear.gguf"));
  EXPECT_EQ(m->config.rope_freq_scale, 0.25f);
  const auto tokens = f.header.at("tokens").get<std::vector<int32_t>>();
  const int64_t first = f.header.at("first_position").get<int64_t>();
  const double d = max_abs_diff(session_logits(*m, tokens, first, false), f.logits);
  std::printf("[rope] linear x4: max |diff| vs llama.cpp = %.3g\n", d);
  EXPECT_LE(d, 2e-5);
  m->config.rope_freq_scale = 1.0f;
  const double without = max_abs_diff(session_logits(*m, tokens, first, false), f.logits);
  std::printf("[rope] without the linear factor: %.3g\n", without);
  EXPECT_GT(without, 1e-4);
}

// A config-only file: the scaling keys are read before any tensor is looked up.
std::string scaling_file(const std::string& name, const std::string& type, float factor) {
  const std::string path = (test::temp_dir("rope-" + name) / (name + ".gguf")).string();
  gguf_writer w;
  w.set_string("general.architecture", "llama");
  w.set_u32("llama.context_length", 128);
  w.set_u32("llama.embedding_length", 64);
  w.set_u32("llama.block_count", 1);
  w.set_u32("llama.feed_forward_length", 128);
  w.set_u32("llama.attention.head_count", 1);
  if (!type.empty()) w.set_string("llama.rope.scaling.type", type);
  w.set_f32("llama.rope.scaling.factor", factor);
  w.write(path);
  return path;
}

TEST(RopeScaling, YarnAndLongRopeRefusedByName) {
  for (const std::string type : {"yarn", "longrope", "llama3"}) {
    try {
      load_model(scaling_file(type, type, 4.0f));
      ADD_FAILURE() << type << ": loaded";
    } catch (const engine_error& e) {
      const std::string msg = e.what();
      EXPECT_NE(msg.find("'" + type + "'"), std::string::npos) << msg;
      EXPECT_NE(msg.find("rope.scaling.type"), std::string::npos) << msg;
      EXPECT_EQ(msg.find('\n'), std::string::npos) << "one line: " << msg;
    }
  }
  // "none" disables a factor; an absent type means linear (as llama.cpp reads them): both
  // get past the scaling keys and stop at the missing tensors.
  for (const std::string type : {"none", ""}) {
    try {
      load_model(scaling_file("ok" + type, type, 4.0f));
    } catch (const engine_error& e) {
      EXPECT_NE(std::string(e.what()).find("token_embd"), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace kvarena
