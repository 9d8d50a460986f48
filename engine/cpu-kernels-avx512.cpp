// cpu-kernels-avx512.cpp: the AVX-512 kernel variant (F, BW, VL, DQ, VNNI; plus F16C, FMA).
// The algorithms are the shared templates in cpu-kernels-impl.h; this file supplies the
// 512-bit traits. GEMM tile: 12 weight rows x 32 tokens = 24 zmm accumulators.
// Picked at run time by cpu-kernels.cpp only when the CPU reports all of the above.
#if defined(__x86_64__) && defined(__AVX512F__)
#define KVARENA_CPU_KERNELS_SIMD
#endif
#include "cpu-kernels-impl.h"

#ifdef KVARENA_CPU_KERNELS_SIMD

// GCC 12's avx512fintrin.h initialises its "undefined" vectors from themselves, which
// -Wuninitialized reports at every reduce/extract; the code is fine.
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

namespace kvarena::cpu {
namespace {

struct s512 {
  using vf = __m512;
  static constexpr int W = 16;
  static vf zero() { return _mm512_setzero_ps(); }
  static vf set1(float a) { return _mm512_set1_ps(a); }
  static vf load(const float* p) { return _mm512_loadu_ps(p); }
  static void store(float* p, vf v) { _mm512_storeu_ps(p, v); }
  static vf load_f16(const uint16_t* p) {
    return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
  }
  static vf load_bf16(const uint16_t* p) {
    const __m512i u = _mm512_cvtepu16_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
    return _mm512_castsi512_ps(_mm512_slli_epi32(u, 16));
  }
  static vf fma(vf a, vf b, vf c) { return _mm512_fmadd_ps(a, b, c); }
  static vf add(vf a, vf b) { return _mm512_add_ps(a, b); }
  static vf sub(vf a, vf b) { return _mm512_sub_ps(a, b); }
  static vf mul(vf a, vf b) { return _mm512_mul_ps(a, b); }
  static vf div(vf a, vf b) { return _mm512_div_ps(a, b); }
  static vf max(vf a, vf b) { return _mm512_max_ps(a, b); }
  static vf abs(vf a) { return _mm512_abs_ps(a); }
  static float reduce_add(vf v) { return _mm512_reduce_add_ps(v); }
  static float reduce_max(vf v) { return _mm512_reduce_max_ps(v); }
  static float reduce8(__m256 v) {
    const __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    const __m128 h = _mm_add_ps(s, _mm_movehl_ps(s, s));
    return _mm_cvtss_f32(_mm_add_ss(h, _mm_movehdup_ps(h)));
  }
  // exp(x): x = n ln2 + r, |r| <= ln2/2; e^r by the Cephes expf polynomial, 2^n by scalef
  // (which also gives inf / 0 at the ends of the range).
  static vf exp(vf x) {
    x = _mm512_min_ps(_mm512_max_ps(x, set1(-104.0f)), set1(89.0f));
    const vf n = _mm512_roundscale_ps(mul(x, set1(1.44269504088896341f)),
                                      _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    vf r = fma(n, set1(-0.693359375f), x);
    r = fma(n, set1(2.12194440e-4f), r);
    vf p = set1(1.9875691500e-4f);
    p = fma(p, r, set1(1.3981999507e-3f));
    p = fma(p, r, set1(8.3334519073e-3f));
    p = fma(p, r, set1(4.1665795894e-2f));
    p = fma(p, r, set1(1.6666665459e-1f));
    p = fma(p, r, set1(5.0000001201e-1f));
    p = fma(p, mul(r, r), add(r, set1(1.0f)));
    return _mm512_scalef_ps(p, n);
  }
  static float half(uint16_t h) { return _cvtsh_ss(h); }
  static __m256i dot_u8s8(__m256i u, __m256i s) {
    return _mm256_dpbusd_epi32(_mm256_setzero_si256(), u, s);
  }
  static void quantize_block(const float* x, block_q8x* b) {
    const vf a = load(x), c = load(x + 16);
    const float amax = reduce_max(max(abs(a), abs(c)));
    const float d = amax / q8x_max;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    const __m512i qa = _mm512_cvtps_epi32(mul(a, set1(id)));  // round to nearest even
    const __m512i qc = _mm512_cvtps_epi32(mul(c, set1(id)));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(b->q), _mm512_cvtsepi32_epi8(qa));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(b->q + 16), _mm512_cvtsepi32_epi8(qc));
    b->d = d;
    b->s = d * float(_mm512_reduce_add_epi32(_mm512_add_epi32(qa, qc)));
  }
  static void dequant_q8_0(const block_q8_0* b, float* out) {
    const vf d = set1(half(b->d));
    for (int i = 0; i < 32; i += 16) {
      const __m512i q = _mm512_cvtepi8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(b->q + i)));
      store(out + i, mul(_mm512_cvtepi32_ps(q), d));
    }
  }
  static void dequant_q4_0(const block_q4_0* b, float* out) {
    const vf d = set1(half(b->d));
    const __m128i raw = _mm_loadu_si128(reinterpret_cast<const __m128i*>(b->q));
    const __m128i lo = _mm_and_si128(raw, _mm_set1_epi8(0x0F));
    const __m128i hi = _mm_and_si128(_mm_srli_epi16(raw, 4), _mm_set1_epi8(0x0F));
    const __m512i e8 = _mm512_set1_epi32(8);
    store(out, mul(_mm512_cvtepi32_ps(_mm512_sub_epi32(_mm512_cvtepu8_epi32(lo), e8)), d));
    store(out + 16, mul(_mm512_cvtepi32_ps(_mm512_sub_epi32(_mm512_cvtepu8_epi32(hi), e8)), d));
  }
};

const kernel_table table = simd::make_table<s512, 12, 2>("avx512");

}  // namespace

const kernel_table* kernels_avx512() { return &table; }

}  // namespace kvarena::cpu

#else
const kvarena::cpu::kernel_table* kvarena::cpu::kernels_avx512() { return nullptr; }
#endif
