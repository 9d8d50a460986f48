// attention-cpu.cpp: causal GQA attention over a KV view (see attention-cpu.h).
//
// Work is split into items (KV head g, block of consecutive queries); the threads take
// items from a shared counter, largest blocks first (causal rows grow with the query
// index). One item computes, for the G = n_heads / n_kv_heads query heads of g and the
// block's queries ("rows"):
//   1. scores S[row, t] = scale * q[row] . k[g, t], 16 keys at a time: the 16 keys are
//      transposed into a (head_dim, 16) tile once and reused by every row, so each
//      multiply-add serves 16 keys and no horizontal sums are needed (with fewer than 8
//      rows, as in decode, a tile does not pay for itself: direct dot products instead,
//      four keys' horizontal sums sharing their shuffles);
//   2. a max-subtracted softmax per row over its causal length (cpu-kernels softmax);
//   3. out[row] = sum_t S[row, t] * v[g, t], 16 output dims at a time.
// Steps 1 and 3 share one micro-kernel: up to four rows at once, each a broadcast scalar
// times a shared 16-wide vector, so the FMA chains run independently. The AVX-512 versions
// run when cpu-kernels uses its AVX-512 variant (so KVARENA_CPU_VARIANT and
// set_cpu_kernel_variant switch attention too); otherwise plain loops.
#include "attention-cpu.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>

#include "cpu-kernels.h"
#include "engine-error.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

#include "avx512-reduce.h"
#define KV_ATTN_HAVE_AVX512 1
#define KV_ATTN_AVX512 __attribute__((target("avx512f,avx512vl,fma")))
#else
#define KV_ATTN_HAVE_AVX512 0
#endif

