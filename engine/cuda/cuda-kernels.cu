// cuda-kernels.cu: the row and element kernels of the CUDA backend (norms, RoPE,
// activations, embedding, conversions, greedy argmax, KV writes, INT8 blocks, row gathers,
// FreeKV page digests and scores) and their launchers (declared in cuda-kernels.h).
// Attention lives in cuda-attention.cu. Each kernel's CPU reference is named in the header;
// tests/test-cuda-kernels.cpp checks every one against it.
#include <cuda_fp16.h>

#include <algorithm>
#include <cstring>

#include "cuda-check.h"
#include "cuda-kernels.h"
#include "cuda-rowmath.h"

namespace kvarena::cu {

namespace {

constexpr int k_threads = 256;

// Blocks for a grid-stride loop over n elements.
unsigned grid_for(int64_t n) {
  return unsigned(std::clamp<int64_t>(ceil_div(n, k_threads), 1, 65535 * 8));
}

__device__ __forceinline__ float warp_sum(float v) {
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}

// Sum over the block (blockDim.x a multiple of 32, <= 1024); every thread gets the result.
__device__ float block_sum(float v) {
  __shared__ float part[32];
  __shared__ float total;
  const int lane = threadIdx.x & 31, w = threadIdx.x >> 5;
  v = warp_sum(v);
  __syncthreads();  // part may still be read by an earlier call
  if (lane == 0) part[w] = v;
  __syncthreads();
  if (w == 0) {
    float s = lane < int(blockDim.x >> 5) ? part[lane] : 0.f;
    s = warp_sum(s);
    if (lane == 0) total = s;
  }
  __syncthreads();
  return total;
}

__global__ void rmsnorm_kernel(const float* x, const float* w, float* y, int64_t dim, float eps) {
  const float* xr = x + blockIdx.x * dim;
  float* yr = y + blockIdx.x * dim;
  float ss = 0.f;
  for (int64_t c = threadIdx.x; c < dim; c += blockDim.x) ss += xr[c] * xr[c];
  ss = block_sum(ss);
  const float inv = rsqrtf(ss / float(dim) + eps);
  for (int64_t c = threadIdx.x; c < dim; c += blockDim.x) yr[c] = xr[c] * inv * w[c];
}

__global__ void layernorm_kernel(const float* x, const float* w, const float* b, float* y, int64_t dim,
                                 float eps) {
  const float* xr = x + blockIdx.x * dim;
  float* yr = y + blockIdx.x * dim;
  float s = 0.f;
  for (int64_t c = threadIdx.x; c < dim; c += blockDim.x) s += xr[c];
  const float mean = block_sum(s) / float(dim);
  float v = 0.f;
  for (int64_t c = threadIdx.x; c < dim; c += blockDim.x) v += (xr[c] - mean) * (xr[c] - mean);
  const float inv = rsqrtf(block_sum(v) / float(dim) + eps);
  for (int64_t c = threadIdx.x; c < dim; c += blockDim.x)
    yr[c] = (xr[c] - mean) * inv * w[c] + (b ? b[c] : 0.f);
}

// One thread per (row, head, pair): cu::rope_pair (cuda-rowmath.h).
__global__ void rope_kernel(float* x, int64_t ld, int64_t n, int64_t n_heads, int64_t head_dim,
                            int64_t rope_dims, const int32_t* pos, float freq_base, float freq_scale,
                            const float* freq_factors, bool neox) {
  const int64_t total = n * n_heads * (rope_dims / 2);
  for (int64_t e = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; e < total;
       e += int64_t(gridDim.x) * blockDim.x)
    rope_pair(x, ld, n_heads, head_dim, rope_dims, pos, freq_base, freq_scale, freq_factors, neox, e);
}

// One warp per (row, head) unit, in place: cu::head_norm_partial, the butterfly, head_norm_inv.
__global__ void rmsnorm_heads_kernel(float* x, int64_t ld, int64_t n, int64_t n_heads, int64_t head_dim,
                                     const float* w, float eps) {
  const int lane = threadIdx.x & 31;
  const int64_t u = blockIdx.x * int64_t(blockDim.x >> 5) + (threadIdx.x >> 5);
  if (u >= n * n_heads) return;  // whole warps leave together
  float* xh = x + (u / n_heads) * ld + (u % n_heads) * head_dim;
  float ss = head_norm_partial(xh, head_dim, lane);
  for (int o = 16; o > 0; o >>= 1) ss += __shfl_xor_sync(0xffffffffu, ss, o);
  const float inv = head_norm_inv(ss, head_dim, eps);
  for (int64_t c = lane; c < head_dim; c += k_head_norm_lanes) xh[c] = xh[c] * inv * w[c];
}

__global__ void silu_mul_kernel(float* gate, int64_t ldg, const float* up, int64_t ldu, int64_t n,
                                int64_t width) {
  for (int64_t e = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; e < n * width;
       e += int64_t(gridDim.x) * blockDim.x) {
    const int64_t i = e / width, j = e % width;
    const float g = gate[i * ldg + j];
    gate[i * ldg + j] = g / (1.f + expf(-g)) * up[i * ldu + j];
  }
}

__global__ void gelu_kernel(float* x, int64_t n) {
  for (int64_t e = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; e < n; e += int64_t(gridDim.x) * blockDim.x) {
    const float v = x[e];
    x[e] = 0.5f * v * (1.f + tanhf(0.7978845608028654f * (v + 0.044715f * v * v * v)));
  }
}

__global__ void add_kernel(float* y, const float* x, int64_t n) {
  for (int64_t e = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; e < n; e += int64_t(gridDim.x) * blockDim.x)
    y[e] += x[e];
}

__global__ void add_bias_kernel(float* y, int64_t ld, const float* b, int64_t n, int64_t width) {
  for (int64_t e = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; e < n * width;
       e += int64_t(gridDim.x) * blockDim.x)
    y[(e / width) * ld + e % width] += b[e % width];
}

__global__ void embed_f16_kernel(const __half* table, int64_t dim, const int32_t* tokens, int64_t n, float* x) {
  for (int64_t e = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; e < n * dim;
       e += int64_t(gridDim.x) * blockDim.x) {
    const int64_t i = e / dim, c = e % dim;
    x[e] = __half2float(table[int64_t(tokens[i]) * dim + c]);
  }
}

constexpr float k_f16_max = 65504.f;  // the largest finite F16

__global__ void f32_to_f16_kernel(const float* src, int64_t lds, __half* dst, int64_t ldd, int64_t n,
                                  int64_t width) {
  for (int64_t e = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; e < n * width;
       e += int64_t(gridDim.x) * blockDim.x) {
    const int64_t i = e / width, j = e % width;
    const float x = src[i * lds + j];
    // Saturate (cuda_ref::f32_to_f16_sat): comparisons, so NaN passes through unchanged.
    dst[i * ldd + j] = __float2half_rn(x > k_f16_max ? k_f16_max : (x < -k_f16_max ? -k_f16_max : x));
  }
}

__global__ void f16_to_f32_kernel(const __half* src, int64_t lds, float* dst, int64_t ldd, int64_t n,
                                  int64_t width) {
  for (int64_t e = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; e < n * width;
       e += int64_t(gridDim.x) * blockDim.x) {
    const int64_t i = e / width, j = e % width;
    dst[i * ldd + j] = __half2float(src[i * lds + j]);
  }
}

// (value, index) max with ties to the lower index; NaN never wins.
__device__ __forceinline__ void arg_better(float& v, int64_t& i, float v2, int64_t i2) {
  if (v2 > v || (v2 == v && i2 < i)) {
    v = v2;
    i = i2;
  }
}

__global__ void argmax_kernel(const float* x, int64_t n_cols, int64_t ld, int32_t* out) {
  const float* xr = x + blockIdx.x * ld;
  float bv = -INFINITY;
  int64_t bi = n_cols;  // "none yet": loses every tie
  for (int64_t c = threadIdx.x; c < n_cols; c += blockDim.x) arg_better(bv, bi, xr[c], c);
  for (int o = 16; o > 0; o >>= 1) {
    const float v2 = __shfl_xor_sync(0xffffffffu, bv, o);
    const int64_t i2 = __shfl_xor_sync(0xffffffffu, bi, o);
    arg_better(bv, bi, v2, i2);
  }
  __shared__ float sv[32];
  __shared__ int64_t si[32];
  const int lane = threadIdx.x & 31, w = threadIdx.x >> 5;
  if (lane == 0) {
    sv[w] = bv;
    si[w] = bi;
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    for (int k = 1; k < int(blockDim.x >> 5); ++k) arg_better(bv, bi, sv[k], si[k]);
    out[blockIdx.x] = int32_t(bi < n_cols ? bi : 0);  // all -inf or NaN: token 0, as argmax()
  }
}

__global__ void kv_write_f16_kernel(const float* k, const float* v, int64_t ld, int64_t n, int64_t n_kv,
                                    int64_t d, __half* k16, __half* v16, int64_t head_stride, int64_t tok0,
                                    const int32_t* head_tok0) {
  const int64_t total = n * n_kv * d;
  for (int64_t e = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; e < total;
       e += int64_t(gridDim.x) * blockDim.x) {
    const int64_t c = e % d, g = (e / d) % n_kv, i = e / (d * n_kv);
    const int64_t t = (head_tok0 ? int64_t(head_tok0[g]) : tok0) + i;
    const int64_t dst = g * head_stride + t * d + c;
    k16[dst] = __float2half_rn(k[i * ld + g * d + c]);
    v16[dst] = __float2half_rn(v[i * ld + g * d + c]);
  }
}

__global__ void kv_write_f16_rows_kernel(const float* k, const float* v, int64_t ld, int64_t n, int64_t n_kv,
                                         int64_t d, __half* const* k_dst, __half* const* v_dst, const int32_t* slot,
                                         int64_t head_stride) {
  const int64_t total = n * n_kv * d;
  for (int64_t e = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; e < total;
       e += int64_t(gridDim.x) * blockDim.x) {
    const int64_t c = e % d, g = (e / d) % n_kv, i = e / (d * n_kv);
    const int64_t dst = g * head_stride + int64_t(slot[i]) * d + c;
    k_dst[i][dst] = __float2half_rn(k[i * ld + g * d + c]);
    v_dst[i][dst] = __float2half_rn(v[i * ld + g * d + c]);
  }
}

// One block per unit, one thread per channel (grid-stride over channels).
__global__ void kv_quantize_kernel(const __half* src, int64_t src_stride, int64_t n_tok, int64_t d,
                                   int8_t* q, int64_t q_stride, float* scale, int64_t scale_stride) {
  const int64_t u = blockIdx.x;
  const __half* x = src + u * src_stride;
  int8_t* qu = q + u * q_stride;
  for (int64_t c = threadIdx.x; c < d; c += blockDim.x) {
    float amax = 0.f;
    for (int64_t t = 0; t < n_tok; ++t) amax = fmaxf(amax, fabsf(__half2float(x[t * d + c])));
    const float s = amax / 127.f;
    scale[u * scale_stride + c] = s;
    for (int64_t t = 0; t < n_tok; ++t) {
      const float r = s > 0.f ? rintf(__half2float(x[t * d + c]) / s) : 0.f;
      qu[t * d + c] = int8_t(fminf(fmaxf(r, -127.f), 127.f));
    }
  }
}

template <class U>
__global__ void gather_rows_kernel(const U* src, U* dst, int64_t units_per_row, const int32_t* src_idx,
                                   const int32_t* dst_idx, int64_t n) {
  for (int64_t e = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; e < n * units_per_row;
       e += int64_t(gridDim.x) * blockDim.x) {
    const int64_t j = e / units_per_row, u = e % units_per_row;
    const int64_t dj = dst_idx ? int64_t(dst_idx[j]) : j;
    const int64_t sj = src_idx ? int64_t(src_idx[j]) : j;
    dst[dj * units_per_row + u] = src[sj * units_per_row + u];
  }
}

__global__ void page_digest_kernel(const __half* keys, int64_t unit_stride, int64_t page, int64_t d,
                                   float* kmin, float* kmax) {
  const int64_t u = blockIdx.x;
  const __half* k = keys + u * unit_stride;
  for (int64_t c = threadIdx.x; c < d; c += blockDim.x) {
    float lo = INFINITY, hi = -INFINITY;
    for (int64_t t = 0; t < page; ++t) {
      const float x = __half2float(k[t * d + c]);
      lo = fminf(lo, x);
      hi = fmaxf(hi, x);
    }
    kmin[u * d + c] = lo;
    kmax[u * d + c] = hi;
  }
}

// One warp per (query head h, candidate j): the Quest bound.
__global__ void page_bounds_kernel(const float* q, const float* kmin, const float* kmax, const int32_t* cand,
                                   int64_t n_cand, int64_t n_heads, int64_t n_kv, int64_t d, float scale,
                                   float* bounds) {
  const int64_t warp = (blockIdx.x * int64_t(blockDim.x) + threadIdx.x) >> 5;
  const int lane = threadIdx.x & 31;
  if (warp >= n_heads * n_cand) return;  // whole warps leave together
  const int64_t h = warp / n_cand, j = warp % n_cand, g = h / (n_heads / n_kv);
  const float* qh = q + h * d;
  const float* mn = kmin + (int64_t(cand[j]) * n_kv + g) * d;
  const float* mx = kmax + (int64_t(cand[j]) * n_kv + g) * d;
  float s = 0.f;
  for (int64_t c = lane; c < d; c += 32) s += fmaxf(qh[c] * mx[c], qh[c] * mn[c]);
  s = warp_sum(s);
  if (lane == 0) bounds[h * n_cand + j] = s * scale;
}

// One block per KV head: softmax over candidates per query head, mean over the group.
__global__ void page_softmax_mean_kernel(const float* bounds, int64_t n_cand, int64_t n_heads, int64_t n_kv,
                                         float* out) {
  const int64_t g = blockIdx.x, G = n_heads / n_kv;
  float* o = out + g * n_cand;
  for (int64_t j = threadIdx.x; j < n_cand; j += blockDim.x) o[j] = 0.f;
  for (int64_t h = g * G; h < (g + 1) * G; ++h) {
    const float* b = bounds + h * n_cand;
    float mx = -INFINITY;
    for (int64_t j = threadIdx.x; j < n_cand; j += blockDim.x) mx = fmaxf(mx, b[j]);
    // block max through the sum helper's pattern
    __shared__ float part[32];
    __shared__ float bmax;
    for (int off = 16; off > 0; off >>= 1) mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, off));
    __syncthreads();
    if ((threadIdx.x & 31) == 0) part[threadIdx.x >> 5] = mx;
    __syncthreads();
    if (threadIdx.x == 0) {
      float m = part[0];
      for (int k = 1; k < int(blockDim.x >> 5); ++k) m = fmaxf(m, part[k]);
      bmax = m;
    }
    __syncthreads();
    const float m = bmax;
    float z = 0.f;
    for (int64_t j = threadIdx.x; j < n_cand; j += blockDim.x) z += expf(b[j] - m);
    z = block_sum(z);
    for (int64_t j = threadIdx.x; j < n_cand; j += blockDim.x) o[j] += expf(b[j] - m) / z / float(G);
  }
}

}  // namespace

