// cuda-gemm.cpp: cuBLAS GEMM wrapper (see the header).
#include "cuda-gemm.h"

#include "cuda-check.h"

namespace kvarena {

cuda_gemm::cuda_gemm(cudaStream_t st) {
  CUBLAS_CHECK(cublasCreate(&h_));
  CUBLAS_CHECK(cublasSetStream(h_, st));
}

cuda_gemm::~cuda_gemm() {
  if (h_) (void)cublasDestroy(h_);
}

void cuda_gemm::matmul_f16(const uint16_t* w, int64_t out, int64_t in, const uint16_t* x, int64_t ldx, int64_t n,
                           float* y, int64_t ldy, float beta) {
  if (n <= 0 || out <= 0) return;
  // Column-major view: w is (in, out) with ld in, x is (in, n) with ld ldx, y is (out, n)
  // with ld ldy, so y = w^T x.
  const float alpha = 1.f;
  CUBLAS_CHECK(cublasGemmEx(h_, CUBLAS_OP_T, CUBLAS_OP_N, int(out), int(n), int(in), &alpha, w, CUDA_R_16F,
                            int(in), x, CUDA_R_16F, int(ldx), &beta, y, CUDA_R_32F, int(ldy),
                            CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
}

}  // namespace kvarena
