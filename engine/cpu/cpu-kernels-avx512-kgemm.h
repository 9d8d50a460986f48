// cpu-kernels-avx512-kgemm.h: the AVX-512 VNNI GEMM for K-quant weights (Q2_K..Q6_K) against
// Q8_K activations, for prefill (n_tok >= 16). Included only by cpu-kernels-avx512.cpp
// (compiled with its ISA flags; everything here has internal linkage).
//
// The arithmetic is the matrix-vector kernel's (cpu-kernels-kquant-scalar.h's common form),
// integer sums per super-block then one float step, so the results match llama.cpp's to
// float rounding as before:
//   isum = sum_g sc[g] * (sum_{e in g} q[e] xq[e])        (vpdpbusd, then vpmulld by sc[g];
//          Q4_K/Q5_K per group of 32, whose two halves share one scale)
//   isum2 = sum_g v[g] * bsum[g]                           (vpdpwssd on int16 pairs)
//   y += xd * d * (isum - isum2)                  (Q3_K, Q6_K: v = off * sc)
//   y += xd * d * isum - xd * dmin * isum2        (Q2_K, Q4_K, Q5_K: v = m)
// A zmm lane is one weight row. Each thread unpacks 16 of its rows at a time into a panel
// in its own scratch (no load-time repacking: the file's bytes stay as they are, get_row
// and the CUDA upload see them unchanged), then runs every group of 4 tokens over it.
// Panel, per super-block (kg_block_bytes = 5760 bytes, vs 16 x 144 in a Q4_K file):
//   q:  u8 (64, 16, 4): q[k/4][row][k%4] (unsigned quants, element k of the row)
//   sc: int32 (16, 16): sc[g][row]
//   v:  int32 (8, 16):  the int16 pair (v[2j], v[2j+1]) of row
//   d, f2: float (16,) each: d and (dmin or 0) per row
#pragma once
#include <immintrin.h>

#include <cstring>

#include "cpu-kernels-impl.h"
#include "cpu-kernels-kquant-scalar.h"

