// cuda-attention.cu: attention kernels of the CUDA backend.
//  span attention (decode, and any chunk over a policy's cache): the KV of each head is a
//    list of FP16/INT8 spans (the store's INT8 and FP16 segments, FreeKV's page slots);
//    grid (split, KV head, query row); a block loads 32-token tiles (INT8 dequantised in the
//    load, 8 channels per thread), scores the group's query heads against them, keeps a
//    running max/normaliser per head (online softmax) and accumulates P.V in shared memory;
//    partials of the splits are merged by span_combine_kernel; the per-key probability mass,
//    when asked, by span_mass_kernel, which recomputes the scores with the final max and
//    normaliser (no score buffer, so any chunk length works).
//  prefill attention: causal, over contiguous FP16 head-major caches; a block holds
//    `positions x group` query rows and walks 32-token key tiles up to its last position.
// Both kernels use plain F32 FMAs (no tensor cores yet; see README.md).
#include <cuda_fp16.h>

#include <algorithm>
#include <atomic>

#include "cuda-check.h"
#include "cuda-kernels.h"
#include "engine-error.h"

namespace kvarena::cu {

namespace {

constexpr int T = int(k_attn_tile);
static_assert(T == 32, "one token per lane in the softmax step");

struct span_params {
  const kv_head_dev* heads;
  const kv_span_dev* spans;
  int n_kv, n_heads, d, n_q;
  const float* q;
  int64_t ldq;
  float scale;
  float mass_decay;  // the mass of query row i is weighted mass_decay^(n_q - 1 - i)
};

__device__ __forceinline__ int64_t imin(int64_t a, int64_t b) { return a < b ? a : b; }

__device__ __forceinline__ float warp_max(float v) {
  for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}
__device__ __forceinline__ float warp_sum(float v) {
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}

// One tile of the online softmax over `rows` rows of T (= 32, one per lane) scores in
// s (rows, T), a warp per row: the running max m and exp-sum l are updated, the scores
// become probabilities exp(s - m_new), and a gets the factor that rescales the row's earlier
// output. Masked scores are -INFINITY.
__device__ __forceinline__ void online_softmax_tile(float* s, float* m, float* l, float* a, int rows) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, n_warps = blockDim.x >> 5;
  for (int r = warp; r < rows; r += n_warps) {
    const float x = s[r * T + lane];
    const float m_old = m[r];
    const float m_new = fmaxf(m_old, warp_max(x));
    const float alpha = m_old == -INFINITY ? 0.f : expf(m_old - m_new);
    const float pr = x == -INFINITY ? 0.f : expf(x - m_new);
    const float sum = warp_sum(pr);
    s[r * T + lane] = pr;
    if (lane == 0) {
      m[r] = m_new;
      l[r] = l[r] * alpha + sum;
      a[r] = alpha;
    }
  }
}

// acc (rows, d) = acc * a[row] + P V over the tile's tn tokens: P (rows, T) probabilities,
// V (tn, d) values.
__device__ __forceinline__ void accumulate_pv(float* acc, const float* P, const float* V, const float* a, int rows,
                                              int d, int tn) {
  for (int e = threadIdx.x; e < rows * d; e += blockDim.x) {
    const int r = e / d, c = e % d;
    const float* pr = P + r * T;
    float x = acc[e] * a[r];
    for (int t = 0; t < tn; ++t) x += pr[t] * V[t * d + c];
    acc[e] = x;
  }
}

// Span (global index) and offset of token tt of head H: the last span starting at or before tt.
__device__ void find_span(const kv_span_dev* spans, const kv_head_dev& H, int64_t tt, int64_t* span,
                          int64_t* off) {
  int lo = 0, hi = H.n_spans - 1;
  while (lo < hi) {
    const int mid = (lo + hi + 1) / 2;
    if (spans[H.span0 + mid].tok0 <= tt) lo = mid; else hi = mid - 1;
  }
  *span = H.span0 + lo;
  *off = tt - spans[H.span0 + lo].tok0;
}

// 8 channels [c0, c0+8) of token `off` of span sp: keys into kf, values into vf (if vf).
__device__ __forceinline__ void load8(const kv_span_dev& sp, int64_t off, int d, int c0, float* kf, float* vf) {
  if (sp.kq) {
    const int64_t blk = sp.block[off];
    const uint2 kq = *reinterpret_cast<const uint2*>(sp.kq + off * d + c0);
    const int8_t* kb = reinterpret_cast<const int8_t*>(&kq);
    const float4 ks0 = *reinterpret_cast<const float4*>(sp.k_scale + blk * d + c0);
    const float4 ks1 = *reinterpret_cast<const float4*>(sp.k_scale + blk * d + c0 + 4);
    const float ks[8] = {ks0.x, ks0.y, ks0.z, ks0.w, ks1.x, ks1.y, ks1.z, ks1.w};
    for (int j = 0; j < 8; ++j) kf[j] = float(kb[j]) * ks[j];
    if (vf) {
      const uint2 vq = *reinterpret_cast<const uint2*>(sp.vq + off * d + c0);
      const int8_t* vb = reinterpret_cast<const int8_t*>(&vq);
      const float4 vs0 = *reinterpret_cast<const float4*>(sp.v_scale + blk * d + c0);
      const float4 vs1 = *reinterpret_cast<const float4*>(sp.v_scale + blk * d + c0 + 4);
      const float vs[8] = {vs0.x, vs0.y, vs0.z, vs0.w, vs1.x, vs1.y, vs1.z, vs1.w};
      for (int j = 0; j < 8; ++j) vf[j] = float(vb[j]) * vs[j];
    }
  } else {
    const uint4 kh = *reinterpret_cast<const uint4*>(sp.k16 + off * d + c0);
    const __half2* k2 = reinterpret_cast<const __half2*>(&kh);
    for (int j = 0; j < 4; ++j) {
      const float2 f = __half22float2(k2[j]);
      kf[2 * j] = f.x;
      kf[2 * j + 1] = f.y;
    }
    if (vf) {
      const uint4 vh = *reinterpret_cast<const uint4*>(sp.v16 + off * d + c0);
      const __half2* v2 = reinterpret_cast<const __half2*>(&vh);
      for (int j = 0; j < 4; ++j) {
        const float2 f = __half22float2(v2[j]);
        vf[2 * j] = f.x;
        vf[2 * j + 1] = f.y;
      }
    }
  }
}

// Loads the tile's tokens [t0, t0 + tn) of head H into k_s (T, d+1) and v_s (T, d) (v_s may
// be null); rows >= tn are zero. tile_span/tile_off must hold the tile's spans.
__device__ void load_tile(const kv_span_dev* spans, const int64_t* tile_span, const int64_t* tile_off, int tn,
                          int d, float* k_s, float* v_s) {
  const int U = d / 8;
  for (int u = threadIdx.x; u < T * U; u += blockDim.x) {
    const int t = u / U, c0 = (u % U) * 8;
    float kf[8], vf[8];
    if (t < tn) {
      load8(spans[tile_span[t]], tile_off[t], d, c0, kf, v_s ? vf : nullptr);
    } else {
      for (int j = 0; j < 8; ++j) kf[j] = vf[j] = 0.f;
    }
    for (int j = 0; j < 8; ++j) k_s[t * (d + 1) + c0 + j] = kf[j];
    if (v_s)
      for (int j = 0; j < 8; ++j) v_s[t * d + c0 + j] = vf[j];
  }
}

// partial: (rows*n_heads, n_splits, d+2) = unnormalised acc, running max m, normaliser l.
__global__ void __launch_bounds__(k_attn_threads)
span_attention_kernel(span_params p, int64_t split_len, int64_t n_splits, float* partial) {
  const int64_t split = blockIdx.x, g = blockIdx.y, row = blockIdx.z;
  const int64_t b = row / p.n_q, i = row % p.n_q;
  const int G = p.n_heads / p.n_kv, d = p.d;
  const kv_head_dev H = p.heads[b * p.n_kv + g];
  int64_t t_begin, t_end;
  attn_split_tokens(H.n_tokens, p.n_q, i, split, split_len, &t_begin, &t_end);

  extern __shared__ __align__(16) unsigned char smem[];
  int64_t* tile_span = reinterpret_cast<int64_t*>(smem);  // (T,)
  int64_t* tile_off = tile_span + T;                      // (T,)
  float* q_s = reinterpret_cast<float*>(tile_off + T);    // (G, d)
  float* k_s = q_s + G * d;                               // (T, d+1)
  float* v_s = k_s + T * (d + 1);                         // (T, d)
  float* s_s = v_s + T * d;                               // (G, T) scores, then probabilities
  float* acc = s_s + G * T;                               // (G, d)
  float* m_s = acc + G * d;                               // (G,)
  float* l_s = m_s + G;                                   // (G,)
  float* a_s = l_s + G;                                   // (G,) rescale of this tile

  const float* qrow = p.q + row * p.ldq + g * G * d;  // the group's heads are contiguous
  for (int e = threadIdx.x; e < G * d; e += blockDim.x) {
    q_s[e] = qrow[e];
    acc[e] = 0.f;
  }
  for (int h = threadIdx.x; h < G; h += blockDim.x) {
    m_s[h] = -INFINITY;
    l_s[h] = 0.f;
  }
  __syncthreads();

  for (int64_t t0 = t_begin; t0 < t_end; t0 += T) {
    const int tn = int(imin(T, t_end - t0));
    if (threadIdx.x < tn) find_span(p.spans, H, t0 + threadIdx.x, &tile_span[threadIdx.x], &tile_off[threadIdx.x]);
    __syncthreads();
    load_tile(p.spans, tile_span, tile_off, tn, d, k_s, v_s);
    __syncthreads();
    for (int e = threadIdx.x; e < G * T; e += blockDim.x) {
      const int h = e / T, t = e % T;
      float s = -INFINITY;
      if (t < tn) {
        const float* qh = q_s + h * d;
        const float* kt = k_s + t * (d + 1);
        float a = 0.f;
        for (int c = 0; c < d; ++c) a += qh[c] * kt[c];
        s = a * p.scale;
      }
      s_s[e] = s;
    }
    __syncthreads();
    online_softmax_tile(s_s, m_s, l_s, a_s, G);
    __syncthreads();
    accumulate_pv(acc, s_s, v_s, a_s, G, d, tn);
    __syncthreads();
  }

  for (int e = threadIdx.x; e < G * d; e += blockDim.x) {
    const int h = e / d, c = e % d;
    partial[((row * p.n_heads + g * G + h) * n_splits + split) * (d + 2) + c] = acc[e];
  }
  for (int h = threadIdx.x; h < G; h += blockDim.x) {
    float* ph = partial + ((row * p.n_heads + g * G + h) * n_splits + split) * (d + 2);
    ph[d] = m_s[h];
    ph[d + 1] = l_s[h];
  }
}

// One block per (row, head): merges the splits; out = acc / L; stats = (M, L).
__global__ void span_combine_kernel(const float* partial, int64_t n_splits, int d, int n_heads, float* out,
                                    int64_t ldo, float* stats) {
  const int64_t rh = blockIdx.x, row = rh / n_heads, h = rh % n_heads;
  const float* base = partial + rh * n_splits * (d + 2);
  float M = -INFINITY;
  for (int64_t s = 0; s < n_splits; ++s) M = fmaxf(M, base[s * (d + 2) + d]);
  float L = 0.f;
  for (int64_t s = 0; s < n_splits; ++s)
    L += base[s * (d + 2) + d + 1] * merge_weight(base[s * (d + 2) + d], M);
  for (int c = threadIdx.x; c < d; c += blockDim.x) {
    float o = 0.f;
    for (int64_t s = 0; s < n_splits; ++s) o += base[s * (d + 2) + c] * merge_weight(base[s * (d + 2) + d], M);
    out[row * ldo + h * d + c] = L > 0.f ? o / L : 0.f;
  }
  if (threadIdx.x == 0) {
    stats[rh * 2] = M;
    stats[rh * 2 + 1] = L;
  }
}

// One block per (32-token tile, KV head, sequence): mass[t] += sum over the sequence's query
// rows i that see t and the group's heads of mass_decay^(n_q-1-i) exp(scale q.k - M) / L.
__global__ void __launch_bounds__(k_attn_threads)
span_mass_kernel(span_params p, const float* stats) {
  const int64_t t0 = int64_t(blockIdx.x) * T, g = blockIdx.y, b = blockIdx.z;
  const int G = p.n_heads / p.n_kv, d = p.d;
  const kv_head_dev H = p.heads[b * p.n_kv + g];
  const int64_t N = H.n_tokens;
  if (t0 >= N) return;
  const int tn = int(imin(T, N - t0));

  extern __shared__ __align__(16) unsigned char smem[];
  int64_t* tile_span = reinterpret_cast<int64_t*>(smem);
  int64_t* tile_off = tile_span + T;
  float* q_s = reinterpret_cast<float*>(tile_off + T);  // (G, d)
  float* k_s = q_s + G * d;                             // (T, d+1)
  float* macc = k_s + T * (d + 1);                      // (G, T)

  if (threadIdx.x < tn) find_span(p.spans, H, t0 + threadIdx.x, &tile_span[threadIdx.x], &tile_off[threadIdx.x]);
  for (int e = threadIdx.x; e < G * T; e += blockDim.x) macc[e] = 0.f;
  __syncthreads();
  load_tile(p.spans, tile_span, tile_off, tn, d, k_s, nullptr);
  for (int64_t i = 0; i < p.n_q; ++i) {
    const int64_t visible = N - p.n_q + i + 1;  // tokens [0, visible) are seen by row i
    if (t0 >= visible) continue;                // the same for every thread of the block
    const int64_t row = b * p.n_q + i;
    const float wq = p.mass_decay == 1.f ? 1.f : powf(p.mass_decay, float(p.n_q - 1 - i));
    __syncthreads();  // k_s complete; q_s no longer read by the previous row
    const float* qrow = p.q + row * p.ldq + g * G * d;
    for (int e = threadIdx.x; e < G * d; e += blockDim.x) q_s[e] = qrow[e];
    __syncthreads();
    for (int e = threadIdx.x; e < G * T; e += blockDim.x) {
      const int h = e / T, t = e % T;
      if (t >= tn || t0 + t >= visible) continue;
      const float M = stats[(row * p.n_heads + g * G + h) * 2];
      const float L = stats[(row * p.n_heads + g * G + h) * 2 + 1];
      if (!(L > 0.f)) continue;
      const float* qh = q_s + h * d;
      const float* kt = k_s + t * (d + 1);
      float a = 0.f;
      for (int c = 0; c < d; ++c) a += qh[c] * kt[c];
      macc[e] += wq * expf(a * p.scale - M) / L;
    }
  }
  __syncthreads();
  if (threadIdx.x < tn) {
    const kv_span_dev& sp = p.spans[tile_span[threadIdx.x]];
    if (sp.mass) {
      float m = 0.f;
      for (int h = 0; h < G; ++h) m += macc[h * T + threadIdx.x];
      sp.mass[tile_off[threadIdx.x]] += m;
    }
  }
}

// Causal prefill over contiguous FP16 caches. grid (ceil(n_q / P), n_kv); rows r = (i0 + r/G, g*G + r%G).
__global__ void __launch_bounds__(k_prefill_threads)
prefill_attention_kernel(const __half* k16, const __half* v16, int64_t head_stride, int64_t N, int n_kv,
                         int n_heads, int d, const float* q, int64_t ldq, int64_t n_q, float scale, float* out,
                         int64_t ldo, int P) {
  const int64_t g = blockIdx.y, i0 = int64_t(blockIdx.x) * P;
  const int G = n_heads / n_kv, R = P * G;
  extern __shared__ __align__(16) unsigned char smem[];
  float* q_s = reinterpret_cast<float*>(smem);  // (R, d)
  float* k_s = q_s + R * d;                     // (T, d+1)
  float* v_s = k_s + T * (d + 1);               // (T, d)
  float* s_s = v_s + T * d;                     // (R, T)
  float* acc = s_s + R * T;                     // (R, d)
  float* m_s = acc + R * d;                     // (R,)
  float* l_s = m_s + R;
  float* a_s = l_s + R;

  for (int e = threadIdx.x; e < R * d; e += blockDim.x) {
    const int r = e / d, c = e % d;
    const int64_t i = i0 + r / G, h = g * G + r % G;
    q_s[e] = i < n_q ? q[i * ldq + h * d + c] : 0.f;
    acc[e] = 0.f;
  }
  for (int r = threadIdx.x; r < R; r += blockDim.x) {
    m_s[r] = -INFINITY;
    l_s[r] = 0.f;
  }
  const int64_t i_last = imin(i0 + P, n_q) - 1;
  const int64_t t_stop = N - n_q + i_last + 1;  // tokens any row of the block sees
  const __half* kh = k16 + g * head_stride;
  const __half* vh = v16 + g * head_stride;
  const int U = d / 8;
  __syncthreads();
  for (int64_t t0 = 0; t0 < t_stop; t0 += T) {
    const int tn = int(imin(T, t_stop - t0));
    for (int u = threadIdx.x; u < T * U; u += blockDim.x) {
      const int t = u / U, c0 = (u % U) * 8;
      float kf[8], vf[8];
      if (t < tn) {
        const uint4 kr = *reinterpret_cast<const uint4*>(kh + (t0 + t) * d + c0);
        const uint4 vr = *reinterpret_cast<const uint4*>(vh + (t0 + t) * d + c0);
        const __half2* k2 = reinterpret_cast<const __half2*>(&kr);
        const __half2* v2 = reinterpret_cast<const __half2*>(&vr);
        for (int j = 0; j < 4; ++j) {
          const float2 a = __half22float2(k2[j]), b2 = __half22float2(v2[j]);
          kf[2 * j] = a.x, kf[2 * j + 1] = a.y, vf[2 * j] = b2.x, vf[2 * j + 1] = b2.y;
        }
      } else {
        for (int j = 0; j < 8; ++j) kf[j] = vf[j] = 0.f;
      }
      for (int j = 0; j < 8; ++j) {
        k_s[t * (d + 1) + c0 + j] = kf[j];
        v_s[t * d + c0 + j] = vf[j];
      }
    }
    __syncthreads();
    for (int e = threadIdx.x; e < R * T; e += blockDim.x) {
      const int r = e / T, t = e % T;
      const int64_t i = i0 + r / G;
      float s = -INFINITY;
      if (t < tn && i < n_q && t0 + t <= N - n_q + i) {
        const float* qr = q_s + r * d;
        const float* kt = k_s + t * (d + 1);
        float a = 0.f;
        for (int c = 0; c < d; ++c) a += qr[c] * kt[c];
        s = a * scale;
      }
      s_s[e] = s;
    }
    __syncthreads();
    online_softmax_tile(s_s, m_s, l_s, a_s, R);
    __syncthreads();
    accumulate_pv(acc, s_s, v_s, a_s, R, d, tn);
    __syncthreads();
  }
  for (int e = threadIdx.x; e < R * d; e += blockDim.x) {
    const int r = e / d, c = e % d;
    const int64_t i = i0 + r / G, h = g * G + r % G;
    if (i < n_q) out[i * ldo + h * d + c] = l_s[r] > 0.f ? acc[e] / l_s[r] : 0.f;
  }
}

constexpr size_t k_default_smem = 48 * 1024;

// Raises a kernel's dynamic shared memory limit once to what a launch needs.
template <class K>
void ensure_smem(K kernel, std::atomic<size_t>& set, size_t bytes) {
  if (bytes <= k_default_smem || bytes <= set.load()) return;
  if (bytes > max_smem_optin())
    throw engine_error("cuda attention: needs " + std::to_string(bytes) + " bytes of shared memory per block, the device allows " +
                       std::to_string(max_smem_optin()) + " (head_dim or group too large)");
  CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(bytes)));
  set.store(bytes);
}

