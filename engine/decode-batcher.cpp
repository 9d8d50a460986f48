// decode-batcher.cpp: see decode-batcher.h.
#include "decode-batcher.h"

#include <algorithm>

namespace kvarena {

decode_batcher::decode_batcher(int max_batch, std::chrono::microseconds wait, run_fn run)
    : max_batch_(std::max(1, max_batch)), wait_(wait), run_(std::move(run)) {}

void decode_batcher::join() {
  std::lock_guard<std::mutex> lk(mu_);
  ++members_;
}

void decode_batcher::leave() {
  std::lock_guard<std::mutex> lk(mu_);
  --members_;
  cv_.notify_all();  // a batch waiting for this member can go now
}

size_t decode_batcher::target() const { return size_t(std::clamp(members_, 1, max_batch_)); }

int64_t decode_batcher::batches() const {
  std::lock_guard<std::mutex> lk(mu_);
  return batches_;
}
int64_t decode_batcher::requests() const {
  std::lock_guard<std::mutex> lk(mu_);
  return requests_;
}

void decode_batcher::lead(std::unique_lock<std::mutex>& lk) {
  cv_.wait(lk, [&] { return !running_; });
  const uint64_t g = gen_++;
  std::vector<request> batch;
  batch.swap(pending_);
  running_ = true;
  ++batches_;
  requests_ += int64_t(batch.size());
  lk.unlock();
  std::exception_ptr err;
  try {
    run_(batch);
  } catch (...) {
    err = std::current_exception();
  }
  lk.lock();
  running_ = false;
  done_[g] = err;
  cv_.notify_all();
}

void decode_batcher::decode(void* seq, int32_t token) {
  std::unique_lock<std::mutex> lk(mu_);
  const uint64_t mine = gen_;
  pending_.push_back({seq, token});
  ++waiting_[mine];
  const auto deadline = std::chrono::steady_clock::now() + wait_;
  while (!done_.count(mine)) {
    const bool taken = gen_ != mine;
    if (!taken && !running_ && (pending_.size() >= target() || std::chrono::steady_clock::now() >= deadline)) {
      lead(lk);  // runs generation `mine`
      continue;
    }
    if (taken || running_) cv_.wait(lk);
    else cv_.wait_until(lk, deadline);
  }
  std::exception_ptr err = done_[mine];
  if (--waiting_[mine] == 0) {
    waiting_.erase(mine);
    done_.erase(mine);
  }
  if (err) std::rethrow_exception(err);
}

}  // namespace kvarena
