// cdp-connection.h: the Chrome DevTools Protocol over the pipe Chromium opens with
// --remote-debugging-pipe (no TCP port, so no other local user can attach): Chromium reads
// commands from its fd 3 and writes replies and events to its fd 4, each message a JSON
// text followed by a NUL byte.
//
// One cdp_pipe per Chromium process (chromium-process.h owns it): a reader thread splits
// what Chromium writes into messages and routes them to the cdp_connection they belong to:
// a reply to the connection whose call has its id, an event of a target session to the
// connection that attached that session (learnt from the reply to Target.attachToTarget),
// a browser-level event (no sessionId: Target.targetCreated, ...) to every connection.
// Ids are unique across the pipe, so many connections (one per browser session, each on its
// own thread) share one Chromium.
//
// cdp_connection is synchronous for its caller: call() sends a command and waits for its
// reply or the deadline; events are queued until someone waits for them. One thread at a
// time per connection (an env session holds its mutex around every browser call); the pipe
// is thread-safe. A reply that arrives after its call timed out is dropped.
//
// When the pipe fails (Chromium crashed or was killed: end of file) every connection on it
// is dead for good: every later call throws cdp_error with dead() true. nlohmann/json stays
// in cdp-connection.cpp and the chromium-*.cpp files that include this header.
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

class cdp_connection;

// The two pipe ends on kvarena's side of one Chromium process, and the thread reading one.
class cdp_pipe {
 public:
  // Takes ownership of both descriptors: `to_chromium` (written; Chromium's fd 3) and
  // `from_chromium` (read; Chromium's fd 4), and starts the reader thread.
  cdp_pipe(int to_chromium, int from_chromium);
  ~cdp_pipe();  // stops the reader, closes both ends
  cdp_pipe(const cdp_pipe&) = delete;
  cdp_pipe& operator=(const cdp_pipe&) = delete;

  bool dead() const;
  std::string dead_reason() const;

  struct state;  // cdp-connection.cpp

 private:
  friend class cdp_connection;
  std::unique_ptr<state> s_;
};

class cdp_connection {
 public:
  using clock = std::chrono::steady_clock;

  // A connection on `pipe`; throws cdp_error(dead) when the pipe is already dead.
  explicit cdp_connection(std::shared_ptr<cdp_pipe> pipe);
  ~cdp_connection();
  cdp_connection(const cdp_connection&) = delete;
  cdp_connection& operator=(const cdp_connection&) = delete;

  // Sends `method` with `params` (to the target session `session_id`, "" for the browser)
  // and returns the reply's "result". Throws cdp_error: protocol (the reply is an error:
  // its message), timeout (no reply in time), dead (the pipe is gone).
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
  // Waits until `deadline` (not at all when it has passed) and returns the queued events;
  // the queue is emptied. Throws cdp_error(dead).
  std::deque<cdp_event> drain_events(clock::time_point deadline);

  bool dead() const;
  std::string dead_reason() const;

  struct channel;  // cdp-connection.cpp

 private:
  [[noreturn]] void fail() const;

  std::shared_ptr<cdp_pipe> pipe_;
  std::unique_ptr<channel> ch_;
};

}  // namespace kvarena
