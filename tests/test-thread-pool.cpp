// test-thread-pool.cpp: the fork-join pool: every thread index runs exactly once per run(),
// over many back-to-back runs and after the workers have gone to sleep; results written in
// one run are visible to the next; nested run() calls run inline; an idle pool uses no CPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <chrono>
#include <ctime>
#include <functional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "thread-pool.h"

namespace kvarena {
namespace {

TEST(thread_pool, one_thread_runs_on_the_caller) {
  thread_pool pool(1);
  EXPECT_EQ(pool.size(), 1);
  int calls = 0;
  const auto me = std::this_thread::get_id();
  pool.run([&](int ith, int nth) {
    EXPECT_EQ(ith, 0);
    EXPECT_EQ(nth, 1);
    EXPECT_EQ(std::this_thread::get_id(), me);
    ++calls;
  });
  EXPECT_EQ(calls, 1);
}

TEST(thread_pool, every_index_runs_exactly_once_per_run) {
  for (int n : {2, 3, 4}) {
    thread_pool pool(n);
    EXPECT_EQ(pool.size(), n);
    const int runs = n == 2 ? 20000 : 2000;  // more threads than cores: spinning is slow
    std::vector<int> counts(size_t(n), 0);   // each slot written by one thread only
    for (int r = 0; r < runs; ++r) {
      pool.run([&](int ith, int nth) {
        ASSERT_EQ(nth, n);
        ASSERT_GE(ith, 0);
        ASSERT_LT(ith, n);
        counts[size_t(ith)] += 1;
      });
      if (r % 997 == 0) {
        for (int i = 0; i < n; ++i) ASSERT_EQ(counts[size_t(i)], r + 1) << "thread " << i;
      }
    }
    for (int i = 0; i < n; ++i) EXPECT_EQ(counts[size_t(i)], runs);
  }
}

TEST(thread_pool, the_caller_is_thread_zero) {
  thread_pool pool(2);
  const auto me = std::this_thread::get_id();
  std::thread::id ids[2];
  pool.run([&](int ith, int) { ids[ith] = std::this_thread::get_id(); });
  EXPECT_EQ(ids[0], me);
  EXPECT_NE(ids[1], me);
}

TEST(thread_pool, writes_of_one_run_are_visible_to_the_next) {
  thread_pool pool(2);
  const int64_t n = 10000;
  std::vector<int64_t> a(static_cast<size_t>(n)), b(static_cast<size_t>(n));
  for (int round = 0; round < 200; ++round) {
    // Each thread writes its half of a, then the other thread reads all of it.
    pool.run([&](int ith, int nth) {
      int64_t i0, i1;
      split_range(n, ith, nth, i0, i1);
      for (int64_t i = i0; i < i1; ++i) a[size_t(i)] = i * round;
    });
    pool.run([&](int ith, int nth) {
      int64_t i0, i1;
      split_range(n, nth - 1 - ith, nth, i0, i1);  // the other thread's half
      for (int64_t i = i0; i < i1; ++i) b[size_t(i)] = a[size_t(i)] + 1;
    });
    for (int64_t i = 0; i < n; i += 101) ASSERT_EQ(b[size_t(i)], i * round + 1);
  }
}

TEST(thread_pool, nested_run_executes_inline) {
  thread_pool pool(2);
  std::atomic<int> inner_calls{0};
  for (int r = 0; r < 100; ++r)
    pool.run([&](int, int) {
      pool.run([&](int ith, int nth) {
        EXPECT_EQ(ith, 0);
        EXPECT_EQ(nth, 1);
        inner_calls.fetch_add(1);
      });
    });
  EXPECT_EQ(inner_calls.load(), 200);
}

TEST(thread_pool, works_after_the_workers_fall_asleep) {
  thread_pool pool(2);
  for (int r = 0; r < 5; ++r) {
    std::this_thread::sleep_for(std::chrono::milliseconds(3));  // past the spin window
    std::atomic<int> calls{0};
    pool.run([&](int, int) { calls.fetch_add(1); });
    EXPECT_EQ(calls.load(), 2);
  }
}

double process_cpu_seconds() {
  timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return double(ts.tv_sec) + 1e-9 * double(ts.tv_nsec);
}

TEST(thread_pool, an_idle_pool_burns_no_cpu) {
  thread_pool pool(2);
  pool.run([](int, int) {});
  std::this_thread::sleep_for(std::chrono::milliseconds(20));  // let the spin window end
  const double before = process_cpu_seconds();
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  const double used = process_cpu_seconds() - before;
  EXPECT_LT(used, 0.02) << "idle workers used " << used * 1e3 << " ms of CPU in 200 ms";
}

// 1-minute load average per core (0 where /proc/loadavg is missing).
double load_per_core() {
  double load = 0.0;
  if (FILE* f = std::fopen("/proc/loadavg", "r")) {
    if (std::fscanf(f, "%lf", &load) != 1) load = 0.0;
    std::fclose(f);
  }
  return load / std::max(1u, std::thread::hardware_concurrency());
}

TEST(thread_pool, back_to_back_runs_complete) {
  // Many back-to-back runs: every one completes and every thread takes part in each (a
  // lost wake-up would hang or drop a thread). The per-run cost is printed for the reader;
  // timings are benchmarks' business (bench-kernels), never a test's assertion.
  thread_pool pool(2);
  const int runs = 20000;
  std::atomic<int64_t> calls{0};
  const auto t0 = std::chrono::steady_clock::now();
  for (int r = 0; r < runs; ++r) pool.run([&](int, int) { calls.fetch_add(1, std::memory_order_relaxed); });
  const double us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count() / runs;
  std::printf("thread_pool(2): %.2f us per run() (load/core %.2f)\n", us, load_per_core());
  EXPECT_EQ(calls.load(), int64_t(runs) * 2);
}

// Counts the end of the worker thread that armed it: a thread_local's destructor runs as its
// thread ends, and a thread's end happens before join() returns for it. The end is made slow
// (1 ms) so that a pool that does not wait for its workers returns before the count: this
// delay decides no outcome of a correct pool, it only makes a wrong one visible every time.
struct thread_exit_counter {
  std::atomic<int>* exits = nullptr;
  ~thread_exit_counter() {
    if (!exits) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    exits->fetch_add(1, std::memory_order_relaxed);
  }
};
thread_local thread_exit_counter tls_exit_counter;

// What "cleanly" means: when ~thread_pool returns, every worker thread has ended (each one's
// thread_locals destroyed: joined, not detached or still running), none ended before it, and
// every index ran each job exactly once (no job ran again while the pool went down), on n - 1
// distinct worker threads besides the caller. Half the pools go down while their workers
// still spin after the last run, half after they have fallen asleep. (A hang fails at the
// test runner's timeout.)
TEST(thread_pool, destroys_cleanly_while_spinning_or_asleep) {
  constexpr int n = 3, runs = 4;
  const auto me = std::this_thread::get_id();
  for (int i = 0; i < 40; ++i) {
    const bool asleep = i % 2 == 1;
    SCOPED_TRACE(std::string(asleep ? "asleep" : "spinning") + ", pool " + std::to_string(i));
    std::atomic<int> exits{0};
    std::vector<std::atomic<int>> calls(n);
    std::vector<std::thread::id> ids(n);
    {
      thread_pool pool(n);
      for (int r = 0; r < runs; ++r)
        pool.run([&](int ith, int) {
          calls[size_t(ith)].fetch_add(1, std::memory_order_relaxed);
          ids[size_t(ith)] = std::this_thread::get_id();
          if (ith > 0) tls_exit_counter.exits = &exits;
        });
      if (asleep) std::this_thread::sleep_for(std::chrono::milliseconds(3));  // past the spin window
      EXPECT_EQ(exits.load(), 0) << "a worker ended before the pool was destroyed";
    }
    EXPECT_EQ(exits.load(), n - 1) << "workers still running (or detached) after ~thread_pool returned";
    for (int t = 0; t < n; ++t) EXPECT_EQ(calls[size_t(t)].load(), runs) << "thread " << t;
    EXPECT_EQ(ids[0], me);
    std::set<std::thread::id> workers(ids.begin() + 1, ids.end());
    EXPECT_EQ(workers.size(), size_t(n - 1));
    EXPECT_EQ(workers.count(me), 0u);
  }
}


// The idle task: spinning workers (and the caller waiting for them) take pieces of it, each
// piece exactly once, while jobs still run; after clearing, no call is in progress and none
// starts.
TEST(thread_pool, idle_task_pieces_run_once_in_idle_moments_and_clearing_waits) {
  thread_pool pool(3);
  constexpr int n_pieces = 2000;
  std::atomic<int> next{0}, done{0}, in_call{0};
  std::vector<std::atomic<int>> hits(n_pieces);
  const std::function<bool()> task = [&] {
    in_call.fetch_add(1);
    const int i = next.fetch_add(1);
    const bool did = i < n_pieces;
    if (did) {
      hits[size_t(i)].fetch_add(1);
      done.fetch_add(1);
    }
    in_call.fetch_sub(1);
    return did;
  };
  pool.set_idle_task(&task);
  // Uneven jobs: thread 0 works longest, so the others spin and help meanwhile.
  for (int r = 0; r < 200 && done.load() < n_pieces; ++r)
    pool.run([](int ith, int) {
      if (ith == 0) std::this_thread::sleep_for(std::chrono::microseconds(200));
    });
  const auto t0 = std::chrono::steady_clock::now();
  while (done.load() < n_pieces && std::chrono::steady_clock::now() - t0 < std::chrono::seconds(10))
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  pool.set_idle_task(nullptr);
  EXPECT_EQ(in_call.load(), 0);
  EXPECT_EQ(done.load(), n_pieces);
  for (int i = 0; i < n_pieces; ++i) ASSERT_EQ(hits[size_t(i)].load(), 1) << "piece " << i;
  const int calls_after = next.load();
  pool.run([](int, int) {});
  std::this_thread::sleep_for(std::chrono::milliseconds(5));
  EXPECT_EQ(next.load(), calls_after) << "the cleared task was called again";
}

}  // namespace
}  // namespace kvarena
