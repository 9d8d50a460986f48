// env-session-table.cpp: the session table and its idle reaper (see env-session-table.h).
#include "server/env-session-table.h"

#include <algorithm>
#include <cstdio>
#include <random>
#include <vector>

namespace kvarena {

env_session_table::env_session_table(size_t max_sessions, std::chrono::milliseconds idle_timeout, close_fn on_close)
    : max_sessions_(max_sessions), idle_timeout_(idle_timeout), on_close_(std::move(on_close)) {}

env_session_table::~env_session_table() {
  stop_reaper();
  close_all(std::chrono::milliseconds(5000));
}

std::string env_session_table::new_id() const {
  // Unique, not reproducible: ids must not repeat across server restarts either.
  static std::mutex rng_mu;
  static std::mt19937_64 rng{std::random_device{}()};
  for (;;) {
    uint64_t x;
    {
      std::lock_guard lock(rng_mu);
      x = rng();
    }
    char buf[24];
    std::snprintf(buf, sizeof buf, "s-%016llx", static_cast<unsigned long long>(x));
    std::lock_guard lock(mu_);
    if (!sessions_.count(buf)) return buf;
  }
}

void env_session_table::check_capacity() const {
  std::lock_guard lock(mu_);
  if (sessions_.size() >= max_sessions_)
    throw env_api_error(503, "the env server holds its maximum of " + std::to_string(max_sessions_) +
                                 " sessions; DELETE finished sessions (or start the server with a larger "
                                 "--max-sessions) and try again");
}

void env_session_table::add(std::shared_ptr<env_session> s) {
  check_capacity();  // outside the add lock on purpose: a few over the cap in a race is harmless
  std::lock_guard lock(mu_);
  sessions_[s->id()] = std::move(s);
}

std::shared_ptr<env_session> env_session_table::find(const std::string& id) const {
  std::lock_guard lock(mu_);
  auto it = sessions_.find(id);
  return it == sessions_.end() ? nullptr : it->second;
}

void env_session_table::close_session(const std::shared_ptr<env_session>& s, std::chrono::milliseconds wait) {
  // Wait for a running request; if it outlasts `wait`, close anyway: the tenant's state
  // objects outlive their deletion while a request uses them (site-store.h), so the worst
  // case is that request's own error.
  std::unique_lock lock(s->mutex(), std::defer_lock);
  bool locked = lock.try_lock_for(wait);
  if (!locked)
    std::fprintf(stderr, "kvarena env-server: closing session %s while a request still runs on it\n", s->id().c_str());
  s->mark_closed();
  if (on_close_) on_close_(*s);
}

bool env_session_table::close(const std::string& id, std::chrono::milliseconds wait) {
  std::shared_ptr<env_session> s;
  {
    std::lock_guard lock(mu_);
    auto it = sessions_.find(id);
    if (it == sessions_.end()) return false;
    s = std::move(it->second);
    sessions_.erase(it);
  }
  close_session(s, wait);
  return true;
}

size_t env_session_table::reap_idle() {
  if (idle_timeout_.count() <= 0) return 0;
  std::vector<std::shared_ptr<env_session>> idle;
  {
    std::lock_guard lock(mu_);
    for (auto it = sessions_.begin(); it != sessions_.end();) {
      env_session& s = *it->second;
      // A session whose mutex is held is in use, hence not idle, whatever its clock says.
      if (s.idle_for() > idle_timeout_ && s.mutex().try_lock()) {
        s.mutex().unlock();
        idle.push_back(std::move(it->second));
        it = sessions_.erase(it);
      } else {
        ++it;
      }
    }
  }
  for (const auto& s : idle) {
    std::fprintf(stderr, "kvarena env-server: closing session %s: idle for more than %lld ms\n", s->id().c_str(),
                 static_cast<long long>(idle_timeout_.count()));
    close_session(s, std::chrono::milliseconds(5000));
  }
  return idle.size();
}

void env_session_table::close_all(std::chrono::milliseconds wait) {
  std::map<std::string, std::shared_ptr<env_session>> all;
  {
    std::lock_guard lock(mu_);
    all.swap(sessions_);
  }
  for (const auto& [id, s] : all) close_session(s, wait);
}

size_t env_session_table::size() const {
  std::lock_guard lock(mu_);
  return sessions_.size();
}

void env_session_table::start_reaper() {
  if (reaper_.joinable() || idle_timeout_.count() <= 0) return;
  {
    std::lock_guard lock(reaper_mu_);
    reaper_stop_ = false;
  }
  reaper_ = std::thread([this] { reaper_loop(); });
}

void env_session_table::stop_reaper() {
  if (!reaper_.joinable()) return;
  {
    std::lock_guard lock(reaper_mu_);
    reaper_stop_ = true;
  }
  reaper_cv_.notify_all();
  reaper_.join();
}

void env_session_table::reaper_loop() {
  // Checks a few times per timeout, so a session lives at most ~1.25 timeouts idle.
  auto period = std::clamp(idle_timeout_ / 4, std::chrono::milliseconds(10), std::chrono::milliseconds(10000));
  std::unique_lock lock(reaper_mu_);
  while (!reaper_cv_.wait_for(lock, period, [this] { return reaper_stop_; })) {
    lock.unlock();
    reap_idle();
    lock.lock();
  }
}

}  // namespace kvarena
