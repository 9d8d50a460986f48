// cpu-kernels-simd-matmul.h: the shared SIMD matrix kernels (cpu-kernels-impl.h says how a
// variant instantiates them with its traits S): weight rows of every type, the small-batch
// matrix-vector tiles (decode) and the GEMM (prefill). Included only by cpu-kernels-impl.h
// in the AVX2 and AVX-512 variant files.
#pragma once
#include <immintrin.h>

namespace kvarena::cpu::simd {

// GEMM tiles are 16 values of k deep: the weight panel is stored (in/16, panel_rows, 16) so
// the micro-kernel reaches every row's k-th weight at a constant offset from one pointer.
constexpr int gemm_kb = 16;

static inline int64_t round_up(int64_t n, int64_t m) { return (n + m - 1) / m * m; }

// Loading weights of a float-like type from a row: W elements at k, or one.
template <class S, ggml_type T> struct wrow;
template <class S> struct wrow<S, ggml_type::f32> {
  static typename S::vf vec(const uint8_t* row, int64_t k) {
    return S::load(reinterpret_cast<const float*>(row) + k);
  }
  static float one(const uint8_t* row, int64_t k) {
    float v;
    std::memcpy(&v, row + 4 * k, 4);
    return v;
  }
};
template <class S> struct wrow<S, ggml_type::f16> {
  static typename S::vf vec(const uint8_t* row, int64_t k) {
    return S::load_f16(reinterpret_cast<const uint16_t*>(row) + k);
  }
  static float one(const uint8_t* row, int64_t k) {
    uint16_t h;
    std::memcpy(&h, row + 2 * k, 2);
    return S::half(h);
  }
};
template <class S> struct wrow<S, ggml_type::bf16> {
  static typename S::vf vec(const uint8_t* row, int64_t k) {
    return S::load_bf16(reinterpret_cast<const uint16_t*>(row) + k);
  }
  static float one(const uint8_t* row, int64_t k) {
    uint16_t h;
    std::memcpy(&h, row + 2 * k, 2);
    const uint32_t u = uint32_t(h) << 16;  // not ggml-types.h's inline: see the file comment
    float f;
    std::memcpy(&f, &u, 4);
    return f;
  }
};

// ---- small batch: R weight rows x NT tokens, K vectorised, reduced at the end ----------
// Decode reads every weight once from DRAM, and the hardware prefetcher only keeps up with
// long sequential streams: R interleaved rows are R short streams (a 768-wide F16 row is 24
// cache lines), which measured ~40% of the bandwidth of one stream. So one token reads its
// rows one after another (R = 1: rows are contiguous, the whole slice is one stream) with
// U independent accumulators along K; 2-4 tokens use R = 4 rows so each x vector loaded is
// used 4 times.

// y[t*ldy + o + r] for r < R, t < NT, from rows o.. of float-like weights.
template <class S, ggml_type T, int R, int NT>
inline void mv_float_tile(const weights& w, const float* x, int64_t ldx, int64_t o, float* y,
                          int64_t ldy) {
  using vf = typename S::vf;
  constexpr int W = S::W;
  constexpr int U = NT == 1 ? 4 : 1;  // one token: 4 FMA chains along K hide the latency
  const int64_t K = w.in;
  const uint8_t* row[R];
  for (int r = 0; r < R; ++r) row[r] = w.data + size_t(o + r) * w.row_bytes;
  vf acc[R][NT][U];
  for (int r = 0; r < R; ++r)
    for (int t = 0; t < NT; ++t)
      for (int u = 0; u < U; ++u) acc[r][t][u] = S::zero();
  int64_t k = 0;
  for (; k + U * W <= K; k += U * W) {
#pragma GCC unroll 4
    for (int u = 0; u < U; ++u) {
      vf xv[NT];
      for (int t = 0; t < NT; ++t) xv[t] = S::load(x + t * ldx + k + u * W);
      for (int r = 0; r < R; ++r) {
        const vf wv = wrow<S, T>::vec(row[r], k + u * W);
        for (int t = 0; t < NT; ++t) acc[r][t][u] = S::fma(wv, xv[t], acc[r][t][u]);
      }
    }
  }
  for (; k + W <= K; k += W) {
    for (int r = 0; r < R; ++r) {
      const vf wv = wrow<S, T>::vec(row[r], k);
      for (int t = 0; t < NT; ++t) acc[r][t][0] = S::fma(wv, S::load(x + t * ldx + k), acc[r][t][0]);
    }
  }
  for (int r = 0; r < R; ++r)
    for (int t = 0; t < NT; ++t) {
      vf a = acc[r][t][0];
      for (int u = 1; u < U; ++u) a = S::add(a, acc[r][t][u]);
      float s = S::reduce_add(a);
      for (int64_t kk = k; kk < K; ++kk) s += wrow<S, T>::one(row[r], kk) * x[t * ldx + kk];
      y[t * ldy + o + r] = s;
    }
}

// Q8_0 weights against Q8_0 activations: per block, an integer dot product (|w| as the
// unsigned operand, x carrying w's sign), scaled by d_w * d_x into 8 float lanes.
template <class S, int R, int NT>
inline void mv_q8_0_tile(const weights& w, const block_q8x* xq, int64_t o, float* y,
                         int64_t ldy) {
  constexpr int U = NT == 1 ? 2 : 1;  // blocks alternate between U accumulators
  const int64_t nb = w.in / 32;
  const block_q8_0* row[R];
  for (int r = 0; r < R; ++r)
    row[r] = reinterpret_cast<const block_q8_0*>(w.data + size_t(o + r) * w.row_bytes);
  __m256 acc[R][NT][U];
  for (int r = 0; r < R; ++r)
    for (int t = 0; t < NT; ++t)
      for (int u = 0; u < U; ++u) acc[r][t][u] = _mm256_setzero_ps();
  auto block = [&](int64_t b, int u) {
    for (int r = 0; r < R; ++r)  // blocks are 34 bytes: one prefetch each covers every line
      _mm_prefetch(reinterpret_cast<const char*>(row[r] + b) + pf_q8_bytes, _MM_HINT_T0);
    __m256i xv[NT];
    for (int t = 0; t < NT; ++t)
      xv[t] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(xq[t * nb + b].q));
    for (int r = 0; r < R; ++r) {
      const __m256i wv = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(row[r][b].q));
      const __m256i wabs = _mm256_sign_epi8(wv, wv);
      const float dw = S::half(row[r][b].d);
      for (int t = 0; t < NT; ++t) {
        const __m256i p = S::dot_u8s8(wabs, _mm256_sign_epi8(xv[t], wv));
        acc[r][t][u] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(p), _mm256_set1_ps(dw * xq[t * nb + b].d),
                                       acc[r][t][u]);
      }
    }
  };
  int64_t b = 0;
  for (; b + U <= nb; b += U)
