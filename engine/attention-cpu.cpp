// attention-cpu.cpp: causal GQA attention over a KV view (see attention-cpu.h).
//
// Work is split into items (KV head g, block of consecutive queries); the threads take
// items from a shared counter, largest blocks first (causal rows grow with the query
// index). One item computes, for the G = n_heads / n_kv_heads query heads of g and the
// block's queries ("rows"):
//   1. scores S[row, t] = scale * q[row] . k[g, t], 16 keys at a time: the 16 keys are
//      transposed into a (head_dim, 16) tile once and reused by every row, so each
//      multiply-add serves 16 keys and no horizontal sums are needed;
//   2. a max-subtracted softmax per row over its causal length (cpu-kernels softmax);
//   3. out[row] = sum_t S[row, t] * v[g, t], 16 output dims at a time.
// Steps 1 and 3 share one micro-kernel: four rows at once, each a broadcast scalar times a
// shared 16-wide vector, so four FMA chains run independently. An AVX-512 version is used
// when cpu-kernels picked the AVX-512 variant; otherwise a plain-loop one.
#include "attention-cpu.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>

#include "cpu-kernels.h"
#include "engine-error.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
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

// out[j][0..lanes) = sum_{k<n} a[j][k] * b[k*ldb + 0..lanes)  for j < 4.
// Rows a[j] may alias (unused rows point at row 0 and write to a dummy).
using mac4_fn = void (*)(const float* const a[4], const float* b, int64_t ldb, int64_t n,
                         int lanes, float* const out[4]);

void mac4_generic(const float* const a[4], const float* b, int64_t ldb, int64_t n, int lanes,
                  float* const out[4]) {
  float acc[4][k_tile] = {};
  for (int64_t k = 0; k < n; ++k) {
    const float* bk = b + k * ldb;
    for (int j = 0; j < 4; ++j) {
      const float s = a[j][k];
      for (int l = 0; l < lanes; ++l) acc[j][l] += s * bk[l];
    }
  }
  for (int j = 0; j < 4; ++j) std::memcpy(out[j], acc[j], size_t(lanes) * sizeof(float));
}

#if KV_ATTN_HAVE_AVX512
KV_ATTN_AVX512 void mac4_avx512(const float* const a[4], const float* b, int64_t ldb, int64_t n,
                                int lanes, float* const out[4]) {
  const __mmask16 m = lanes >= 16 ? __mmask16(0xffff) : __mmask16((1u << lanes) - 1);
  __m512 c0 = _mm512_setzero_ps(), c1 = _mm512_setzero_ps();
  __m512 c2 = _mm512_setzero_ps(), c3 = _mm512_setzero_ps();
  const float *a0 = a[0], *a1 = a[1], *a2 = a[2], *a3 = a[3];
  for (int64_t k = 0; k < n; ++k) {
    const __m512 bk = _mm512_maskz_loadu_ps(m, b + k * ldb);
    c0 = _mm512_fmadd_ps(_mm512_set1_ps(a0[k]), bk, c0);
    c1 = _mm512_fmadd_ps(_mm512_set1_ps(a1[k]), bk, c1);
    c2 = _mm512_fmadd_ps(_mm512_set1_ps(a2[k]), bk, c2);
    c3 = _mm512_fmadd_ps(_mm512_set1_ps(a3[k]), bk, c3);
  }
  _mm512_mask_storeu_ps(out[0], m, c0);
  _mm512_mask_storeu_ps(out[1], m, c1);
  _mm512_mask_storeu_ps(out[2], m, c2);
  _mm512_mask_storeu_ps(out[3], m, c3);
}
#endif

mac4_fn pick_mac4() {
#if KV_ATTN_HAVE_AVX512
  if (cpu_kernel_variant() == "avx512") return mac4_avx512;
#endif
  return mac4_generic;
}

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
  mac4_fn mac4;
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
  float dummy[k_tile];

  for (int64_t r = 0; r < n_rows; ++r) {
    const float* src = job.q + (i0 + r / G) * job.q_stride + (g * G + r % G) * hd;
    for (int64_t d = 0; d < hd; ++d) qs[r * hd + d] = src[d] * job.scale;
  }

  // 1. scores, one transposed key tile at a time.
  const int64_t n_keys = count(n_rows - 1);
  for (int64_t t0 = 0; t0 < n_keys; t0 += k_tile) {
    const int64_t nt = std::min(k_tile, n_keys - t0);
    for (int64_t j = 0; j < nt; ++j) {
      const float* kr = K + (t0 + j) * hd;
      for (int64_t d = 0; d < hd; ++d) kt[d * k_tile + j] = kr[d];
    }
    for (int64_t j = nt; j < k_tile; ++j) {
      for (int64_t d = 0; d < hd; ++d) kt[d * k_tile + j] = 0.0f;
    }
    // Rows whose causal length reaches this tile form a suffix [r_first, n_rows).
    const int64_t i_first = std::max(i0, t0 - base);
    for (int64_t r = (i_first - i0) * G; r < n_rows; r += 4) {
      const float* a[4];
      float* o[4];
      for (int j = 0; j < 4; ++j) {
        const bool live = r + j < n_rows;
        a[j] = qs + (live ? r + j : r) * hd;
        o[j] = live ? S + (r + j) * ld_s + t0 : dummy;
      }
      job.mac4(a, kt, k_tile, hd, int(k_tile), o);
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
    const int64_t n = count(std::min(r + 3, n_rows - 1));
    for (int64_t c = 0; c < hd; c += k_tile) {
      const float* a[4];
      float* o[4];
      for (int j = 0; j < 4; ++j) {
        const bool live = r + j < n_rows;
        const int64_t rr = live ? r + j : r;
        a[j] = S + rr * ld_s;
        o[j] = live ? job.out + (i0 + rr / G) * job.out_stride + (g * G + rr % G) * hd + c : dummy;
      }
      job.mac4(a, V + c, hd, n, int(std::min(k_tile, hd - c)), o);
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
  static const mac4_fn mac4 = pick_mac4();

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
  job.mac4 = mac4;
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