std::atomic<size_t> g_span_smem{0}, g_mass_smem{0}, g_prefill_smem{0};

void check_shape(int64_t n_kv, int64_t n_heads, int64_t head_dim) {
  if (n_kv <= 0 || n_heads % n_kv != 0)
    throw engine_error("cuda attention: n_heads " + std::to_string(n_heads) + " is not a multiple of n_kv_heads " +
                       std::to_string(n_kv));
  if (head_dim % 8 != 0 || head_dim > k_max_head_dim || head_dim <= 0)
    throw engine_error("cuda attention: head_dim " + std::to_string(head_dim) +
                       " unsupported (a multiple of 8, at most 256)");
}

}  // namespace

// ---- device facts ----

namespace {
int current_device() {
  int dev = 0;
  CUDA_CHECK(cudaGetDevice(&dev));
  return dev;
}
}  // namespace

int sm_count() {
  static std::atomic<int> cached{0};
  int v = cached.load();
  if (v == 0) {
    CUDA_CHECK(cudaDeviceGetAttribute(&v, cudaDevAttrMultiProcessorCount, current_device()));
    cached.store(v);
  }
  return v;
}

size_t max_smem_optin() {
  static std::atomic<int> cached{0};
  int v = cached.load();
  if (v == 0) {
    CUDA_CHECK(cudaDeviceGetAttribute(&v, cudaDevAttrMaxSharedMemoryPerBlockOptin, current_device()));
    cached.store(v);
  }
  return size_t(v);
}