// ---- launchers ----

void rmsnorm(const float* x, const float* w, float* y, int64_t n, int64_t dim, float eps, cudaStream_t st) {
  if (n <= 0) return;
  rmsnorm_kernel<<<unsigned(n), k_threads, 0, st>>>(x, w, y, dim, eps);
  CUDA_CHECK_LAUNCH();
}

void layernorm(const float* x, const float* w, const float* b, float* y, int64_t n, int64_t dim, float eps,
               cudaStream_t st) {
  if (n <= 0) return;
  layernorm_kernel<<<unsigned(n), k_threads, 0, st>>>(x, w, b, y, dim, eps);
  CUDA_CHECK_LAUNCH();
}

void rope(float* x, int64_t ld, int64_t n, int64_t n_heads, int64_t head_dim, int64_t rope_dims,
          const int32_t* pos, float freq_base, float freq_scale, const float* freq_factors, bool neox,
          cudaStream_t st) {
  const int64_t total = n * n_heads * (rope_dims / 2);
  if (total <= 0) return;
  rope_kernel<<<grid_for(total), k_threads, 0, st>>>(x, ld, n, n_heads, head_dim, rope_dims, pos, freq_base,
                                                     freq_scale, freq_factors, neox);
  CUDA_CHECK_LAUNCH();
}

