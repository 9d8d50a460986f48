// cpu-kernels-simd-kquant.h: the SIMD K-quant kernels (Q2_K..Q6_K weights against Q8_K
// activations), shared by the AVX2 and AVX-512 variants (256-bit integer code; templates
// on the variant's traits S, so each file keeps its own copy: see cpu-kernels-impl.h).
//
// Matrix-vector, for decode and prefill alike (cpu-kernels.cpp passes groups of up to 8
// tokens): per super-block of 256 weights, the quants are unpacked once into 8 registers
// of 32 unsigned bytes (element order) and the 16 group scales into int16 lanes
// (cpu-kernels-kquant-scalar.h has the common form); then for each token of the group:
// 8 x (maddubs q*x -> int16 pairs, madd by the group scales -> int32), the offset (Q3_K,
// Q6_K) and the mins (Q2_K, Q4_K, Q5_K) through Q8_K's per-16 sums, one convert and one FMA
// by d*xd. That is llama.cpp's scheme (integer sums, Q8_K activations), so the results
// agree with it to float rounding. maddubs cannot saturate: q <= 63, |xq| <= 127.
// get_row (embeddings, the CUDA upload) dequantises to F32 with the reference's values,
// bit for bit.
#pragma once
#include <immintrin.h>

#include "cpu-kernels-kquant-scalar.h"

namespace kvarena::cpu::simd {
// Software prefetch distance of the decode kernels, in bytes ahead of the weight block being
// read (each thread streams its rows in order). The hardware prefetcher alone left the 2-core
// VM's decode waiting on weight loads (perf: the samples sit on the instructions after them);
// prefetching 2-4 KB ahead measured +30% (Q8_0) to +60% (Q4_K) decode tok/s there, under load.
constexpr int64_t pf_q8_bytes = 2048, pf_kq_bytes = 4096;

// One decoded super-block.
struct kq_simd_block {
  __m256i q[8];    // unsigned quants, elements 32i .. 32i+31
  __m256i scv[8];  // int16: low 128 bits group 2i's scale, high 128 bits group 2i+1's
  __m256i scoff;   // int16 (16,) scale * off (Q3_K, Q6_K)
  __m256i m16;     // int16 (16,) mins (Q2_K, Q4_K, Q5_K)
  float d, dmin;
};

template <class S>
inline __m256i kq_bits(__m256i v, int shift, int mask) {  // (v >> shift) & mask, per byte
  return _mm256_and_si256(_mm256_srli_epi16(v, shift), _mm256_set1_epi8(char(mask)));
}

template <class S>
inline void kq_simd_quants(ggml_type t, const uint8_t* blk, __m256i* q) {
  auto ld = [](const uint8_t* p) { return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)); };
  switch (t) {
    case ggml_type::q2_k: {
      const auto* b = reinterpret_cast<const block_q2_k*>(blk);
      for (int h = 0; h < 2; ++h) {
        const __m256i v = ld(b->qs + 32 * h);
        for (int j = 0; j < 4; ++j) q[4 * h + j] = kq_bits<S>(v, 2 * j, 3);
      }
      return;
    }
    case ggml_type::q3_k: {
      const auto* b = reinterpret_cast<const block_q3_k*>(blk);
      const __m256i hm = ld(b->hmask);
      for (int h = 0; h < 2; ++h) {
        const __m256i v = ld(b->qs + 32 * h);
        for (int j = 0; j < 4; ++j)
          q[4 * h + j] = _mm256_or_si256(kq_bits<S>(v, 2 * j, 3),
                                         _mm256_slli_epi16(kq_bits<S>(hm, 4 * h + j, 1), 2));
      }
      return;
    }
    case ggml_type::q4_k: {
      const auto* b = reinterpret_cast<const block_q4_k*>(blk);
      for (int c = 0; c < 4; ++c) {
        const __m256i v = ld(b->qs + 32 * c);
        q[2 * c] = kq_bits<S>(v, 0, 15);
        q[2 * c + 1] = kq_bits<S>(v, 4, 15);
      }
      return;
    }
    case ggml_type::q5_k: {
      const auto* b = reinterpret_cast<const block_q5_k*>(blk);
      const __m256i hb = ld(b->qh);
      for (int c = 0; c < 4; ++c) {
        const __m256i v = ld(b->qs + 32 * c);
        q[2 * c] = _mm256_or_si256(kq_bits<S>(v, 0, 15), _mm256_slli_epi16(kq_bits<S>(hb, 2 * c, 1), 4));
        q[2 * c + 1] = _mm256_or_si256(kq_bits<S>(v, 4, 15), _mm256_slli_epi16(kq_bits<S>(hb, 2 * c + 1, 1), 4));
      }
      return;
    }
    case ggml_type::q6_k: {
      const auto* b = reinterpret_cast<const block_q6_k*>(blk);
      for (int h = 0; h < 2; ++h) {
        const __m256i l0 = ld(b->ql + 64 * h), l1 = ld(b->ql + 64 * h + 32), hv = ld(b->qh + 32 * h);
        for (int j = 0; j < 4; ++j) {
          const __m256i lo = kq_bits<S>(j & 1 ? l1 : l0, 4 * (j >> 1), 15);
          q[4 * h + j] = _mm256_or_si256(lo, _mm256_slli_epi16(kq_bits<S>(hv, 2 * j, 3), 4));
        }
      }
      return;
    }
    default:
      for (int i = 0; i < 8; ++i) q[i] = _mm256_setzero_si256();
      return;
  }
}