#pragma GCC unroll 2
    for (int u = 0; u < U; ++u) block(b + u, u);
  for (; b < nb; ++b) block(b, 0);
  for (int r = 0; r < R; ++r)
    for (int t = 0; t < NT; ++t) {
      __m256 a = acc[r][t][0];
      for (int u = 1; u < U; ++u) a = _mm256_add_ps(a, acc[r][t][u]);
      y[t * ldy + o + r] = S::reduce8(a);
    }
}

// Q4_0 weights against Q8_0 activations: the nibbles (0..15) are the unsigned operand as
// they are; the "-8" is applied once per block through x's precomputed d*sum(q).
template <class S, int R, int NT>
inline void mv_q4_0_tile(const weights& w, const block_q8x* xq, int64_t o, float* y,
                         int64_t ldy) {
  constexpr int U = NT == 1 ? 2 : 1;  // blocks alternate between U accumulators
  const int64_t nb = w.in / 32;
  const block_q4_0* row[R];
  for (int r = 0; r < R; ++r)
    row[r] = reinterpret_cast<const block_q4_0*>(w.data + size_t(o + r) * w.row_bytes);
  const __m256i lo4 = _mm256_set1_epi8(0x0F);
  __m256 acc[R][NT][U];
  float corr[R][NT];
  for (int r = 0; r < R; ++r)
    for (int t = 0; t < NT; ++t) {
      for (int u = 0; u < U; ++u) acc[r][t][u] = _mm256_setzero_ps();
      corr[r][t] = 0.0f;
    }
  auto block = [&](int64_t b, int u) {
    __m256i xv[NT];
    for (int t = 0; t < NT; ++t)
      xv[t] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(xq[t * nb + b].q));
    for (int r = 0; r < R; ++r) {
      _mm_prefetch(reinterpret_cast<const char*>(row[r] + b) + pf_q8_bytes, _MM_HINT_T0);
      const __m128i raw = _mm_loadu_si128(reinterpret_cast<const __m128i*>(row[r][b].q));
      const __m256i q = _mm256_and_si256(_mm256_set_m128i(_mm_srli_epi16(raw, 4), raw), lo4);
      const float dw = S::half(row[r][b].d);
      for (int t = 0; t < NT; ++t) {
        const __m256i p = S::dot_u8s8(q, xv[t]);
        acc[r][t][u] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(p), _mm256_set1_ps(dw * xq[t * nb + b].d),
                                       acc[r][t][u]);
        corr[r][t] += dw * xq[t * nb + b].s;
      }
    }
  };
  int64_t b = 0;
  for (; b + U <= nb; b += U)
