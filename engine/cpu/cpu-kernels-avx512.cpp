// cpu-kernels-avx512.cpp: the AVX-512 kernel variant (F, BW, VL, DQ, VNNI; plus F16C, FMA).
// The algorithms are the shared templates in cpu-kernels-impl.h; this file supplies the
// 512-bit traits, plus integer (VNNI) GEMMs for Q8_0/Q4_0 weights (here) and for K-quant
// weights (cpu-kernels-avx512-kgemm.h). F32 GEMM tile: 12
// weight rows x 32 tokens = 24 zmm accumulators.
// Picked at run time by cpu-kernels.cpp only when the CPU reports all of the above.
#if defined(__x86_64__) && defined(__AVX512F__)
#define KVARENA_CPU_KERNELS_SIMD
#endif
#include "cpu-kernels-impl.h"

#ifdef KVARENA_CPU_KERNELS_SIMD
#include "cpu-kernels-simd-iq4.h"

// GCC 12's avx512fintrin.h initialises its "undefined" vectors from themselves, which
// -Wuninitialized reports at every reduce/extract; the code is fine.
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

#include "cpu-kernels-avx512-kgemm.h"

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
    const float id = amax != 0.0f ? q8x_max / amax : 0.0f;  // 127 / amax, as ggml x86's quantize_row_q8_0
    const __m512i qa = _mm512_cvtps_epi32(mul(a, set1(id)));  // round to nearest even
    const __m512i qc = _mm512_cvtps_epi32(mul(c, set1(id)));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(b->q), _mm512_cvtsepi32_epi8(qa));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(b->q + 16), _mm512_cvtsepi32_epi8(qc));
    // d is kept rounded to fp16, as ggml's block_q8_0 stores it (q uses the unrounded 127 / amax)
    const float dr = _cvtsh_ss(_cvtss_sh(d, _MM_FROUND_TO_NEAREST_INT));
    b->d = dr;
    b->s = dr * float(_mm512_reduce_add_epi32(_mm512_add_epi32(qa, qc)));
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
// The activations are rounded to Q8_0 as on every path and kept as signed bytes; vpdpbusd
// multiplies 4 unsigned bytes by 4 signed bytes into an int32 lane, so the weights are
// stored offset by +128 (unsigned): sum_k (w+128) x = w.x + 128 sum(x), and -128 sum(x) per
// token and block is precomputed with x. A zmm lane is one weight row (16 rows); each x
// dword (4 bytes of one token) is broadcast straight from memory by the instruction. Per
// block of 32 k and token: 8 vpdpbusd, one convert and one FMA by d_w * d_x.
//
// Packed x: (n_tok rounded up to 32, in/32) records of {-128 sum(q), d, q[32]}, zero past
// n_tok (n_tok*in*1.25 bytes: less than the F32 layout the buffer is sized for).
// Weight panel, 16 rows: per block, u8 (8, 16, 4) = w + 128 at [k/4][row][k%4], then d_w
// (16,) floats: 576 bytes a block.
struct xq_record {
  int32_t corr;
  float d;
  int8_t q[32];
};
constexpr int q_rows = 16, q_tokens = 16;
constexpr int64_t q_panel_block_bytes = 8 * q_rows * 4 + q_rows * 4;

void pack_x_q8(const float* x, int64_t n_tok, int64_t in, int64_t tok0, int64_t tok1, xq_record* xq) {
  const int64_t nb = in / 32;
  for (int64_t t = tok0; t < tok1; ++t)
    for (int64_t b = 0; b < nb; ++b) {
      xq_record& rec = xq[t * nb + b];
      if (t >= n_tok) {
        std::memset(&rec, 0, sizeof(rec));
        continue;
      }
      block_q8x q;
      s512::quantize_block(x + t * in + 32 * b, &q);
      int32_t sum = 0;
      for (int i = 0; i < 32; ++i) sum += q.q[i];
      rec.corr = -128 * sum;
      rec.d = q.d;
      std::memcpy(rec.q, q.q, 32);
    }
}

