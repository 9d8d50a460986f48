// cpu-kernels-simd-iq4.h: the SIMD IQ4_NL / IQ4_XS kernels, shared by the AVX2 and AVX-512
// variants (256-bit integer code, templates on the variant's traits S: each variant file
// includes this after cpu-kernels-impl.h and registers the kernels with with_iq4<S>, so
// each keeps its own copy compiled for its ISA).
//
// One matrix-vector kernel per type for decode and prefill alike (cpu-kernels.cpp passes
// groups of up to 8 tokens, as for the K-quants): each 32-element run of a weight block is
// decoded once for all the tokens of the group: its 16 bytes of nibbles are split into 32
// indices (low nibbles, then high) and looked up in the codebook with one in-lane byte
// shuffle (the 16 values sit in both 128-bit lanes). The values are signed (-127..113), so
// the integer dot product takes |v| as the unsigned operand and moves v's sign onto the
// activation (sign_epi8); no pair sum can saturate: 2 * 127 * 127 < 2^15.
//   IQ4_NL . Q8_0 (block_q8x): per block, S::dot_u8s8 -> 8 int32 lanes, one convert and one
//     FMA by d_w * d_x.
//   IQ4_XS . Q8_K (block_q8k): per sub-block of 32, maddubs (int16 pairs) then madd by the
//     sub-block's scale ls - 32 (int32), summed over the 8 sub-blocks; one convert and one
//     FMA by d_w * d_x per super-block.
// As llama.cpp's vec_dot_iq4_nl_q8_0 / vec_dot_iq4_xs_q8_K: the same integer sums, so the
// results agree with it to float rounding. get_row dequantises with the reference's values.
#pragma once
#include <immintrin.h>

#include "cpu-kernels-iq4-scalar.h"

// (The non-template helpers are static: internal linkage, so the AVX-512 file's copy can
// never stand in for the AVX2 file's.)
namespace kvarena::cpu::simd {

// The codebook in both 128-bit lanes.
static inline __m256i iq4_table256() {
  return _mm256_broadcastsi128_si256(_mm_load_si128(reinterpret_cast<const __m128i*>(iq4_kvalues)));
}

// The 32 signed codebook values of one run of 16 nibble bytes, in element order.
static inline __m256i iq4_values(const uint8_t* qs, __m256i table) {
  const __m128i raw = _mm_loadu_si128(reinterpret_cast<const __m128i*>(qs));
  const __m256i idx = _mm256_and_si256(_mm256_set_m128i(_mm_srli_epi16(raw, 4), raw), _mm256_set1_epi8(0x0f));
  return _mm256_shuffle_epi8(table, idx);
}

static inline __m256i iq4_load32(const int8_t* p) { return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)); }

template <class S, int NT>
inline void iq4nl_rows(const weights& w, const block_q8x* xq, int64_t r0, int64_t r1, float* y, int64_t ldy) {
  const int64_t nb = w.in / 32;
  const __m256i table = iq4_table256();
  for (int64_t r = r0; r < r1; ++r) {
    const auto* row = reinterpret_cast<const block_iq4_nl*>(w.data + size_t(r) * w.row_bytes);
    __m256 acc[NT];
    for (int t = 0; t < NT; ++t) acc[t] = _mm256_setzero_ps();
    for (int64_t b = 0; b < nb; ++b) {
      const __m256i v = iq4_values(row[b].qs, table);
      const __m256i av = _mm256_sign_epi8(v, v);
      const float dw = S::half(row[b].d);
      for (int t = 0; t < NT; ++t) {
        const block_q8x& x = xq[t * nb + b];
        const __m256i p = S::dot_u8s8(av, _mm256_sign_epi8(iq4_load32(x.q), v));
        acc[t] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(p), _mm256_set1_ps(dw * x.d), acc[t]);
      }
    }
    for (int t = 0; t < NT; ++t) y[t * ldy + r] = S::reduce8(acc[t]);
  }
}

template <class S, int NT>
inline void iq4xs_rows(const weights& w, const block_q8k* xq, int64_t r0, int64_t r1, float* y, int64_t ldy) {
  const int64_t nb = w.in / 256;
  const __m256i table = iq4_table256();
  for (int64_t r = r0; r < r1; ++r) {
    const auto* row = reinterpret_cast<const block_iq4_xs*>(w.data + size_t(r) * w.row_bytes);
    __m256 acc[NT];
    for (int t = 0; t < NT; ++t) acc[t] = _mm256_setzero_ps();
    for (int64_t b = 0; b < nb; ++b) {
      const block_iq4_xs& blk = row[b];
      __m256i s[NT];
      for (int t = 0; t < NT; ++t) s[t] = _mm256_setzero_si256();
#pragma GCC unroll 8
      for (int sb = 0; sb < 8; ++sb) {
        const __m256i v = iq4_values(blk.qs + 16 * sb, table);
        const __m256i av = _mm256_sign_epi8(v, v);
        const __m256i sc = _mm256_set1_epi16(int16_t(iq4xs_sub_scale(blk, sb)));
        for (int t = 0; t < NT; ++t) {
          const __m256i xv = _mm256_sign_epi8(iq4_load32(xq[t * nb + b].q + 32 * sb), v);
          s[t] = _mm256_add_epi32(s[t], _mm256_madd_epi16(_mm256_maddubs_epi16(av, xv), sc));
        }
      }
      const float dw = S::half(blk.d);
      for (int t = 0; t < NT; ++t)
        acc[t] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(s[t]), _mm256_set1_ps(dw * xq[t * nb + b].d), acc[t]);
    }
    for (int t = 0; t < NT; ++t) y[t * ldy + r] = S::reduce8(acc[t]);
  }
}

