// kv-attention-generic.h: the portable chunk kernels of kv_attend (contracts in
// kv-attention-cpu.cpp's chunk_kernels): keys transposed into a tile so that scores are
// summed across 32 keys at once, values dequantised row by row, outputs accumulated in
// blocks of 4 rows x 16 columns. Plain loops the compiler vectorises: included by
// kv-attention-cpu.cpp (baseline x86-64) and kv-attention-cpu-avx2.cpp (built for AVX2, no
// FMA contraction, so both give the same floats). Everything has internal linkage (an
// unnamed namespace): each file gets its own copy, compiled for its own ISA.
#pragma once
#include <algorithm>
#include <cstdint>
#include <cstring>

#include "ggml-types.h"
#include "kv-attention-cpu.h"

#if defined(__F16C__)
#include <immintrin.h>
#endif

namespace kvarena {
namespace {

constexpr int64_t k_generic_chunk = 32;  // keys per chunk at most (kv-attention-cpu.cpp's k_chunk)

inline float half_to_float(uint16_t h) {
#if defined(__F16C__)
  return _cvtsh_ss(h);  // exact, as fp16_to_fp32
#else
  return fp16_to_fp32(h);
#endif
}

// dst: (n, hd) = keys (or values) [a, a + n) of sp as F32.
inline void dequant_rows(const kv_span& sp, bool value, int64_t a, int64_t n, int64_t hd, float* dst) {
  if (sp.kq) {
    const int8_t* x = (value ? sp.vq : sp.kq) + a * hd;
    const float* scale = value ? sp.v_scale : sp.k_scale;
    for (int64_t j = 0; j < n; ++j) {
      const float* s = scale + int64_t(sp.block[a + j]) * hd;
      for (int64_t c = 0; c < hd; ++c) dst[j * hd + c] = float(x[j * hd + c]) * s[c];
    }
  } else if (sp.k32) {
    std::memcpy(dst, (value ? sp.v32 : sp.k32) + a * hd, size_t(n * hd) * sizeof(float));
  } else {
    const uint16_t* h = (value ? sp.v16 : sp.k16) + a * hd;
    for (int64_t i = 0; i < n * hd; ++i) dst[i] = half_to_float(h[i]);
  }
}

// tile: (hd, k_generic_chunk) = keys [a, a + n) of sp as F32, transposed (column j is key a + j),
// zeros past n.
inline void keys_transposed(const kv_span& sp, int64_t a, int64_t n, int64_t hd, float* tile) {
  for (int64_t j = n; j < k_generic_chunk; ++j)
    for (int64_t d = 0; d < hd; ++d) tile[d * k_generic_chunk + j] = 0.0f;
  for (int64_t j = 0; j < n; ++j) {
    const int64_t t = a + j;
    if (sp.kq) {
      const float* scale = sp.k_scale + int64_t(sp.block[t]) * hd;
      for (int64_t d = 0; d < hd; ++d) tile[d * k_generic_chunk + j] = float(sp.kq[t * hd + d]) * scale[d];
    } else if (sp.k32) {
      for (int64_t d = 0; d < hd; ++d) tile[d * k_generic_chunk + j] = sp.k32[t * hd + d];
    } else {
      for (int64_t d = 0; d < hd; ++d) tile[d * k_generic_chunk + j] = half_to_float(sp.k16[t * hd + d]);
    }
  }
}

// Scores through the transposed tile: per row, the sums over d run across the chunk's keys
// at once (loops the compiler vectorises; a dot product per key would not).
inline void qk_generic(const kv_span& sp, int64_t a, int64_t n, int64_t hd, const float* q, int64_t n_rows,
                float* S, int64_t ld_s, float* tile) {
  keys_transposed(sp, a, n, hd, tile);
  for (int64_t r = 0; r < n_rows; ++r) {
    float acc[k_generic_chunk] = {};
    for (int64_t d = 0; d < hd; ++d) {
      const float x = q[r * hd + d];
      const float* kt = tile + d * k_generic_chunk;
      for (int64_t j = 0; j < k_generic_chunk; ++j) acc[j] += x * kt[j];
    }
    std::memcpy(S + r * ld_s, acc, size_t(n) * sizeof(float));
  }
}

// o[r, c0 + c] += sum_j P[r, j] * v[j, c0 + c] for RB rows and 16 columns: the rows' outputs
// held in a local block across the chunk (each value row loaded once for all RB rows), added
// to in the same order as one row at a time.
template <int RB>
inline void pv_block_generic(const float* vt, int64_t n, int64_t hd, const float* P, int64_t ld_p, float* o, int64_t c0) {
  float acc[RB][16];
  for (int r = 0; r < RB; ++r)
    for (int c = 0; c < 16; ++c) acc[r][c] = o[r * hd + c0 + c];
  for (int64_t j = 0; j < n; ++j) {
    const float* vr = vt + j * hd + c0;
    for (int r = 0; r < RB; ++r) {
      const float p = P[r * ld_p + j];
      for (int c = 0; c < 16; ++c) acc[r][c] += p * vr[c];
    }
  }
  for (int r = 0; r < RB; ++r)
    for (int c = 0; c < 16; ++c) o[r * hd + c0 + c] = acc[r][c];
}

inline void pv_generic(const kv_span& sp, int64_t a, int64_t n, int64_t hd, const float* P, int64_t ld_p,
                int64_t n_rows, float* o, float* tile) {
  const float* vt = sp.v32 ? sp.v32 + a * hd : tile;  // F32 values are read in place
  if (!sp.v32) dequant_rows(sp, true, a, n, hd, tile);
  const int64_t c16 = hd / 16 * 16;  // columns in blocks of 16, the rest one by one
  int64_t r = 0;
  for (; r + 4 <= n_rows; r += 4)
    for (int64_t c0 = 0; c0 < c16; c0 += 16) pv_block_generic<4>(vt, n, hd, P + r * ld_p, ld_p, o + r * hd, c0);
  for (; r < n_rows; ++r)
    for (int64_t c0 = 0; c0 < c16; c0 += 16) pv_block_generic<1>(vt, n, hd, P + r * ld_p, ld_p, o + r * hd, c0);
  if (c16 == hd) return;
  for (r = 0; r < n_rows; ++r)
    for (int64_t j = 0; j < n; ++j) {
      const float p = P[r * ld_p + j];
      for (int64_t c = c16; c < hd; ++c) o[r * hd + c] += p * vt[j * hd + c];
    }
}

}  // namespace
}  // namespace kvarena
