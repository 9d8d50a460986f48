// test-kernels.cpp: every CPU kernel variant this machine supports against the plain-loop
// references in namespace ref, for every weight type, over odd shapes (rows not a multiple
// of any tile, K with tails, token counts on both sides of the matvec/GEMM switch), with 1
// and 2 threads.
//
// Tolerances (s = sum_i |w_i| |x_i| for one output, the scale of its rounding error):
//   F32/F16/BF16 weights: |y - ref| <= 1e-5 s (both sides see the same exact weights; only
//     the F32 summation differs: for K <= ~1000 terms the error is ~sqrt(K) 2^-24 s ~ 2e-6 s
//     typically, K 2^-24 s ~ 6e-5 s only if every rounding went the same way).
//   Q8_0/Q4_0 weights: activations are rounded to Q8_0 per 32-block (d = amax/127, stored
//     as fp16 like ggml: |x - x_q| <= d/2 + 127 2^-11 d), so |y - ref| <= sum_blocks
//     (d_b (1/2 + 127/2048)) sum_{i in b} |w_i| + 1e-5 s.
//     That bound is loose (errors rarely line up), so the quantised paths are also run on
//     activations already on the Q8_0 grid (x = d q, d a power of two, a +-127 in every
//     block): rounding is then exact and the bound is 1e-5 s again.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "cpu-kernels.h"
#include "engine-error.h"

