// cpu-kernels-avx2.cpp: the AVX2 kernel variant (AVX2, FMA, F16C). The algorithms are the
// shared templates in cpu-kernels-impl.h; this file supplies the 256-bit traits. GEMM tile:
// 6 weight rows x 16 tokens = 12 ymm accumulators (of 16 registers).
// Picked at run time by cpu-kernels.cpp only when the CPU reports all of the above.
#if defined(__x86_64__) && defined(__AVX2__)
#define KVARENA_CPU_KERNELS_SIMD
#endif
#include "cpu-kernels-impl.h"

#ifdef KVARENA_CPU_KERNELS_SIMD
#include "cpu-kernels-simd-iq4.h"

namespace kvarena::cpu {
namespace {

struct s256 {
  using vf = __m256;
  static constexpr int W = 8;
  static vf zero() { return _mm256_setzero_ps(); }
  static vf set1(float a) { return _mm256_set1_ps(a); }
  static vf load(const float* p) { return _mm256_loadu_ps(p); }
  static void store(float* p, vf v) { _mm256_storeu_ps(p, v); }
  static vf load_f16(const uint16_t* p) {
    return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
  }
  static vf load_bf16(const uint16_t* p) {
    const __m256i u = _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
    return _mm256_castsi256_ps(_mm256_slli_epi32(u, 16));
  }
  static vf fma(vf a, vf b, vf c) { return _mm256_fmadd_ps(a, b, c); }
  static vf add(vf a, vf b) { return _mm256_add_ps(a, b); }
  static vf sub(vf a, vf b) { return _mm256_sub_ps(a, b); }
  static vf mul(vf a, vf b) { return _mm256_mul_ps(a, b); }
  static vf div(vf a, vf b) { return _mm256_div_ps(a, b); }
  static vf max(vf a, vf b) { return _mm256_max_ps(a, b); }
  static vf abs(vf a) { return _mm256_andnot_ps(_mm256_set1_ps(-0.0f), a); }
  static float reduce8(__m256 v) {
    const __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    const __m128 h = _mm_add_ps(s, _mm_movehl_ps(s, s));
    return _mm_cvtss_f32(_mm_add_ss(h, _mm_movehdup_ps(h)));
  }
  static float reduce_add(vf v) { return reduce8(v); }
  static float reduce_max(vf v) {
    __m128 m = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    m = _mm_max_ps(m, _mm_movehl_ps(m, m));
    return _mm_cvtss_f32(_mm_max_ss(m, _mm_movehdup_ps(m)));
  }
  // exp(x): as the AVX-512 variant, but 2^n is built in exponent bits, as 2^(n/2) * 2^(n-n/2)
  // so that denormal results come out right; below ln(denorm_min) 0, above ln(FLT_MAX) inf.
  static vf exp(vf x) {
    const vf lo = set1(-103.97f), hi = set1(88.72283905f);
    const vf under = _mm256_cmp_ps(x, lo, _CMP_LT_OQ);
    const vf over = _mm256_cmp_ps(x, hi, _CMP_GT_OQ);
    x = _mm256_min_ps(_mm256_max_ps(x, lo), hi);
    const vf n = _mm256_round_ps(mul(x, set1(1.44269504088896341f)),
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
    const __m256i ni = _mm256_cvtps_epi32(n);
    const __m256i n1 = _mm256_srai_epi32(ni, 1), n2 = _mm256_sub_epi32(ni, n1);
    const __m256i bias = _mm256_set1_epi32(127);
    const vf s1 = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(n1, bias), 23));
    const vf s2 = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(n2, bias), 23));
    const vf y = _mm256_andnot_ps(under, mul(mul(p, s1), s2));
    return _mm256_blendv_ps(y, set1(__builtin_inff()), over);
  }
  static float half(uint16_t h) { return _cvtsh_ss(h); }
  static __m256i dot_u8s8(__m256i u, __m256i s) {
    return _mm256_madd_epi16(_mm256_maddubs_epi16(u, s), _mm256_set1_epi16(1));
  }
  static void quantize_block(const float* x, block_q8x* b) {
    vf v[4];
    vf m = zero();
    for (int i = 0; i < 4; ++i) {
      v[i] = load(x + 8 * i);
      m = max(m, abs(v[i]));
    }
    const float amax = reduce_max(m);
    const float d = amax / q8x_max;
    const float id = amax != 0.0f ? q8x_max / amax : 0.0f;  // 127 / amax, as ggml x86's quantize_row_q8_0
    __m256i q[4];
    for (int i = 0; i < 4; ++i) q[i] = _mm256_cvtps_epi32(mul(v[i], set1(id)));  // nearest even
    const __m256i sum32 = _mm256_add_epi32(_mm256_add_epi32(q[0], q[1]), _mm256_add_epi32(q[2], q[3]));
    const __m256i p01 = _mm256_packs_epi32(q[0], q[1]);  // lanes interleave: fixed below
    const __m256i p23 = _mm256_packs_epi32(q[2], q[3]);
    const __m256i p = _mm256_permutevar8x32_epi32(_mm256_packs_epi16(p01, p23),
                                                  _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(b->q), p);
    // d is kept rounded to fp16, as ggml's block_q8_0 stores it (q uses the unrounded 127 / amax)
    const float dr = _cvtsh_ss(_cvtss_sh(d, _MM_FROUND_TO_NEAREST_INT));
    b->d = dr;
    b->s = dr * reduce8(_mm256_cvtepi32_ps(sum32));
  }
  static void dequant_q8_0(const block_q8_0* b, float* out) {
    const vf d = set1(half(b->d));
    for (int i = 0; i < 32; i += 8) {
      const __m256i q = _mm256_cvtepi8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(b->q + i)));
      store(out + i, mul(_mm256_cvtepi32_ps(q), d));
    }
  }
  static void dequant_q4_0(const block_q4_0* b, float* out) {
    const vf d = set1(half(b->d));
    const __m128i raw = _mm_loadu_si128(reinterpret_cast<const __m128i*>(b->q));
    const __m128i lo = _mm_sub_epi8(_mm_and_si128(raw, _mm_set1_epi8(0x0F)), _mm_set1_epi8(8));
    const __m128i hi = _mm_sub_epi8(_mm_and_si128(_mm_srli_epi16(raw, 4), _mm_set1_epi8(0x0F)), _mm_set1_epi8(8));
    store(out, mul(_mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(lo)), d));
    store(out + 8, mul(_mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_srli_si128(lo, 8))), d));
    store(out + 16, mul(_mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(hi)), d));
    store(out + 24, mul(_mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_srli_si128(hi, 8))), d));
  }
};

constexpr kernel_table table = simd::with_iq4<s256>(simd::make_table<s256, 6, 2>("avx2"));  // no code runs

}  // namespace

const kernel_table* kernels_avx2() { return &table; }

}  // namespace kvarena::cpu

#else
const kvarena::cpu::kernel_table* kvarena::cpu::kernels_avx2() { return nullptr; }
#endif
