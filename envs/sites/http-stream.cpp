// http-stream.cpp: see http-stream.h.
#include "http-stream.h"

namespace kvarena::sites {

void http_body_stream::respond(http_response r) {
  {
    std::lock_guard<std::mutex> lk(mu_);
    if (done_ || head_) return;
    r.stream.reset();
    head_ = std::move(r);
    done_ = true;
  }
  wake();
}

void http_body_stream::begin(http_response head) {
  {
    std::lock_guard<std::mutex> lk(mu_);
    if (done_ || head_) return;
    pending_ = std::move(head.body);
    head.body.clear();
    head.stream.reset();
    head_ = std::move(head);
    streamed_ = true;
  }
  wake();
}

void http_body_stream::write(std::string data) {
  {
    std::lock_guard<std::mutex> lk(mu_);
    if (done_ || !streamed_) return;
    pending_ += data;
  }
  wake();
}

void http_body_stream::finish() {
  {
    std::lock_guard<std::mutex> lk(mu_);
    if (done_) return;
    done_ = true;
  }
  wake();
}

void http_body_stream::on_cancel(std::function<void()> fn) {
  {
    std::lock_guard<std::mutex> lk(mu_);
    if (!cancelled_.load()) {
      cancel_fns_.push_back(std::move(fn));
      return;
    }
  }
  fn();
}

http_body_stream::batch http_body_stream::take() {
  std::lock_guard<std::mutex> lk(mu_);
  batch b;
  if (head_ && !head_taken_) {
    b.head = std::move(*head_);
    head_taken_ = true;
  }
  b.streamed = streamed_;
  b.data.swap(pending_);
  b.done = done_;
  return b;
}

void http_body_stream::set_waker(std::function<void()> wake) {
  std::lock_guard<std::mutex> lk(mu_);
  waker_ = std::move(wake);
}

void http_body_stream::cancel() {
  std::vector<std::function<void()>> fns;
  {
    std::lock_guard<std::mutex> lk(mu_);
    if (cancelled_.exchange(true) || done_) return;
    fns.swap(cancel_fns_);
    waker_ = nullptr;
  }
  for (auto& fn : fns) fn();
}

void http_body_stream::wake() {
  std::function<void()> w;
  {
    std::lock_guard<std::mutex> lk(mu_);
    w = waker_;
  }
  if (w) w();
}

}  // namespace kvarena::sites
