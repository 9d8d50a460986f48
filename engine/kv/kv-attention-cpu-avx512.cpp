// kv-attention-cpu-avx512.cpp: the AVX-512 chunk kernels of kv-attention-cpu.cpp (which
// documents the algorithm), compiled for AVX-512 F/BW/VL/DQ + F16C + FMA and called only when
// cpu-kernels picks its "avx512" variant, for head_dim % 16 == 0. FP16 rows are read with
// cvtph, INT8 rows with cvtepi8 times the block's per-channel scale; at most 4 rows read the
// span directly (each element converted once), more rows share a chunk dequantised once into
// an F32 tile. F32 rows (an F32 store) are read directly, or, for scores of many rows,
// through a transposed key tile (qk_transposed).
#include "kv-attention-cpu.h"

#include <algorithm>

#include "engine-error.h"

#if defined(__x86_64__) && defined(__AVX512F__)
#include <immintrin.h>

#include "avx512-reduce.h"

// GCC 12 flags the undefined pass-through operands inside avx512fintrin.h as uninitialised.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"

namespace kvarena::kv_attention_avx512 {
namespace {

constexpr int64_t k_direct_max_rows = 4;  // up to this many rows read spans directly

// Sources of 16 channels [d, d + 16) of row t, as F32.
struct src_f32 {
  const float* p;  // (n, hd)
  int64_t hd;
  __m512 load(int64_t t, int64_t d) const { return _mm512_loadu_ps(p + t * hd + d); }
};
struct src_f16 {
  const uint16_t* p;  // (n, hd)
  int64_t hd;
  __m512 load(int64_t t, int64_t d) const {
    return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + t * hd + d)));
  }
};
struct src_i8 {
  const int8_t* q;       // (n, hd)
  const int32_t* block;  // (n,)
  const float* scale;    // (n_blocks, hd)
  int64_t hd;
  __m512 load(int64_t t, int64_t d) const {
    const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(q + t * hd + d));
    return _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(b)),
                         _mm512_loadu_ps(scale + int64_t(block[t]) * hd + d));
  }
};

// S[r * ld_s + t + j] = q[r] . k(t + j) for r < RB rows, j < KB keys: RB * KB independent
// FMA chains, each key vector converted once for all RB rows.
template <class Src, int RB, int KB>
inline void qk_block(const Src& k, int64_t t, const float* q, int64_t hd, float* S,
                                   int64_t ld_s) {
  __m512 acc[RB][KB];
  for (int r = 0; r < RB; ++r)
    for (int j = 0; j < KB; ++j) acc[r][j] = _mm512_setzero_ps();
  for (int64_t d = 0; d < hd; d += 16) {
    __m512 kv[KB];
    for (int j = 0; j < KB; ++j) kv[j] = k.load(t + j, d);
    for (int r = 0; r < RB; ++r) {
      const __m512 qv = _mm512_loadu_ps(q + r * hd + d);
      for (int j = 0; j < KB; ++j) acc[r][j] = _mm512_fmadd_ps(qv, kv[j], acc[r][j]);
    }
  }
  for (int r = 0; r < RB; ++r) {
    if constexpr (KB == 4) {
      _mm_storeu_ps(S + r * ld_s + t, avx512_reduce4(acc[r][0], acc[r][1], acc[r][2], acc[r][3]));
    } else {
      S[r * ld_s + t] = _mm512_reduce_add_ps(acc[r][0]);
    }
  }
}

template <class Src, int RB>
void qk_rows_rb(const Src& k, int64_t n, const float* q, int64_t hd, float* S,
                              int64_t ld_s) {
  int64_t t = 0;
  for (; t + 4 <= n; t += 4) qk_block<Src, RB, 4>(k, t, q, hd, S, ld_s);
  for (; t < n; ++t) qk_block<Src, RB, 1>(k, t, q, hd, S, ld_s);
}

template <class Src>
void qk_rows(const Src& k, int64_t n, const float* q, int64_t n_rows, int64_t hd,
                           float* S, int64_t ld_s) {
  for (int64_t r = 0; r < n_rows; r += 4) {
    const float* qr = q + r * hd;
    float* sr = S + r * ld_s;
    switch (std::min<int64_t>(4, n_rows - r)) {
      case 1: qk_rows_rb<Src, 1>(k, n, qr, hd, sr, ld_s); break;
      case 2: qk_rows_rb<Src, 2>(k, n, qr, hd, sr, ld_s); break;
      case 3: qk_rows_rb<Src, 3>(k, n, qr, hd, sr, ld_s); break;
      default: qk_rows_rb<Src, 4>(k, n, qr, hd, sr, ld_s); break;
    }
  }
}

