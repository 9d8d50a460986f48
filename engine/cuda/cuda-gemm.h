// cuda-gemm.h: the matrix products of the CUDA forward pass, through cuBLAS: F16 weights
// (ggml layout: row o holds the `in` weights of output o, i.e. an (out, in) row-major
// matrix), F16 activations (the F32 activations are rounded to F16 first, cublasGemmEx has
// no F16 x F32 mix), F32 output and F32 accumulation (CUBLAS_COMPUTE_32F; tensor cores).
// beta = 1 adds into y (the residual stream: no separate add kernel).
// CPU reference: ref::matmul on the F16 weights with the F16-rounded activations.
#pragma once
#include <cstdint>

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

namespace kvarena {

class cuda_gemm {
 public:
  explicit cuda_gemm(cudaStream_t st);
  ~cuda_gemm();
  cuda_gemm(const cuda_gemm&) = delete;
  cuda_gemm& operator=(const cuda_gemm&) = delete;

  // y: (n, out) rows ldy apart = beta*y + x: (n, in) rows ldx apart @ w^T, w: (out, in) F16.
  void matmul_f16(const uint16_t* w, int64_t out, int64_t in, const uint16_t* x, int64_t ldx, int64_t n,
                  float* y, int64_t ldy, float beta = 0.f);
  cublasHandle_t handle() const { return h_; }

 private:
  cublasHandle_t h_ = nullptr;
};

}  // namespace kvarena
