// cdp-connection.h: one WebSocket connection to Chromium's DevTools endpoint
// (ws://127.0.0.1:<port>/devtools/browser/<id>) speaking the Chrome DevTools Protocol:
// commands with an id and a reply, events queued until someone waits for them. Flattened
// target sessions ("sessionId" on each message) let one connection drive several tabs.
//
// Synchronous for its caller: call() sends a command and runs the connection's own
// io_context until the reply or the deadline. One thread at a time (an env session holds
// its mutex around every browser call). A read that outlives a deadline stays pending and
// is finished by the next call, so a timeout never corrupts the stream.
//
// When the socket fails (Chromium crashed or was killed) the connection is dead for good:
// every later call throws cdp_error with dead() true. Boost.Beast and nlohmann/json stay in
// cdp-connection.cpp and the chromium-*.cpp files that include this header.
#pragma once
#include <chrono>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>

#include <nlohmann/json.hpp>

namespace kvarena {

class cdp_error : public std::runtime_error {
 public:
  enum class kind { protocol, timeout, dead };
  cdp_error(kind k, const std::string& message) : std::runtime_error(message), kind_(k) {}
  kind what_kind() const { return kind_; }
  bool dead() const { return kind_ == kind::dead; }
  bool timed_out() const { return kind_ == kind::timeout; }

 private:
  kind kind_;
};

struct cdp_event {
  std::string method;      // "Page.loadEventFired"
  std::string session_id;  // "" for browser-level events
  nlohmann::json params;
};

class cdp_connection {
 public:
  using clock = std::chrono::steady_clock;

  // Connects and does the WebSocket handshake; throws cdp_error(dead) when it cannot.
  cdp_connection(const std::string& host, int port, const std::string& path,
                 std::chrono::milliseconds connect_timeout);
  ~cdp_connection();
  cdp_connection(const cdp_connection&) = delete;
  cdp_connection& operator=(const cdp_connection&) = delete;

  // Sends `method` with `params` (to the target session `session_id`, "" for the browser)
  // and returns the reply's "result". Throws cdp_error: protocol (the reply is an error:
  // its message), timeout (no reply in time), dead (the socket is gone).
  nlohmann::json call(const std::string& method, nlohmann::json params = nlohmann::json::object(),
                      const std::string& session_id = "",
                      std::chrono::milliseconds timeout = std::chrono::seconds(30));

  // The first queued or arriving event with `method` for `session_id` before `deadline`
  // (events of other kinds stay queued); nullopt on timeout. Throws cdp_error(dead).
  std::optional<cdp_event> wait_event(const std::string& method, const std::string& session_id,
                                      clock::time_point deadline);
  // The first queued or arriving event that `match` accepts before `deadline` (the others
  // stay queued); nullopt on timeout. Throws cdp_error(dead).
  std::optional<cdp_event> wait_event_if(const std::function<bool(const cdp_event&)>& match,
                                         clock::time_point deadline);
  // Reads what has arrived (without blocking past `deadline`) and returns the queued
  // events; the queue is emptied.
  std::deque<cdp_event> drain_events(clock::time_point deadline);

  bool dead() const { return !dead_reason_.empty(); }
  const std::string& dead_reason() const { return dead_reason_; }

 private:
  struct impl;
  // Reads one message into the queue or replies; false when the deadline passed first.
  bool read_one(clock::time_point deadline);
  [[noreturn]] void fail(const std::string& why);

  std::unique_ptr<impl> impl_;
  std::string dead_reason_;
  int64_t next_id_ = 1;
  std::deque<cdp_event> events_;
};

}  // namespace kvarena