// ---- span table ----

void kv_span_table::clear() {
  heads_.clear();
  spans_.clear();
}

void kv_span_table::begin_head() {
  kv_head_dev h;
  h.span0 = int32_t(spans_.size());
  heads_.push_back(h);
}

void kv_span_table::add_span(const kv_span_dev& s) {
  KV_ASSERT(!heads_.empty());
  if (s.n <= 0) return;
  kv_head_dev& h = heads_.back();
  kv_span_dev t = s;
  t.tok0 = h.n_tokens;
  spans_.push_back(t);
  h.n_spans += 1;
  h.n_tokens += s.n;
}

int64_t kv_span_table::max_tokens() const {
  int64_t m = 0;
  for (const kv_head_dev& h : heads_) m = std::max(m, h.n_tokens);
  return m;
}

void kv_span_table::upload(cuda_allocator& a, cudaStream_t st) {
  if (d_heads_.size() < heads_.size())
    d_heads_ = cuda_buffer<kv_head_dev>(a, std::max<size_t>(heads_.size(), 2 * d_heads_.size()), "attention span table");
  if (d_spans_.size() < std::max<size_t>(1, spans_.size()))
    d_spans_ = cuda_buffer<kv_span_dev>(a, std::max<size_t>({spans_.size(), 2 * d_spans_.size(), 16}), "attention span table");
  // Through the pinned ring: the copies are asynchronous and the host vectors may change
  // right after; stream order keeps earlier kernels' reads of the device arrays intact.
  stage_.upload(d_heads_.data(), heads_.data(), heads_.size() * sizeof(kv_head_dev), a, st);
  stage_.upload(d_spans_.data(), spans_.data(), spans_.size() * sizeof(kv_span_dev), a, st);
}

