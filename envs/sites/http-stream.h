// http-stream.h: a response that another thread completes later, so a handler whose work
// takes long (a model generating tokens) returns at once and leaves the server's threads
// free. The handler returns an http_response whose `stream` is set (its other fields are
// ignored); a producer, on any thread, then either
//   respond(r)                    the whole response at once (sent with Content-Length), or
//   begin(head); write(..)*; finish()   a streamed body: the head's status, content type and
//                                 headers at once, then each write() flushed as it comes
//                                 (chunked transfer encoding; Server-Sent Events use this).
// The client going away (it closes the connection while the response waits or streams, or
// a write fails) cancels the stream: cancelled() turns true and the on_cancel callbacks run
// once, on the server's thread, so the producer can stop its work early.
// Not here: the socket side (http-server.cpp drains the stream with take()).
#pragma once
#include <atomic>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "http-message.h"

namespace kvarena::sites {

class http_body_stream {
 public:
  // --- producer (any thread). Calls after the end (respond, finish) are ignored.
  void respond(http_response r);
  void begin(http_response head);  // head.body, when not empty, is the first piece
  void write(std::string data);
  void finish();
  bool cancelled() const { return cancelled_.load(); }
  // fn runs once when the client goes away (at once when it already has); never after finish.
  void on_cancel(std::function<void()> fn);

  // --- server side
  struct batch {
    std::optional<http_response> head;  // set once: the whole response (done) or a streamed head
    bool streamed = false;              // head is a streamed head; data follows
    std::string data;                   // body bytes written since the last take()
    bool done = false;                  // respond() or finish() was called
  };
  batch take();
  // wake runs (on the producer's thread) after each producer call, so the server drains.
  void set_waker(std::function<void()> wake);
  // The client went away: runs the on_cancel callbacks.
  void cancel();

 private:
  void wake();
  mutable std::mutex mu_;
  std::optional<http_response> head_;
  bool head_taken_ = false, streamed_ = false, done_ = false;
  std::string pending_;
  std::function<void()> waker_;
  std::vector<std::function<void()>> cancel_fns_;
  std::atomic<bool> cancelled_{false};
};

}  // namespace kvarena::sites
