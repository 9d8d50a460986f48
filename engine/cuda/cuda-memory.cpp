// cuda-memory.cpp: cuda_allocator and its accounting (see the header).
#include "cuda-memory.h"

#include <algorithm>
#include <string>

#include "cuda-check.h"
#include "engine-error.h"

namespace kvarena {

void cuda_memory_accounting::on_alloc(size_t bytes) {
  live_ += bytes;
  ++n_live_;
  peak_ = std::max(peak_, live_);
}

void cuda_memory_accounting::on_free(size_t bytes) {
  KV_ASSERT(n_live_ > 0 && bytes <= live_);
  live_ -= bytes;
  --n_live_;
}

void cuda_memory_accounting::on_device_info(size_t free_bytes, size_t total_bytes) {
  total_ = total_bytes;
  used_ = total_bytes >= free_bytes ? total_bytes - free_bytes : 0;
  peak_used_ = std::max(peak_used_, used_);
}

namespace {
std::string mib(size_t b) { return std::to_string((b + (1u << 20) - 1) >> 20) + " MiB"; }
}  // namespace

void* cuda_allocator::alloc(size_t bytes, const char* what) {
  if (bytes == 0) return nullptr;
  void* p = nullptr;
  const cudaError_t e = cudaMalloc(&p, bytes);
  if (e != cudaSuccess) {
    (void)cudaGetLastError();
    size_t live;
    {
      std::lock_guard<std::mutex> lock(mu_);
      live = dev_.live_bytes();
    }
    throw engine_error(std::string("cuda: cannot allocate ") + mib(bytes) + " of device memory for " +
                       what + " (" + cudaGetErrorString(e) + "; the engine holds " + mib(live) +
                       ")" + cuda_error_hint(e));
  }
  std::lock_guard<std::mutex> lock(mu_);
  dev_.on_alloc(bytes);
  return p;
}

void cuda_allocator::free(void* p, size_t bytes) noexcept {
  if (!p) return;
  (void)cudaFree(p);
  std::lock_guard<std::mutex> lock(mu_);
  dev_.on_free(bytes);
}

void* cuda_allocator::alloc_pinned(size_t bytes, const char* what) {
  if (bytes == 0) return nullptr;
  void* p = nullptr;
  const cudaError_t e = cudaMallocHost(&p, bytes);
  if (e != cudaSuccess) {
    (void)cudaGetLastError();
    throw engine_error(std::string("cuda: cannot allocate ") + mib(bytes) + " of pinned host memory for " +
                       what + " (" + cudaGetErrorString(e) + ")");
  }
  std::lock_guard<std::mutex> lock(mu_);
  pinned_.on_alloc(bytes);
  return p;
}

void cuda_allocator::free_pinned(void* p, size_t bytes) noexcept {
  if (!p) return;
  (void)cudaFreeHost(p);
  std::lock_guard<std::mutex> lock(mu_);
  pinned_.on_free(bytes);
}

void cuda_allocator::snapshot() {
  size_t free_b = 0, total_b = 0;
  CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
  std::lock_guard<std::mutex> lock(mu_);
  dev_.on_device_info(free_b, total_b);
}

size_t cuda_allocator::live_bytes() const {
  std::lock_guard<std::mutex> lock(mu_);
  return dev_.live_bytes();
}
size_t cuda_allocator::peak_bytes() const {
  std::lock_guard<std::mutex> lock(mu_);
  return dev_.peak_bytes();
}
size_t cuda_allocator::pinned_live_bytes() const {
  std::lock_guard<std::mutex> lock(mu_);
  return pinned_.live_bytes();
}
size_t cuda_allocator::pinned_peak_bytes() const {
  std::lock_guard<std::mutex> lock(mu_);
  return pinned_.peak_bytes();
}
size_t cuda_allocator::peak_device_bytes() const {
  std::lock_guard<std::mutex> lock(mu_);
  return dev_.peak_device_bytes();
}
cuda_memory_accounting cuda_allocator::device_accounting() const {
  std::lock_guard<std::mutex> lock(mu_);
  return dev_;
}

}  // namespace kvarena
