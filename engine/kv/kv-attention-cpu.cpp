// kv-attention-cpu.cpp: attention over the kv_store's memory on the CPU (see the header).
//
// Two drivers share one pair of chunk kernels.
//  * Split mode (decode: few queries, so every score of the call fits in memory): a work
//    item is (KV head g, token range [t0, t1)) and computes all n_q * G rows of g over its
//    range: scores into a buffer shared by the call, a softmax local to the range (row max
//    m_s, exp-sum l_s) and the range's output sum_t p_t v_t. Heads cut into several ranges
//    are merged after a second pool run (flash-decoding): w_s = l_s e^(m_s - M) / L, with
//    M = max m_s and L = sum_s l_s e^(m_s - M), weighs the ranges' outputs and turns their
//    stored local probabilities into the exact global ones the mass needs. A head with one
//    range is finished by its item.
//  * Block mode (prefill): a work item is (g, block of queries) over every token the block
//    sees, scores in per-thread scratch, largest blocks first.
//    Rows are whole, so probabilities are final in the item; mass from several blocks of
//    one head goes into per-thread sums that a second run adds to the spans.
// Rows of an item: r = (i - i0) * G + hh for query i and query head g * G + hh.
// Both walk their tokens in chunks of at most k_chunk tokens of one span; per chunk the
// kernels compute scores (qk) and add P V to the rows' outputs (pv). The AVX-512 kernels
// (kv-attention-cpu-avx512.cpp, head_dim % 16 == 0) read FP16 and INT8 rows straight from
// the span for up to 4 rows and share a dequantised F32 tile beyond; the generic kernels
// here use a tile too: keys transposed (scores summed across keys, loops that vectorise),
// values dequantised row by row (F32 values are read in place). Softmax is cpu-kernels' own, so KVARENA_CPU_VARIANT and
// set_cpu_kernel_variant switch all of it.
#include "kv-attention-cpu.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <limits>

#include "cpu-kernels.h"
#include "engine-error.h"
#include "ggml-types.h"
#include "kv-attention-generic.h"

