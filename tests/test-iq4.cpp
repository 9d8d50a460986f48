// test-iq4.cpp: the non-linear 4-bit tensor types IQ4_NL (ggml type 20) and IQ4_XS (23).
// References, none of them kvarena's own output:
//  - hand-built blocks decoded with the published 16-entry codebook (always runs);
//  - llama.cpp's dequantize_row_iq4_nl / _xs on random blocks (libggml-base.so through
//    ctypes) and llama.cpp's logits of files its own quantizer wrote (`llamaref quantize ...
//    IQ4_NL` / `IQ4_XS`), both made at test time by tests/fixtures/make_iq4_fixture.py
//    (skips when ../shared/tools/llamaref cannot be set up: label `model`);
//  - the plain-loop reference matmul (ref::matmul: double sums over the reference
//    dequantisation) for every kernel variant's matmul, on activations that lie on the
//    Q8_0 / Q8_K grid (so the activation rounding is exact and only float sums differ) and
//    on random activations (bounded by the rounding of the activations).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <random>
#include <string>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

#include <nlohmann/json.hpp>

#include "cpu-kernels.h"
#include "engine-error.h"
#include "forward-fixture.h"
#include "ggml-types.h"
#include "llamacpp-logits-fixture.h"
#include "model.h"
#include "session.h"
#include "test-util.h"

