// avx512-reduce.h: horizontal sums of AVX-512 accumulators shared by the AVX-512 kernels
// (kv-attention-cpu-avx512.cpp and
// kv-page-bounds-avx512.cpp compiled with -mavx512f). x86-64 GCC/Clang only.
#pragma once
#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

namespace kvarena {

// [sum(a0), sum(a1), sum(a2), sum(a3)]: four horizontal sums sharing their shuffles.
__attribute__((target("avx512f"))) inline __m128 avx512_reduce4(__m512 a0, __m512 a1, __m512 a2, __m512 a3) {
  const __m512 s01 = _mm512_add_ps(_mm512_unpacklo_ps(a0, a1), _mm512_unpackhi_ps(a0, a1));
  const __m512 s23 = _mm512_add_ps(_mm512_unpacklo_ps(a2, a3), _mm512_unpackhi_ps(a2, a3));
  const __m512d d01 = _mm512_castps_pd(s01), d23 = _mm512_castps_pd(s23);
  // Each 128-bit lane now holds one partial sum of a0, a1, a2, a3 in that order.
  const __m512 s = _mm512_add_ps(_mm512_castpd_ps(_mm512_unpacklo_pd(d01, d23)),
                                 _mm512_castpd_ps(_mm512_unpackhi_pd(d01, d23)));
  const __m256 h = _mm256_add_ps(_mm512_castps512_ps256(s),
                                 _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(s), 1)));
  return _mm_add_ps(_mm256_castps256_ps128(h), _mm256_extractf128_ps(h, 1));
}

}  // namespace kvarena
#endif