// Group scales (sc16: 16 int16, signed) and mins (m16: 16 int16) of a block, straight into
// registers (no byte arrays: scalar byte stores read back as a vector stall on
// store-forwarding, which cost more than the whole dot product).
template <class S, ggml_type T>
inline void kq_simd_scales(const uint8_t* blk, __m256i& sc16, __m256i& m16, float& d, float& dmin) {
  if constexpr (T == ggml_type::q4_k || T == ggml_type::q5_k) {
    const auto* b = reinterpret_cast<const block_q4_k*>(blk);
    const uint32_t a = kq_u32(b->scales), bb = kq_u32(b->scales + 4), c = kq_u32(b->scales + 8);
    const __m128i v = _mm_setr_epi32(int(a & 0x3f3f3f3fu), int((c & 0x0f0f0f0fu) | ((a >> 6) & 0x03030303u) << 4),
                                     int(bb & 0x3f3f3f3fu),
                                     int(((c >> 4) & 0x0f0f0f0fu) | ((bb >> 6) & 0x03030303u) << 4));
    sc16 = _mm256_cvtepu8_epi16(_mm_unpacklo_epi8(v, v));  // group g: scale g/2
    m16 = _mm256_cvtepu8_epi16(_mm_unpackhi_epi8(v, v));
    d = S::half(b->d);
    dmin = S::half(b->dmin);
  } else if constexpr (T == ggml_type::q2_k) {
    const auto* b = reinterpret_cast<const block_q2_k*>(blk);
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(b->scales));
    const __m128i lo4 = _mm_set1_epi8(0x0f);
    sc16 = _mm256_cvtepu8_epi16(_mm_and_si128(v, lo4));
    m16 = _mm256_cvtepu8_epi16(_mm_and_si128(_mm_srli_epi16(v, 4), lo4));
    d = S::half(b->d);
    dmin = S::half(b->dmin);
  } else if constexpr (T == ggml_type::q3_k) {
    const auto* b = reinterpret_cast<const block_q3_k*>(blk);
    const uint32_t a = kq_u32(b->scales), bb = kq_u32(b->scales + 4), c = kq_u32(b->scales + 8);
    const __m128i v = _mm_setr_epi32(int((a & 0x0f0f0f0fu) | (c & 0x03030303u) << 4),
                                     int((bb & 0x0f0f0f0fu) | ((c >> 2) & 0x03030303u) << 4),
                                     int(((a >> 4) & 0x0f0f0f0fu) | ((c >> 4) & 0x03030303u) << 4),
                                     int(((bb >> 4) & 0x0f0f0f0fu) | ((c >> 6) & 0x03030303u) << 4));
    sc16 = _mm256_cvtepi8_epi16(_mm_sub_epi8(v, _mm_set1_epi8(32)));
    m16 = _mm256_setzero_si256();
    d = S::half(b->d);
    dmin = 0.0f;
  } else {  // q6_k
    const auto* b = reinterpret_cast<const block_q6_k*>(blk);
    sc16 = _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(b->scales)));
    m16 = _mm256_setzero_si256();
    d = S::half(b->d);
    dmin = 0.0f;
  }
}

template <class S, ggml_type T>
inline void kq_simd_decode(const uint8_t* blk, kq_simd_block& o) {
  constexpr int off = T == ggml_type::q6_k ? 32 : T == ggml_type::q3_k ? 4 : 0;
  __m256i sc16;
  kq_simd_scales<S, T>(blk, sc16, o.m16, o.d, o.dmin);
  o.scoff = off ? _mm256_slli_epi16(sc16, off == 32 ? 5 : 2) : _mm256_setzero_si256();
  // scv[i]: groups 2i, 2i+1 (int16 lanes 2i and 2i+1 of sc16) broadcast over one 128-bit
  // half each: the half of sc16 holding them duplicated, then an in-lane byte shuffle.
  const __m256i lo = _mm256_permute2x128_si256(sc16, sc16, 0x00);
  const __m256i hi = _mm256_permute2x128_si256(sc16, sc16, 0x11);
#pragma GCC unroll 8
  for (int i = 0; i < 8; ++i) {
    const char a = char(4 * (i % 4)), c = char(4 * (i % 4) + 2);
    const __m256i sel = _mm256_setr_epi8(a, a + 1, a, a + 1, a, a + 1, a, a + 1, a, a + 1, a, a + 1, a, a + 1,
                                         a, a + 1, c, c + 1, c, c + 1, c, c + 1, c, c + 1, c, c + 1, c, c + 1,
                                         c, c + 1, c, c + 1);
    o.scv[i] = _mm256_shuffle_epi8(i < 4 ? lo : hi, sel);
  }
  kq_simd_quants<S>(T, blk, o.q);
}

