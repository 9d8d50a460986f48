// cuda-quant.cu: kernels over weights kept quantized on the device (Q8_0, Q4_0, Q2_K..Q6_K
// blocks as stored in the file): the decode matrix-vector product and the dequantisation of
// row tiles to F16 for prefill GEMMs. Both decode through cu::dequant8 (cuda-quant.h), which
// test-cuda checks bit for bit against dequantize_row_ref on the CPU. Declared in
// cuda-kernels.h.
#include <cuda_fp16.h>

#include <algorithm>

#include "cuda-check.h"
#include "cuda-kernels.h"
#include "cuda-quant.h"
#include "engine-error.h"

namespace kvarena::cu {

namespace {

constexpr int k_qmv_warps = 4;  // rows per block of the matrix-vector kernel

// One warp per output row r: cu::qmatvec_lane (8-element runs decoded in registers, times
// every token's F16 activations), the butterfly, y[i, r] = beta * y[i, r] + sum.
template <int N>
__global__ void qmatvec_kernel(ggml_type t, const uint8_t* w, size_t row_bytes, int64_t rows, int64_t cols,
                               const uint16_t* x, int64_t ldx, float* y, int64_t ldy, float beta) {
  const int lane = threadIdx.x & 31;
  const int64_t r = blockIdx.x * int64_t(k_qmv_warps) + (threadIdx.x >> 5);
  if (r >= rows) return;  // whole warps leave together
  float acc[N];
  qmatvec_lane<N>(t, w + size_t(r) * row_bytes, cols, x, ldx, lane, acc);
  for (int i = 0; i < N; ++i) {
    float s = acc[i];
    for (int o = 16; o > 0; o >>= 1) s += __shfl_xor_sync(0xffffffffu, s, o);
    if (lane == 0) y[i * ldy + r] = beta == 0.f ? s : beta * y[i * ldy + r] + s;
  }
}

// dst (n_rows, cols) F16 = rows r0.. of w decoded; one thread per 8-element run.
__global__ void dequant_rows_kernel(ggml_type t, const uint8_t* w, size_t row_bytes, int64_t r0, int64_t n_rows,
                                    int64_t cols, __half* dst) {
  const int64_t runs = cols / 8;
  for (int64_t u = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; u < n_rows * runs;
       u += int64_t(gridDim.x) * blockDim.x) {
    const int64_t r = u / runs, e0 = (u % runs) * 8;
    float v[8];
    dequant8(t, w + size_t(r0 + r) * row_bytes, e0, v);
    for (int k = 0; k < 8; ++k) dst[r * cols + e0 + k] = __float2half_rn(v[k]);
  }
}

}  // namespace

void qmatvec(ggml_type t, const uint8_t* w, int64_t rows, int64_t cols, const uint16_t* x, int64_t ldx, int64_t n,
             float* y, int64_t ldy, float beta, cudaStream_t st) {
  KV_ASSERT(quant_on_device(t) && cols % 8 == 0 && n >= 1 && n <= k_qmatvec_max_tokens);
  if (rows <= 0) return;
  const size_t rb = ggml_row_bytes(t, cols);
  const unsigned grid = unsigned(ceil_div(rows, k_qmv_warps));
  const uint16_t* xh = x;
  switch (n) {
#define KV_QMV_CASE(N)                                                                                   \
  case N:                                                                                                \
    qmatvec_kernel<N><<<grid, 32 * k_qmv_warps, 0, st>>>(t, w, rb, rows, cols, xh, ldx, y, ldy, beta); \
    break;
    KV_QMV_CASE(1) KV_QMV_CASE(2) KV_QMV_CASE(3) KV_QMV_CASE(4)
    KV_QMV_CASE(5) KV_QMV_CASE(6) KV_QMV_CASE(7) KV_QMV_CASE(8)
#undef KV_QMV_CASE
  }
  CUDA_CHECK_LAUNCH();
}

void dequant_rows_f16(ggml_type t, const uint8_t* w, int64_t r0, int64_t n_rows, int64_t cols, uint16_t* dst,
                      cudaStream_t st) {
  KV_ASSERT(quant_on_device(t) && cols % 8 == 0);
  if (n_rows <= 0) return;
  const int64_t units = n_rows * (cols / 8);
  const unsigned grid = unsigned(std::clamp<int64_t>(ceil_div(units, 256), 1, 65535 * 8));
  dequant_rows_kernel<<<grid, 256, 0, st>>>(t, w, ggml_row_bytes(t, cols), r0, n_rows, cols,
                                            reinterpret_cast<__half*>(dst));
  CUDA_CHECK_LAUNCH();
}

}  // namespace kvarena::cu