void rmsnorm_heads(float* x, int64_t ld, int64_t n, int64_t n_heads, int64_t head_dim, const float* w, float eps,
                   cudaStream_t st) {
  const int64_t units = n * n_heads, per_block = k_threads / 32;
  if (units <= 0) return;
  rmsnorm_heads_kernel<<<unsigned(ceil_div(units, per_block)), k_threads, 0, st>>>(x, ld, n, n_heads, head_dim, w,
                                                                                     eps);
  CUDA_CHECK_LAUNCH();
}

void silu_mul(float* gate, int64_t ld_gate, const float* up, int64_t ld_up, int64_t n, int64_t width,
              cudaStream_t st) {
  if (n * width <= 0) return;
  silu_mul_kernel<<<grid_for(n * width), k_threads, 0, st>>>(gate, ld_gate, up, ld_up, n, width);
  CUDA_CHECK_LAUNCH();
}

void gelu(float* x, int64_t n, cudaStream_t st) {
  if (n <= 0) return;
  gelu_kernel<<<grid_for(n), k_threads, 0, st>>>(x, n);
  CUDA_CHECK_LAUNCH();
}

void add(float* y, const float* x, int64_t n, cudaStream_t st) {
  if (n <= 0) return;
  add_kernel<<<grid_for(n), k_threads, 0, st>>>(y, x, n);
  CUDA_CHECK_LAUNCH();
}