namespace kvarena {
namespace {

using test::max_abs_diff;
using variant_guard = test::kernel_variant_guard;

// ggml-common.h's kvalues_iq4nl, as published (the test's own copy).
const int k_codebook[16] = {-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113};

uint32_t float_bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

tensor_view matrix(ggml_type t, const std::vector<uint8_t>& bytes, int64_t in, int64_t out) {
  tensor_view w;
  w.name = std::string("test.") + ggml_traits(t).name;
  w.type = t;
  w.n_dims = 2;
  w.ne[0] = in;
  w.ne[1] = out;
  w.data = bytes.data();
  w.nbytes = bytes.size();
  return w;
}

TEST(Iq4, TypeTable) {
  for (auto [id, name, elems, bytes] : std::vector<std::tuple<uint32_t, const char*, int64_t, size_t>>{
           {20, "iq4_nl", 32, 18}, {23, "iq4_xs", 256, 136}}) {
    const auto t = ggml_type_from_u32(id);
    ASSERT_TRUE(t) << id;
    EXPECT_STREQ(ggml_traits(*t).name, name);
    EXPECT_EQ(ggml_traits(*t).block_elems, elems);
    EXPECT_EQ(ggml_row_bytes(*t, 512), size_t(512 / elems) * bytes);
    EXPECT_TRUE(ggml_is_iq4(*t));
    EXPECT_FALSE(ggml_is_k_quant(*t));
    EXPECT_FALSE(ggml_type_from_name(name)) << "read only";
    std::vector<float> x(256, 1.0f);
    std::vector<uint8_t> out(bytes * 8);
    EXPECT_THROW(quantize_row_ref(*t, x.data(), out.data(), 256), engine_error);
  }
}

// Blocks built by hand: element values from the published codebook and scale layout.
TEST(Iq4, ReferenceDecodesHandBuiltBlocks) {
  // IQ4_NL, d = 0.5: byte j = index j (low nibble, element j) | index 15 - j (high, element 16 + j).
  std::vector<uint8_t> nl(18);
  const uint16_t half = 0x3800;  // 0.5
  std::memcpy(nl.data(), &half, 2);
  for (int j = 0; j < 16; ++j) nl[size_t(2 + j)] = uint8_t(j | (15 - j) << 4);
  std::vector<float> got(32);
  dequantize_row_ref(ggml_type::iq4_nl, nl.data(), got.data(), 32);
  for (int j = 0; j < 16; ++j) {
    EXPECT_EQ(got[size_t(j)], 0.5f * float(k_codebook[j])) << j;
    EXPECT_EQ(got[size_t(16 + j)], 0.5f * float(k_codebook[15 - j])) << 16 + j;
  }
  // IQ4_XS, d = 0.25, sub-block scales ls as listed (factor ls - 32); sub-block s, byte j:
  // low nibble (j + s) % 16, high nibble (3 j + s) % 16.
  const int ls[8] = {0, 63, 32, 33, 17, 48, 5, 40};
  std::vector<uint8_t> xs(136, 0);
  const uint16_t quarter = 0x3400;  // 0.25
  std::memcpy(xs.data(), &quarter, 2);
  uint16_t sh = 0;
  for (int s = 0; s < 8; ++s) {
    xs[size_t(4 + s / 2)] |= uint8_t((ls[s] & 15) << (4 * (s % 2)));  // scales_l
    sh |= uint16_t((ls[s] >> 4) << (2 * s));
    for (int j = 0; j < 16; ++j) xs[size_t(8 + 16 * s + j)] = uint8_t((j + s) % 16 | ((3 * j + s) % 16) << 4);
  }
  std::memcpy(xs.data() + 2, &sh, 2);
  got.assign(256, NAN);
  dequantize_row_ref(ggml_type::iq4_xs, xs.data(), got.data(), 256);
  for (int s = 0; s < 8; ++s)
    for (int j = 0; j < 16; ++j) {
      const float dl = 0.25f * float(ls[s] - 32);
      EXPECT_EQ(got[size_t(32 * s + j)], dl * float(k_codebook[(j + s) % 16])) << s << " " << j;
      EXPECT_EQ(got[size_t(32 * s + 16 + j)], dl * float(k_codebook[(3 * j + s) % 16])) << s << " " << j;
    }
}

// ---- llama.cpp's references, written at test time -------------------------------------

struct iq4_fixtures {
  std::string error;  // why there are none (exit 77: skip)
  std::string dir;
};

std::pair<int, std::string> run(const std::string& cmd) {
  FILE* p = popen((cmd + " 2>&1").c_str(), "r");
  if (!p) return {-1, ""};
  std::string out;
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  const int st = pclose(p);
  return {WIFEXITED(st) ? WEXITSTATUS(st) : -1, out};
}

const iq4_fixtures& fixtures() {
  static const iq4_fixtures f = [] {
    iq4_fixtures r;
    r.dir = (std::filesystem::path(KVARENA_BINARY_DIR) / "test-tmp" / ("iq4-fixtures-" + std::to_string(::getpid())))
                .string();
    std::filesystem::remove_all(r.dir);
    const std::string py = std::filesystem::exists("/usr/bin/python3") ? "/usr/bin/python3" : "python3";
    const auto [rc, out] = run(py + " '" + test::fixture_path("make_iq4_fixture.py") + "' --out '" + r.dir + "'");
    if (rc != 0) r.error = "make_iq4_fixture.py exit " + std::to_string(rc) + ": " + out;
    return r;
  }();
  struct remove_at_exit {  // one directory per test process (ctest runs each test alone)
    std::string dir;
    ~remove_at_exit() {
      std::error_code ec;
      std::filesystem::remove_all(dir, ec);
    }
  };
  static const remove_at_exit cleanup{f.dir};
  return f;
}

#define REQUIRE_FIXTURES(f)                                                           \
  do {                                                                                \
    if (!(f).error.empty()) {                                                         \
      if ((f).error.find("exit 77") != std::string::npos) GTEST_SKIP() << (f).error; \
      FAIL() << (f).error;                                                            \
    }                                                                                 \
  } while (0)

// Reference dequantisation and every variant's get_row vs llama.cpp, bit for bit.
TEST(Iq4, DequantMatchesLlamaCpp) {
  const iq4_fixtures& fx = fixtures();
  REQUIRE_FIXTURES(fx);
  const auto header = nlohmann::json::parse(test::read_file(fx.dir + "/iq4-dequant.json"));
  const std::string bin = test::read_file(fx.dir + "/iq4-dequant.bin");
  ASSERT_EQ(bin.size(), header.at("bytes").get<size_t>());
  variant_guard guard;
  for (const auto& t : header.at("types")) {
    const ggml_type type = *ggml_type_from_u32(t.at("ggml_type").get<uint32_t>());
    const int64_t n = t.at("blocks").get<int64_t>() * t.at("block_elems").get<int64_t>();
    const size_t off = t.at("offset").get<size_t>(), bytes = ggml_row_bytes(type, n);
    const auto* blocks = reinterpret_cast<const uint8_t*>(bin.data() + off);
    std::vector<float> want(static_cast<size_t>(n)), got(want.size());
    std::memcpy(want.data(), bin.data() + off + bytes, want.size() * 4);
    dequantize_row_ref(type, blocks, got.data(), n);
    int bad = 0;
    for (size_t i = 0; i < want.size(); ++i)
      if (float_bits(got[i]) != float_bits(want[i]) && bad++ < 5)
        ADD_FAILURE() << ggml_traits(type).name << " ref element " << i << ": " << got[i] << " vs llama.cpp " << want[i];
    const std::vector<uint8_t> row(blocks, blocks + bytes);
    const tensor_view w = matrix(type, row, n, 1);
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

// ---- every variant's matmul vs the reference matmul -----------------------------------

// Random blocks: random bytes, the fp16 scale d (offset 0 in both types) of magnitude
// 2^-9..2^-5, either sign.
std::vector<uint8_t> random_blocks(ggml_type t, int64_t in, int64_t out, std::mt19937& rng) {
  const size_t bb = ggml_traits(t).block_bytes, nb = size_t(in / ggml_traits(t).block_elems) * size_t(out);
  std::vector<uint8_t> bytes(bb * nb);
  for (auto& b : bytes) b = uint8_t(rng());
  for (size_t b = 0; b < nb; ++b) {
    const uint16_t h = uint16_t((rng() & 1) << 15 | (6 + rng() % 5) << 10 | (rng() & 0x3ff));
    std::memcpy(bytes.data() + b * bb, &h, 2);
  }
  return bytes;
}

// x: (n_tok, in) on the activation grid of type t's matmul: per block of `blk` (32: Q8_0,
// 256: Q8_K) x = d q, d a power of two, integers |q| <= 127 with one of them +-127 (the
// block's largest magnitude), so rounding to Q8_0 / Q8_K reproduces x exactly.
std::vector<float> grid_activations(int64_t n_tok, int64_t in, int blk, std::mt19937& rng) {
  std::vector<float> x(size_t(n_tok * in));
  std::uniform_int_distribution<int> q(-126, 126), e(-8, 2);
  for (size_t b = 0; b < x.size() / size_t(blk); ++b) {
    const float d = std::ldexp(1.0f, e(rng));
    for (int i = 0; i < blk; ++i) x[b * blk + size_t(i)] = d * float(q(rng));
    x[b * blk + rng() % blk] = (rng() & 1 ? 127.0f : -127.0f) * d;
  }
  return x;
}

// Every variant, every path (1..8 tokens: one group; 9, 16, 37: several groups of 8 and a
// remainder), 2 threads, against ref::matmul (double sums of the reference dequantisation
// times x):
//  - x on the grid: both compute sum_i w_i x_i exactly in their own order, so the bound is
//    float rounding: 1e-5 * sum_i |w_i x_i| + 1e-6 (~100 ulps of the magnitude sum);
//  - random x in [-2, 2): the kernels see x rounded to Q8_0 (IQ4_NL: per 32, |dx| <=
//    d/2 + 127 d 2^-11 with d = amax/127, the fp16-rounded scale) or Q8_K (IQ4_XS: per 256,
//    |dx| <= d/2, F32 scale), so add sum over blocks of that per-element bound times sum|w|.
TEST(Iq4, MatmulMatchesReferenceEveryVariant) {
  variant_guard guard;
  thread_pool pool(2);
  std::mt19937 rng(20);
  const int64_t in = 512, out = 37;
  for (ggml_type t : {ggml_type::iq4_nl, ggml_type::iq4_xs}) {
    const int blk = t == ggml_type::iq4_nl ? 32 : 256;
    const std::vector<uint8_t> wb = random_blocks(t, in, out, rng);
    const tensor_view w = matrix(t, wb, in, out);
    std::vector<float> wf(size_t(in * out));
    for (int64_t o = 0; o < out; ++o) ref::get_row(w, o, wf.data() + o * in);
    for (int64_t n_tok : {1, 2, 3, 4, 5, 8, 9, 16, 37}) {
      for (bool grid : {true, false}) {
        std::vector<float> x;
        if (grid) {
          x = grid_activations(n_tok, in, blk, rng);
        } else {
          std::uniform_real_distribution<float> u(-2.0f, 2.0f);
          x.resize(size_t(n_tok * in));
          for (auto& v : x) v = u(rng);
        }
        std::vector<float> want(size_t(n_tok * out));
        ref::matmul(w, x.data(), n_tok, want.data());
        for (const std::string& v : cpu_kernel_variants_supported()) {
          set_cpu_kernel_variant(v);
          std::vector<float> y(size_t(n_tok * out), NAN);
          matmul(pool, w, x.data(), n_tok, y.data());
          int bad = 0;
          for (int64_t tk = 0; tk < n_tok; ++tk)
            for (int64_t o = 0; o < out; ++o) {
              double mag = 0, qerr = 0;
              for (int64_t b0 = 0; b0 < in; b0 += blk) {
                double amax = 0, sw = 0;
                for (int64_t i = b0; i < b0 + blk; ++i) {
                  const double wi = wf[size_t(o * in + i)], xi = x[size_t(tk * in + i)];
                  mag += std::fabs(wi * xi);
                  amax = std::max(amax, std::fabs(xi));
                  sw += std::fabs(wi);
                }
                const double d = amax / 127.0;
                qerr += (blk == 32 ? d * (0.5 + 127.0 / 2048.0) : d * 0.5) * sw;
              }
              const double bound = 1e-5 * mag + 1e-6 + (grid ? 0.0 : qerr);
              const double got = y[size_t(tk * out + o)], ref = want[size_t(tk * out + o)];
              if (!(std::fabs(got - ref) <= bound) && bad++ < 3)
                ADD_FAILURE() << ggml_traits(t).name << " " << v << " n_tok " << n_tok << (grid ? " grid" : " random")
                              << " t " << tk << " o " << o << ": " << got << " vs ref " << ref << " (bound " << bound
                              << ")";
            }
        }
      }
    }
  }
}

TEST(Iq4, RowsNotMultipleOfTheBlockRefused) {
  thread_pool pool(1);
  for (auto [t, in, need] : std::vector<std::tuple<ggml_type, int64_t, const char*>>{
           {ggml_type::iq4_nl, 48, "32"}, {ggml_type::iq4_xs, 128, "256"}}) {
    std::vector<uint8_t> wb(4096);
    tensor_view w = matrix(t, wb, in, 2);
    std::vector<float> x(static_cast<size_t>(in)), y(2);
    try {
      matmul(pool, w, x.data(), 1, y.data());
      ADD_FAILURE() << ggml_traits(t).name << ": no error";
    } catch (const engine_error& e) {
      EXPECT_NE(std::string(e.what()).find(need), std::string::npos) << e.what();
    }
  }
}

// ---- logits of llama.cpp-quantized files ----------------------------------------------

double rms_diff(const std::vector<float>& a, const std::vector<float>& b) {
  double s = 0;
  for (size_t i = 0; i < std::min(a.size(), b.size()); ++i) s += (double(a[i]) - b[i]) * (double(a[i]) - b[i]);
  return std::sqrt(s / double(std::max<size_t>(1, a.size())));
}

// Tolerance (as test-kquant's, same reasoning): the logits of these random files are O(1);
// both engines dequantise bit-identically (above) and round activations the same way
// (Q8_0 / Q8_K), so what differs is the order of float sums, ~1e-6 relative per matmul;
// except where an activation sits within float rounding of a Q8 rounding boundary and
// rounds to the neighbouring integer on one side only: that element moves by d = amax/127
// (~1% of its block's largest activation), a logit by up to ~1e-2. Measured: 1.2e-7..3.6e-7
// everywhere except IQ4_NL on AVX2/AVX-512, where such flips hit 3 of the 64 positions (max
// 8.1e-3, rms 5.1e-4; the generic variant: 1.2e-7). Which positions flip depends on the CPU
// (llama.cpp picks its kernels at run time), so the bounds leave room for a few more: max
// 2e-2, rms 2e-3. The smallest break tried, one codebook entry off by one (13 -> 12), gives
// max 2.8e-2, rms 7e-3; a scale bit or a nibble order mistake gives > 1.
constexpr double k_max_tol = 2e-2, k_rms_tol = 2e-3;

class Iq4Logits : public ::testing::TestWithParam<const char*> {};

TEST_P(Iq4Logits, MatchLlamaCpp) {
  const iq4_fixtures& fx = fixtures();
  REQUIRE_FIXTURES(fx);
  const std::string name = GetParam();
  const auto header = nlohmann::json::parse(test::read_file(fx.dir + "/" + name + ".json"));
  const std::string bin = test::read_file(fx.dir + "/" + name + ".bin");
  std::vector<float> want(bin.size() / 4);
  std::memcpy(want.data(), bin.data(), want.size() * 4);
  const auto m = load_model(fx.dir + "/" + name + ".gguf");
  const ggml_type t = name == "iq4_nl" ? ggml_type::iq4_nl : ggml_type::iq4_xs;
  EXPECT_EQ(m->layers[0].wq.type, t);
  EXPECT_EQ(m->layers[1].w_down.type, t);
  const auto tokens = header.at("tokens").get<std::vector<int32_t>>();
  ASSERT_EQ(want.size(), tokens.size() * size_t(m->config.n_vocab));
  variant_guard guard;
  for (const std::string& v : cpu_kernel_variants_supported()) {
    set_cpu_kernel_variant(v);
    for (bool decode : {false, true}) {
      const std::vector<float> got = test::session_logits(*m, tokens, 0, decode);
      const double d = max_abs_diff(got, want), r = rms_diff(got, want);
      EXPECT_LE(d, k_max_tol) << name << " " << v << (decode ? " decode" : " prefill");
      EXPECT_LE(r, k_rms_tol) << name << " " << v << (decode ? " decode" : " prefill");
      std::printf("[iq4] %-6s %-8s %-7s vs llama.cpp: max |diff| %.3g, rms %.3g\n", name.c_str(), v.c_str(),
                  decode ? "decode" : "prefill", d, r);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Files, Iq4Logits, ::testing::Values("iq4_nl", "iq4_xs"),
                         [](const auto& info) { return std::string(info.param); });

// `kvarena model check` names the types and supports the files.
TEST(Iq4, ModelCheckNamesTheTypes) {
  const iq4_fixtures& fx = fixtures();
  REQUIRE_FIXTURES(fx);
  for (const std::string name : {"iq4_nl", "iq4_xs"}) {
    const auto [rc, out] = run(std::string(KVARENA_BIN) + " model check '" + fx.dir + "/" + name + ".gguf'");
    EXPECT_EQ(rc, 0) << out;
    EXPECT_NE(out.find(name + " x13"), std::string::npos) << out;
    EXPECT_NE(out.find("\nsupported\n"), std::string::npos) << out;
  }
}

}  // namespace
}  // namespace kvarena