#pragma GCC unroll 2
    for (int u = 0; u < U; ++u) block(b + u, u);
  for (; b < nb; ++b) block(b, 0);
  for (int r = 0; r < R; ++r)
    for (int t = 0; t < NT; ++t) {
      __m256 a = acc[r][t][0];
      for (int u = 1; u < U; ++u) a = _mm256_add_ps(a, acc[r][t][u]);
      y[t * ldy + o + r] = S::reduce8(a) - 8.0f * corr[r][t];
    }
}

template <class S, int NT>
inline void mv_rows(const weights& w, const float* x, int64_t ldx, const block_q8x* xq,
                    int64_t r0, int64_t r1, float* y, int64_t ldy) {
  constexpr int R = NT == 1 ? 1 : 4;  // see above
  int64_t o = r0;
  switch (w.type) {
    case ggml_type::f32:
      for (; o + R <= r1; o += R) mv_float_tile<S, ggml_type::f32, R, NT>(w, x, ldx, o, y, ldy);
      for (; o < r1; ++o) mv_float_tile<S, ggml_type::f32, 1, NT>(w, x, ldx, o, y, ldy);
      break;
    case ggml_type::f16:
      for (; o + R <= r1; o += R) mv_float_tile<S, ggml_type::f16, R, NT>(w, x, ldx, o, y, ldy);
      for (; o < r1; ++o) mv_float_tile<S, ggml_type::f16, 1, NT>(w, x, ldx, o, y, ldy);
      break;
    case ggml_type::bf16:
      for (; o + R <= r1; o += R) mv_float_tile<S, ggml_type::bf16, R, NT>(w, x, ldx, o, y, ldy);
      for (; o < r1; ++o) mv_float_tile<S, ggml_type::bf16, 1, NT>(w, x, ldx, o, y, ldy);
      break;
    case ggml_type::q8_0:
      for (; o + R <= r1; o += R) mv_q8_0_tile<S, R, NT>(w, xq, o, y, ldy);
      for (; o < r1; ++o) mv_q8_0_tile<S, 1, NT>(w, xq, o, y, ldy);
      break;
    case ggml_type::q4_0:
      for (; o + R <= r1; o += R) mv_q4_0_tile<S, R, NT>(w, xq, o, y, ldy);
      for (; o < r1; ++o) mv_q4_0_tile<S, 1, NT>(w, xq, o, y, ldy);
      break;
    default: __builtin_trap();  // K-quants: matvec_k
  }
}

template <class S>
void matvec(const weights& w, const float* x, int64_t ldx, const block_q8x* xq, int n_tok,
            int64_t r0, int64_t r1, float* y, int64_t ldy) {
  switch (n_tok) {
    case 1: mv_rows<S, 1>(w, x, ldx, xq, r0, r1, y, ldy); break;
    case 2: mv_rows<S, 2>(w, x, ldx, xq, r0, r1, y, ldy); break;
    case 3: mv_rows<S, 3>(w, x, ldx, xq, r0, r1, y, ldy); break;
    case 4: mv_rows<S, 4>(w, x, ldx, xq, r0, r1, y, ldy); break;
    default: __builtin_trap();
  }
}

template <class S>
void quantize_q8x(const float* x, block_q8x* xq, int64_t n) {
  for (int64_t b = 0; b < n / 32; ++b) S::quantize_block(x + 32 * b, xq + b);
}

