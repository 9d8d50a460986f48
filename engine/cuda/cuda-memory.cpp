// cuda-memory.cpp: cuda_allocator and its accounting (see the header).
#include "cuda-memory.h"

#include <algorithm>
#include <cstring>
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

// ---- staging ring ----

staging_ring_plan::staging_ring_plan(size_t segment_bytes, int n_segments)
    : seg_(aligned(std::max<size_t>(segment_bytes, 16))), closed_(size_t(std::max(n_segments, 2)), false) {}

staging_ring_plan::grant staging_ring_plan::take(size_t bytes) {
  KV_ASSERT(bytes > 0);
  const size_t n = aligned(bytes);
  grant g;
  if (n > seg_) {  // a fresh, larger arena: every copy out of the old one is waited for
    size_t s = seg_;
    while (s < n) s *= 2;
    seg_ = s;
    std::fill(closed_.begin(), closed_.end(), false);
    cur_ = 0, used_ = n;
    g.grow_to = arena_bytes();
    return g;
  }
  if (used_ + n > seg_) {  // on to the next segment
    g.close = cur_;
    closed_[size_t(cur_)] = true;
    cur_ = (cur_ + 1) % int(closed_.size());
    if (closed_[size_t(cur_)]) {
      g.wait = cur_;
      closed_[size_t(cur_)] = false;
    }
    used_ = 0;
  }
  g.offset = size_t(cur_) * seg_ + used_;
  used_ += n;
  return g;
}

cuda_upload_ring::cuda_upload_ring(size_t segment_bytes, int n_segments) : plan_(segment_bytes, n_segments) {}

cuda_upload_ring::~cuda_upload_ring() { release(); }

cuda_upload_ring::cuda_upload_ring(cuda_upload_ring&& o) noexcept
    : plan_(o.plan_), arena_(std::move(o.arena_)), events_(std::move(o.events_)), tail_(o.tail_), waits_(o.waits_) {
  o.events_.clear();
  o.tail_ = nullptr;
}

cuda_upload_ring& cuda_upload_ring::operator=(cuda_upload_ring&& o) noexcept {
  if (this != &o) {
    release();
    plan_ = o.plan_, arena_ = std::move(o.arena_), events_ = std::move(o.events_), tail_ = o.tail_, waits_ = o.waits_;
    o.events_.clear();
    o.tail_ = nullptr;
  }
  return *this;
}

void cuda_upload_ring::release() noexcept {
  if (tail_) (void)cudaEventSynchronize(tail_);  // no copy reads the arena any more
  arena_.reset();
  for (cudaEvent_t& e : events_)
    if (e) (void)cudaEventDestroy(e), e = nullptr;
  if (tail_) (void)cudaEventDestroy(tail_), tail_ = nullptr;
}

void cuda_upload_ring::upload(void* dst, const void* src, size_t bytes, cuda_allocator& a, cudaStream_t st) {
  if (bytes == 0) return;
  const staging_ring_plan::grant g = plan_.take(bytes);
  if (g.grow_to > 0 || !arena_.data()) {
    if (tail_) CUDA_CHECK(cudaEventSynchronize(tail_));
    arena_.reset();
    arena_ = cuda_pinned_buffer<uint8_t>(a, plan_.arena_bytes(), "upload staging (pinned)");
    if (events_.empty()) {
      events_.assign(size_t(plan_.n_segments()), nullptr);
      for (cudaEvent_t& e : events_) CUDA_CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
      CUDA_CHECK(cudaEventCreateWithFlags(&tail_, cudaEventDisableTiming));
    }
  }
  if (g.close >= 0) CUDA_CHECK(cudaEventRecord(events_[size_t(g.close)], st));
  if (g.wait >= 0) {
    if (cudaEventQuery(events_[size_t(g.wait)]) == cudaErrorNotReady) ++waits_;
    CUDA_CHECK(cudaEventSynchronize(events_[size_t(g.wait)]));
  }
  uint8_t* p = arena_.data() + g.offset;
  std::memcpy(p, src, bytes);
  CUDA_CHECK(cudaMemcpyAsync(dst, p, bytes, cudaMemcpyHostToDevice, st));
  CUDA_CHECK(cudaEventRecord(tail_, st));
}

}  // namespace kvarena