namespace kvarena {
namespace {

struct test_weights {
  std::vector<uint8_t> bytes;
  tensor_view view;
};

size_t type_row_bytes(ggml_type t, int64_t n) {
  switch (t) {
    case ggml_type::f32: return size_t(n) * 4;
    case ggml_type::f16:
    case ggml_type::bf16: return size_t(n) * 2;
    case ggml_type::q8_0: return size_t(n / 32) * 34;
    case ggml_type::q4_0: return size_t(n / 32) * 18;
    default: break;  // the K-quants: test-kquant.cpp
  }
  return 0;
}

const char* type_name(ggml_type t) {
  switch (t) {
    case ggml_type::f32: return "f32";
    case ggml_type::f16: return "f16";
    case ggml_type::bf16: return "bf16";
    case ggml_type::q8_0: return "q8_0";
    case ggml_type::q4_0: return "q4_0";
    default: break;
  }
  return "?";
}

// fp16 bits of a random value of magnitude in [2^(e_lo-15), 2^(e_hi-14)).
uint16_t random_half(std::mt19937& rng, int e_lo, int e_hi) {
  const uint32_t sign = rng() & 1, e = e_lo + rng() % uint32_t(e_hi - e_lo + 1), m = rng() & 0x3ff;
  return uint16_t(sign << 15 | e << 10 | m);
}

void put_u16(uint8_t* p, uint16_t v) {
  p[0] = uint8_t(v);
  p[1] = uint8_t(v >> 8);
}

test_weights random_weights(ggml_type t, int64_t in, int64_t out, std::mt19937& rng) {
  test_weights w;
  const size_t rb = type_row_bytes(t, in);
  w.bytes.resize(rb * size_t(out));
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  for (int64_t r = 0; r < out; ++r) {
    uint8_t* row = w.bytes.data() + size_t(r) * rb;
    switch (t) {
      case ggml_type::f32:
        for (int64_t i = 0; i < in; ++i) {
          const float v = u(rng);
          std::memcpy(row + 4 * i, &v, 4);
        }
        break;
      case ggml_type::f16:
        for (int64_t i = 0; i < in; ++i) put_u16(row + 2 * i, i % 17 == 5 ? 0 : random_half(rng, 9, 15));
        break;
      case ggml_type::bf16:
        for (int64_t i = 0; i < in; ++i)
          put_u16(row + 2 * i, uint16_t((rng() & 1) << 15 | (120 + rng() % 8) << 7 | (rng() & 0x7f)));
        break;
      case ggml_type::q8_0:
        for (int64_t b = 0; b < in / 32; ++b) {
          uint8_t* blk = row + 34 * b;
          put_u16(blk, random_half(rng, 6, 9) & 0x7fff);
          for (int i = 0; i < 32; ++i) blk[2 + i] = uint8_t(rng());  // includes -128
        }
        break;
      case ggml_type::q4_0:
        for (int64_t b = 0; b < in / 32; ++b) {
          uint8_t* blk = row + 18 * b;
          put_u16(blk, random_half(rng, 9, 12));
          for (int i = 0; i < 16; ++i) blk[2 + i] = uint8_t(rng());
        }
        break;
      default:
        ADD_FAILURE() << "random_weights: no generator for this type (the K-quants: test-kquant.cpp)";
    }
  }
  w.view.name = std::string("test.") + type_name(t);
  w.view.type = t;
  w.view.n_dims = 2;
  w.view.ne[0] = in;
  w.view.ne[1] = out;
  w.view.data = w.bytes.data();
  w.view.nbytes = w.bytes.size();
  return w;
}

std::vector<float> random_floats(size_t n, std::mt19937& rng, float lo = -1.0f, float hi = 1.0f) {
  std::uniform_real_distribution<float> u(lo, hi);
  std::vector<float> v(n);
  for (auto& f : v) f = u(rng);
  return v;
}

bool is_quantized(ggml_type t) { return t == ggml_type::q8_0 || t == ggml_type::q4_0; }

// Allowed |y - ref| for token t, output o (see the file comment).
std::vector<double> matmul_bounds(const tensor_view& w, const std::vector<float>& x, int64_t n_tok,
                                  bool activations_exact = false) {
  const int64_t in = w.ne[0], out = w.ne[1];
  std::vector<double> bound(static_cast<size_t>(n_tok * out));
  std::vector<float> row(static_cast<size_t>(in));
  for (int64_t o = 0; o < out; ++o) {
    ref::get_row(w, o, row.data());
    for (int64_t t = 0; t < n_tok; ++t) {
      const float* xt = x.data() + t * in;
      double s = 0.0, q = 0.0;
      for (int64_t i = 0; i < in; ++i) s += std::fabs(double(row[i]) * xt[i]);
      if (is_quantized(w.type) && !activations_exact) {
        for (int64_t b = 0; b < in / 32; ++b) {
          double amax = 0.0, wsum = 0.0;
          for (int i = 0; i < 32; ++i) {
            amax = std::max(amax, std::fabs(double(xt[32 * b + i])));
            wsum += std::fabs(double(row[32 * b + i]));
          }
          q += amax / 127.0 * (0.5 + 127.0 / 2048.0) * wsum;  // d/2, plus d's fp16 rounding
        }
      }
      bound[size_t(t * out + o)] = 1e-5 * s + q * (1.0 + 1e-5) + 1e-30;
    }
  }
  return bound;
}

class kernels_variant : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override { set_cpu_kernel_variant(GetParam()); }
  void TearDown() override { set_cpu_kernel_variant(cpu_kernel_variants_supported().front()); }
};

std::string variant_name(const ::testing::TestParamInfo<std::string>& info) { return info.param; }

INSTANTIATE_TEST_SUITE_P(all, kernels_variant,
                         ::testing::ValuesIn(cpu_kernel_variants_supported()), variant_name);

thread_pool& pool_of(int n) {
  static thread_pool p1(1), p2(2);
  return n == 1 ? p1 : p2;
}

// x: (n_tok, in) with every 32-block exactly representable in Q8_0.
std::vector<float> q8_grid_floats(int64_t n_tok, int64_t in, std::mt19937& rng) {
  std::vector<float> x(static_cast<size_t>(n_tok * in));
  for (int64_t b = 0; b < n_tok * in / 32; ++b) {
    const float d = std::ldexp(1.0f, -int(rng() % 9));
    for (int i = 0; i < 32; ++i) x[size_t(32 * b + i)] = d * float(int(rng() % 255) - 127);
    x[size_t(32 * b + rng() % 32)] = d * (rng() & 1 ? 127.0f : -127.0f);
  }
  return x;
}

void check_matmul_on(const test_weights& w, const std::vector<float>& x, int64_t n_tok,
                     bool exact_q8) {
  const int64_t in = w.view.ne[0], out = w.view.ne[1];
  const ggml_type t = w.view.type;
  std::vector<float> want(static_cast<size_t>(out * n_tok));
  ref::matmul(w.view, x.data(), n_tok, want.data());
  const std::vector<double> bound = matmul_bounds(w.view, x, n_tok, exact_q8);
  for (int threads : {1, 2}) {
    std::vector<float> got(static_cast<size_t>(out * n_tok), std::numeric_limits<float>::quiet_NaN());
    matmul(pool_of(threads), w.view, x.data(), n_tok, got.data());
    int bad = 0;
    for (size_t i = 0; i < got.size() && bad < 5; ++i) {
      if (!(std::fabs(double(got[i]) - want[i]) <= bound[i])) {
        ++bad;
        ADD_FAILURE() << type_name(t) << " in=" << in << " out=" << out << " n_tok=" << n_tok
                      << " threads=" << threads << (exact_q8 ? " (x on the Q8_0 grid)" : "")
                      << ": y[tok " << i / out << "][" << i % out
                      << "] = " << got[i] << ", ref " << want[i] << ", bound " << bound[i];
      }
    }
  }
}

void check_matmul(ggml_type t, int64_t in, int64_t out, int64_t n_tok, std::mt19937& rng) {
  const test_weights w = random_weights(t, in, out, rng);
  check_matmul_on(w, random_floats(size_t(in * n_tok), rng), n_tok, false);
  if (is_quantized(t)) check_matmul_on(w, q8_grid_floats(n_tok, in, rng), n_tok, true);
}

TEST_P(kernels_variant, matmul_float_types_match_ref) {
  std::mt19937 rng(1234);
  for (ggml_type t : {ggml_type::f32, ggml_type::f16, ggml_type::bf16})
    for (int64_t in : {1, 7, 16, 33, 100, 257})
      for (int64_t out : {1, 5, 13, 37})
        for (int64_t n_tok : {1, 2, 3, 4, 5, 7, 15, 16, 33}) check_matmul(t, in, out, n_tok, rng);
}

TEST_P(kernels_variant, matmul_quantized_types_match_ref) {
  std::mt19937 rng(99);
  for (ggml_type t : {ggml_type::q8_0, ggml_type::q4_0})
    for (int64_t in : {32, 96, 256})
      for (int64_t out : {1, 5, 13, 37})
        for (int64_t n_tok : {1, 2, 3, 4, 5, 7, 15, 16, 33}) check_matmul(t, in, out, n_tok, rng);
}

TEST_P(kernels_variant, matmul_larger_shapes_match_ref) {
  std::mt19937 rng(7);
  for (ggml_type t : {ggml_type::f32, ggml_type::f16, ggml_type::bf16, ggml_type::q8_0, ggml_type::q4_0}) {
    check_matmul(t, 768, 130, 1, rng);
    check_matmul(t, 768, 130, 3, rng);
    check_matmul(t, 768, 130, 9, rng);
    check_matmul(t, 800, 100, 64, rng);
    check_matmul(t, 256, 61, 70, rng);
  }
  // Enough work for both threads on K with a tail (F32 only: quantised K is whole blocks).
  check_matmul(ggml_type::f32, 1001, 67, 5, rng);
  check_matmul(ggml_type::f16, 1001, 67, 2, rng);
}

TEST_P(kernels_variant, get_row_is_exact_for_every_type) {
  std::mt19937 rng(5);
  for (ggml_type t : {ggml_type::f32, ggml_type::f16, ggml_type::bf16, ggml_type::q8_0, ggml_type::q4_0}) {
    const int64_t in = is_quantized(t) ? 96 : 45;
    const test_weights w = random_weights(t, in, 3, rng);
    for (int64_t r = 0; r < 3; ++r) {
      std::vector<float> got(static_cast<size_t>(in)), want(static_cast<size_t>(in));
      get_row(w.view, r, got.data());
      ref::get_row(w.view, r, want.data());
      for (int64_t i = 0; i < in; ++i) ASSERT_EQ(got[i], want[i]) << type_name(t) << " row " << r << " [" << i << "]";
    }
  }
}

void expect_close(const std::vector<float>& got, const std::vector<float>& want, double rel, double abs,
                  const std::string& what) {
  ASSERT_EQ(got.size(), want.size());
  int bad = 0;
  for (size_t i = 0; i < got.size() && bad < 5; ++i)
    if (!(std::fabs(double(got[i]) - want[i]) <= rel * std::fabs(want[i]) + abs)) {
      ++bad;
      ADD_FAILURE() << what << " n=" << got.size() << " [" << i << "]: " << got[i] << " vs ref " << want[i];
    }
}

const int64_t small_sizes[] = {1, 7, 16, 17, 33, 64, 768, 1001};

TEST_P(kernels_variant, norms_match_ref) {
  std::mt19937 rng(11);
  for (int64_t n : small_sizes) {
    const auto x = random_floats(size_t(n), rng, -3.0f, 3.0f);
    const auto w = random_floats(size_t(n), rng);
    const auto b = random_floats(size_t(n), rng);
    std::vector<float> got(static_cast<size_t>(n)), want(static_cast<size_t>(n));
    rmsnorm(x.data(), w.data(), got.data(), n, 1e-5f);
    ref::rmsnorm(x.data(), w.data(), want.data(), n, 1e-5f);
    expect_close(got, want, 1e-5, 1e-7, "rmsnorm");
    std::vector<float> inplace = x;
    rmsnorm(inplace.data(), w.data(), inplace.data(), n, 1e-5f);
    expect_close(inplace, want, 1e-5, 1e-7, "rmsnorm in place");
    for (const float* bias : {b.data(), static_cast<const float*>(nullptr)}) {
      // layernorm output ~ (x - mean) / sd: its error scale is |w| (+|b|), not |y|.
      layernorm(x.data(), w.data(), bias, got.data(), n, 1e-5f);
      ref::layernorm(x.data(), w.data(), bias, want.data(), n, 1e-5f);
      expect_close(got, want, 1e-5, 1e-5, "layernorm");
    }
  }
}

TEST_P(kernels_variant, activations_match_ref) {
  std::mt19937 rng(12);
  for (int64_t n : small_sizes) {
    for (float range : {1.0f, 10.0f, 100.0f}) {
      const auto x = random_floats(size_t(n), rng, -range, range);
      const auto up = random_floats(size_t(n), rng);
      std::vector<float> got = x, want = x;
      silu_mul(got.data(), up.data(), n);
      ref::silu_mul(want.data(), up.data(), n);
      expect_close(got, want, 1e-5, 1e-30, "silu_mul");
      got = x;
      want = x;
      gelu(got.data(), n);
      ref::gelu(want.data(), n);
      // For x << 0, gelu(x) ~ 1e-40...: the float formula loses relative accuracy there,
      // so the floor is absolute (1e-7 of |x|).
      expect_close(got, want, 1e-5, 1e-7, "gelu");
    }
  }
}

TEST_P(kernels_variant, softmax_matches_ref_including_masks_and_large_values) {
  std::mt19937 rng(13);
  for (int64_t n : small_sizes) {
    for (float range : {1.0f, 30.0f, 500.0f}) {
      auto x = random_floats(size_t(n), rng, -range, range);
      if (n > 3) x[1] = -std::numeric_limits<float>::infinity();  // a masked position
      std::vector<float> got = x, want = x;
      softmax(got.data(), n);
      ref::softmax(want.data(), n);
      expect_close(got, want, 1e-5, 1e-9, "softmax");
      if (n > 3) {
        EXPECT_EQ(got[1], 0.0f);
      }
    }
  }
}

TEST_P(kernels_variant, vector_ops_match_double_loops) {
  std::mt19937 rng(14);
  for (int64_t n : small_sizes) {
    const auto a = random_floats(size_t(n), rng), b = random_floats(size_t(n), rng);
    double d = 0.0, scale = 0.0;
    for (int64_t i = 0; i < n; ++i) {
      d += double(a[i]) * b[i];
      scale += std::fabs(double(a[i]) * b[i]);
    }
    EXPECT_NEAR(dot(a.data(), b.data(), n), d, 1e-6 * scale + 1e-30) << "dot n=" << n;
    std::vector<float> y = a, want(static_cast<size_t>(n));
    add(y.data(), b.data(), n);
    for (int64_t i = 0; i < n; ++i) want[i] = a[i] + b[i];
    expect_close(y, want, 0.0, 0.0, "add");
    y = a;
    axpy(y.data(), 0.37f, b.data(), n);
    for (int64_t i = 0; i < n; ++i) want[i] = float(a[i] + 0.37 * double(b[i]));
    expect_close(y, want, 1e-6, 1e-7, "axpy");
  }
}

TEST(kernels, rope_adjacent_matches_ref) {
  std::mt19937 rng(15);
  for (int64_t pos : {0, 1, 17, 4000})
    for (int64_t rope_dims : {64, 32}) {
      const int64_t n_heads = 3, head_dim = 64;
      const auto x = random_floats(size_t(n_heads * head_dim), rng);
      std::vector<float> got = x, want = x;
      rope_adjacent(got.data(), n_heads, head_dim, rope_dims, pos, 10000.0f);
      ref::rope_adjacent(want.data(), n_heads, head_dim, rope_dims, pos, 10000.0f);
      expect_close(got, want, 1e-5, 1e-6, "rope_adjacent");
      for (int64_t i = rope_dims; i < head_dim; ++i) EXPECT_EQ(got[i], x[i]) << "dims past rope_dims move";
    }
}

TEST(kernels, variants_are_listed_and_selectable) {
  const auto names = cpu_kernel_variants_supported();
  ASSERT_FALSE(names.empty());
  EXPECT_EQ(names.back(), "generic");
  for (const auto& n : names) {
    set_cpu_kernel_variant(n);
    EXPECT_EQ(cpu_kernel_variant(), n);
  }
  set_cpu_kernel_variant(names.front());
  EXPECT_THROW(set_cpu_kernel_variant("avx9000"), engine_error);
}

TEST(kernels, bad_weights_are_reported_not_crashed_on) {
  std::mt19937 rng(16);
  test_weights w = random_weights(ggml_type::f32, 40, 2, rng);
  w.view.type = ggml_type::q8_0;  // 40 is not a multiple of 32
  std::vector<float> x(40), y(2);
  EXPECT_THROW(matmul(pool_of(1), w.view, x.data(), 1, y.data()), engine_error);
  w.view.type = static_cast<ggml_type>(6);
  EXPECT_THROW(matmul(pool_of(1), w.view, x.data(), 1, y.data()), engine_error);
  w.view.type = ggml_type::f32;
  EXPECT_THROW(get_row(w.view, 2, y.data()), engine_error);
}

}  // namespace
}  // namespace kvarena