// ---- GEMM --------------------------------------------------------------------------------
// x is packed by tiles of TW = NV*W tokens: xt (n_tiles, Kp, TW), Kp = in rounded up to 16,
// zero past n_tok and past in. A thread converts MR weight rows at a time into its panel
// (Kp/16, MR, 16) of floats, then for each token tile runs the MR x TW register tile over
// all of K: MR*NV accumulators live in registers for the whole K loop, W values are
// broadcast from the panel, x vectors loaded from the tile.

template <class S, int MR, int NV, int TW>
inline void gemm_tile(const float* panel, const float* xt, int64_t Kp, float* out /*(MR, TW)*/) {
  using vf = typename S::vf;
  constexpr int W = S::W;
  vf acc[MR][NV];
#pragma GCC unroll 32
  for (int r = 0; r < MR; ++r)
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) acc[r][v] = S::zero();
  for (int64_t kb = 0; kb < Kp; kb += gemm_kb) {
    const float* wp = panel + kb * MR;  // (MR, 16) block
    const float* xp = xt + kb * TW;     // (16, TW) block
#pragma GCC unroll 16
    for (int kk = 0; kk < gemm_kb; ++kk) {
      vf xv[NV];
#pragma GCC unroll 4
      for (int v = 0; v < NV; ++v) xv[v] = S::load(xp + kk * TW + v * W);
#pragma GCC unroll 32
      for (int r = 0; r < MR; ++r) {
        const vf b = S::set1(wp[r * gemm_kb + kk]);
#pragma GCC unroll 4
        for (int v = 0; v < NV; ++v) acc[r][v] = S::fma(b, xv[v], acc[r][v]);
      }
    }
  }
#pragma GCC unroll 32
  for (int r = 0; r < MR; ++r)
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) S::store(out + r * TW + v * W, acc[r][v]);
}

// Rows o .. o+mr of w into panel (Kp/16, MR, 16) floats; rows mr..MR and k past in are 0.
template <class S, int MR>
inline void gemm_pack_panel(const weights& w, int64_t o, int mr, int64_t Kp, float* panel) {
  constexpr int W = S::W;
  const int64_t K = w.in;
  for (int r = 0; r < MR; ++r) {
    float* dst = panel + r * gemm_kb;  // + kb * MR for k-block kb/16
    if (r >= mr) {
      for (int64_t kb = 0; kb < Kp; kb += gemm_kb)
        for (int i = 0; i < gemm_kb; i += W) S::store(dst + kb * MR + i, S::zero());
      continue;
    }
    const uint8_t* row = w.data + size_t(o + r) * w.row_bytes;
    alignas(64) float tmp[32];
    switch (w.type) {
      case ggml_type::q8_0:
      case ggml_type::q4_0:
        for (int64_t b = 0; b < K / 32; ++b) {
          if (w.type == ggml_type::q8_0)
            S::dequant_q8_0(reinterpret_cast<const block_q8_0*>(row) + b, tmp);
          else
            S::dequant_q4_0(reinterpret_cast<const block_q4_0*>(row) + b, tmp);
          for (int i = 0; i < 32; i += W)
            S::store(dst + (32 * b + (i & ~15)) * MR + (i & 15), S::load(tmp + i));
        }
        break;
      default: {
        int64_t k = 0;
        for (; k + gemm_kb <= K; k += gemm_kb)
          for (int i = 0; i < gemm_kb; i += W) {
            typename S::vf v;
            if (w.type == ggml_type::f16)
              v = wrow<S, ggml_type::f16>::vec(row, k + i);
            else if (w.type == ggml_type::bf16)
              v = wrow<S, ggml_type::bf16>::vec(row, k + i);
            else
              v = wrow<S, ggml_type::f32>::vec(row, k + i);
            S::store(dst + k * MR + i, v);
          }
        if (k < Kp) {
          for (int i = 0; i < gemm_kb; ++i) {
            float v = 0.0f;
            if (k + i < K) {
              if (w.type == ggml_type::f16)
                v = wrow<S, ggml_type::f16>::one(row, k + i);
              else if (w.type == ggml_type::bf16)
                v = wrow<S, ggml_type::bf16>::one(row, k + i);
              else
                v = wrow<S, ggml_type::f32>::one(row, k + i);
            }
            dst[k * MR + i] = v;
          }
        }
      }
    }
  }
}