// acc += (this block . x) over 8 float lanes.
template <class S, bool HasOff, bool HasMin>
inline __m256 kq_simd_dot(const kq_simd_block& b, const block_q8k& x, __m256 acc) {
  __m256i s = _mm256_setzero_si256();
#pragma GCC unroll 8
  for (int i = 0; i < 8; ++i) {
    const __m256i xv = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x.q + 32 * i));
    s = _mm256_add_epi32(s, _mm256_madd_epi16(_mm256_maddubs_epi16(b.q[i], xv), b.scv[i]));
  }
  const __m256i bs = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x.bsums));
  if (HasOff) s = _mm256_sub_epi32(s, _mm256_madd_epi16(bs, b.scoff));
  acc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(s), _mm256_set1_ps(b.d * x.d), acc);
  if (HasMin)
    acc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(_mm256_madd_epi16(bs, b.m16)), _mm256_set1_ps(-b.dmin * x.d), acc);
  return acc;
}

template <class S, ggml_type T, int NT>
inline void kq_mv_rows(const weights& w, const block_q8k* xq, int64_t r0, int64_t r1, float* y,
                       int64_t ldy) {
  constexpr bool off = T == ggml_type::q3_k || T == ggml_type::q6_k;
  constexpr bool mins = !off;
  const int64_t nb = w.in / 256;
  const size_t bb = kq_block_bytes(T);
  for (int64_t r = r0; r < r1; ++r) {
    const uint8_t* row = w.data + size_t(r) * w.row_bytes;
    __m256 acc[NT];
    for (int t = 0; t < NT; ++t) acc[t] = _mm256_setzero_ps();
    for (int64_t b = 0; b < nb; ++b) {
      for (size_t off = 0; off < bb; off += 64)  // every line of the block pf_kq_bytes ahead
        _mm_prefetch(reinterpret_cast<const char*>(row + size_t(b) * bb + off) + pf_kq_bytes, _MM_HINT_T0);
      kq_simd_block blk;
      kq_simd_decode<S, T>(row + size_t(b) * bb, blk);
      for (int t = 0; t < NT; ++t) acc[t] = kq_simd_dot<S, off, mins>(blk, xq[t * nb + b], acc[t]);
    }
    for (int t = 0; t < NT; ++t) y[t * ldy + r] = S::reduce8(acc[t]);
  }
}

template <class S, ggml_type T>
inline void kq_mv_type(const weights& w, const block_q8k* xq, int n_tok, int64_t r0, int64_t r1,
                       float* y, int64_t ldy) {
  switch (n_tok) {
    case 1: kq_mv_rows<S, T, 1>(w, xq, r0, r1, y, ldy); break;
    case 2: kq_mv_rows<S, T, 2>(w, xq, r0, r1, y, ldy); break;
    case 3: kq_mv_rows<S, T, 3>(w, xq, r0, r1, y, ldy); break;
    case 4: kq_mv_rows<S, T, 4>(w, xq, r0, r1, y, ldy); break;
    case 5: kq_mv_rows<S, T, 5>(w, xq, r0, r1, y, ldy); break;
    case 6: kq_mv_rows<S, T, 6>(w, xq, r0, r1, y, ldy); break;
    case 7: kq_mv_rows<S, T, 7>(w, xq, r0, r1, y, ldy); break;
    case 8: kq_mv_rows<S, T, 8>(w, xq, r0, r1, y, ldy); break;
    default: __builtin_trap();
  }
}

template <class S>
void matvec_k(const weights& w, const block_q8k* xq, int n_tok, int64_t r0, int64_t r1, float* y,
              int64_t ldy) {
  switch (w.type) {
    case ggml_type::q2_k: kq_mv_type<S, ggml_type::q2_k>(w, xq, n_tok, r0, r1, y, ldy); break;
    case ggml_type::q3_k: kq_mv_type<S, ggml_type::q3_k>(w, xq, n_tok, r0, r1, y, ldy); break;
    case ggml_type::q4_k: kq_mv_type<S, ggml_type::q4_k>(w, xq, n_tok, r0, r1, y, ldy); break;
    case ggml_type::q5_k: kq_mv_type<S, ggml_type::q5_k>(w, xq, n_tok, r0, r1, y, ldy); break;
    case ggml_type::q6_k: kq_mv_type<S, ggml_type::q6_k>(w, xq, n_tok, r0, r1, y, ldy); break;
    default: __builtin_trap();
  }
}

// out: (256,) = one K-quant block dequantised (the reference's values).
template <class S>
inline void kq_dequant_block(ggml_type t, const uint8_t* blk, float* out) {
  kq_scales s;
  kq_decode_scales(t, blk, s);
  alignas(32) uint8_t q[256];
  __m256i qv[8];
  kq_simd_quants<S>(t, blk, qv);
  for (int i = 0; i < 8; ++i) _mm256_store_si256(reinterpret_cast<__m256i*>(q + 32 * i), qv[i]);
  kq_dequant_decoded(s, S::half(s.d_bits), s.has_min ? S::half(s.dmin_bits) : 0.0f, q, out);
}

}  // namespace kvarena::cpu::simd
