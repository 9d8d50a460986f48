// cpu-kernels-ref.cpp: the plain-loop references for cpu-kernels.h (namespace ref). They
// define what each kernel computes; the tests check every optimised variant against them.
// Double accumulation, no SIMD, no threads, and their own element decoding (nothing shared
// with the optimised code), so a bug in one is not hidden by the same bug in the other.
#include <cmath>
#include <cstring>
#include <numbers>
#include <vector>

#include "cpu-kernels.h"
#include "engine-error.h"

namespace kvarena::ref {
namespace {

// IEEE half -> float, by the textbook: sign, 5-bit exponent (bias 15), 10-bit mantissa.
double half_value(uint16_t h) {
  const int sign = h >> 15 ? -1 : 1;
  const int e = (h >> 10) & 0x1f;
  const int m = h & 0x3ff;
  if (e == 0) return sign * std::ldexp(double(m), -24);
  if (e == 31) return m ? NAN : sign * INFINITY;
  return sign * std::ldexp(double(1024 + m), e - 25);
}

double bf16_value(uint16_t h) {
  const uint32_t u = uint32_t(h) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

uint16_t u16_at(const uint8_t* p) { return uint16_t(p[0] | p[1] << 8); }

size_t row_bytes(ggml_type t, int64_t n) {
  switch (t) {
    case ggml_type::f32: return size_t(n) * 4;
    case ggml_type::f16:
    case ggml_type::bf16: return size_t(n) * 2;
    case ggml_type::q8_0: return size_t(n / 32) * 34;
    case ggml_type::q4_0: return size_t(n / 32) * 18;
    case ggml_type::q2_k: return size_t(n / 256) * 84;
    case ggml_type::q3_k: return size_t(n / 256) * 110;
    case ggml_type::q4_k: return size_t(n / 256) * 144;
    case ggml_type::q5_k: return size_t(n / 256) * 176;
    case ggml_type::q6_k: return size_t(n / 256) * 210;
    case ggml_type::iq4_nl: return size_t(n / 32) * 18;
    case ggml_type::iq4_xs: return size_t(n / 256) * 136;
  }
  throw engine_error("ref: unsupported weight type");
}

// Row r of w as doubles.
std::vector<double> row_values(const tensor_view& w, int64_t r) {
  const int64_t n = w.ne[0];
  const uint8_t* p = w.data + size_t(r) * row_bytes(w.type, n);
  std::vector<double> v(static_cast<size_t>(n));
  if (ggml_is_k_quant(w.type) || ggml_is_iq4(w.type)) {  // the plain-loop dequantisation of ggml-types.cpp
    std::vector<float> f(static_cast<size_t>(n));
    dequantize_row_ref(w.type, p, f.data(), n);
    for (int64_t i = 0; i < n; ++i) v[i] = f[i];
    return v;
  }
  for (int64_t i = 0; i < n; ++i) {
    switch (w.type) {
      case ggml_type::f32: {
        float f;
        std::memcpy(&f, p + 4 * i, 4);
        v[i] = f;
        break;
      }
      case ggml_type::f16: v[i] = half_value(u16_at(p + 2 * i)); break;
      case ggml_type::bf16: v[i] = bf16_value(u16_at(p + 2 * i)); break;
      case ggml_type::q8_0: {
        const uint8_t* blk = p + (i / 32) * 34;
        v[i] = half_value(u16_at(blk)) * double(int8_t(blk[2 + i % 32]));
        break;
      }
      case ggml_type::q4_0: {
        const uint8_t* blk = p + (i / 32) * 18;
        const int j = int(i % 32);
        const int q = j < 16 ? (blk[2 + j] & 0x0F) : (blk[2 + j - 16] >> 4);
        v[i] = half_value(u16_at(blk)) * double(q - 8);
        break;
      }
      default: break;  // K-quants, IQ4: above
    }
  }
  return v;
}

}  // namespace

void matmul(const tensor_view& w, const float* x, int64_t n_tok, float* y) {
  const int64_t in = w.ne[0], out = w.rows();
  for (int64_t o = 0; o < out; ++o) {
    const std::vector<double> wr = row_values(w, o);
    for (int64_t t = 0; t < n_tok; ++t) {
      double s = 0.0;
      for (int64_t i = 0; i < in; ++i) s += wr[i] * x[t * in + i];
      y[t * out + o] = float(s);
    }
  }
}

void get_row(const tensor_view& w, int64_t r, float* dst) {
  const std::vector<double> v = row_values(w, r);
  for (size_t i = 0; i < v.size(); ++i) dst[i] = float(v[i]);
}

void rmsnorm(const float* x, const float* w, float* y, int64_t n, float eps) {
  double ss = 0.0;
  for (int64_t i = 0; i < n; ++i) ss += double(x[i]) * x[i];
  const double scale = 1.0 / std::sqrt(ss / double(n) + eps);
  for (int64_t i = 0; i < n; ++i) y[i] = float(x[i] * scale * w[i]);
}

void layernorm(const float* x, const float* w, const float* b, float* y, int64_t n, float eps) {
  double mean = 0.0;
  for (int64_t i = 0; i < n; ++i) mean += x[i];
  mean /= double(n);
  double var = 0.0;
  for (int64_t i = 0; i < n; ++i) var += (x[i] - mean) * (x[i] - mean);
  var /= double(n);
  const double inv = 1.0 / std::sqrt(var + eps);
  for (int64_t i = 0; i < n; ++i) y[i] = float((x[i] - mean) * inv * w[i] + (b ? b[i] : 0.0));
}

void rope_adjacent(float* x, int64_t n_heads, int64_t head_dim, int64_t rope_dims, int64_t pos,
                   float freq_base) {
  rope_adjacent(x, n_heads, head_dim, rope_dims, pos, freq_base, 1.0f, nullptr);
}

void rope_adjacent(float* x, int64_t n_heads, int64_t head_dim, int64_t rope_dims, int64_t pos,
                   float freq_base, float freq_scale, const float* freq_factors) {
  for (int64_t h = 0; h < n_heads; ++h) {
    float* v = x + h * head_dim;
    for (int64_t i = 0; i < rope_dims / 2; ++i) {
      const double theta = double(pos) * double(freq_scale) *
                           std::pow(double(freq_base), -2.0 * double(i) / double(rope_dims)) /
                           (freq_factors ? double(freq_factors[i]) : 1.0);
      const double c = std::cos(theta), s = std::sin(theta);
      const double a = v[2 * i], b = v[2 * i + 1];
      v[2 * i] = float(a * c - b * s);
      v[2 * i + 1] = float(a * s + b * c);
    }
  }
}

void silu_mul(float* gate, const float* up, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    const double g = gate[i];
    gate[i] = float(g / (1.0 + std::exp(-g)) * up[i]);
  }
}

void gelu(float* x, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    const double v = x[i];
    x[i] = float(0.5 * v * (1.0 + std::tanh(std::sqrt(2.0 / std::numbers::pi) * (v + 0.044715 * v * v * v))));
  }
}

void softmax(float* x, int64_t n) {
  if (n <= 0) return;
  double mx = x[0];
  for (int64_t i = 1; i < n; ++i) mx = std::max(mx, double(x[i]));
  std::vector<double> e(static_cast<size_t>(n));
  double s = 0.0;
  for (int64_t i = 0; i < n; ++i) s += (e[i] = std::exp(x[i] - mx));
  for (int64_t i = 0; i < n; ++i) x[i] = float(e[i] / s);
}

}  // namespace kvarena::ref
