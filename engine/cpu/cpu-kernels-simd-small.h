// cpu-kernels-simd-small.h: the shared SIMD element-wise and small kernels (norms,
// activations, softmax, rotary, attention pieces) over a variant's traits S
// (cpu-kernels-impl.h). Included only by cpu-kernels-impl.h in the AVX2 and AVX-512
// variant files, after cpu-kernels-simd-matmul.h.
#pragma once
#include <immintrin.h>

namespace kvarena::cpu::simd {

// ---- small kernels -----------------------------------------------------------------------

// Applies f (vf -> vf) to the last n < W elements of p through a zero-padded vector.
template <class S, class F>
inline void tail_apply(float* p, int64_t n, F f) {
  if (n <= 0) return;
  alignas(64) float tmp[S::W] = {};
  for (int64_t i = 0; i < n; ++i) tmp[i] = p[i];
  S::store(tmp, f(S::load(tmp)));
  for (int64_t i = 0; i < n; ++i) p[i] = tmp[i];
}

template <class S>
float sum_squares(const float* x, int64_t n) {
  using vf = typename S::vf;
  constexpr int W = S::W;
  vf a0 = S::zero(), a1 = S::zero();
  int64_t i = 0;
  for (; i + 2 * W <= n; i += 2 * W) {
    const vf v0 = S::load(x + i), v1 = S::load(x + i + W);
    a0 = S::fma(v0, v0, a0);
    a1 = S::fma(v1, v1, a1);
  }
  for (; i + W <= n; i += W) a0 = S::fma(S::load(x + i), S::load(x + i), a0);
  float s = S::reduce_add(S::add(a0, a1));
  for (; i < n; ++i) s += x[i] * x[i];
  return s;
}

template <class S>
void rmsnorm(const float* x, const float* w, float* y, int64_t n, float eps) {
  constexpr int W = S::W;
  const float scale = 1.0f / __builtin_sqrtf(sum_squares<S>(x, n) / float(n) + eps);
  const auto vs = S::set1(scale);
  int64_t i = 0;
  for (; i + W <= n; i += W) S::store(y + i, S::mul(S::mul(S::load(x + i), vs), S::load(w + i)));
  for (; i < n; ++i) y[i] = x[i] * scale * w[i];
}

template <class S>
float sum(const float* x, int64_t n) {
  constexpr int W = S::W;
  auto a0 = S::zero(), a1 = S::zero();
  int64_t i = 0;
  for (; i + 2 * W <= n; i += 2 * W) {
    a0 = S::add(a0, S::load(x + i));
    a1 = S::add(a1, S::load(x + i + W));
  }
  for (; i + W <= n; i += W) a0 = S::add(a0, S::load(x + i));
  float s = S::reduce_add(S::add(a0, a1));
  for (; i < n; ++i) s += x[i];
  return s;
}

template <class S>
void layernorm(const float* x, const float* w, const float* b, float* y, int64_t n, float eps) {
  constexpr int W = S::W;
  const float mean = sum<S>(x, n) / float(n);
  const auto vm = S::set1(mean);
  auto a = S::zero();
  int64_t i = 0;
  for (; i + W <= n; i += W) {
    const auto d = S::sub(S::load(x + i), vm);
    a = S::fma(d, d, a);
  }
  float var = S::reduce_add(a);
  for (; i < n; ++i) var += (x[i] - mean) * (x[i] - mean);
  const float inv = 1.0f / __builtin_sqrtf(var / float(n) + eps);
  const auto vi = S::set1(inv);
  for (i = 0; i + W <= n; i += W)
    S::store(y + i, S::fma(S::mul(S::sub(S::load(x + i), vm), vi), S::load(w + i),
                           b ? S::load(b + i) : S::zero()));
  for (; i < n; ++i) y[i] = (x[i] - mean) * inv * w[i] + (b ? b[i] : 0.0f);
}

template <class S>
inline typename S::vf silu_v(typename S::vf g) {
  return S::div(g, S::add(S::set1(1.0f), S::exp(S::sub(S::zero(), g))));
}

template <class S>
void silu_mul(float* gate, const float* up, int64_t n) {
  constexpr int W = S::W;
  int64_t i = 0;
  for (; i + W <= n; i += W) S::store(gate + i, S::mul(silu_v<S>(S::load(gate + i)), S::load(up + i)));
  const float* u = up + i;
  tail_apply<S>(gate + i, n - i, [&](typename S::vf g) {
    alignas(64) float t[S::W] = {};
    for (int64_t j = 0; j < n - i; ++j) t[j] = u[j];
    return S::mul(silu_v<S>(g), S::load(t));
  });
}

// gelu(x) = 0.5 x (1 + tanh(u)) = x / (1 + exp(-2u)), u = sqrt(2/pi) (x + 0.044715 x^3)
template <class S>
inline typename S::vf gelu_v(typename S::vf x) {
  const auto x3 = S::mul(S::mul(x, x), x);
  const auto u2 = S::mul(S::set1(-2.0f * 0.7978845608028654f), S::fma(S::set1(0.044715f), x3, x));
  return S::div(x, S::add(S::set1(1.0f), S::exp(u2)));
}

template <class S>
void gelu(float* x, int64_t n) {
  constexpr int W = S::W;
  int64_t i = 0;
  for (; i + W <= n; i += W) S::store(x + i, gelu_v<S>(S::load(x + i)));
  tail_apply<S>(x + i, n - i, [](typename S::vf v) { return gelu_v<S>(v); });
}

template <class S>
void softmax(float* x, int64_t n) {
  constexpr int W = S::W;
  if (n <= 0) return;
  float mx = x[0];
  int64_t i = 0;
  if (n >= W) {
    auto m = S::load(x);
    for (i = W; i + W <= n; i += W) m = S::max(m, S::load(x + i));
    mx = S::reduce_max(m);
  }
  for (; i < n; ++i) mx = x[i] > mx ? x[i] : mx;
  const auto vm = S::set1(mx);
  auto s = S::zero();
  for (i = 0; i + W <= n; i += W) {
    const auto e = S::exp(S::sub(S::load(x + i), vm));
    S::store(x + i, e);
    s = S::add(s, e);
  }
  float tail_sum = 0.0f;
  tail_apply<S>(x + i, n - i, [&](typename S::vf v) {
    alignas(64) float t[S::W];
    S::store(t, S::exp(S::sub(v, vm)));
    for (int64_t j = 0; j < n - i; ++j) tail_sum += t[j];
    return S::load(t);
  });
  const float inv = 1.0f / (S::reduce_add(s) + tail_sum);
  const auto vi = S::set1(inv);
  for (i = 0; i + W <= n; i += W) S::store(x + i, S::mul(S::load(x + i), vi));
  for (; i < n; ++i) x[i] *= inv;
}

template <class S>
void add(float* y, const float* x, int64_t n) {
  constexpr int W = S::W;
  int64_t i = 0;
  for (; i + W <= n; i += W) S::store(y + i, S::add(S::load(y + i), S::load(x + i)));
  for (; i < n; ++i) y[i] += x[i];
}

template <class S>
float dot(const float* a, const float* b, int64_t n) {
  constexpr int W = S::W;
  auto a0 = S::zero(), a1 = S::zero();
  int64_t i = 0;
  for (; i + 2 * W <= n; i += 2 * W) {
    a0 = S::fma(S::load(a + i), S::load(b + i), a0);
    a1 = S::fma(S::load(a + i + W), S::load(b + i + W), a1);
  }
  for (; i + W <= n; i += W) a0 = S::fma(S::load(a + i), S::load(b + i), a0);
  float s = S::reduce_add(S::add(a0, a1));
  for (; i < n; ++i) s += a[i] * b[i];
  return s;
}

template <class S>
void axpy(float* y, float alpha, const float* x, int64_t n) {
  constexpr int W = S::W;
  const auto va = S::set1(alpha);
  int64_t i = 0;
  for (; i + W <= n; i += W) S::store(y + i, S::fma(va, S::load(x + i), S::load(y + i)));
  for (; i < n; ++i) y[i] += alpha * x[i];
}

// The table for traits S with GEMM tile MR rows x NV vectors of tokens. constexpr: a
// variant's table must be built without running any of its code, which this CPU may not
// support (a dynamic initialiser in the variant's file would run at program start).
template <class S, int MR, int NV>
constexpr kernel_table make_table(const char* name) {
  kernel_table k{};
  k.name = name;
  k.gemm_tile_tokens = NV * S::W;
  k.gemm_panel_rows = MR;
  k.gemm_k_align = gemm_kb;
  k.matvec = &matvec<S>;
  k.matvec_k = &matvec_k<S>;
  k.quantize_q8x = &quantize_q8x<S>;
  k.pack_x = &pack_x<S, NV * S::W>;
  k.gemm = &gemm<S, MR, NV>;
  k.get_row = &get_row<S>;
  k.rmsnorm = &rmsnorm<S>;
  k.layernorm = &layernorm<S>;
  k.silu_mul = &silu_mul<S>;
  k.gelu = &gelu<S>;
  k.softmax = &softmax<S>;
  k.add = &add<S>;
  k.dot = &dot<S>;
  k.axpy = &axpy<S>;
  return k;
}

}  // namespace kvarena::cpu::simd