namespace kvarena {

namespace {

constexpr int64_t k_tile = 16;               // keys per transposed tile, dims per output chunk
constexpr int64_t k_max_query_block = 16;    // queries per work item
constexpr size_t k_scores_budget = 1 << 20;  // bytes of scores per thread that set the block
// Below this many multiply-adds (queries x keys x heads x dims) attention runs on the
// calling thread: a pool round trip would cost more than it saves.
constexpr int64_t k_parallel_min_macs = 1 << 16;

int64_t round_up(int64_t n, int64_t m) { return (n + m - 1) / m * m; }

// The three inner loops, in a generic and an AVX-512 version.
struct attn_kernels {
  // out[j][0..lanes) = sum_{k<n} a[j][k] * b[k*ldb + 0..lanes)  for j < n_rows <= 4.
  void (*mac)(const float* const a[4], int n_rows, const float* b, int64_t ldb, int64_t n,
              int lanes, float* const out[4]);
  // kt: (hd, 16): kt[d*16 + j] = k[j*hd + d] for j < nt, 0 for nt <= j < 16.
  void (*transpose_tile)(const float* k, int64_t hd, int64_t nt, float* kt);
  // S[r*ld_s + t] = q[r] . k[t] for r < n_rows, t < n_keys: for few rows, where a
  // transposed tile would not pay for itself. nullptr: use tiles.
  void (*qk_direct)(const float* q, int64_t n_rows, const float* k, int64_t hd, int64_t n_keys,
                    float* S, int64_t ld_s);
};

void mac_generic(const float* const a[4], int n_rows, const float* b, int64_t ldb, int64_t n,
                 int lanes, float* const out[4]) {
  float acc[4][k_tile] = {};
  for (int64_t k = 0; k < n; ++k) {
    const float* bk = b + k * ldb;
    for (int j = 0; j < n_rows; ++j) {
      const float s = a[j][k];
      for (int l = 0; l < lanes; ++l) acc[j][l] += s * bk[l];
    }
  }
  for (int j = 0; j < n_rows; ++j) std::memcpy(out[j], acc[j], size_t(lanes) * sizeof(float));
}

void transpose_tile_generic(const float* k, int64_t hd, int64_t nt, float* kt) {
  for (int64_t j = 0; j < nt; ++j) {
    for (int64_t d = 0; d < hd; ++d) kt[d * k_tile + j] = k[j * hd + d];
  }
  for (int64_t j = nt; j < k_tile; ++j) {
    for (int64_t d = 0; d < hd; ++d) kt[d * k_tile + j] = 0.0f;
  }
}

#if KV_ATTN_HAVE_AVX512
// GCC 12 flags the undefined pass-through operand inside avx512fintrin.h's unpack
// intrinsics as uninitialised (a false positive with target attributes).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
template <int R>
KV_ATTN_AVX512 void mac_rows_avx512(const float* const a[4], const float* b, int64_t ldb, int64_t n,
                                    __mmask16 m, float* const out[4]) {
  // Rows past R alias row 0; their FMAs are dead code the compiler drops.
  const float* a0 = a[0];
  const float* a1 = R > 1 ? a[1] : a0;
  const float* a2 = R > 2 ? a[2] : a0;
  const float* a3 = R > 3 ? a[3] : a0;
  __m512 c0 = _mm512_setzero_ps(), c1 = _mm512_setzero_ps();
  __m512 c2 = _mm512_setzero_ps(), c3 = _mm512_setzero_ps();
  for (int64_t k = 0; k < n; ++k) {
    const __m512 bk = _mm512_maskz_loadu_ps(m, b + k * ldb);
    c0 = _mm512_fmadd_ps(_mm512_set1_ps(a0[k]), bk, c0);
    if (R > 1) c1 = _mm512_fmadd_ps(_mm512_set1_ps(a1[k]), bk, c1);
    if (R > 2) c2 = _mm512_fmadd_ps(_mm512_set1_ps(a2[k]), bk, c2);
    if (R > 3) c3 = _mm512_fmadd_ps(_mm512_set1_ps(a3[k]), bk, c3);
  }
  _mm512_mask_storeu_ps(out[0], m, c0);
  if (R > 1) _mm512_mask_storeu_ps(out[1], m, c1);
  if (R > 2) _mm512_mask_storeu_ps(out[2], m, c2);
  if (R > 3) _mm512_mask_storeu_ps(out[3], m, c3);
}

KV_ATTN_AVX512 void mac_avx512(const float* const a[4], int n_rows, const float* b, int64_t ldb,
                               int64_t n, int lanes, float* const out[4]) {
  const __mmask16 m = lanes >= 16 ? __mmask16(0xffff) : __mmask16((1u << lanes) - 1);
  switch (n_rows) {
    case 1: mac_rows_avx512<1>(a, b, ldb, n, m, out); break;
    case 2: mac_rows_avx512<2>(a, b, ldb, n, m, out); break;
    case 3: mac_rows_avx512<3>(a, b, ldb, n, m, out); break;
    default: mac_rows_avx512<4>(a, b, ldb, n, m, out); break;
  }
}

// 16 x 16 blocks transposed in registers (three rounds of shuffles); hd % 16 == 0.
KV_ATTN_AVX512 void transpose_tile_avx512(const float* k, int64_t hd, int64_t nt, float* kt) {
  if (hd % 16 != 0) {
    transpose_tile_generic(k, hd, nt, kt);
    return;
  }
  for (int64_t d0 = 0; d0 < hd; d0 += 16) {
    __m512 r[16], t[16];
    for (int j = 0; j < 16; ++j) r[j] = j < nt ? _mm512_loadu_ps(k + j * hd + d0) : _mm512_setzero_ps();
    // Within each 128-bit lane L: pairs of rows, then u[4g + c] = column 4L + c of rows 4g..4g+3.
    for (int i = 0; i < 8; ++i) {
      t[2 * i] = _mm512_unpacklo_ps(r[2 * i], r[2 * i + 1]);
      t[2 * i + 1] = _mm512_unpackhi_ps(r[2 * i], r[2 * i + 1]);
    }
    for (int g = 0; g < 4; ++g) {
      const __m512d a = _mm512_castps_pd(t[4 * g]), b = _mm512_castps_pd(t[4 * g + 1]);
      const __m512d c = _mm512_castps_pd(t[4 * g + 2]), d = _mm512_castps_pd(t[4 * g + 3]);
      r[4 * g + 0] = _mm512_castpd_ps(_mm512_unpacklo_pd(a, c));
      r[4 * g + 1] = _mm512_castpd_ps(_mm512_unpackhi_pd(a, c));
      r[4 * g + 2] = _mm512_castpd_ps(_mm512_unpacklo_pd(b, d));
      r[4 * g + 3] = _mm512_castpd_ps(_mm512_unpackhi_pd(b, d));
    }
    // Column 4L + c = lane L of u[c], u[4+c], u[8+c], u[12+c].
    for (int c = 0; c < 4; ++c) {
      const __m512 v0 = _mm512_shuffle_f32x4(r[c], r[4 + c], 0x44);
      const __m512 v1 = _mm512_shuffle_f32x4(r[c], r[4 + c], 0xEE);
      const __m512 v2 = _mm512_shuffle_f32x4(r[8 + c], r[12 + c], 0x44);
      const __m512 v3 = _mm512_shuffle_f32x4(r[8 + c], r[12 + c], 0xEE);
      _mm512_storeu_ps(kt + (d0 + c) * k_tile, _mm512_shuffle_f32x4(v0, v2, 0x88));
      _mm512_storeu_ps(kt + (d0 + 4 + c) * k_tile, _mm512_shuffle_f32x4(v0, v2, 0xDD));
      _mm512_storeu_ps(kt + (d0 + 8 + c) * k_tile, _mm512_shuffle_f32x4(v1, v3, 0x88));
      _mm512_storeu_ps(kt + (d0 + 12 + c) * k_tile, _mm512_shuffle_f32x4(v1, v3, 0xDD));
    }
  }
}

KV_ATTN_AVX512 inline __m512 dot_partial(const float* q, const float* k, int64_t hd) {
  __m512 acc = _mm512_mul_ps(_mm512_loadu_ps(q), _mm512_loadu_ps(k));
  for (int64_t d = 16; d < hd; d += 16) acc = _mm512_fmadd_ps(_mm512_loadu_ps(q + d), _mm512_loadu_ps(k + d), acc);
  return acc;
}

// Four keys at a time per row, their sums reduced together; hd % 16 == 0.
KV_ATTN_AVX512 void qk_direct_avx512(const float* q, int64_t n_rows, const float* k, int64_t hd,
                                     int64_t n_keys, float* S, int64_t ld_s) {
  for (int64_t r = 0; r < n_rows; ++r) {
    const float* qr = q + r * hd;
    float* sr = S + r * ld_s;
    int64_t t = 0;
    for (; t + 4 <= n_keys; t += 4) {
      const float* kt = k + t * hd;
      _mm_storeu_ps(sr + t, avx512_reduce4(dot_partial(qr, kt, hd), dot_partial(qr, kt + hd, hd),
                                    dot_partial(qr, kt + 2 * hd, hd), dot_partial(qr, kt + 3 * hd, hd)));
    }
    for (; t < n_keys; ++t) sr[t] = _mm512_reduce_add_ps(dot_partial(qr, k + t * hd, hd));
  }
}
#pragma GCC diagnostic pop
#endif

attn_kernels pick_kernels() {
#if KV_ATTN_HAVE_AVX512
  if (cpu_kernel_variant() == "avx512") return {mac_avx512, transpose_tile_avx512, qk_direct_avx512};
#endif
  return {mac_generic, transpose_tile_generic, nullptr};
}

// Rows per item below which the AVX-512 path computes scores by direct dot products
// instead of transposed key tiles (a tile costs about as much as 8 rows of FMAs).
constexpr int64_t k_direct_max_rows = 8;

// Everything one attend() call shares between threads (one pointer is captured, so the
// std::function the pool takes stays in its small buffer: no allocation per call).
struct attend_job {
  const kv_view* view;
  const float* q;
  int64_t q_stride, n_q, n_heads, group, n_blocks, query_block;
  float scale;
  float* out;
  int64_t out_stride;
  attention_scratch* scratch;
  const attn_kernels* kern;
  std::atomic<int64_t> next{0};
};

void run_item(attend_job& job, int ith, int64_t item) {
  const kv_view& v = *job.view;
  const int64_t hd = v.head_dim, G = job.group;
  // Largest query blocks first: item 0 is the last block of KV head 0.
  const int64_t blk = job.n_blocks - 1 - item / v.n_kv_heads;
  const int64_t g = item % v.n_kv_heads;
  const int64_t i0 = blk * job.query_block, i1 = std::min(job.n_q, i0 + job.query_block);
  const int64_t base = v.n_tokens - job.n_q;  // query i attends to keys [0, base + i]
  const int64_t n_rows = (i1 - i0) * G;       // row r = (i - i0) * G + hh
  const int64_t ld_s = round_up(job.scratch->max_tokens(), k_tile);
  float* S = job.scratch->scores(ith);
  float* kt = job.scratch->key_tile(ith);
  float* qs = job.scratch->query(ith);
  const float* K = v.k + g * v.head_stride;
  const float* V = v.v + g * v.head_stride;
  auto count = [&](int64_t r) { return base + i0 + r / G + 1; };  // causal length of row r

  for (int64_t r = 0; r < n_rows; ++r) {
    const float* src = job.q + (i0 + r / G) * job.q_stride + (g * G + r % G) * hd;
    for (int64_t d = 0; d < hd; ++d) qs[r * hd + d] = src[d] * job.scale;
  }

  // 1. scores: direct dot products for a few rows (decode), else one transposed key tile
  // at a time.
  const int64_t n_keys = count(n_rows - 1);
  if (job.kern->qk_direct && n_rows < k_direct_max_rows && hd % 16 == 0) {
    job.kern->qk_direct(qs, n_rows, K, hd, n_keys, S, ld_s);
  } else {
    for (int64_t t0 = 0; t0 < n_keys; t0 += k_tile) {
      job.kern->transpose_tile(K + t0 * hd, hd, std::min(k_tile, n_keys - t0), kt);
      // Rows whose causal length reaches this tile form a suffix [r_first, n_rows).
      const int64_t i_first = std::max(i0, t0 - base);
      for (int64_t r = (i_first - i0) * G; r < n_rows; r += 4) {
        const int nr = int(std::min<int64_t>(4, n_rows - r));
        const float* a[4];
        float* o[4];
        for (int j = 0; j < nr; ++j) {
          a[j] = qs + (r + j) * hd;
          o[j] = S + (r + j) * ld_s + t0;
        }
        job.kern->mac(a, nr, kt, k_tile, hd, int(k_tile), o);
      }
    }
  }

  // 2. softmax per row; zero the tail up to n_keys so step 3 can run rows of unequal
  // length together.
  for (int64_t r = 0; r < n_rows; ++r) {
    const int64_t n = count(r);
    softmax(S + r * ld_s, n);
    std::fill(S + r * ld_s + n, S + r * ld_s + n_keys, 0.0f);
  }

  // 3. out = P V, 16 dims at a time, four rows at a time.
  for (int64_t r = 0; r < n_rows; r += 4) {
    const int nr = int(std::min<int64_t>(4, n_rows - r));
    const int64_t n = count(r + nr - 1);
    for (int64_t c = 0; c < hd; c += k_tile) {
      const float* a[4];
      float* o[4];
      for (int j = 0; j < nr; ++j) {
        const int64_t rr = r + j;
        a[j] = S + rr * ld_s;
        o[j] = job.out + (i0 + rr / G) * job.out_stride + (g * G + rr % G) * hd + c;
      }
      job.kern->mac(a, nr, V + c, hd, n, int(std::min(k_tile, hd - c)), o);
    }
  }
}

}  // namespace

attention_scratch::attention_scratch(int n_threads, int64_t max_tokens, int64_t head_dim,
                                     int64_t group)
    : n_threads_(n_threads), max_tokens_(max_tokens), head_dim_(head_dim), group_(group) {
  KV_ASSERT(n_threads >= 1 && max_tokens >= 1 && head_dim >= 1 && group >= 1);
  const int64_t row_floats = round_up(max_tokens, k_tile);
  query_block_ = std::clamp<int64_t>(int64_t(k_scores_budget / sizeof(float)) / (group * row_floats),
                                     1, k_max_query_block);
  scores_floats_ = size_t(group * query_block_ * row_floats);
  tile_floats_ = size_t(round_up(head_dim * k_tile, 16));
  const size_t query_floats = size_t(round_up(group * query_block_ * head_dim, 16));
  per_thread_ = scores_floats_ + tile_floats_ + query_floats;
  buf_.assign(per_thread_ * size_t(n_threads), 0.0f);
}

void attend(thread_pool& pool, const kv_view& view, const float* q, int64_t q_stride, int64_t n_q,
            int64_t n_heads, float scale, float* out, int64_t out_stride,
            attention_scratch& scratch) {
  KV_ASSERT(n_q >= 1 && n_q <= view.n_tokens);
  KV_ASSERT(view.n_kv_heads >= 1 && n_heads % view.n_kv_heads == 0);
  KV_ASSERT(view.head_dim == scratch.head_dim());
  KV_ASSERT(n_heads / view.n_kv_heads <= scratch.group());
  KV_ASSERT(view.n_tokens <= scratch.max_tokens());
  KV_ASSERT(pool.size() <= scratch.n_threads());
  const attn_kernels kern = pick_kernels();

  attend_job job;
  job.view = &view;
  job.q = q;
  job.q_stride = q_stride;
  job.n_q = n_q;
  job.n_heads = n_heads;
  job.group = n_heads / view.n_kv_heads;
  job.query_block = std::max<int64_t>(1, scratch.query_block() * scratch.group() / job.group);
  job.query_block = std::min(job.query_block, k_max_query_block);
  job.n_blocks = (n_q + job.query_block - 1) / job.query_block;
  job.scale = scale;
  job.out = out;
  job.out_stride = out_stride;
  job.scratch = &scratch;
  job.kern = &kern;
  const int64_t n_items = job.n_blocks * view.n_kv_heads;
  attend_job* jp = &job;
  auto work = [jp, n_items](int ith, int) {
    for (int64_t it = jp->next.fetch_add(1); it < n_items; it = jp->next.fetch_add(1)) {
      run_item(*jp, ith, it);
    }
  };
  // Causal: about half of the n_q x n_tokens pairs when the chunk is the whole view.
  const int64_t macs = n_q * (view.n_tokens - n_q / 2) * n_heads * view.head_dim;
  if (macs < k_parallel_min_macs || pool.size() == 1 || n_items == 1) {
    work(0, 1);
  } else {
    pool.run(work);
  }
}

namespace ref {

void attend(const kv_view& view, const float* q, int64_t q_stride, int64_t n_q, int64_t n_heads,
            float scale, float* out, int64_t out_stride) {
  const int64_t hd = view.head_dim, G = n_heads / view.n_kv_heads;
  std::vector<float> p(size_t(view.n_tokens));
  for (int64_t i = 0; i < n_q; ++i) {
    const int64_t n = view.n_tokens - n_q + i + 1;
    for (int64_t h = 0; h < n_heads; ++h) {
      const float* qi = q + i * q_stride + h * hd;
      const float* K = view.k + (h / G) * view.head_stride;
      const float* V = view.v + (h / G) * view.head_stride;
      float mx = -INFINITY;
      for (int64_t t = 0; t < n; ++t) {
        float s = 0.0f;
        for (int64_t d = 0; d < hd; ++d) s += qi[d] * K[t * hd + d];
        p[size_t(t)] = s * scale;
        mx = std::max(mx, p[size_t(t)]);
      }
      float sum = 0.0f;
      for (int64_t t = 0; t < n; ++t) sum += (p[size_t(t)] = std::exp(p[size_t(t)] - mx));
      float* o = out + i * out_stride + h * hd;
      for (int64_t d = 0; d < hd; ++d) o[d] = 0.0f;
      for (int64_t t = 0; t < n; ++t) {
        const float w = p[size_t(t)] / sum;
        for (int64_t d = 0; d < hd; ++d) o[d] += w * V[t * hd + d];
      }
    }
  }
}

}  // namespace ref

}  // namespace kvarena
