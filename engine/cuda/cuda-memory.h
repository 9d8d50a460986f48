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
#include <vector>

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

// The bookkeeping of a pinned staging ring (plain C++: tested without a GPU). Host-to-device
// uploads are copied into pinned memory and sent from there with cudaMemcpyAsync, which is
// then truly asynchronous (from pageable memory the driver stages the bytes itself and the
// host waits for it). The ring is n_segments segments of segment_bytes; requests (rounded up
// to 16 bytes) take space in the current segment, or the whole of the next one. Leaving a
// segment `close`s it: the wrapper records that segment's event after the copies that read
// it. Entering a segment that was closed before `wait`s for its event first: the only host
// wait, and only when the device is a whole ring of uploads behind. A request larger than a
// segment `grow`s the ring (segments of the next power of two >= the request; the wrapper
// waits for every copy out of the old arena, frees it, allocates the new one).
class staging_ring_plan {
 public:
  struct grant {
    size_t offset = 0;   // into the arena
    int close = -1;      // record this segment's event now (before the new copy)
    int wait = -1;       // then wait for this segment's event before writing the bytes
    size_t grow_to = 0;  // > 0: first replace the arena by one of grow_to bytes (offset is in it)
  };
  explicit staging_ring_plan(size_t segment_bytes = 16 << 10, int n_segments = 8);
  grant take(size_t bytes);  // bytes > 0
  size_t segment_bytes() const { return seg_; }
  int n_segments() const { return int(closed_.size()); }
  size_t arena_bytes() const { return seg_ * closed_.size(); }
  static size_t aligned(size_t bytes) { return (bytes + 15) / 16 * 16; }

 private:
  size_t seg_, used_ = 0;
  int cur_ = 0;
  std::vector<bool> closed_;  // an event was recorded for the segment and not waited for yet
};

// Host-to-device uploads through a staging_ring_plan over pinned memory (allocated on the
// first upload, through the allocator, so it is counted as pinned bytes). One ring serves one
// stream; the source may change as soon as upload() returns.
class cuda_upload_ring {
 public:
  explicit cuda_upload_ring(size_t segment_bytes = 16 << 10, int n_segments = 8);
  ~cuda_upload_ring();  // waits for the copies still reading the arena
  cuda_upload_ring(cuda_upload_ring&& o) noexcept;
  cuda_upload_ring& operator=(cuda_upload_ring&& o) noexcept;
  cuda_upload_ring(const cuda_upload_ring&) = delete;
  cuda_upload_ring& operator=(const cuda_upload_ring&) = delete;

  void upload(void* dst_device, const void* src_host, size_t bytes, cuda_allocator& a, cudaStream_t st);
  size_t pinned_bytes() const { return arena_.bytes(); }
  int64_t host_waits() const { return waits_; }  // times the host waited for a segment (diagnostics)

 private:
  void release() noexcept;
  staging_ring_plan plan_;
  cuda_pinned_buffer<uint8_t> arena_;
  std::vector<cudaEvent_t> events_;  // (n_segments,)
  cudaEvent_t tail_ = nullptr;       // after the last copy (destruction, growth)
  int64_t waits_ = 0;
};

}  // namespace kvarena