// Rows o .. o+mr of a Q8_0/Q4_0 matrix into the panel layout above (rows past mr: 0). Each
// group of 4 weights of the 16 rows is one gather across the rows (the transpose for free).
void pack_panel_q8(const weights& w, int64_t o, int mr, uint8_t* panel) {
  const int64_t nb = w.in / 32;
  const bool q4 = w.type == ggml_type::q4_0;
  const int64_t block_bytes = q4 ? int64_t(sizeof(block_q4_0)) : int64_t(sizeof(block_q8_0));
  const __m512i rows = _mm512_mullo_epi32(
      _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
      _mm512_set1_epi32(int32_t(w.row_bytes)));
  const __mmask16 valid = __mmask16((1u << mr) - 1);
  const __m512i zero = _mm512_setzero_si512(), nib = _mm512_set1_epi8(0x0F);
  const __m512i b8 = _mm512_set1_epi8(8), b128 = _mm512_set1_epi8(-128);
  const uint8_t* base = w.data + size_t(o) * w.row_bytes;
  for (int64_t b = 0; b < nb; ++b) {
    const uint8_t* blk = base + b * block_bytes;
    uint8_t* pb = panel + b * q_panel_block_bytes;
    __m512i g[8];
    if (q4) {
      for (int i = 0; i < 4; ++i) {
        const __m512i v = _mm512_mask_i32gather_epi32(zero, valid, rows, blk + 2 + 4 * i, 1);
        g[i] = _mm512_sub_epi8(_mm512_and_si512(v, nib), b8);
        g[i + 4] = _mm512_sub_epi8(_mm512_and_si512(_mm512_srli_epi32(v, 4), nib), b8);
      }
    } else {
      for (int i = 0; i < 8; ++i)
        g[i] = _mm512_mask_i32gather_epi32(zero, valid, rows, blk + 2 + 4 * i, 1);
    }
    for (int i = 0; i < 8; ++i)  // w + 128; padded rows stay 0 (their d_w is 0 anyway)
      _mm512_storeu_si512(pb + i * q_rows * 4, _mm512_maskz_mov_epi32(valid, _mm512_xor_si512(g[i], b128)));
    const __m512i d = _mm512_mask_i32gather_epi32(zero, valid, rows, blk, 1);
    _mm512_storeu_ps(pb + 8 * q_rows * 4, _mm512_cvtph_ps(_mm512_cvtepi32_epi16(d)));
  }
}

// acc += dpbusd(w, broadcast of the 4 bytes at p): GCC does not fold the broadcast into the
// instruction by itself, and a separate vpbroadcastd per dword costs both an op and a register.
inline __m512i dpbusd_bcast(__m512i acc, __m512i w, const int8_t* p) {
  __asm__("vpdpbusd %2%{1to16%}, %1, %0" : "+v"(acc) : "v"(w), "m"(*reinterpret_cast<const int32_t*>(p)));
  return acc;
}

// y[t*ldy + o + r] for 16 tokens from xq (t < nt stored) and the 16-row panel (r < mr).
void gemm_q8_tile(const uint8_t* panel, const xq_record* xq, int64_t nb, int nt, int mr,
                  float* y, int64_t ldy) {
  __m512 acc[q_tokens];
#pragma GCC unroll 16
  for (int t = 0; t < q_tokens; ++t) acc[t] = _mm512_setzero_ps();
  for (int64_t b = 0; b < nb; ++b) {
    const uint8_t* pb = panel + b * q_panel_block_bytes;
    __m512i wv[8];
    for (int g = 0; g < 8; ++g) wv[g] = _mm512_loadu_si512(pb + g * q_rows * 4);
    const __m512 dw = _mm512_loadu_ps(reinterpret_cast<const float*>(pb + 8 * q_rows * 4));
    // 4 tokens at a time: 4 independent vpdpbusd chains in flight (one token's 8 are serial).
#pragma GCC unroll 4
    for (int t0 = 0; t0 < q_tokens; t0 += 4) {
      __m512i ia[4];
#pragma GCC unroll 4
      for (int u = 0; u < 4; ++u) ia[u] = _mm512_set1_epi32(xq[(t0 + u) * nb + b].corr);
#pragma GCC unroll 8
      for (int g = 0; g < 8; ++g)
#pragma GCC unroll 4
        for (int u = 0; u < 4; ++u) ia[u] = dpbusd_bcast(ia[u], wv[g], xq[(t0 + u) * nb + b].q + 4 * g);
#pragma GCC unroll 4
      for (int u = 0; u < 4; ++u)
        acc[t0 + u] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(ia[u]),
                                      _mm512_mul_ps(dw, _mm512_set1_ps(xq[(t0 + u) * nb + b].d)), acc[t0 + u]);
    }
  }
  // Constant trip counts everywhere acc is indexed, so it stays in registers (a runtime
  // bound here would make GCC keep a copy of acc on the stack, stored every iteration).
  const __mmask16 rows = __mmask16((1u << mr) - 1);