// ---- launchers ----

void attend_spans(const span_attention_args& a, attention_scratch& scratch, cuda_allocator& alloc, cudaStream_t st) {
  check_shape(a.n_kv, a.n_heads, a.head_dim);
  KV_ASSERT(a.n_q >= 1 && a.n_seq >= 1);
  const int64_t rows = a.n_seq * a.n_q, G = a.n_heads / a.n_kv, d = a.head_dim;
  attn_split_plan plan = plan_attention_splits(a.max_tokens, a.n_kv * rows, sm_count());
  if (a.force_splits > 0) {
    plan.n_splits = a.force_splits;
    plan.split_len = std::max<int64_t>(k_attn_tile, ceil_div(ceil_div(std::max<int64_t>(a.max_tokens, 1), a.force_splits), k_attn_tile) * k_attn_tile);
  }
  const size_t n_partial = size_t(rows * a.n_heads * plan.n_splits * (d + 2));
  if (scratch.partial.size() < n_partial) scratch.partial = cuda_buffer<float>(alloc, n_partial, "attention partials");
  const size_t n_stats = size_t(rows * a.n_heads * 2);
  if (scratch.stats.size() < n_stats) scratch.stats = cuda_buffer<float>(alloc, n_stats, "attention stats");

  span_params p{a.heads, a.spans, int(a.n_kv), int(a.n_heads), int(d), int(a.n_q), a.q, a.ldq, a.scale, a.mass_decay};
  const size_t smem = span_attention_smem_bytes(G, d);
  ensure_smem(span_attention_kernel, g_span_smem, smem);
  KV_ASSERT(rows <= 65535 && a.n_kv <= 65535);
  const dim3 grid(unsigned(plan.n_splits), unsigned(a.n_kv), unsigned(rows));
  span_attention_kernel<<<grid, k_attn_threads, smem, st>>>(p, plan.split_len, plan.n_splits, scratch.partial.data());
  CUDA_CHECK_LAUNCH();
  span_combine_kernel<<<unsigned(rows * a.n_heads), 128, 0, st>>>(scratch.partial.data(), plan.n_splits, int(d),
                                                                  int(a.n_heads), a.out, a.ldo, scratch.stats.data());
  CUDA_CHECK_LAUNCH();
  if (a.mass && a.max_tokens > 0) {
    const size_t msmem = size_t(2 * k_attn_tile) * 8 + size_t(G * d + k_attn_tile * (d + 1) + G * k_attn_tile) * 4;
    ensure_smem(span_mass_kernel, g_mass_smem, msmem);
    const dim3 mgrid(unsigned(ceil_div(a.max_tokens, k_attn_tile)), unsigned(a.n_kv), unsigned(a.n_seq));
    span_mass_kernel<<<mgrid, k_attn_threads, msmem, st>>>(p, scratch.stats.data());
    CUDA_CHECK_LAUNCH();
  }
}

