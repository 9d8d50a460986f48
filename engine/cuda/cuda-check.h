// cuda-check.h: error checks for CUDA runtime and cuBLAS calls. A failed call throws
// kvarena::engine_error "FILE:LINE: CALL failed: ERROR (what to do)", so a missing GPU or
// an out-of-memory reads as one line in the CLI instead of a crash later on.
// CUDA_CHECK_LAUNCH() after a kernel launch catches bad launch configurations at once.
#pragma once
#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <string>

#include "engine-error.h"

namespace kvarena {

// The hint a user can act on for the errors that are not bugs.
inline const char* cuda_error_hint(cudaError_t e) {
  switch (e) {
    case cudaErrorNoDevice:
    case cudaErrorInsufficientDriver:
      return " (no usable CUDA device: run on a machine with an NVIDIA GPU and driver, or use the CPU backend)";
    case cudaErrorMemoryAllocation:
      return " (device memory exhausted: use a smaller model, context, batch or KV budget)";
    default: return "";
  }
}

[[noreturn]] inline void cuda_fail(const char* file, int line, const char* call, const std::string& what) {
  throw engine_error(std::string(file) + ":" + std::to_string(line) + ": " + call + " failed: " + what);
}

}  // namespace kvarena

#define CUDA_CHECK(call)                                                                         \
  do {                                                                                           \
    const cudaError_t kv_cuda_err_ = (call);                                                     \
    if (kv_cuda_err_ != cudaSuccess)                                                             \
      ::kvarena::cuda_fail(__FILE__, __LINE__, #call,                                            \
                           std::string(cudaGetErrorName(kv_cuda_err_)) + ": " +                   \
                               cudaGetErrorString(kv_cuda_err_) + ::kvarena::cuda_error_hint(kv_cuda_err_)); \
  } while (0)

#define CUBLAS_CHECK(call)                                                                       \
  do {                                                                                           \
    const cublasStatus_t kv_cublas_st_ = (call);                                                 \
    if (kv_cublas_st_ != CUBLAS_STATUS_SUCCESS)                                                  \
      ::kvarena::cuda_fail(__FILE__, __LINE__, #call,                                            \
                           std::string(cublasGetStatusName(kv_cublas_st_)) + ": " +              \
                               cublasGetStatusString(kv_cublas_st_));                            \
  } while (0)

// After a kernel launch: a bad configuration (too much shared memory, a zero grid) fails here.
#define CUDA_CHECK_LAUNCH() CUDA_CHECK(cudaGetLastError())

namespace kvarena {
// Usable CUDA devices; 0 (never an exception) when there is no driver or no GPU, so tests
// and the CLI can skip or fall back with a message.
inline int cuda_device_count() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    (void)cudaGetLastError();  // clear the sticky error of the failed query
    return 0;
  }
  return n;
}
}  // namespace kvarena