namespace kvarena {

// The AVX-512 chunk kernels (kv-attention-cpu-avx512.cpp; contracts as chunk_kernels below).
namespace kv_attention_avx512 {
bool built();  // false where that file is compiled without AVX-512
void qk(const kv_span& sp, int64_t a, int64_t n, int64_t hd, const float* q, int64_t n_rows, float* S,
        int64_t ld_s, float* tile);
void pv(const kv_span& sp, int64_t a, int64_t n, int64_t hd, const float* P, int64_t ld_p,
        int64_t n_rows, float* o, float* tile);
}  // namespace kv_attention_avx512

// The portable kernels built for AVX2 (kv-attention-cpu-avx2.cpp: the same floats, 8 wide).
namespace kv_attention_avx2 {
bool built();  // false where that file is compiled without AVX2
void qk(const kv_span& sp, int64_t a, int64_t n, int64_t hd, const float* q, int64_t n_rows, float* S,
        int64_t ld_s, float* tile);
void pv(const kv_span& sp, int64_t a, int64_t n, int64_t hd, const float* P, int64_t ld_p,
        int64_t n_rows, float* o, float* tile);
}  // namespace kv_attention_avx2

kv_attn_head kv_attn_head_from_view(const kv_head_view& v, bool with_mass) {
  kv_attn_head h;
  h.spans.resize(v.n_fp16b > 0 ? 3 : 2);
  kv_span& q8 = h.spans[0];
  q8.n = v.n_int8;
  q8.kq = v.k_q;
  q8.vq = v.v_q;
  q8.block = v.block;
  q8.k_scale = v.k_scale;
  q8.v_scale = v.v_scale;
  q8.mass = with_mass ? v.mass : nullptr;
  kv_span& f16 = h.spans[1];
  f16.n = v.n_fp16;
  f16.k16 = v.k16;
  f16.v16 = v.v16;
  f16.k32 = v.k32;
  f16.v32 = v.v32;
  f16.mass = with_mass && v.mass ? v.mass + v.n_int8 : nullptr;
  if (v.n_fp16b > 0) {  // the FP16 ring's wrapped part
    kv_span& f16b = h.spans[2];
    f16b.n = v.n_fp16b;
    f16b.k16 = v.k16b;
    f16b.v16 = v.v16b;
    f16b.k32 = v.k32b;
    f16b.v32 = v.v32b;
    f16b.mass = with_mass && v.mass ? v.mass + v.n_int8 + v.n_fp16 : nullptr;
  }
  return h;
}

size_t kv_attend_scratch::bytes() const {
  size_t b = plan.capacity() * sizeof(head_plan) + span_start.capacity() * sizeof(int64_t) +
             shared.capacity() * sizeof(float);
  for (const auto& t : per_thread) b += t.capacity() * sizeof(float);
  return b;
}

namespace {

using head_plan = kv_attend_scratch::head_plan;

constexpr int64_t k_chunk = k_generic_chunk; // tokens per chunk (32): a (32, 128) F32 tile is 16 KiB
constexpr int64_t k_split_max_queries = 16;  // split mode: at most this many queries ...
constexpr int64_t k_split_max_scores = int64_t(1) << 23;  // ... and scores (floats) per call
constexpr int64_t k_min_split = 256;         // tokens per range at least (merge overhead)
constexpr int64_t k_items_per_thread = 4;    // split mode aims at this many ranges per thread
constexpr int64_t k_scores_floats = int64_t(1) << 19;  // block mode: scores per thread (2 MiB)
constexpr int64_t k_max_query_block = 16;    // block mode: queries per item
// Below this many multiply-adds a call runs on the calling thread alone.
constexpr int64_t k_parallel_min_macs = int64_t(1) << 16;

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }
int64_t round_up(int64_t a, int64_t b) { return ceil_div(a, b) * b; }
// Stride of score rows over n tokens: 64 bytes past a multiple of 128, so that the rows an
// item walks together fall into different L1 sets (a 32 KiB stride would put them all in one).
int64_t score_ld(int64_t n) { return round_up(n, 32) + 16; }

// Per chunk: keys/values [a, a + n) of span sp (n <= k_chunk), n_rows query rows.
struct chunk_kernels {
  // S[r * ld_s + j] = q[r] . key(a + j) for r < n_rows, j < n. q: (n_rows, hd) pre-scaled.
  void (*qk)(const kv_span& sp, int64_t a, int64_t n, int64_t hd, const float* q, int64_t n_rows,
             float* S, int64_t ld_s, float* tile);
  // o[r * hd + c] += sum_{j < n} P[r * ld_p + j] * value(a + j)[c] for r < n_rows.
  void (*pv)(const kv_span& sp, int64_t a, int64_t n, int64_t hd, const float* P, int64_t ld_p,
             int64_t n_rows, float* o, float* tile);
};

// ---- generic kernels: kv-attention-generic.h (also built for AVX2) -------------------------

chunk_kernels pick_kernels(int64_t hd) {
  if (hd % 16 == 0 && kv_attention_avx512::built() && cpu_kernel_variant() == "avx512")
    return {kv_attention_avx512::qk, kv_attention_avx512::pv};
  if (kv_attention_avx2::built() && cpu_kernel_variant() == "avx2") return {kv_attention_avx2::qk, kv_attention_avx2::pv};
  return {qk_generic, pv_generic};
}

// ---- drivers --------------------------------------------------------------------------------

// Everything one call shares between threads (the pool's std::function captures one
// pointer, so it stays in its small buffer: no allocation per call).
struct attend_job {
  const std::vector<kv_attn_head>* heads;
  const head_plan* plan;        // (n_kv,)
  const int64_t* span_start;    // see kv_attend_scratch
  chunk_kernels kern;
  const float* q;
  int64_t ldq;
  float* out;
  int64_t ldo;
  int64_t hd, n_q, n_kv, G;
  float scale;
  float mass_decay;             // query row i's mass is weighted mass_scale * mass_decay^(n_q - 1 - i)
  float mass_scale = 1.0f;
  float softcap = 0.0f;         // > 0: scores become softcap * tanh(score / softcap) before the softmax
  bool split;                   // split mode, else block mode
  int64_t qb, n_blocks;         // block mode: queries per item, items per head
  int64_t rows_max;             // rows of the largest item
  int64_t ld_s;                 // block mode: stride of the per-thread score rows
  // Split mode: head g's scores at S_shared + plan[g].s_off, (rows_max, plan[g].s_ld);
  // item p's partial result at partial + p * part_floats: m (rows), l (rows), o (rows, hd).
  float* S_shared;
  float* partial;
  int64_t part_floats;
  // Per thread (per_thread[ith].data()): qs (rows_max, hd) scaled queries | o (rows_max, hd)
  // outputs | tile (k_chunk, hd) | stat (2, rows_max) | block mode: S (rows_max, ld_s) |
  // mass sums (all tokens of all heads, flat) when blocks of one head share a mass column.
  std::vector<float>* per_thread;
  int64_t off_S, off_mass;
  int n_threads;                // threads whose mass sums are added
  int phase = 1;                // 1: items; 2: merges and mass
  int64_t n_items = 0;
  std::atomic<int64_t> next{0};
};

// Calls f(span, a, n, t) for the chunks of head g's tokens [t_begin, t_end): n tokens from
// index a of span, t their first index in the head.
template <class F>
void for_each_chunk(const attend_job& job, int64_t g, int64_t t_begin, int64_t t_end, F&& f) {
  if (t_begin >= t_end) return;
  const std::vector<kv_span>& spans = (*job.heads)[size_t(g)].spans;
  const int64_t* start = job.span_start + job.plan[g].span0;
  const int64_t n_spans = int64_t(spans.size());
  int64_t si = std::upper_bound(start, start + n_spans, t_begin) - start - 1;
  for (int64_t t = t_begin; t < t_end;) {
    const kv_span& sp = spans[size_t(si)];
    const int64_t a = t - start[si];
    if (a >= sp.n) {
      ++si;
      continue;
    }
    const int64_t n = std::min({k_chunk, sp.n - a, t_end - t});
    f(sp, a, n, t);
    t += n;
  }
}

// The weight of query row i's probabilities in the mass: mass_decay^(n_q - 1 - i) (1 when
// the decay is 1: a plain sum over the queries).
float query_mass_weight(const attend_job& job, int64_t i) {
  return job.mass_scale * (job.mass_decay == 1.0f ? 1.0f : std::pow(job.mass_decay, float(job.n_q - 1 - i)));
}
bool weighted_mass(const attend_job& job) { return job.mass_decay != 1.0f || job.mass_scale != 1.0f; }

bool head_has_mass(const kv_attn_head& h) {
  for (const kv_span& s : h.spans)
    if (s.mass && s.n > 0) return true;
  return false;
}

// mass[t] += sum_r w[r] * P[r * ld_p + t - t0] over head g's tokens [t0, t0 + n) (w nullptr: 1).
void add_mass(const attend_job& job, int64_t g, int64_t t0, int64_t n, const float* P, int64_t ld_p,
              int64_t n_rows, const float* w) {
  for_each_chunk(job, g, t0, t0 + n, [&](const kv_span& sp, int64_t a, int64_t cn, int64_t t) {
    if (!sp.mass) return;
    float col[k_chunk] = {};
    for (int64_t r = 0; r < n_rows; ++r) {
      const float* p = P + r * ld_p + (t - t0);
      const float wr = w ? w[r] : 1.0f;
      for (int64_t j = 0; j < cn; ++j) col[j] += wr * p[j];
    }
    for (int64_t j = 0; j < cn; ++j) sp.mass[a + j] += col[j];
  });
}

int64_t head_of_item(const attend_job& job, int64_t item) {
  const head_plan* p = std::partition_point(
      job.plan, job.plan + job.n_kv, [item](const head_plan& h) { return h.item0 + h.n_items <= item; });
  return p - job.plan;
}

// max over x[0, n), n >= 1, in sixteen independent chains.
float row_max(const float* x, int64_t n) {
  float lane[16];
  for (int k = 0; k < 16; ++k) lane[k] = x[0];
  int64_t t = 0;
  for (; t + 16 <= n; t += 16)
    for (int k = 0; k < 16; ++k) lane[k] = x[t + k] > lane[k] ? x[t + k] : lane[k];
  for (; t < n; ++t) lane[0] = x[t] > lane[0] ? x[t] : lane[0];
  float m = lane[0];
  for (int k = 1; k < 16; ++k) m = lane[k] > m ? lane[k] : m;
  return m;
}

// s: (n_keys,) scores of one row of which the first n are visible: a softmax over those,
// zeros after; m, l: the max and the exp-sum. cpu-kernels' softmax normalises: its largest
// output is exp(0) / l, so l comes back as 1 / that.
void row_softmax(float* s, int64_t n, int64_t n_keys, float& m, float& l) {
  if (n == 0) {
    m = -std::numeric_limits<float>::infinity();
    l = 0.0f;
  } else {
    m = row_max(s, n);
    softmax(s, n);
    l = 1.0f / row_max(s, n);
  }
  std::fill(s + n, s + n_keys, 0.0f);
}

// Phase 1: one item, split range or query block.
void run_item(attend_job& job, int ith, int64_t item) {
  int64_t g, i0, i1, t0, t1;
  if (job.split) {
    g = head_of_item(job, item);
    const head_plan& hp = job.plan[g];
    i0 = 0, i1 = job.n_q;
    t0 = (item - hp.item0) * hp.split_len;
    t1 = std::min(hp.n_tokens, t0 + hp.split_len);
  } else {
    // Largest blocks first: item 0 is the last block of head 0.
    const int64_t blk = job.n_blocks - 1 - item / job.n_kv;
    g = item % job.n_kv;
    i0 = blk * job.qb, i1 = std::min(job.n_q, i0 + job.qb);
    t0 = 0, t1 = job.plan[g].n_tokens;
  }
  const head_plan& hp = job.plan[g];
  const int64_t hd = job.hd, G = job.G, N = hp.n_tokens, R = (i1 - i0) * G;
  float* buf = job.per_thread[ith].data();
  float* qs = buf;                          // (R, hd)
  float* o = qs + job.rows_max * hd;        // (R, hd)
  float* tile = o + job.rows_max * hd;      // (k_chunk, hd)
  float* m = tile + k_chunk * hd;           // (R,)
  float* l = m + job.rows_max;              // (R,)
  float* S = job.split ? job.S_shared + hp.s_off + t0 : buf + job.off_S;
  const int64_t ld_s = job.split ? hp.s_ld : job.ld_s;

  for (int64_t r = 0; r < R; ++r) {
    const float* src = job.q + (i0 + r / G) * job.ldq + (g * G + r % G) * hd;
    for (int64_t d = 0; d < hd; ++d) qs[r * hd + d] = src[d] * job.scale;
  }
  // Row r sees [t0, t0 + vis(r)): query i sees the head's tokens [0, N - n_q + i].
  auto vis = [&](int64_t r) {
    return std::clamp<int64_t>(N - job.n_q + i0 + r / G + 1 - t0, 0, t1 - t0);
  };
  const int64_t n_keys = vis(R - 1);
  for_each_chunk(job, g, t0, t0 + n_keys, [&](const kv_span& sp, int64_t a, int64_t n, int64_t t) {
    job.kern.qk(sp, a, n, hd, qs, R, S + (t - t0), ld_s, tile);
  });
  if (job.softcap > 0.0f) {  // gemma2's attention logit soft-capping, as ggml: x * (1/cap), tanh, * cap
    const float inv = 1.0f / job.softcap;
    for (int64_t r = 0; r < R; ++r)
      for (int64_t j = 0, n = vis(r); j < n; ++j) S[r * ld_s + j] = std::tanh(S[r * ld_s + j] * inv) * job.softcap;
  }
  for (int64_t r = 0; r < R; ++r) row_softmax(S + r * ld_s, vis(r), n_keys, m[r], l[r]);
  std::fill(o, o + R * hd, 0.0f);
  for_each_chunk(job, g, t0, t0 + n_keys, [&](const kv_span& sp, int64_t a, int64_t n, int64_t t) {
    job.kern.pv(sp, a, n, hd, S + (t - t0), ld_s, R, o, tile);
  });

  if (job.split && hp.n_items > 1) {  // merged in phase 2
    float* part = job.partial + item * job.part_floats;
    std::memcpy(part, m, size_t(R) * sizeof(float));
    std::memcpy(part + R, l, size_t(R) * sizeof(float));
    std::memcpy(part + 2 * R, o, size_t(R * hd) * sizeof(float));
    return;
  }
  for (int64_t r = 0; r < R; ++r)
    std::memcpy(job.out + (i0 + r / G) * job.ldo + (g * G + r % G) * hd, o + r * hd,
                size_t(hd) * sizeof(float));
  if (!head_has_mass((*job.heads)[size_t(g)])) return;
  if (hp.n_items == 1) {
    thread_local std::vector<float> w;  // (R,) row weights; none when every weight is 1
    if (weighted_mass(job)) {
      w.resize(size_t(R));
      for (int64_t r = 0; r < R; ++r) w[size_t(r)] = query_mass_weight(job, i0 + r / G);
    }
    add_mass(job, g, t0, n_keys, S, ld_s, R, weighted_mass(job) ? w.data() : nullptr);
  } else {  // blocks of this head run on several threads: per-thread sums
    float* sums = buf + job.off_mass + hp.tok_off + t0;
    for (int64_t r = 0; r < R; ++r) {
      const float wr = query_mass_weight(job, i0 + r / G);
      for (int64_t t = 0; t < n_keys; ++t) sums[t] += wr * S[r * ld_s + t];
    }
  }
}

// Phase 2, split mode: item p's range gets its weights w_p; its head's first item merges the
// output.
void merge_split(attend_job& job, int ith, int64_t item) {
  const int64_t g = head_of_item(job, item);
  const head_plan& hp = job.plan[g];
  if (hp.n_items == 1) return;
  const int64_t R = job.rows_max, hd = job.hd, G = job.G, k = item - hp.item0;
  const float* parts = job.partial + hp.item0 * job.part_floats;  // (n_items, part_floats)
  auto part = [&](int64_t s) { return parts + s * job.part_floats; };  // m, l, o of range s
  float* w = job.per_thread[ith].data();  // (R,) this range's weights
  float* o = w + R;                       // (hd,)
  for (int64_t r = 0; r < R; ++r) {
    float M = -std::numeric_limits<float>::infinity();
    for (int64_t s = 0; s < hp.n_items; ++s) M = std::max(M, part(s)[r]);
    // Weight of range s for row r (0 for ranges the row sees nothing of).
    auto weight = [&](int64_t s) {
      const float l = part(s)[R + r];
      return l > 0.0f ? l * std::exp(part(s)[r] - M) : 0.0f;
    };
    float L = 0.0f;
    for (int64_t s = 0; s < hp.n_items; ++s) L += weight(s);
    const float inv = L > 0.0f ? 1.0f / L : 0.0f;
    w[r] = weight(k) * inv * query_mass_weight(job, r / G);  // split mode: rows are all queries
    if (k != 0) continue;
    std::fill(o, o + hd, 0.0f);
    for (int64_t s = 0; s < hp.n_items; ++s) {
      const float ws = weight(s) * inv;
      const float* os = part(s) + 2 * R + r * hd;
      if (ws != 0.0f)
        for (int64_t d = 0; d < hd; ++d) o[d] += ws * os[d];
    }
    std::memcpy(job.out + (r / G) * job.ldo + (g * G + r % G) * hd, o, size_t(hd) * sizeof(float));
  }
  if (!head_has_mass((*job.heads)[size_t(g)])) return;
  const int64_t t0 = k * hp.split_len, t1 = std::min(hp.n_tokens, t0 + hp.split_len);
  add_mass(job, g, t0, t1 - t0, job.S_shared + hp.s_off + t0, hp.s_ld, R, w);
}

// Phase 2, block mode: head `item`'s per-thread mass sums go into its spans.
void reduce_mass(attend_job& job, int64_t g) {
  const head_plan& hp = job.plan[g];
  if (hp.n_items == 1) return;
  for_each_chunk(job, g, 0, hp.n_tokens, [&](const kv_span& sp, int64_t a, int64_t n, int64_t t) {
    if (!sp.mass) return;
    for (int th = 0; th < job.n_threads; ++th) {
      const float* sums = job.per_thread[th].data() + job.off_mass + hp.tok_off + t;
      for (int64_t j = 0; j < n; ++j) sp.mass[a + j] += sums[j];
    }
  });
}

void run_phase(thread_pool& pool, attend_job& job, int phase, int64_t n_items, bool parallel) {
  job.phase = phase;
  job.n_items = n_items;
  job.next.store(0);
  attend_job* jp = &job;
  auto work = [jp](int ith, int) {
    for (int64_t it = jp->next.fetch_add(1); it < jp->n_items; it = jp->next.fetch_add(1)) {
      if (jp->phase == 1) {
        run_item(*jp, ith, it);
      } else if (jp->split) {
        merge_split(*jp, ith, it);
      } else {
        reduce_mass(*jp, it);
      }
    }
  };
  if (parallel && n_items > 1) {
    pool.run(work);
  } else {
    work(0, 1);
  }
}

template <class T>
void grow(std::vector<T>& v, size_t n) {
  if (v.size() < n) v.resize(n);
}

}  // namespace

