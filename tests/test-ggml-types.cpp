// test-ggml-types.cpp: the scalar conversions and reference (de)quantisers of ggml-types
// against independent references: the CPU's own F16C / AVX512-BF16 conversion
// instructions where present, exact nearest-value searches, and hand-built blocks.
#include <cpuid.h>
#include <gtest/gtest.h>
#include <immintrin.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "ggml-types.h"

using namespace kvarena;

namespace {

uint32_t bits_of(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
float float_of(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

__attribute__((target("f16c"))) float hw_half_to_float(uint16_t h) { return _cvtsh_ss(h); }
__attribute__((target("f16c"))) uint16_t hw_float_to_half(float f) {
  return _cvtss_sh(f, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
}
// CPUID bits, read directly: clang 14's __builtin_cpu_supports knows neither "f16c" nor
// "avx512bf16". The builtin's "avx"/"avx512f" checks also confirm the OS saves that state.
bool cpuid_bit(unsigned leaf, unsigned sub, int reg, int bit) {
  unsigned r[4] = {0, 0, 0, 0};
  if (!__get_cpuid_count(leaf, sub, &r[0], &r[1], &r[2], &r[3])) return false;
  return (r[reg] >> bit) & 1;
}
bool have_f16c() { return __builtin_cpu_supports("avx") && cpuid_bit(1, 0, 2, 29); }
bool have_avx512_bf16() {
  return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") && cpuid_bit(7, 1, 0, 5);
}

// Floats that stress fp16 rounding: a stride over all bit patterns, plus exact halfway
// points, the overflow and subnormal thresholds and their neighbours.
std::vector<float> fp16_probe_floats() {
  std::vector<float> v;
  for (uint64_t u = 0; u < (uint64_t(1) << 32); u += 65521) v.push_back(float_of(uint32_t(u)));
  for (uint32_t h = 0; h < 0x7c00; ++h) {  // every finite half and the midpoints around it
    const uint32_t b = bits_of(fp16_to_fp32(uint16_t(h)));
    for (int64_t d : {-1, 0, 1}) {
      const float x = float_of(uint32_t(int64_t(b) + d));
      v.push_back(x);
      v.push_back(-x);
    }
    if (h + 1 < 0x7c00) {  // midpoint to the next half, +-1 ulp
      const double mid = (double(fp16_to_fp32(uint16_t(h))) + double(fp16_to_fp32(uint16_t(h + 1)))) / 2;
      const uint32_t mb = bits_of(float(mid));
      for (int64_t d : {-1, 0, 1}) v.push_back(float_of(uint32_t(int64_t(mb) + d)));
    }
  }
  for (float x : {65504.0f, 65519.0f, 65519.996f, 65520.0f, 65536.0f, 1e10f, 6.1035156e-05f,
                  6.0975552e-05f, 5.9604645e-08f, 2.9802322e-08f, 2.9802326e-08f, 1e-30f,
                  std::numeric_limits<float>::denorm_min(), std::numeric_limits<float>::infinity()}) {
    v.push_back(x);
    v.push_back(-x);
  }
  return v;
}

}  // namespace

TEST(Fp16, AllHalvesMatchF16C) {
  if (!have_f16c()) GTEST_SKIP() << "CPU has no F16C";
  for (uint32_t h = 0; h < 65536; ++h) {
    const float ours = fp16_to_fp32(uint16_t(h));
    const float hw = hw_half_to_float(uint16_t(h));
    if (std::isnan(hw)) {
      ASSERT_TRUE(std::isnan(ours)) << "half 0x" << std::hex << h;
      ASSERT_EQ(std::signbit(ours), std::signbit(hw)) << "half 0x" << std::hex << h;
    } else {
      ASSERT_EQ(bits_of(ours), bits_of(hw)) << "half 0x" << std::hex << h;
    }
  }
}

TEST(Fp16, FloatToHalfMatchesF16C) {
  if (!have_f16c()) GTEST_SKIP() << "CPU has no F16C";
  const auto probes = fp16_probe_floats();
  ASSERT_GT(probes.size(), 300000u);
  for (float x : probes) {
    const uint16_t ours = fp32_to_fp16(x);
    const uint16_t hw = hw_float_to_half(x);
    if (std::isnan(x)) {
      ASSERT_TRUE(std::isnan(fp16_to_fp32(ours)));
      ASSERT_EQ(ours & 0x8000, hw & 0x8000);
    } else {
      ASSERT_EQ(ours, hw) << "float bits 0x" << std::hex << bits_of(x) << " = " << x;
    }
  }
}

TEST(Fp16, KnownValues) {
  EXPECT_EQ(fp32_to_fp16(1.0f), 0x3c00);
  EXPECT_EQ(fp32_to_fp16(-2.0f), 0xc000);
  EXPECT_EQ(fp32_to_fp16(65504.0f), 0x7bff);
  EXPECT_EQ(fp32_to_fp16(65520.0f), 0x7c00);   // rounds to infinity
  EXPECT_EQ(fp32_to_fp16(5.9604645e-08f), 0x0001);  // smallest subnormal
  EXPECT_EQ(fp32_to_fp16(2.9802322e-08f), 0x0000);  // exactly half of it: ties to even (0)
  EXPECT_EQ(fp32_to_fp16(1.0f + 1.0f / 2048), 0x3c00);      // halfway, ties to even
  EXPECT_EQ(fp32_to_fp16(1.0f + 3.0f / 2048), 0x3c02);      // halfway, ties to even (up)
  EXPECT_FLOAT_EQ(fp16_to_fp32(0x3555), 0.333251953125f);
  EXPECT_EQ(fp16_to_fp32(0x0001), std::ldexp(1.0f, -24));
  EXPECT_TRUE(std::isinf(fp16_to_fp32(0xfc00)) && fp16_to_fp32(0xfc00) < 0);
}

namespace {
// The nearest bf16 to x by search (ties to even mantissa), for finite x.
uint16_t bf16_nearest(float x) {
  const uint32_t b = bits_of(x);
  const uint16_t lo = uint16_t(b >> 16);  // truncation: toward zero in magnitude
  const uint16_t hi = uint16_t(lo + 1);
  // Rounding treats the step past the largest finite bf16 as 2^128 (which then overflows).
  auto value = [](uint16_t h) {
    return (h & 0x7fff) == 0x7f80 ? std::copysign(std::ldexp(1.0, 128), double(bf16_to_fp32(h)))
                                  : double(bf16_to_fp32(h));
  };
  const double dlo = std::fabs(double(x) - value(lo));
  const double dhi = std::fabs(double(x) - value(hi));
  if (dlo < dhi) return lo;
  if (dhi < dlo) return hi;
  return (lo & 1) ? hi : lo;
}
}  // namespace

TEST(Bf16, RoundsToNearestEven) {
  EXPECT_EQ(fp32_to_bf16(1.0f), 0x3f80);
  EXPECT_EQ(fp32_to_bf16(1.0f + 1.0f / 256), 0x3f80);  // halfway: even (down)
  EXPECT_EQ(fp32_to_bf16(1.0f + 3.0f / 256), 0x3f82);  // halfway: even (up)
  EXPECT_EQ(fp32_to_bf16(std::numeric_limits<float>::max()), 0x7f80);  // overflows to inf
  EXPECT_EQ(fp32_to_bf16(-std::numeric_limits<float>::infinity()), 0xff80);
  EXPECT_TRUE(std::isnan(bf16_to_fp32(fp32_to_bf16(std::nanf("")))));
  // A signalling NaN whose payload sits in the low bits must not become infinity.
  EXPECT_TRUE(std::isnan(bf16_to_fp32(fp32_to_bf16(float_of(0x7f800001u)))));
  for (uint64_t u = 0; u < (uint64_t(1) << 32); u += 4093) {
    const float x = float_of(uint32_t(u));
    if (!std::isfinite(x)) continue;
    const uint16_t want = bf16_nearest(x);
    ASSERT_EQ(fp32_to_bf16(x), want) << "float bits 0x" << std::hex << u;
  }
}

namespace {
__attribute__((target("avx512bf16,avx512vl,avx512f"))) uint16_t hw_float_to_bf16(float f) {
  const __m128bh r = _mm_cvtneps_pbh(_mm_set1_ps(f));
  uint16_t out[8];
  std::memcpy(out, &r, sizeof(out));
  return out[0];
}
}  // namespace

TEST(Bf16, MatchesAvx512Bf16ForNormals) {
  if (!have_avx512_bf16()) GTEST_SKIP() << "CPU has no AVX512-BF16";
  // VCVTNEPS2BF16 rounds to nearest even but flushes denormals: compare normal floats.
  for (uint64_t u = 0; u < (uint64_t(1) << 32); u += 997) {
    const float x = float_of(uint32_t(u));
    if (!std::isnormal(x)) continue;
    ASSERT_EQ(fp32_to_bf16(x), hw_float_to_bf16(x)) << "float bits 0x" << std::hex << u;
  }
}

TEST(GgmlTypes, TableAndRowBytes) {
  EXPECT_EQ(ggml_row_bytes(ggml_type::f32, 64), 256u);
  EXPECT_EQ(ggml_row_bytes(ggml_type::f16, 64), 128u);
  EXPECT_EQ(ggml_row_bytes(ggml_type::bf16, 64), 128u);
  EXPECT_EQ(ggml_row_bytes(ggml_type::q8_0, 64), 68u);
  EXPECT_EQ(ggml_row_bytes(ggml_type::q4_0, 64), 36u);
  EXPECT_EQ(ggml_row_bytes(ggml_type::q8_0, 4096), 4096u / 32 * 34);
  for (auto [id, name] : std::vector<std::pair<uint32_t, const char*>>{
           {0, "f32"}, {1, "f16"}, {2, "q4_0"}, {8, "q8_0"}, {30, "bf16"}}) {
    auto t = ggml_type_from_u32(id);
    ASSERT_TRUE(t.has_value()) << id;
    EXPECT_STREQ(ggml_traits(*t).name, name);
    EXPECT_EQ(ggml_type_from_name(name), t);
    EXPECT_EQ(uint32_t(*t), id);
  }
  for (uint32_t bad : {3u, 6u, 7u, 9u, 15u, 16u, 29u, 31u, 0xffffffffu}) EXPECT_FALSE(ggml_type_from_u32(bad)) << bad;
  EXPECT_FALSE(ggml_type_from_name("q4_1"));
  EXPECT_FALSE(ggml_type_from_name(""));
}

namespace {
// Deterministic test data with a spread of magnitudes per block (and an all-zero block).
std::vector<float> test_rows(int64_t n) {
  std::vector<float> v(static_cast<size_t>(n));
  uint64_t s = 12345;
  for (int64_t i = 0; i < n; ++i) {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    const float u = float(int64_t(s >> 40) - (1 << 23)) / float(1 << 23);  // [-1, 1)
    const float scale = std::ldexp(1.0f, int((i / 32) % 13) - 8);          // 2^-8 .. 2^4
    v[size_t(i)] = (i / 32 == 3) ? 0.0f : u * scale;
  }
  return v;
}
}  // namespace

TEST(Quant, Q8_0ErrorWithinHalfStep) {
  const int64_t n = 32 * 64;
  const auto x = test_rows(n);
  std::vector<block_q8_0> q(size_t(n / 32));
  std::vector<float> y(static_cast<size_t>(n));
  quantize_row_ref(ggml_type::q8_0, x.data(), q.data(), n);
  dequantize_row_ref(ggml_type::q8_0, q.data(), y.data(), n);
  for (int64_t b = 0; b < n / 32; ++b) {
    float amax = 0;
    for (int j = 0; j < 32; ++j) amax = std::max(amax, std::fabs(x[size_t(b * 32 + j)]));
    const float d = amax / 127;
    EXPECT_EQ(q[size_t(b)].d, fp32_to_fp16(d));
    // Half a step, plus the scale's own fp16 rounding times the largest |q| (127).
    const float bound = d / 2 + 127 * std::fabs(d - fp16_to_fp32(q[size_t(b)].d)) + 1e-12f;
    for (int j = 0; j < 32; ++j) {
      const size_t i = size_t(b * 32 + j);
      ASSERT_LE(std::fabs(x[i] - y[i]), bound) << "block " << b << " elem " << j;
      ASSERT_LE(std::abs(int(q[size_t(b)].q[j])), 127);
    }
  }
}

TEST(Quant, Q4_0ErrorWithinOneStep) {
  const int64_t n = 32 * 64;
  const auto x = test_rows(n);
  std::vector<block_q4_0> q(size_t(n / 32));
  std::vector<float> y(static_cast<size_t>(n));
  quantize_row_ref(ggml_type::q4_0, x.data(), q.data(), n);
  dequantize_row_ref(ggml_type::q4_0, q.data(), y.data(), n);
  for (int64_t b = 0; b < n / 32; ++b) {
    float amax = 0;
    for (int j = 0; j < 32; ++j) amax = std::max(amax, std::fabs(x[size_t(b * 32 + j)]));
    const float d = amax / 8;
    // Half a step in general; a full step at the clamped end (+8 d is not representable).
    const float bound = d + 8 * std::fabs(d - std::fabs(fp16_to_fp32(q[size_t(b)].d))) + 1e-12f;
    for (int j = 0; j < 32; ++j) {
      const size_t i = size_t(b * 32 + j);
      ASSERT_LE(std::fabs(x[i] - y[i]), bound) << "block " << b << " elem " << j;
    }
  }
}

TEST(Quant, HandBuiltBlocksDequantise) {
  block_q4_0 b4{};
  b4.d = fp32_to_fp16(0.5f);
  for (int j = 0; j < 16; ++j) b4.q[j] = uint8_t(j | ((15 - j) << 4));
  float y[32];
  dequantize_row_ref(ggml_type::q4_0, &b4, y, 32);
  for (int j = 0; j < 16; ++j) {
    EXPECT_EQ(y[j], (j - 8) * 0.5f) << j;             // low nibble of byte j
    EXPECT_EQ(y[j + 16], (15 - j - 8) * 0.5f) << j;   // high nibble of byte j
  }
  block_q8_0 b8{};
  b8.d = fp32_to_fp16(0.25f);
  for (int j = 0; j < 32; ++j) b8.q[j] = int8_t(j * 8 - 128);
  dequantize_row_ref(ggml_type::q8_0, &b8, y, 32);
  for (int j = 0; j < 32; ++j) EXPECT_EQ(y[j], (j * 8 - 128) * 0.25f) << j;
}

TEST(Quant, ExactValuesSurviveQ8_0AndF16) {
  // Multiples of amax/127 with amax a power of two times 127 are exact in Q8_0.
  float x[32], y[32];
  for (int j = 0; j < 32; ++j) x[j] = float(j * 4 - 64) * 0.125f;
  x[0] = 127 * 0.125f;
  block_q8_0 b;
  quantize_row_ref(ggml_type::q8_0, x, &b, 32);
  dequantize_row_ref(ggml_type::q8_0, &b, y, 32);
  for (int j = 0; j < 32; ++j) EXPECT_EQ(y[j], x[j]) << j;
  uint16_t h[32];
  quantize_row_ref(ggml_type::f16, x, h, 32);
  dequantize_row_ref(ggml_type::f16, h, y, 32);
  for (int j = 0; j < 32; ++j) EXPECT_EQ(y[j], x[j]) << j;
  quantize_row_ref(ggml_type::bf16, x, h, 32);
  dequantize_row_ref(ggml_type::bf16, h, y, 32);
  for (int j = 0; j < 32; ++j) EXPECT_EQ(y[j], x[j]) << j;
}
