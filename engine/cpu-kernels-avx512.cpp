// cpu-kernels-avx512.cpp: the AVX-512 kernel variant (F, BW, VL, DQ, VNNI; plus F16C, FMA).
// The algorithms are the shared templates in cpu-kernels-impl.h; this file supplies the
// 512-bit traits, plus an integer (VNNI) GEMM for Q8_0/Q4_0 weights. F32 GEMM tile: 12
// weight rows x 32 tokens = 24 zmm accumulators.
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

// ---- integer GEMM for Q8_0 / Q4_0 weights (VNNI) -----------------------------------------
// The activations are rounded to Q8_0 as on every path, then kept as bytes: vpdpbusd
// multiplies 4 unsigned bytes by 4 signed bytes and adds them into an int32 lane, so x is
// stored offset by +128 (unsigned) and the weights stay signed; sum_k (xq+128) w = xq.w +
// 128 sum(w), and -128 sum(w) per block and row is precomputed with the panel. One int32
// lane = one token, so a zmm covers 16 tokens, and each weight is broadcast 4 bytes at a
// time. Per block of 32 k: 8 vpdpbusd, then one convert and one FMA by d_w * d_x.
//
// Packed x, per 16-token subtile: u8 (nb, 8, 16, 4) = q + 128 at [block][k/4][token][k%4],
// then dx (nb, 16) floats; 0 (u8 128, d 0) for tokens past n_tok. The table's 32-token tile
// j holds subtiles 2j and 2j+1 (this takes ~36 bytes per k and token pair of tiles, less
// than the F32 layout the buffer is sized for).
// Weight panel, 16 rows: per block, i8 (8, 16, 4) at [k/4][row][k%4], then -128 sum(w)
// (16,) int32, then d_w (16,) floats: 640 bytes a block.
constexpr int q_tokens = 16;
constexpr int q_rows = 16;
constexpr int64_t q_panel_block_bytes = 8 * q_rows * 4 + q_rows * 4 + q_rows * 4;

int64_t q_subtile_bytes(int64_t nb) { return nb * (8 * q_tokens * 4 + q_tokens * 4); }

void pack_x_q8(const float* x, int64_t n_tok, int64_t in, int64_t tile0, int64_t tile1, uint8_t* xt) {
  const int64_t nb = in / 32, sub_bytes = q_subtile_bytes(nb);
  for (int64_t st = 2 * tile0; st < 2 * tile1; ++st) {
    uint8_t* xs = xt + st * sub_bytes;
    float* dx = reinterpret_cast<float*>(xs + nb * 8 * q_tokens * 4);
    for (int t = 0; t < q_tokens; ++t) {
      const int64_t tok = st * q_tokens + t;
      for (int64_t b = 0; b < nb; ++b) {
        block_q8x q;
        if (tok < n_tok) {
          s512::quantize_block(x + tok * in + 32 * b, &q);
        } else {
          std::memset(&q, 0, sizeof(q));
        }
        for (int g = 0; g < 8; ++g) {
          uint32_t v;
          std::memcpy(&v, q.q + 4 * g, 4);
          v ^= 0x80808080u;  // q + 128 in every byte
          std::memcpy(xs + ((b * 8 + g) * q_tokens + t) * 4, &v, 4);
        }
        dx[b * q_tokens + t] = q.d;
      }
    }
  }
}

// Rows o .. o+mr of a Q8_0/Q4_0 matrix into the panel layout above (rows past mr: 0).
void pack_panel_q8(const weights& w, int64_t o, int mr, uint8_t* panel) {
  const int64_t nb = w.in / 32;
  for (int r = 0; r < q_rows; ++r) {
    const uint8_t* row = r < mr ? w.data + size_t(o + r) * w.row_bytes : nullptr;
    for (int64_t b = 0; b < nb; ++b) {
      uint8_t* pb = panel + b * q_panel_block_bytes;
      alignas(32) int8_t q[32] = {};
      float d = 0.0f;
      if (r < mr && w.type == ggml_type::q8_0) {
        const block_q8_0* blk = reinterpret_cast<const block_q8_0*>(row) + b;
        std::memcpy(q, blk->q, 32);
        d = s512::half(blk->d);
      } else if (r < mr) {
        const block_q4_0* blk = reinterpret_cast<const block_q4_0*>(row) + b;
        for (int i = 0; i < 16; ++i) {
          q[i] = int8_t((blk->q[i] & 0x0F) - 8);
          q[i + 16] = int8_t((blk->q[i] >> 4) - 8);
        }
        d = s512::half(blk->d);
      }
      int32_t sum = 0;
      for (int i = 0; i < 32; ++i) sum += q[i];
      for (int g = 0; g < 8; ++g) std::memcpy(pb + (g * q_rows + r) * 4, q + 4 * g, 4);
      const int32_t corr = -128 * sum;
      std::memcpy(pb + 8 * q_rows * 4 + r * 4, &corr, 4);
      std::memcpy(pb + 8 * q_rows * 4 + q_rows * 4 + r * 4, &d, 4);
    }
  }
}