void add_bias(float* y, int64_t ld, const float* b, int64_t n, int64_t width, cudaStream_t st) {
  if (n * width <= 0 || !b) return;
  add_bias_kernel<<<grid_for(n * width), k_threads, 0, st>>>(y, ld, b, n, width);
  CUDA_CHECK_LAUNCH();
}

void embed_f16(const uint16_t* table, int64_t dim, const int32_t* tokens, int64_t n, float* x, cudaStream_t st) {
  if (n * dim <= 0) return;
  embed_f16_kernel<<<grid_for(n * dim), k_threads, 0, st>>>(reinterpret_cast<const __half*>(table), dim,
                                                            tokens, n, x);
  CUDA_CHECK_LAUNCH();
}

void f32_to_f16(const float* src, int64_t ld_src, uint16_t* dst, int64_t ld_dst, int64_t n, int64_t width,
                cudaStream_t st) {
  if (n * width <= 0) return;
  f32_to_f16_kernel<<<grid_for(n * width), k_threads, 0, st>>>(src, ld_src, reinterpret_cast<__half*>(dst),
                                                               ld_dst, n, width);
  CUDA_CHECK_LAUNCH();
}

void f16_to_f32(const uint16_t* src, int64_t ld_src, float* dst, int64_t ld_dst, int64_t n, int64_t width,
                cudaStream_t st) {
  if (n * width <= 0) return;
  f16_to_f32_kernel<<<grid_for(n * width), k_threads, 0, st>>>(reinterpret_cast<const __half*>(src), ld_src,
                                                               dst, ld_dst, n, width);
  CUDA_CHECK_LAUNCH();
}