void kv_attend(thread_pool& pool, const std::vector<kv_attn_head>& heads, int64_t head_dim,
               const float* q, int64_t ldq, int64_t n_q, int64_t n_heads, float scale, float* out,
               int64_t ldo, kv_attend_scratch& scratch, float mass_decay, float mass_scale, float softcap) {
  const int64_t n_kv = int64_t(heads.size()), hd = head_dim;
  KV_ASSERT(n_kv >= 1 && n_heads % n_kv == 0 && hd >= 1 && n_q >= 1);
  KV_ASSERT(mass_decay >= 0.0f && mass_decay <= 1.0f);
  attend_job job;
  job.mass_decay = mass_decay;
  job.mass_scale = mass_scale;
  job.softcap = softcap;
  job.heads = &heads;
  job.kern = pick_kernels(hd);
  job.q = q, job.ldq = ldq, job.out = out, job.ldo = ldo;
  job.hd = hd, job.n_q = n_q, job.n_kv = n_kv, job.G = n_heads / n_kv;
  job.scale = scale;
  const int64_t G = job.G;

  // Tokens and spans of every head.
  grow(scratch.plan, size_t(n_kv));
  head_plan* plan = scratch.plan.data();
  int64_t tok_total = 0, n_spans = 0, n_max = 0;
  bool any_mass = false;
  for (int64_t g = 0; g < n_kv; ++g) {
    plan[g] = head_plan{};
    plan[g].n_tokens = heads[size_t(g)].n_tokens();
    plan[g].tok_off = tok_total;
    plan[g].span0 = n_spans;
    tok_total += plan[g].n_tokens;
    n_spans += int64_t(heads[size_t(g)].spans.size());
    n_max = std::max(n_max, plan[g].n_tokens);
    any_mass = any_mass || head_has_mass(heads[size_t(g)]);
  }
  grow(scratch.span_start, size_t(std::max<int64_t>(n_spans, 1)));
  for (int64_t g = 0; g < n_kv; ++g) {
    int64_t t = 0, i = plan[g].span0;
    for (const kv_span& s : heads[size_t(g)].spans) {
      KV_ASSERT(s.n >= 0);
      KV_ASSERT(s.n == 0 || (s.kq ? s.vq && s.block && s.k_scale && s.v_scale : (s.k16 && s.v16) || (s.k32 && s.v32)));
      scratch.span_start[size_t(i++)] = t;
      t += s.n;
    }
  }
  job.plan = plan;
  job.span_start = scratch.span_start.data();

  const int nth = pool.size();
  const bool parallel = nth > 1 && n_q * G * tok_total * hd >= k_parallel_min_macs;
  job.split = n_q <= k_split_max_queries && n_q * G * tok_total <= k_split_max_scores;
  int64_t n_items = 0;
  bool second_phase = false;
  int64_t s_total = 0;  // split mode: score floats of all heads
  size_t shared_floats = 0;
  if (job.split) {
    job.rows_max = n_q * G;
    // Ranges: a few per thread over all heads' tokens, none shorter than k_min_split.
    const int64_t split_len =
        parallel ? std::max(k_min_split, round_up(ceil_div(tok_total, k_items_per_thread * nth), k_chunk))
                 : std::max<int64_t>(n_max, 1);
    for (int64_t g = 0; g < n_kv; ++g) {
      plan[g].split_len = split_len;
      plan[g].item0 = n_items;
      plan[g].n_items = std::max<int64_t>(1, ceil_div(plan[g].n_tokens, split_len));
      plan[g].s_ld = score_ld(plan[g].n_tokens);
      plan[g].s_off = s_total;
      s_total += job.rows_max * plan[g].s_ld;
      n_items += plan[g].n_items;
      second_phase = second_phase || plan[g].n_items > 1;
    }
    job.part_floats = job.rows_max * (2 + hd);
    shared_floats = size_t(s_total + (second_phase ? n_items * job.part_floats : 0));
  } else {
    job.ld_s = score_ld(n_max);
    job.qb = std::clamp<int64_t>(k_scores_floats / (G * job.ld_s), 1, k_max_query_block);
    job.n_blocks = ceil_div(n_q, job.qb);
    job.rows_max = job.qb * G;
    for (int64_t g = 0; g < n_kv; ++g) {
      plan[g].item0 = g * job.n_blocks;
      plan[g].n_items = job.n_blocks;
    }
    n_items = n_kv * job.n_blocks;
    second_phase = any_mass && job.n_blocks > 1;
  }

  // Scratch, grown only when this call needs more than any before.
  const int64_t R = job.rows_max;
  job.off_S = 2 * R * hd + k_chunk * hd + 2 * R;
  job.off_mass = job.off_S + (job.split ? 0 : R * job.ld_s);
  const int64_t per_thread = job.off_mass + (!job.split && second_phase ? tok_total : 0);
  job.n_threads = parallel ? nth : 1;
  grow(scratch.per_thread, size_t(job.n_threads));
  for (int th = 0; th < job.n_threads; ++th) {
    std::vector<float>& b = scratch.per_thread[size_t(th)];
    grow(b, size_t(per_thread));
    if (!job.split && second_phase) std::fill(b.begin() + job.off_mass, b.begin() + per_thread, 0.0f);
  }
  job.per_thread = scratch.per_thread.data();
  grow(scratch.shared, shared_floats);
  job.S_shared = scratch.shared.data();
  job.partial = job.S_shared + s_total;

  run_phase(pool, job, 1, n_items, parallel);
  if (second_phase) run_phase(pool, job, 2, job.split ? n_items : n_kv, parallel);
}

