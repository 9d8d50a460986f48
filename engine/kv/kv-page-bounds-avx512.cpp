// kv-page-bounds-avx512.cpp: the AVX-512 page bounds of kv-page-bounds.h (compiled for
// AVX-512 F + F16C + FMA; called only when cpu-kernels picks "avx512", head_dim % 16 == 0).
// Per page, 16 channels at a time: the digest's minima and maxima are widened with cvtph once
// for all G query heads; four pages share one horizontal reduction (avx512_reduce4).
#include <algorithm>
#include <cstdint>

#include "engine-error.h"

#if defined(__x86_64__) && defined(__AVX512F__)
#include <immintrin.h>

#include "avx512-reduce.h"

#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"

namespace kvarena::kv_page_bounds_avx512 {
namespace {

inline __m512 load_f16(const uint16_t* p) {
  return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
}

// acc[h] += max(q_h * mx, q_h * mn) over the hd channels of one page, for KB pages at once.
template <int KB>
inline void page_block(const float* q, int64_t G, const uint16_t* dig, int64_t hd, float scale, float* out,
                       int64_t ld) {
  for (int64_t h0 = 0; h0 < G; h0 += 4) {  // up to 4 query heads share each widened digest
    const int64_t nh = std::min<int64_t>(4, G - h0);
    __m512 acc[4][KB];
    for (int h = 0; h < 4; ++h)
      for (int j = 0; j < KB; ++j) acc[h][j] = _mm512_setzero_ps();
    for (int64_t c = 0; c < hd; c += 16) {
      __m512 mn[KB], mx[KB];
      for (int j = 0; j < KB; ++j) {
        mn[j] = load_f16(dig + j * 2 * hd + c);
        mx[j] = load_f16(dig + j * 2 * hd + hd + c);
      }
      for (int64_t h = 0; h < nh; ++h) {
        const __m512 qv = _mm512_loadu_ps(q + (h0 + h) * hd + c);
        for (int j = 0; j < KB; ++j)
          acc[h][j] = _mm512_add_ps(acc[h][j], _mm512_max_ps(_mm512_mul_ps(qv, mx[j]), _mm512_mul_ps(qv, mn[j])));
      }
    }
    for (int64_t h = 0; h < nh; ++h) {
      if constexpr (KB == 4) {
        _mm_storeu_ps(out + (h0 + h) * ld, _mm_mul_ps(_mm_set1_ps(scale),
                                                      avx512_reduce4(acc[h][0], acc[h][1], acc[h][2], acc[h][3])));
      } else {
        for (int j = 0; j < KB; ++j) out[(h0 + h) * ld + j] = scale * _mm512_reduce_add_ps(acc[h][j]);
      }
    }
  }
}

}  // namespace

void bounds(const float* q, int64_t G, const uint16_t* dig, int64_t n, int64_t hd, float scale, float* out,
            int64_t ld) {
  KV_ASSERT(hd % 16 == 0);
  int64_t j = 0;
  for (; j + 4 <= n; j += 4) page_block<4>(q, G, dig + j * 2 * hd, hd, scale, out + j, ld);
  for (; j < n; ++j) page_block<1>(q, G, dig + j * 2 * hd, hd, scale, out + j, ld);
}

bool built() { return true; }

}  // namespace kvarena::kv_page_bounds_avx512

#else  // not an x86-64 AVX-512 build: never picked

namespace kvarena::kv_page_bounds_avx512 {
bool built() { return false; }
void bounds(const float*, int64_t, const uint16_t*, int64_t, int64_t, float, float*, int64_t) {
  KV_ASSERT(false && "kv-page-bounds-avx512.cpp was built without AVX-512");
}
}  // namespace kvarena::kv_page_bounds_avx512

#endif