void argmax(const float* x, int64_t n_rows, int64_t n_cols, int64_t ld, int32_t* out, cudaStream_t st) {
  if (n_rows <= 0) return;
  argmax_kernel<<<unsigned(n_rows), 1024, 0, st>>>(x, n_cols, ld, out);
  CUDA_CHECK_LAUNCH();
}

void kv_write_f16(const float* k, const float* v, int64_t ld, int64_t n, int64_t n_kv, int64_t head_dim,
                  uint16_t* k16, uint16_t* v16, int64_t head_stride, int64_t tok0, cudaStream_t st,
                  const int32_t* head_tok0) {
  const int64_t total = n * n_kv * head_dim;
  if (total <= 0) return;
  kv_write_f16_kernel<<<grid_for(total), k_threads, 0, st>>>(k, v, ld, n, n_kv, head_dim,
                                                             reinterpret_cast<__half*>(k16),
                                                             reinterpret_cast<__half*>(v16), head_stride, tok0,
                                                             head_tok0);
  CUDA_CHECK_LAUNCH();
}

void kv_write_f16_rows(const float* k, const float* v, int64_t ld, int64_t n, int64_t n_kv, int64_t head_dim,
                       uint16_t* const* k_dst, uint16_t* const* v_dst, const int32_t* slot, int64_t head_stride,
                       cudaStream_t st) {
  const int64_t total = n * n_kv * head_dim;
  if (total <= 0) return;
  kv_write_f16_rows_kernel<<<grid_for(total), k_threads, 0, st>>>(
      k, v, ld, n, n_kv, head_dim, reinterpret_cast<__half* const*>(k_dst), reinterpret_cast<__half* const*>(v_dst),
      slot, head_stride);
  CUDA_CHECK_LAUNCH();
}