#pragma GCC unroll 16
  for (int t = 0; t < q_tokens; ++t)
    if (t < nt) _mm512_mask_storeu_ps(y + t * ldy, rows, acc[t]);
}

void gemm_q8(const weights& w, const xq_record* xq, int64_t n_tok, int64_t r0, int64_t r1,
             float* y, int64_t ldy, uint8_t* panel) {
  const int64_t nb = w.in / 32;
  for (int64_t o = r0; o < r1; o += q_rows) {
    const int mr = int(r1 - o < q_rows ? r1 - o : q_rows);
    pack_panel_q8(w, o, mr, panel);
    for (int64_t t0 = 0; t0 < n_tok; t0 += q_tokens) {
      const int nt = int(n_tok - t0 < q_tokens ? n_tok - t0 : q_tokens);
      gemm_q8_tile(panel, xq + t0 * nb, nb, nt, mr, y + t0 * ldy + o, ldy);
    }
  }
}

// ---- K-quant GEMM (cpu-kernels-avx512-kgemm.h) ---------------------------------------------

void gemm_k(const weights& w, const block_q8k* xq, int64_t n_tok, int64_t r0, int64_t r1, float* y,
            int64_t ldy, uint8_t* panel) {
  kg_gemm(w, xq, n_tok, r0, r1, y, ldy, panel, [](ggml_type t, const uint8_t* blk, uint8_t* q) {
    __m256i qv[8];
    simd::kq_simd_quants<s512>(t, blk, qv);
    for (int i = 0; i < 8; ++i) _mm256_store_si256(reinterpret_cast<__m256i*>(q + 32 * i), qv[i]);
  });
}

// ---- the table ---------------------------------------------------------------------------

constexpr int gemm_rows = 12, gemm_vectors = 2;  // F32 tile: 12 rows x 32 tokens

void pack_x(const float* x, int64_t n_tok, int64_t in, bool round_q8, int64_t tile0,
            int64_t tile1, float* xt) {
  constexpr int tile = gemm_vectors * s512::W;
  static_assert(tile % q_tokens == 0);
  if (round_q8)
    pack_x_q8(x, n_tok, in, tile0 * tile, tile1 * tile, reinterpret_cast<xq_record*>(xt));
  else
    simd::pack_x<s512, gemm_vectors * s512::W>(x, n_tok, in, false, tile0, tile1, xt);
}

void gemm(const weights& w, const float* xt, int64_t n_tok, int64_t r0, int64_t r1, float* y,
          int64_t ldy, float* panel) {
  if (w.type == ggml_type::q8_0 || w.type == ggml_type::q4_0)
    gemm_q8(w, reinterpret_cast<const xq_record*>(xt), n_tok, r0, r1, y, ldy,
            reinterpret_cast<uint8_t*>(panel));
  else
    simd::gemm<s512, gemm_rows, gemm_vectors>(w, xt, n_tok, r0, r1, y, ldy, panel);
}

constexpr kernel_table make_table() {
  kernel_table k = simd::with_iq4<s512>(simd::make_table<s512, gemm_rows, gemm_vectors>("avx512"));
  k.pack_x = pack_x;
  k.gemm = gemm;
  k.gemm_k = gemm_k;
  k.gemm_k_rows = kg_rows;
  k.gemm_k_block_bytes = int(kg_block_bytes);
  return k;
}

constexpr kernel_table table = make_table();  // constant-initialised: no code runs

}  // namespace

const kernel_table* kernels_avx512() { return &table; }

}  // namespace kvarena::cpu

#else
const kvarena::cpu::kernel_table* kvarena::cpu::kernels_avx512() { return nullptr; }
#endif