// o[r * hd + c0 + 16 s + :] += sum_{j < n} P[r * ld_p + j] * v(j)[c0 + 16 s + :] for r < RB,
// s < NS: RB * NS accumulators, each value vector converted once for all RB rows.
template <class Src, int RB, int NS>
inline void pv_block(const Src& v, int64_t n, const float* P, int64_t ld_p,
                                   int64_t c0, int64_t hd, float* o) {
  __m512 acc[RB][NS];
  for (int r = 0; r < RB; ++r)
    for (int s = 0; s < NS; ++s) acc[r][s] = _mm512_setzero_ps();
  for (int64_t j = 0; j < n; ++j) {
    __m512 vv[NS];
    for (int s = 0; s < NS; ++s) vv[s] = v.load(j, c0 + 16 * s);
    for (int r = 0; r < RB; ++r) {
      const __m512 p = _mm512_set1_ps(P[r * ld_p + j]);
      for (int s = 0; s < NS; ++s) acc[r][s] = _mm512_fmadd_ps(p, vv[s], acc[r][s]);
    }
  }
  for (int r = 0; r < RB; ++r)
    for (int s = 0; s < NS; ++s) {
      float* dst = o + r * hd + c0 + 16 * s;
      _mm512_storeu_ps(dst, _mm512_add_ps(_mm512_loadu_ps(dst), acc[r][s]));
    }
}

template <class Src, int RB>
void pv_rows_rb(const Src& v, int64_t n, const float* P, int64_t ld_p, int64_t hd,
                              float* o) {
  int64_t c0 = 0;
  for (; c0 + 64 <= hd; c0 += 64) pv_block<Src, RB, 4>(v, n, P, ld_p, c0, hd, o);
  switch ((hd - c0) / 16) {
    case 3: pv_block<Src, RB, 3>(v, n, P, ld_p, c0, hd, o); break;
    case 2: pv_block<Src, RB, 2>(v, n, P, ld_p, c0, hd, o); break;
    case 1: pv_block<Src, RB, 1>(v, n, P, ld_p, c0, hd, o); break;
    default: break;
  }
}

template <class Src>
void pv_rows(const Src& v, int64_t n, const float* P, int64_t ld_p, int64_t n_rows,
                           int64_t hd, float* o) {
  for (int64_t r = 0; r < n_rows; r += 4) {
    const float* pr = P + r * ld_p;
    float* orow = o + r * hd;
    switch (std::min<int64_t>(4, n_rows - r)) {
      case 1: pv_rows_rb<Src, 1>(v, n, pr, ld_p, hd, orow); break;
      case 2: pv_rows_rb<Src, 2>(v, n, pr, ld_p, hd, orow); break;
      case 3: pv_rows_rb<Src, 3>(v, n, pr, ld_p, hd, orow); break;
      default: pv_rows_rb<Src, 4>(v, n, pr, ld_p, hd, orow); break;
    }
  }
}

// F32 keys and many rows (prefill over the plain cache): the chunk's n <= 32 keys transposed
// once into tile (hd, 32) (zeros past n), then per row two 16-key accumulators over d, a
// broadcast query scalar each: every FMA serves 16 keys and no horizontal sum is needed.
constexpr int64_t k_transposed_min_rows = 8;
constexpr int64_t k_tile_keys = 32;