namespace kvarena::cpu {
namespace {

constexpr int kg_rows = 16;
constexpr int64_t kg_q_bytes = 64 * kg_rows * 4, kg_sc_bytes = 16 * kg_rows * 4, kg_v_bytes = 8 * kg_rows * 4;
constexpr int64_t kg_block_bytes = kg_q_bytes + kg_sc_bytes + kg_v_bytes + 2 * kg_rows * 4;

inline int64_t kg_panel_bytes(int64_t in) { return in / 256 * kg_block_bytes; }

// Rows o .. o+mr of w into the panel (rows past mr: all zero, so they add nothing).
template <class Quants>
void kg_pack_panel(const weights& w, int64_t o, int mr, uint8_t* panel, Quants quants) {
  const int64_t nb = w.in / 256;
  const size_t bb = kq_block_bytes(w.type);
  alignas(64) uint8_t tmp[kg_rows][256];  // (16, 256): each row's quants in element order
  alignas(64) int32_t sc[16][kg_rows], v[8][kg_rows];
  alignas(64) float d[kg_rows], f2[kg_rows];
  const __m512i idx = _mm512_mullo_epi32(_mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
                                         _mm512_set1_epi32(256));
  for (int64_t b = 0; b < nb; ++b) {
    uint8_t* pb = panel + b * kg_block_bytes;
    for (int r = 0; r < kg_rows; ++r) {
      if (r >= mr) {
        std::memset(tmp[r], 0, 256);
        for (int g = 0; g < 16; ++g) sc[g][r] = 0;
        for (int j = 0; j < 8; ++j) v[j][r] = 0;
        d[r] = f2[r] = 0.0f;
        continue;
      }
      const uint8_t* blk = w.data + size_t(o + r) * w.row_bytes + size_t(b) * bb;
      kq_scales s{};
      kq_decode_scales(w.type, blk, s);
      quants(w.type, blk, tmp[r]);
      int16_t v16[16];
      for (int g = 0; g < 16; ++g) {
        sc[g][r] = s.sc[g];
        v16[g] = int16_t(s.has_min ? int(s.m[g]) : s.off * int(s.sc[g]));
      }
      for (int j = 0; j < 8; ++j) {
        uint32_t pair;
        std::memcpy(&pair, v16 + 2 * j, 4);
        v[j][r] = int32_t(pair);
      }
      d[r] = _cvtsh_ss(s.d_bits);
      f2[r] = s.has_min ? _cvtsh_ss(s.dmin_bits) : 0.0f;
    }
    for (int k4 = 0; k4 < 64; ++k4)  // transpose: dword k4 of each row, one gather
      _mm512_storeu_si512(pb + k4 * kg_rows * 4, _mm512_i32gather_epi32(idx, &tmp[0][4 * k4], 1));
    std::memcpy(pb + kg_q_bytes, sc, sizeof(sc));
    std::memcpy(pb + kg_q_bytes + kg_sc_bytes, v, sizeof(v));
    std::memcpy(pb + kg_q_bytes + kg_sc_bytes + kg_v_bytes, d, sizeof(d));
    std::memcpy(pb + kg_q_bytes + kg_sc_bytes + kg_v_bytes + 64, f2, sizeof(f2));
  }
}

// acc += dpbusd / dpwssd (w, broadcast of the dword at p): the broadcast folded into the
// instruction (GCC would otherwise spend a vpbroadcastd and a register on each).
inline __m512i kg_dpbusd(__m512i acc, __m512i w, const void* p) {
  __asm__("vpdpbusd %2%{1to16%}, %1, %0" : "+v"(acc) : "v"(w), "m"(*static_cast<const int32_t*>(p)));
  return acc;
}
inline __m512i kg_dpwssd(__m512i acc, __m512i w, const void* p) {
  __asm__("vpdpwssd %2%{1to16%}, %1, %0" : "+v"(acc) : "v"(w), "m"(*static_cast<const int32_t*>(p)));
  return acc;
}

// y[t*ldy + r] for NT tokens x (Q8_K, nb blocks each, ldx blocks apart) and the 16 rows of
// the panel (r < mr stored).
template <int NT, bool HasOff, bool Scale32>
void kg_tile(const uint8_t* panel, const block_q8k* x, int64_t nb, int mr, float* y, int64_t ldy) {
  __m512 acc[NT];
  for (int t = 0; t < NT; ++t) acc[t] = _mm512_setzero_ps();
  for (int64_t b = 0; b < nb; ++b) {
    const uint8_t* pb = panel + b * kg_block_bytes;
    const block_q8k* xb[NT];
    for (int t = 0; t < NT; ++t) xb[t] = x + t * nb + b;
    __m512i isum[NT], isum2[NT];
    for (int t = 0; t < NT; ++t) isum[t] = isum2[t] = _mm512_setzero_si512();
    // Scale groups of GS elements (Q4_K, Q5_K: 32, their scales come in equal pairs; else
    // 16): GS/4 vpdpbusd per token, then one vpmulld by the group's scales.
    constexpr int GS = Scale32 ? 32 : 16;
#pragma GCC unroll 2
    for (int g = 0; g < 256 / GS; ++g) {
      const uint8_t* pq = pb + g * (GS / 4) * kg_rows * 4;
      __m512i wv[GS / 4];
      for (int i = 0; i < GS / 4; ++i) wv[i] = _mm512_loadu_si512(pq + 64 * i);
      const __m512i scg = _mm512_loadu_si512(pb + kg_q_bytes + g * (GS / 16) * kg_rows * 4);
      for (int t = 0; t < NT; ++t) {
        const int8_t* xq = xb[t]->q + GS * g;
        __m512i s = kg_dpbusd(_mm512_setzero_si512(), wv[0], xq);
        for (int i = 1; i < GS / 4; ++i) s = kg_dpbusd(s, wv[i], xq + 4 * i);
        isum[t] = _mm512_add_epi32(isum[t], _mm512_mullo_epi32(s, scg));
      }
    }
    const uint8_t* pv = pb + kg_q_bytes + kg_sc_bytes;
#pragma GCC unroll 8
    for (int j = 0; j < 8; ++j) {
      const __m512i vj = _mm512_loadu_si512(pv + j * kg_rows * 4);
      for (int t = 0; t < NT; ++t) isum2[t] = kg_dpwssd(isum2[t], vj, xb[t]->bsums + 2 * j);
    }
    const __m512 d = _mm512_loadu_ps(reinterpret_cast<const float*>(pv + kg_v_bytes));
    for (int t = 0; t < NT; ++t) {
      const __m512 xd = _mm512_set1_ps(xb[t]->d);
      if (HasOff) {
        acc[t] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(_mm512_sub_epi32(isum[t], isum2[t])), _mm512_mul_ps(d, xd), acc[t]);
      } else {
        const __m512 f2 = _mm512_loadu_ps(reinterpret_cast<const float*>(pv + kg_v_bytes + 64));
        acc[t] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(isum[t]), _mm512_mul_ps(d, xd), acc[t]);
        acc[t] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(isum2[t]), _mm512_mul_ps(f2, _mm512_sub_ps(_mm512_setzero_ps(), xd)), acc[t]);
      }
    }
  }
  const __mmask16 rows = __mmask16((1u << mr) - 1);
  for (int t = 0; t < NT; ++t) _mm512_mask_storeu_ps(y + t * ldy, rows, acc[t]);
}