namespace ref {

void kv_attend(const std::vector<kv_attn_head>& heads, int64_t head_dim, const float* q,
               int64_t ldq, int64_t n_q, int64_t n_heads, float scale, float* out, int64_t ldo,
               float mass_decay, float mass_scale, float softcap) {
  const int64_t n_kv = int64_t(heads.size()), hd = head_dim;
  KV_ASSERT(n_kv >= 1 && n_heads % n_kv == 0);
  const int64_t G = n_heads / n_kv;
  for (int64_t g = 0; g < n_kv; ++g) {
    // The head's tokens in order, dequantised: K, V (N, hd); mass (N,) pointers or nullptr.
    std::vector<double> K, V;
    std::vector<float*> mass;
    for (const kv_span& s : heads[size_t(g)].spans)
      for (int64_t t = 0; t < s.n; ++t) {
        for (int64_t c = 0; c < hd; ++c) {
          if (s.kq) {
            K.push_back(double(s.kq[t * hd + c]) * s.k_scale[int64_t(s.block[t]) * hd + c]);
            V.push_back(double(s.vq[t * hd + c]) * s.v_scale[int64_t(s.block[t]) * hd + c]);
          } else if (s.k32) {
            K.push_back(s.k32[t * hd + c]);
            V.push_back(s.v32[t * hd + c]);
          } else {
            K.push_back(fp16_to_fp32(s.k16[t * hd + c]));
            V.push_back(fp16_to_fp32(s.v16[t * hd + c]));
          }
        }
        mass.push_back(s.mass ? s.mass + t : nullptr);
      }
    const int64_t N = int64_t(mass.size());
    std::vector<double> p(static_cast<size_t>(N));
    for (int64_t i = 0; i < n_q; ++i)
      for (int64_t h = g * G; h < (g + 1) * G; ++h) {
        const float* qr = q + i * ldq + h * hd;
        float* o = out + i * ldo + h * hd;
        const int64_t n = std::clamp<int64_t>(N - n_q + i + 1, 0, N);  // visible tokens
        double mx = -INFINITY, sum = 0.0;
        for (int64_t t = 0; t < n; ++t) {
          double s = 0.0;
          for (int64_t c = 0; c < hd; ++c) s += double(qr[c]) * K[size_t(t * hd + c)];
          p[size_t(t)] = s * scale;
          if (softcap > 0.0f) p[size_t(t)] = double(softcap) * std::tanh(p[size_t(t)] / double(softcap));
          mx = std::max(mx, p[size_t(t)]);
        }
        for (int64_t t = 0; t < n; ++t) sum += (p[size_t(t)] = std::exp(p[size_t(t)] - mx));
        for (int64_t c = 0; c < hd; ++c) {
          double acc = 0.0;
          for (int64_t t = 0; t < n; ++t) acc += p[size_t(t)] / sum * V[size_t(t * hd + c)];
          o[c] = float(acc);
        }
        const double w = double(mass_scale) * std::pow(double(mass_decay), double(n_q - 1 - i));  // query i's weight
        for (int64_t t = 0; t < n; ++t)
          if (mass[size_t(t)]) *mass[size_t(t)] += float(w * p[size_t(t)] / sum);
      }
  }
}

}  // namespace ref

}  // namespace kvarena
