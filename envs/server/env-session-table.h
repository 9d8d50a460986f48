// env-session-table.h: the live env sessions by id, with a cap on their number and a
// reaper thread that closes sessions left idle (an agent that crashed never sends DELETE).
// Closing a session (DELETE, reaping, shutdown) takes it out of the table first, then waits
// for its in-flight request (its mutex), marks it closed and calls `on_close` (which drops
// its tenant), so a tenant is never dropped under a running step.
// Thread-safe.
#pragma once
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "server/env-session.h"

namespace kvarena {

class env_session_table {
 public:
  using close_fn = std::function<void(env_session&)>;

  // idle_timeout <= 0: never reap.
  env_session_table(size_t max_sessions, std::chrono::milliseconds idle_timeout, close_fn on_close);
  ~env_session_table();  // stops the reaper; sessions still open are closed
  env_session_table(const env_session_table&) = delete;
  env_session_table& operator=(const env_session_table&) = delete;

  void start_reaper();
  void stop_reaper();

  // A fresh id ("s-" and 16 hex digits) not in the table.
  std::string new_id() const;
  // Throws env_api_error(503) when the table is full.
  void check_capacity() const;
  void add(std::shared_ptr<env_session> s);  // throws env_api_error(503) when full
  std::shared_ptr<env_session> find(const std::string& id) const;  // null when unknown

  // Closes one session; false when unknown. Waits up to `wait` for its running request.
  bool close(const std::string& id, std::chrono::milliseconds wait);
  // Closes every session idle for longer than the timeout and not busy; returns how many.
  size_t reap_idle();
  void close_all(std::chrono::milliseconds wait);

  size_t size() const;
  size_t max_sessions() const { return max_sessions_; }

 private:
  void close_session(const std::shared_ptr<env_session>& s, std::chrono::milliseconds wait);
  void reaper_loop();

  size_t max_sessions_;
  std::chrono::milliseconds idle_timeout_;
  close_fn on_close_;
  mutable std::mutex mu_;  // guards sessions_
  std::map<std::string, std::shared_ptr<env_session>> sessions_;

  std::mutex reaper_mu_;
  std::condition_variable reaper_cv_;
  bool reaper_stop_ = false;
  std::thread reaper_;
};

}  // namespace kvarena