// Token count -> a kernel with the accumulators in registers.
template <class S>
void iq4nl_matvec(const weights& w, const block_q8x* xq, int n_tok, int64_t r0, int64_t r1, float* y,
                  int64_t ldy) {
  switch (n_tok) {
    case 1: iq4nl_rows<S, 1>(w, xq, r0, r1, y, ldy); break;
    case 2: iq4nl_rows<S, 2>(w, xq, r0, r1, y, ldy); break;
    case 3: iq4nl_rows<S, 3>(w, xq, r0, r1, y, ldy); break;
    case 4: iq4nl_rows<S, 4>(w, xq, r0, r1, y, ldy); break;
    case 5: iq4nl_rows<S, 5>(w, xq, r0, r1, y, ldy); break;
    case 6: iq4nl_rows<S, 6>(w, xq, r0, r1, y, ldy); break;
    case 7: iq4nl_rows<S, 7>(w, xq, r0, r1, y, ldy); break;
    case 8: iq4nl_rows<S, 8>(w, xq, r0, r1, y, ldy); break;
    default: __builtin_trap();
  }
}

template <class S>
void iq4xs_matvec(const weights& w, const block_q8k* xq, int n_tok, int64_t r0, int64_t r1, float* y,
                  int64_t ldy) {
  switch (n_tok) {
    case 1: iq4xs_rows<S, 1>(w, xq, r0, r1, y, ldy); break;
    case 2: iq4xs_rows<S, 2>(w, xq, r0, r1, y, ldy); break;
    case 3: iq4xs_rows<S, 3>(w, xq, r0, r1, y, ldy); break;
    case 4: iq4xs_rows<S, 4>(w, xq, r0, r1, y, ldy); break;
    case 5: iq4xs_rows<S, 5>(w, xq, r0, r1, y, ldy); break;
    case 6: iq4xs_rows<S, 6>(w, xq, r0, r1, y, ldy); break;
    case 7: iq4xs_rows<S, 7>(w, xq, r0, r1, y, ldy); break;
    case 8: iq4xs_rows<S, 8>(w, xq, r0, r1, y, ldy); break;
    default: __builtin_trap();
  }
}

// out: (32,) = the values v scaled by d (each product rounded to float, as the reference).
template <class S>
inline void iq4_store_scaled(__m256i v, float d, float* out) {
  const __m256 dv = _mm256_set1_ps(d);
  const __m128i lo = _mm256_castsi256_si128(v), hi = _mm256_extracti128_si256(v, 1);
  _mm256_storeu_ps(out, _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(lo)), dv));
  _mm256_storeu_ps(out + 8, _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_srli_si128(lo, 8))), dv));
  _mm256_storeu_ps(out + 16, _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(hi)), dv));
  _mm256_storeu_ps(out + 24, _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_srli_si128(hi, 8))), dv));
}

template <class S>
void iq4_get_row(const weights& w, int64_t r, float* dst) {
  const uint8_t* row = w.data + size_t(r) * w.row_bytes;
  const __m256i table = iq4_table256();
  if (w.type == ggml_type::iq4_nl) {
    const auto* b = reinterpret_cast<const block_iq4_nl*>(row);
    for (int64_t i = 0; i < w.in / 32; ++i) iq4_store_scaled<S>(iq4_values(b[i].qs, table), S::half(b[i].d), dst + 32 * i);
    return;
  }
  const auto* b = reinterpret_cast<const block_iq4_xs*>(row);
  for (int64_t i = 0; i < w.in / 256; ++i) {
    const float d = S::half(b[i].d);
    for (int sb = 0; sb < 8; ++sb)
      iq4_store_scaled<S>(iq4_values(b[i].qs + 16 * sb, table), d * float(iq4xs_sub_scale(b[i], sb)),
                          dst + 256 * i + 32 * sb);
  }
}

// k with the IQ4 kernels of variant S registered.
template <class S>
constexpr kernel_table with_iq4(kernel_table k) {
  k.matvec_iq4nl = &iq4nl_matvec<S>;
  k.matvec_iq4xs = &iq4xs_matvec<S>;
  k.get_row_iq4 = &iq4_get_row<S>;
  return k;
}

}  // namespace kvarena::cpu::simd
