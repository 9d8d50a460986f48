// decode-batcher.h: gathers the one-token decode steps that several threads (the runner's
// items, one sequence each) issue at about the same time into one batched forward call, the
// way a device backend is used well: N sequences, one weight pass per step. A caller's
// decode() queues its request and either leads a batch (when `target()` requests are queued,
// or its wait ran out) or waits for the batch that took it; every caller returns after its
// own request ran, and an exception of that batch is rethrown to each of its callers.
// One batch runs at a time. What a batch does (the model call, the logits) is the backend's
// run function; which requests can share a call is its business too (it may split them).
// Not here: any model code (cuda-backend.cpp supplies the run function).
#pragma once
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <map>
#include <mutex>
#include <vector>

namespace kvarena {

class decode_batcher {
 public:
  struct request {
    void* seq = nullptr;  // the backend's sequence object
    int32_t token = 0;
  };
  using run_fn = std::function<void(const std::vector<request>&)>;

  // max_batch: a batch is full at min(members, max_batch) requests (one that queued while
  // another ran may hold more: the run function splits what its device cannot take at
  // once); wait: how long a queued request waits for others before its thread runs what
  // is queued.
  decode_batcher(int max_batch, std::chrono::microseconds wait, run_fn run);

  // Sequences that may send requests (a batch is full at min(members, max_batch)); the
  // backend counts its sequences in and out.
  void join();
  void leave();

  // Blocks until this request has run (in some batch); rethrows that batch's exception.
  void decode(void* seq, int32_t token);

  // Statistics: batches run and requests in them.
  int64_t batches() const;
  int64_t requests() const;

 private:
  size_t target() const;  // under mu_
  // Takes the queued requests (generation gen_) and runs them; lk held on entry and exit.
  void lead(std::unique_lock<std::mutex>& lk);

  const int max_batch_;
  const std::chrono::microseconds wait_;
  run_fn run_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::vector<request> pending_;        // generation gen_, not yet taken
  uint64_t gen_ = 0;                    // the generation being queued
  bool running_ = false;                // a batch is running (one at a time)
  std::map<uint64_t, std::exception_ptr> done_;  // finished generations not yet seen by all
  std::map<uint64_t, int> waiting_;     // callers of a generation still to return
  int members_ = 0;
  int64_t batches_ = 0, requests_ = 0;
};

}  // namespace kvarena
