// cuda-memory.h: every device (and pinned host) allocation of the CUDA backend goes
// through a cuda_allocator, which counts the engine's own live and peak bytes, and samples
// cudaMemGetInfo so sessions can report peak_device_bytes (the whole device's use, CUDA
// context and cuBLAS workspaces included). cuda_buffer<T> is the RAII owner.
// The accounting itself (cuda_memory_accounting) is plain C++ and is tested without a GPU.
#pragma once
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <utility>

#include <cuda_runtime_api.h>

namespace kvarena {

// Byte counters. on_free must match an earlier on_alloc (aborts otherwise: a double free
// in the accounting is a bug). Device snapshots record total - free of cudaMemGetInfo.
class cuda_memory_accounting {
 public:
  void on_alloc(size_t bytes);
  void on_free(size_t bytes);
  void on_device_info(size_t free_bytes, size_t total_bytes);

  size_t live_bytes() const { return live_; }
  size_t peak_bytes() const { return peak_; }
  size_t n_live_allocations() const { return n_live_; }
  size_t device_used_bytes() const { return used_; }        // at the last snapshot
  size_t peak_device_bytes() const { return peak_used_; }   // most seen at any snapshot
  size_t device_total_bytes() const { return total_; }

 private:
  size_t live_ = 0, peak_ = 0, n_live_ = 0;
  size_t used_ = 0, peak_used_ = 0, total_ = 0;
};

class cuda_allocator {
 public:
  // Device memory; throws engine_error naming `what` and the size when it fails.
  void* alloc(size_t bytes, const char* what);
  void free(void* p, size_t bytes) noexcept;
  // Page-locked host memory (FreeKV's host pool, staging buffers), counted apart.
  void* alloc_pinned(size_t bytes, const char* what);
  void free_pinned(void* p, size_t bytes) noexcept;
  // Samples cudaMemGetInfo now (call at step boundaries: it is cheap but synchronous-ish).
  void snapshot();

  size_t live_bytes() const;
  size_t peak_bytes() const;
  size_t pinned_live_bytes() const;
  size_t pinned_peak_bytes() const;
  size_t peak_device_bytes() const;
  cuda_memory_accounting device_accounting() const;  // a copy, for reports

 private:
  mutable std::mutex mu_;
  cuda_memory_accounting dev_, pinned_;
};

// Owner of n elements of T (contents uninitialised), on the device or, with Pinned, in
// pinned host memory; freed through the allocator that made it, so the accounting holds.
template <class T, bool Pinned>
class cuda_owned_buffer {
 public:
  cuda_owned_buffer() = default;
  cuda_owned_buffer(cuda_allocator& a, size_t n, const char* what) : a_(&a), n_(n) {
    p_ = static_cast<T*>(Pinned ? a.alloc_pinned(n * sizeof(T), what) : a.alloc(n * sizeof(T), what));
  }
  ~cuda_owned_buffer() { reset(); }
  cuda_owned_buffer(cuda_owned_buffer&& o) noexcept { swap(o); }
  cuda_owned_buffer& operator=(cuda_owned_buffer&& o) noexcept {
    if (this != &o) {
      reset();
      swap(o);
    }
    return *this;
  }
  cuda_owned_buffer(const cuda_owned_buffer&) = delete;
  cuda_owned_buffer& operator=(const cuda_owned_buffer&) = delete;

  void reset() noexcept {
    if (a_ && p_) {
      if (Pinned) {
        a_->free_pinned(p_, n_ * sizeof(T));
      } else {
        a_->free(p_, n_ * sizeof(T));
      }
    }
    p_ = nullptr;
    n_ = 0;
  }
  void swap(cuda_owned_buffer& o) noexcept {
    std::swap(a_, o.a_);
    std::swap(p_, o.p_);
    std::swap(n_, o.n_);
  }
  T* data() const { return p_; }
  size_t size() const { return n_; }
  size_t bytes() const { return n_ * sizeof(T); }

 private:
  cuda_allocator* a_ = nullptr;
  T* p_ = nullptr;
  size_t n_ = 0;
};

template <class T>
using cuda_buffer = cuda_owned_buffer<T, false>;  // device memory
template <class T>
using cuda_pinned_buffer = cuda_owned_buffer<T, true>;  // pinned host memory

}  // namespace kvarena
