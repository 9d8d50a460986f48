// kv-attention-cpu-avx2.cpp: kv_attend's chunk kernels (contracts in kv-attention-cpu.cpp's
// chunk_kernels) for AVX2 + F16C, called when cpu-kernels picks its "avx2" variant. The
// algorithm is kv-attention-generic.h's, 8 lanes at a time and without FMA (a multiply and
// an add, each rounded, as the portable loops do), so both give exactly the same floats:
// keys transposed into a (head_dim, 32) tile, each row's 32 scores summed over d in four
// 8-key accumulators; values (FP16 converted by vcvtph2ps, INT8 times its block's scale, F32
// in place) added to 4 rows x 16 columns of outputs held in registers across the chunk.
#include "kv-attention-cpu.h"

#include "engine-error.h"

#if defined(__x86_64__) && defined(__AVX2__) && defined(__F16C__)
#include <immintrin.h>

#include "kv-attention-generic.h"

namespace kvarena::kv_attention_avx2 {
namespace {

constexpr int64_t k_keys = k_generic_chunk;  // 32

// 8 channels [c, c + 8) of value row t of the span as F32 (exact conversions).
inline __m256 value8(const kv_span& sp, int64_t t, int64_t hd, int64_t c) {
  if (sp.v32) return _mm256_loadu_ps(sp.v32 + t * hd + c);
  if (sp.vq) {
    const __m128i b = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(sp.vq + t * hd + c));
    return _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(b)),
                         _mm256_loadu_ps(sp.v_scale + int64_t(sp.block[t]) * hd + c));
  }
  return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(sp.v16 + t * hd + c)));
}

template <int RB>
void pv_block(const kv_span& sp, int64_t a, int64_t n, int64_t hd, const float* P, int64_t ld_p, float* o,
              int64_t c0) {
  __m256 acc[RB][2];
  for (int r = 0; r < RB; ++r) {
    acc[r][0] = _mm256_loadu_ps(o + r * hd + c0);
    acc[r][1] = _mm256_loadu_ps(o + r * hd + c0 + 8);
  }
  for (int64_t j = 0; j < n; ++j) {
    const __m256 v0 = value8(sp, a + j, hd, c0), v1 = value8(sp, a + j, hd, c0 + 8);
    for (int r = 0; r < RB; ++r) {
      const __m256 p = _mm256_set1_ps(P[r * ld_p + j]);
      acc[r][0] = _mm256_add_ps(acc[r][0], _mm256_mul_ps(p, v0));
      acc[r][1] = _mm256_add_ps(acc[r][1], _mm256_mul_ps(p, v1));
    }
  }
  for (int r = 0; r < RB; ++r) {
    _mm256_storeu_ps(o + r * hd + c0, acc[r][0]);
    _mm256_storeu_ps(o + r * hd + c0 + 8, acc[r][1]);
  }
}

}  // namespace

bool built() { return true; }

void qk(const kv_span& sp, int64_t a, int64_t n, int64_t hd, const float* q, int64_t n_rows, float* S,
        int64_t ld_s, float* tile) {
  keys_transposed(sp, a, n, hd, tile);  // (hd, 32)
  for (int64_t r = 0; r < n_rows; ++r) {
    __m256 acc[4] = {_mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps()};
    for (int64_t d = 0; d < hd; ++d) {
      const __m256 x = _mm256_set1_ps(q[r * hd + d]);
      const float* kt = tile + d * k_keys;
      for (int i = 0; i < 4; ++i) acc[i] = _mm256_add_ps(acc[i], _mm256_mul_ps(x, _mm256_loadu_ps(kt + 8 * i)));
    }
    alignas(32) float s[k_keys];
    for (int i = 0; i < 4; ++i) _mm256_store_ps(s + 8 * i, acc[i]);
    std::memcpy(S + r * ld_s, s, size_t(n) * sizeof(float));
  }
}

void pv(const kv_span& sp, int64_t a, int64_t n, int64_t hd, const float* P, int64_t ld_p,
        int64_t n_rows, float* o, float* tile) {
  if (hd % 16 != 0) return pv_generic(sp, a, n, hd, P, ld_p, n_rows, o, tile);
  int64_t r = 0;
  for (; r + 4 <= n_rows; r += 4)
    for (int64_t c0 = 0; c0 < hd; c0 += 16) pv_block<4>(sp, a, n, hd, P + r * ld_p, ld_p, o + r * hd, c0);
  for (; r < n_rows; ++r)
    for (int64_t c0 = 0; c0 < hd; c0 += 16) pv_block<1>(sp, a, n, hd, P + r * ld_p, ld_p, o + r * hd, c0);
}

}  // namespace kvarena::kv_attention_avx2

#else  // not an x86-64 AVX2 build: never picked

namespace kvarena::kv_attention_avx2 {
bool built() { return false; }
void qk(const kv_span&, int64_t, int64_t, int64_t, const float*, int64_t, float*, int64_t, float*) {
  KV_ASSERT(false && "kv-attention-cpu-avx2.cpp was built without AVX2");
}
void pv(const kv_span&, int64_t, int64_t, int64_t, const float*, int64_t, int64_t, float*, float*) {
  KV_ASSERT(false && "kv-attention-cpu-avx2.cpp was built without AVX2");
}
}  // namespace kvarena::kv_attention_avx2

#endif
