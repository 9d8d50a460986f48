// thread-pool.cpp: the fork-join pool. A decode step calls run() hundreds of times per
// token with a few microseconds of work each, so workers spin on generation_ for a while
// after each job (a round trip then costs ~1 us); after spin_time of nothing they sleep on
// the condition variable, so an idle pool burns no CPU. Spinning threads (and the caller
// waiting for the workers) do pieces of the idle task, when one is set.
#include "thread-pool.h"

#include <chrono>

#include "engine-error.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define KVARENA_CPU_RELAX() _mm_pause()
#else
#define KVARENA_CPU_RELAX() ((void)0)
#endif

namespace kvarena {
namespace {

constexpr auto spin_time = std::chrono::microseconds(50);

// Set while this thread is inside a job: a nested run() must not wait on the pool.
thread_local bool tls_in_job = false;

}  // namespace

thread_pool::thread_pool(int n_threads) : n_threads_(n_threads < 1 ? 1 : n_threads) {
  workers_.reserve(size_t(n_threads_ - 1));
  for (int i = 1; i < n_threads_; ++i) workers_.emplace_back([this, i] { worker_loop(i); });
}

thread_pool::~thread_pool() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_.store(true, std::memory_order_seq_cst);
  }
  cv_.notify_all();
  for (auto& t : workers_) t.join();
}

void thread_pool::run(const std::function<void(int, int)>& fn) {
  if (n_threads_ == 1 || tls_in_job) {
    const bool outer = tls_in_job;
    tls_in_job = true;
    fn(0, 1);
    tls_in_job = outer;
    return;
  }
  KV_ASSERT(!busy_.exchange(true, std::memory_order_acquire));  // one caller at a time
  job_ = &fn;
  pending_.store(n_threads_ - 1, std::memory_order_relaxed);
  generation_.fetch_add(1, std::memory_order_seq_cst);  // publishes job_ and pending_
  // A worker increments sleepers_ (seq_cst) before checking generation_ under mu_: either
  // it sees the new generation, or we see it sleeping and wake it.
  if (sleepers_.load(std::memory_order_seq_cst) > 0) {
    { std::lock_guard<std::mutex> lock(mu_); }
    cv_.notify_all();
  }
  tls_in_job = true;
  fn(0, n_threads_);
  tls_in_job = false;
  for (uint32_t spins = 0; pending_.load(std::memory_order_acquire) != 0; ++spins) {
    if (run_idle()) continue;
    KVARENA_CPU_RELAX();
    if (spins >= (1u << 10)) std::this_thread::yield();  // ~20-90 us: a worker lost its core?
  }
  job_ = nullptr;
  busy_.store(false, std::memory_order_release);
}

// Dekker-style: a caller counts itself in before reading the task, a clearer stores nullptr
// before reading the count (both seq_cst), so either the call sees nullptr or the clearer
// sees the call and waits for it.
bool thread_pool::run_idle() {
  if (!idle_.load(std::memory_order_relaxed)) return false;
  idle_calls_.fetch_add(1, std::memory_order_seq_cst);
  const std::function<bool()>* t = idle_.load(std::memory_order_seq_cst);
  const bool did = t && (*t)();
  idle_calls_.fetch_sub(1, std::memory_order_release);
  return did;
}

void thread_pool::set_idle_task(const std::function<bool()>* task) {
  idle_.store(task, std::memory_order_seq_cst);
  while (idle_calls_.load(std::memory_order_seq_cst) != 0) KVARENA_CPU_RELAX();
}

void thread_pool::worker_loop(int ith) {
  // The generation at construction: a run() may already have bumped it before this thread
  // got here, and that job is ours too.
  uint64_t seen = 0;
  tls_in_job = true;  // everything a worker runs is inside a job
  for (;;) {
    // Spin for new work, checking the clock every 64 pauses.
    uint64_t gen = generation_.load(std::memory_order_acquire);
    if (gen == seen) {
      const auto deadline = std::chrono::steady_clock::now() + spin_time;
      for (uint32_t i = 1;; ++i) {
        gen = generation_.load(std::memory_order_acquire);
        if (gen != seen || stop_.load(std::memory_order_relaxed)) break;
        if (run_idle()) continue;  // did a piece: look for a job again at once
        KVARENA_CPU_RELAX();
        if (i % 64 == 0 && std::chrono::steady_clock::now() > deadline) break;
      }
    }
    if (gen == seen) {
      std::unique_lock<std::mutex> lock(mu_);
      sleepers_.fetch_add(1, std::memory_order_seq_cst);
      cv_.wait(lock, [&] {
        return generation_.load(std::memory_order_seq_cst) != seen ||
               stop_.load(std::memory_order_seq_cst);
      });
      sleepers_.fetch_sub(1, std::memory_order_relaxed);
      gen = generation_.load(std::memory_order_acquire);
    }
    if (stop_.load(std::memory_order_acquire)) return;
    if (gen == seen) continue;
    seen = gen;
    (*job_)(ith, n_threads_);
    pending_.fetch_sub(1, std::memory_order_acq_rel);
  }
}

}  // namespace kvarena