void kv_quantize_f16(const uint16_t* src, int64_t src_stride, int64_t n_units, int64_t n_tok, int64_t head_dim,
                     int8_t* q, int64_t q_stride, float* scale, int64_t scale_stride, cudaStream_t st) {
  if (n_units <= 0) return;
  kv_quantize_kernel<<<unsigned(n_units), unsigned(std::min<int64_t>(head_dim, 256)), 0, st>>>(
      reinterpret_cast<const __half*>(src), src_stride, n_tok, head_dim, q, q_stride, scale, scale_stride);
  CUDA_CHECK_LAUNCH();
}

void gather_rows(const void* src, void* dst, int64_t row_bytes, const int32_t* idx, const int32_t* dst_idx, int64_t n,
                 cudaStream_t st) {
  if (n <= 0 || row_bytes <= 0) return;
  const auto addr = reinterpret_cast<uintptr_t>(src) | reinterpret_cast<uintptr_t>(dst);
  if (row_bytes % 16 == 0 && addr % 16 == 0) {
    const int64_t u = row_bytes / 16;
    gather_rows_kernel<<<grid_for(n * u), k_threads, 0, st>>>(static_cast<const uint4*>(src),
                                                              static_cast<uint4*>(dst), u, idx, dst_idx, n);
  } else if (row_bytes % 4 == 0 && addr % 4 == 0) {
    const int64_t u = row_bytes / 4;
    gather_rows_kernel<<<grid_for(n * u), k_threads, 0, st>>>(static_cast<const uint32_t*>(src),
                                                              static_cast<uint32_t*>(dst), u, idx, dst_idx, n);
  } else {
    gather_rows_kernel<<<grid_for(n * row_bytes), k_threads, 0, st>>>(static_cast<const uint8_t*>(src),
                                                                      static_cast<uint8_t*>(dst), row_bytes, idx, dst_idx, n);
  }
  CUDA_CHECK_LAUNCH();
}

void page_digest(const uint16_t* keys, int64_t unit_stride, int64_t n_units, int64_t page, int64_t head_dim,
                 float* kmin, float* kmax, cudaStream_t st) {
  if (n_units <= 0) return;
  page_digest_kernel<<<unsigned(n_units), unsigned(std::min<int64_t>(head_dim, 256)), 0, st>>>(
      reinterpret_cast<const __half*>(keys), unit_stride, page, head_dim, kmin, kmax);
  CUDA_CHECK_LAUNCH();
}

void page_scores(const float* q, const float* kmin, const float* kmax, const int32_t* cand, int64_t n_cand,
                 int64_t n_heads, int64_t n_kv, int64_t head_dim, float scale, float* bounds, float* out,
                 cudaStream_t st) {
  if (n_cand <= 0) return;
  const int64_t warps = n_heads * n_cand;
  page_bounds_kernel<<<unsigned(ceil_div(warps * 32, k_threads)), k_threads, 0, st>>>(
      q, kmin, kmax, cand, n_cand, n_heads, n_kv, head_dim, scale, bounds);
  CUDA_CHECK_LAUNCH();
  page_softmax_mean_kernel<<<unsigned(n_kv), k_threads, 0, st>>>(bounds, n_cand, n_heads, n_kv, out);
  CUDA_CHECK_LAUNCH();
}

}  // namespace kvarena::cu