template <int NT>  // 16 rows x 16 tokens; out (16, 16)
void gemm_q8_tile(const uint8_t* panel, const uint8_t* xs, int64_t nb, float* out) {
  __m512 acc[q_rows];
  for (int r = 0; r < q_rows; ++r) acc[r] = _mm512_setzero_ps();
  const float* dxs = reinterpret_cast<const float*>(xs + nb * 8 * q_tokens * 4);
  for (int64_t b = 0; b < nb; ++b) {
    const uint8_t* pb = panel + b * q_panel_block_bytes;
    const int32_t* corr = reinterpret_cast<const int32_t*>(pb + 8 * q_rows * 4);
    const float* dw = reinterpret_cast<const float*>(pb + 8 * q_rows * 4 + q_rows * 4);
    __m512i xv[8];
    for (int g = 0; g < 8; ++g)
      xv[g] = _mm512_loadu_si512(xs + (b * 8 + g) * q_tokens * 4);
    const __m512 dx = _mm512_loadu_ps(dxs + b * q_tokens);
#pragma GCC unroll 16
    for (int r = 0; r < q_rows; ++r) {
      __m512i ia = _mm512_set1_epi32(corr[r]);
#pragma GCC unroll 8
      for (int g = 0; g < 8; ++g) {
        int32_t w4;
        std::memcpy(&w4, pb + (g * q_rows + r) * 4, 4);
        ia = _mm512_dpbusd_epi32(ia, xv[g], _mm512_set1_epi32(w4));
      }
      acc[r] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(ia), _mm512_mul_ps(dx, _mm512_set1_ps(dw[r])), acc[r]);
    }
  }
  for (int r = 0; r < q_rows; ++r) _mm512_storeu_ps(out + r * q_tokens, acc[r]);
}

void gemm_q8(const weights& w, const uint8_t* xt, int64_t n_tok, int64_t r0, int64_t r1, float* y,
             int64_t ldy, uint8_t* panel) {
  const int64_t nb = w.in / 32, sub_bytes = q_subtile_bytes(nb);
  const int64_t n_sub = (n_tok + q_tokens - 1) / q_tokens;
  alignas(64) float out[q_rows * q_tokens];
  for (int64_t o = r0; o < r1; o += q_rows) {
    const int mr = int(r1 - o < q_rows ? r1 - o : q_rows);
    pack_panel_q8(w, o, mr, panel);
    for (int64_t st = 0; st < n_sub; ++st) {
      gemm_q8_tile<q_tokens>(panel, xt + st * sub_bytes, nb, out);
      const int64_t t0 = st * q_tokens;
      const int nt = int(n_tok - t0 < q_tokens ? n_tok - t0 : q_tokens);
      for (int t = 0; t < nt; ++t) {
        float* yt = y + (t0 + t) * ldy + o;
        for (int r = 0; r < mr; ++r) yt[r] = out[r * q_tokens + t];
      }
    }
  }
}

// ---- the table ---------------------------------------------------------------------------

constexpr int gemm_rows = 12, gemm_vectors = 2;  // F32 tile: 12 rows x 32 tokens

void pack_x(const float* x, int64_t n_tok, int64_t in, bool round_q8, int64_t tile0,
            int64_t tile1, float* xt) {
  static_assert(2 * q_tokens == gemm_vectors * s512::W);
  if (round_q8)
    pack_x_q8(x, n_tok, in, tile0, tile1, reinterpret_cast<uint8_t*>(xt));
  else
    simd::pack_x<s512, gemm_vectors * s512::W>(x, n_tok, in, false, tile0, tile1, xt);
}

void gemm(const weights& w, const float* xt, int64_t n_tok, int64_t r0, int64_t r1, float* y,
          int64_t ldy, float* panel) {
  if (w.type == ggml_type::q8_0 || w.type == ggml_type::q4_0)
    gemm_q8(w, reinterpret_cast<const uint8_t*>(xt), n_tok, r0, r1, y, ldy,
            reinterpret_cast<uint8_t*>(panel));
  else
    simd::gemm<s512, gemm_rows, gemm_vectors>(w, xt, n_tok, r0, r1, y, ldy, panel);
}

kernel_table make_table() {
  kernel_table k = simd::make_table<s512, gemm_rows, gemm_vectors>("avx512");
  k.pack_x = pack_x;
  k.gemm = gemm;
  return k;
}

const kernel_table table = make_table();

}  // namespace

const kernel_table* kernels_avx512() { return &table; }

}  // namespace kvarena::cpu

#else
const kvarena::cpu::kernel_table* kvarena::cpu::kernels_avx512() { return nullptr; }
#endif