template <class S, int MR, int NV>
void gemm(const weights& w, const float* xt, int64_t n_tok, int64_t r0, int64_t r1, float* y,
          int64_t ldy, float* panel) {
  constexpr int W = S::W;
  constexpr int TW = NV * W;
  const int64_t Kp = round_up(w.in, gemm_kb);
  const int64_t n_tiles = (n_tok + TW - 1) / TW;
  alignas(64) float out[MR * TW];
  for (int64_t o = r0; o < r1; o += MR) {
    const int mr = int(r1 - o < MR ? r1 - o : MR);
    gemm_pack_panel<S, MR>(w, o, mr, Kp, panel);
    for (int64_t j = 0; j < n_tiles; ++j) {
      const int64_t t0 = j * TW;
      const int nt = int(n_tok - t0 < TW ? n_tok - t0 : TW);
      const float* xtile = xt + j * Kp * TW;
      if (nt <= W)
        gemm_tile<S, MR, 1, TW>(panel, xtile, Kp, out);
      else
        gemm_tile<S, MR, NV, TW>(panel, xtile, Kp, out);
      for (int t = 0; t < nt; ++t) {
        float* yt = y + (t0 + t) * ldy + o;
        for (int r = 0; r < mr; ++r) yt[r] = out[r * TW + t];
      }
    }
  }
}

template <class S, int TW>
void pack_x(const float* x, int64_t n_tok, int64_t in, bool round_q8, int64_t tile0,
            int64_t tile1, float* xt) {
  const int64_t Kp = round_up(in, gemm_kb);
  alignas(64) float tmp[32];
  for (int64_t j = tile0; j < tile1; ++j) {
    float* tile = xt + j * Kp * TW;
    for (int t = 0; t < TW; ++t) {
      const int64_t tok = j * TW + t;
      if (tok >= n_tok) {
        for (int64_t k = 0; k < Kp; ++k) tile[k * TW + t] = 0.0f;
        continue;
      }
      const float* xr = x + tok * in;
      if (round_q8) {  // in is a multiple of 32 for quantised weights
        for (int64_t b = 0; b < in / 32; ++b) {
          block_q8x q;
          S::quantize_block(xr + 32 * b, &q);
          for (int i = 0; i < 32; ++i) tmp[i] = q.d * float(q.q[i]);
          for (int i = 0; i < 32; ++i) tile[(32 * b + i) * TW + t] = tmp[i];
        }
      } else {
        for (int64_t k = 0; k < in; ++k) tile[k * TW + t] = xr[k];
      }
      for (int64_t k = in; k < Kp; ++k) tile[k * TW + t] = 0.0f;
    }
  }
}

template <class S>
void get_row(const weights& w, int64_t r, float* dst) {
  constexpr int W = S::W;
  const uint8_t* row = w.data + size_t(r) * w.row_bytes;
  const int64_t K = w.in;
  switch (w.type) {
    case ggml_type::q8_0:
      for (int64_t b = 0; b < K / 32; ++b)
        S::dequant_q8_0(reinterpret_cast<const block_q8_0*>(row) + b, dst + 32 * b);
      return;
    case ggml_type::q4_0:
      for (int64_t b = 0; b < K / 32; ++b)
        S::dequant_q4_0(reinterpret_cast<const block_q4_0*>(row) + b, dst + 32 * b);
      return;
    case ggml_type::f32: std::memcpy(dst, row, size_t(K) * 4); return;
    case ggml_type::f16: {
      int64_t k = 0;
      for (; k + W <= K; k += W) S::store(dst + k, wrow<S, ggml_type::f16>::vec(row, k));
      for (; k < K; ++k) dst[k] = wrow<S, ggml_type::f16>::one(row, k);
      return;
    }
    case ggml_type::bf16: {
      int64_t k = 0;
      for (; k + W <= K; k += W) S::store(dst + k, wrow<S, ggml_type::bf16>::vec(row, k));
      for (; k < K; ++k) dst[k] = wrow<S, ggml_type::bf16>::one(row, k);
      return;
    }
    case ggml_type::q2_k:
    case ggml_type::q3_k:
    case ggml_type::q4_k:
    case ggml_type::q5_k:
    case ggml_type::q6_k: {
      const size_t bb = kq_block_bytes(w.type);
      for (int64_t b = 0; b < K / 256; ++b) kq_dequant_block<S>(w.type, row + size_t(b) * bb, dst + 256 * b);
      return;
    }
    default: return;  // IQ4_NL, IQ4_XS: get_row_iq4 (cpu-kernels-simd-iq4.h)
  }
}

}  // namespace kvarena::cpu::simd