template <bool HasOff, bool Scale32>
void kg_tiles(const uint8_t* panel, const block_q8k* xq, int64_t nb, int64_t n_tok, int mr, float* y,
              int64_t ldy) {
  int64_t t0 = 0;
  for (; t0 + 4 <= n_tok; t0 += 4) kg_tile<4, HasOff, Scale32>(panel, xq + t0 * nb, nb, mr, y + t0 * ldy, ldy);
  switch (n_tok - t0) {
    case 3: kg_tile<3, HasOff, Scale32>(panel, xq + t0 * nb, nb, mr, y + t0 * ldy, ldy); break;
    case 2: kg_tile<2, HasOff, Scale32>(panel, xq + t0 * nb, nb, mr, y + t0 * ldy, ldy); break;
    case 1: kg_tile<1, HasOff, Scale32>(panel, xq + t0 * nb, nb, mr, y + t0 * ldy, ldy); break;
    default: break;
  }
}

// y[t*ldy + r] for r in [r0, r1), every token of xq: (n_tok, in/256); panel: this thread's
// scratch of kg_panel_bytes(in) bytes.
template <class Quants>
void kg_gemm(const weights& w, const block_q8k* xq, int64_t n_tok, int64_t r0, int64_t r1, float* y,
             int64_t ldy, uint8_t* panel, Quants quants) {
  const int64_t nb = w.in / 256;
  const bool off = w.type == ggml_type::q3_k || w.type == ggml_type::q6_k;
  const bool s32 = w.type == ggml_type::q4_k || w.type == ggml_type::q5_k;
  for (int64_t o = r0; o < r1; o += kg_rows) {
    const int mr = int(r1 - o < kg_rows ? r1 - o : kg_rows);
    kg_pack_panel(w, o, mr, panel, quants);
    if (off)
      kg_tiles<true, false>(panel, xq, nb, n_tok, mr, y + o, ldy);
    else if (s32)
      kg_tiles<false, true>(panel, xq, nb, n_tok, mr, y + o, ldy);
    else
      kg_tiles<false, false>(panel, xq, nb, n_tok, mr, y + o, ldy);
  }
}

}  // namespace
}  // namespace kvarena::cpu