void attend_prefill(const uint16_t* k16, const uint16_t* v16, int64_t head_stride, int64_t n_tokens, int64_t n_kv,
                    int64_t n_heads, int64_t head_dim, const float* q, int64_t ldq, int64_t n_q, float scale,
                    float* out, int64_t ldo, cudaStream_t st) {
  check_shape(n_kv, n_heads, head_dim);
  KV_ASSERT(n_q >= 1 && n_q <= n_tokens);
  const int64_t G = n_heads / n_kv;
  const int64_t P = prefill_positions_per_block(G, head_dim, std::max(max_smem_optin(), k_default_smem));
  if (P < 1)
    throw engine_error("cuda prefill attention: group " + std::to_string(G) + " x head_dim " +
                       std::to_string(head_dim) + " does not fit in shared memory");
  const size_t smem = prefill_attention_smem_bytes(P * G, head_dim);
  ensure_smem(prefill_attention_kernel, g_prefill_smem, smem);
  const dim3 grid(unsigned(ceil_div(n_q, P)), unsigned(n_kv));
  prefill_attention_kernel<<<grid, k_prefill_threads, smem, st>>>(
      reinterpret_cast<const __half*>(k16), reinterpret_cast<const __half*>(v16), head_stride, n_tokens, int(n_kv),
      int(n_heads), int(head_dim), q, ldq, n_q, scale, out, ldo, int(P));
  CUDA_CHECK_LAUNCH();
}

}  // namespace kvarena::cu
