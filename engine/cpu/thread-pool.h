// thread-pool.h: a fork-join pool for the CPU backend. run(fn) calls fn(ith, nth) on every
// thread (the caller is thread 0) and returns when all are done. Workers spin briefly then
// sleep, so an idle pool costs nothing and a busy decode loop pays no wake-up latency.
#pragma once
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace kvarena {

class thread_pool {
 public:
  explicit thread_pool(int n_threads);  // n_threads >= 1; 1 means "run on the caller"
  ~thread_pool();
  thread_pool(const thread_pool&) = delete;
  thread_pool& operator=(const thread_pool&) = delete;

  int size() const { return n_threads_; }
  // One caller at a time. A run() from inside a job (of any pool) runs fn(0, 1) inline.
  void run(const std::function<void(int ith, int nth)>& fn);

  // Background work for idle moments (FreeKV's speculative recall): while a worker spins for
  // the next job, and while the caller waits for the workers, they call the idle task; it
  // does one small piece (about a microsecond) and returns whether there was one. One task at
  // a time; its owner clears it (nullptr) before the task dies: setting waits for the calls
  // in progress. The task must not call run().
  void set_idle_task(const std::function<bool()>* task);

 private:
  void worker_loop(int ith);
  bool run_idle();  // one piece of the idle task; false when there is none

  int n_threads_;
  std::vector<std::thread> workers_;
  // One run(): job_ is published by the release increment of generation_; each worker runs
  // it once and decrements pending_; the caller spins until pending_ reaches 0.
  const std::function<void(int, int)>* job_ = nullptr;
  alignas(64) std::atomic<uint64_t> generation_{0};  // read by spinning workers: own line
  alignas(64) std::atomic<int> pending_{0};          // written by finishing workers
  alignas(64) std::atomic<int> sleepers_{0};  // workers blocked (or about to block) on cv_
  std::atomic<const std::function<bool()>*> idle_{nullptr};
  alignas(64) std::atomic<int> idle_calls_{0};  // idle-task calls in progress
  std::atomic<bool> busy_{false};  // a run() is in progress (catches concurrent callers)
  std::atomic<bool> stop_{false};
  std::mutex mu_;
  std::condition_variable cv_;
};

// Split [0, n) into nth near-equal contiguous ranges; returns thread ith's [begin, end).
inline void split_range(int64_t n, int ith, int nth, int64_t& begin, int64_t& end) {
  const int64_t per = (n + nth - 1) / nth;
  begin = std::min<int64_t>(n, per * ith);
  end = std::min<int64_t>(n, begin + per);
}

}  // namespace kvarena