void qk_transposed(const float* k, int64_t n, const float* q, int64_t n_rows, int64_t hd, float* S,
                   int64_t ld_s, float* tile) {
  for (int64_t d = 0; d < hd; ++d) {
    float* row = tile + d * k_tile_keys;
    for (int64_t j = 0; j < n; ++j) row[j] = k[j * hd + d];
    for (int64_t j = n; j < k_tile_keys; ++j) row[j] = 0.0f;
  }
  const __mmask16 m0 = n >= 16 ? __mmask16(0xFFFF) : __mmask16((1u << n) - 1);
  const __mmask16 m1 = n <= 16 ? __mmask16(0) : n >= 32 ? __mmask16(0xFFFF) : __mmask16((1u << (n - 16)) - 1);
  int64_t r = 0;
  for (; r + 4 <= n_rows; r += 4) {
    __m512 acc[4][2];
    for (int i = 0; i < 4; ++i) acc[i][0] = acc[i][1] = _mm512_setzero_ps();
    for (int64_t d = 0; d < hd; ++d) {
      const __m512 b0 = _mm512_loadu_ps(tile + d * k_tile_keys), b1 = _mm512_loadu_ps(tile + d * k_tile_keys + 16);
      for (int i = 0; i < 4; ++i) {
        const __m512 a = _mm512_set1_ps(q[(r + i) * hd + d]);
        acc[i][0] = _mm512_fmadd_ps(a, b0, acc[i][0]);
        acc[i][1] = _mm512_fmadd_ps(a, b1, acc[i][1]);
      }
    }
    for (int i = 0; i < 4; ++i) {
      _mm512_mask_storeu_ps(S + (r + i) * ld_s, m0, acc[i][0]);
      _mm512_mask_storeu_ps(S + (r + i) * ld_s + 16, m1, acc[i][1]);
    }
  }
  for (; r < n_rows; ++r) {
    __m512 a0 = _mm512_setzero_ps(), a1 = _mm512_setzero_ps();
    for (int64_t d = 0; d < hd; ++d) {
      const __m512 a = _mm512_set1_ps(q[r * hd + d]);
      a0 = _mm512_fmadd_ps(a, _mm512_loadu_ps(tile + d * k_tile_keys), a0);
      a1 = _mm512_fmadd_ps(a, _mm512_loadu_ps(tile + d * k_tile_keys + 16), a1);
    }
    _mm512_mask_storeu_ps(S + r * ld_s, m0, a0);
    _mm512_mask_storeu_ps(S + r * ld_s + 16, m1, a1);
  }
}

// tile: (n, hd) = rows [0, n) of src.
template <class Src>
void dequant_tile(const Src& src, int64_t n, int64_t hd, float* tile) {
  for (int64_t j = 0; j < n; ++j)
    for (int64_t d = 0; d < hd; d += 16) _mm512_storeu_ps(tile + j * hd + d, src.load(j, d));
}

}  // namespace

void qk(const kv_span& sp, int64_t a, int64_t n, int64_t hd, const float* q, int64_t n_rows, float* S,
        int64_t ld_s, float* tile) {
  if (sp.kq) {
    const src_i8 k{sp.kq + a * hd, sp.block + a, sp.k_scale, hd};
    if (n_rows <= k_direct_max_rows) return qk_rows(k, n, q, n_rows, hd, S, ld_s);
    dequant_tile(k, n, hd, tile);
  } else if (sp.k32) {  // F32 rows need no dequantised tile; many rows share a transposed one
    if (n_rows >= k_transposed_min_rows) return qk_transposed(sp.k32 + a * hd, n, q, n_rows, hd, S, ld_s, tile);
    return qk_rows(src_f32{sp.k32 + a * hd, hd}, n, q, n_rows, hd, S, ld_s);
  } else {
    const src_f16 k{sp.k16 + a * hd, hd};
    if (n_rows <= k_direct_max_rows) return qk_rows(k, n, q, n_rows, hd, S, ld_s);
    dequant_tile(k, n, hd, tile);
  }
  qk_rows(src_f32{tile, hd}, n, q, n_rows, hd, S, ld_s);
}

void pv(const kv_span& sp, int64_t a, int64_t n, int64_t hd, const float* P, int64_t ld_p,
        int64_t n_rows, float* o, float* tile) {
  if (sp.kq) {
    const src_i8 v{sp.vq + a * hd, sp.block + a, sp.v_scale, hd};
    if (n_rows <= k_direct_max_rows) return pv_rows(v, n, P, ld_p, n_rows, hd, o);
    dequant_tile(v, n, hd, tile);
  } else if (sp.v32) {
    return pv_rows(src_f32{sp.v32 + a * hd, hd}, n, P, ld_p, n_rows, hd, o);
  } else {
    const src_f16 v{sp.v16 + a * hd, hd};
    if (n_rows <= k_direct_max_rows) return pv_rows(v, n, P, ld_p, n_rows, hd, o);
    dequant_tile(v, n, hd, tile);
  }
  pv_rows(src_f32{tile, hd}, n, P, ld_p, n_rows, hd, o);
}

bool built() { return true; }

}  // namespace kvarena::kv_attention_avx512

#else  // not an x86-64 AVX-512 build: never picked

namespace kvarena::kv_attention_avx512 {
bool built() { return false; }
void qk(const kv_span&, int64_t, int64_t, int64_t, const float*, int64_t, float*, int64_t, float*) {
  KV_ASSERT(false && "kv-attention-cpu-avx512.cpp was built without AVX-512");
}
void pv(const kv_span&, int64_t, int64_t, int64_t, const float*, int64_t, int64_t, float*, float*) {
  KV_ASSERT(false && "kv-attention-cpu-avx512.cpp was built without AVX-512");
}
}  // namespace kvarena::kv_attention_avx512

#endif
