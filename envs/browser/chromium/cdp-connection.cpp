// cdp-connection.cpp: the DevTools pipe and its connections (see cdp-connection.h). One
// mutex per pipe guards the routing tables and every connection's queues; each connection
// waits on its own condition variable. Writes go out under a second mutex, non-blocking
// with poll() so a Chromium that stopped reading cannot hang a caller past its deadline,
// and with SIGPIPE blocked on the writing thread (a dead Chromium is EPIPE, not a signal).
#include "cdp-connection.h"

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <map>
#include <mutex>
#include <set>
#include <thread>

namespace kvarena {

using json = nlohmann::json;
using clock_type = std::chrono::steady_clock;

namespace {

constexpr size_t k_max_message = 256u << 20;  // full AX trees and screenshots are large
constexpr size_t k_max_events = 4096;         // per connection: nobody waits for the oldest

// Writes all of `data` to the non-blocking `fd` before `deadline`; "" or why not.
std::string write_all(int fd, const char* data, size_t size, clock_type::time_point deadline) {
  // SIGPIPE blocked on this thread while writing: a closed pipe is EPIPE. A SIGPIPE raised
  // here stays pending on this thread and is taken back with sigtimedwait.
  sigset_t pipe_set, old_set;
  sigemptyset(&pipe_set);
  sigaddset(&pipe_set, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &pipe_set, &old_set);
  std::string error;
  bool epipe = false;
  while (size > 0) {
    ssize_t n = ::write(fd, data, size);
    if (n > 0) {
      data += n;
      size -= static_cast<size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - clock_type::now()).count();
      if (left <= 0) {
        error = "writing to Chromium's DevTools pipe hung (Chromium stopped reading)";
        break;
      }
      pollfd p{fd, POLLOUT, 0};
      ::poll(&p, 1, static_cast<int>(std::min<long long>(left, 1000)));
      continue;
    }
    epipe = n < 0 && errno == EPIPE;
    error = std::string("the DevTools pipe to Chromium was closed (") + std::strerror(n < 0 ? errno : EIO) +
            "): Chromium exited or was killed";
    break;
  }
  if (epipe) {
    const timespec zero{0, 0};
    sigtimedwait(&pipe_set, nullptr, &zero);
  }
  pthread_sigmask(SIG_SETMASK, &old_set, nullptr);
  return error;
}

}  // namespace

struct cdp_connection::channel {
  std::condition_variable cv;
  std::map<int64_t, json> replies;  // id -> whole reply, until its call takes it
  std::deque<cdp_event> events;
};

struct cdp_pipe::state {
  int to_fd = -1, from_fd = -1;
  int wake_read = -1, wake_write = -1;  // the destructor wakes the reader through this
  std::thread reader;

  mutable std::mutex mu;  // everything below, and every channel's queues
  std::string dead_reason;
  int64_t next_id = 1;
  std::set<cdp_connection::channel*> channels;
  std::map<int64_t, cdp_connection::channel*> pending;  // call id -> its connection
  std::map<std::string, cdp_connection::channel*> sessions;  // target session -> its connection

  std::mutex write_mu;  // one message at a time on the pipe

  void die(const std::string& why) {
    std::lock_guard<std::mutex> lock(mu);
    if (dead_reason.empty()) dead_reason = why;
    for (cdp_connection::channel* c : channels) c->cv.notify_all();
  }

  // Routes one message (called by the reader, without the lock).
  void route(const std::string& text) {
    json msg = json::parse(text, nullptr, false);
    if (msg.is_discarded() || !msg.is_object()) return;  // not CDP: ignore
    std::lock_guard<std::mutex> lock(mu);
    if (auto id = msg.find("id"); id != msg.end() && id->is_number_integer()) {
      auto it = pending.find(id->get<int64_t>());
      if (it == pending.end()) return;  // its call timed out, or its connection closed
      cdp_connection::channel* c = it->second;
      const int64_t reply_id = it->first;
      pending.erase(it);
      if (auto r = msg.find("result"); r != msg.end() && r->is_object()) {
        if (auto sid = r->find("sessionId"); sid != r->end() && sid->is_string())
          sessions[sid->get<std::string>()] = c;  // Target.attachToTarget: its events go to c
      }
      c->replies[reply_id] = std::move(msg);
      c->cv.notify_all();
      return;
    }
    auto method = msg.find("method");
    if (method == msg.end() || !method->is_string()) return;
    cdp_event e;
    e.method = method->get<std::string>();
    if (auto s = msg.find("sessionId"); s != msg.end() && s->is_string()) e.session_id = s->get<std::string>();
    if (auto p = msg.find("params"); p != msg.end()) e.params = std::move(*p);
    auto deliver = [](cdp_connection::channel* c, cdp_event ev) {
      c->events.push_back(std::move(ev));
      if (c->events.size() > k_max_events) c->events.pop_front();
      c->cv.notify_all();
    };
    if (!e.session_id.empty()) {
      auto it = sessions.find(e.session_id);
      if (it == sessions.end()) return;  // a session of a connection that closed
      cdp_connection::channel* owner = it->second;
      if (e.method == "Inspector.detached") sessions.erase(it);
      deliver(owner, std::move(e));
      return;
    }
    if (e.method == "Target.detachedFromTarget") {
      if (auto sid = e.params.find("sessionId"); sid != e.params.end() && sid->is_string())
        sessions.erase(sid->get<std::string>());
    }
    size_t left = channels.size();
    for (cdp_connection::channel* c : channels) deliver(c, --left == 0 ? std::move(e) : e);
  }

  void read_loop() {
    std::string buf;
    std::vector<char> chunk(1 << 16);
    size_t scanned = 0;  // buf[0, scanned) holds no NUL
    while (true) {
      pollfd p[2] = {{from_fd, POLLIN, 0}, {wake_read, POLLIN, 0}};
      int r = ::poll(p, 2, -1);
      if (r < 0) {
        if (errno == EINTR) continue;
        die(std::string("cannot wait on Chromium's DevTools pipe: ") + std::strerror(errno));
        return;
      }
      if (p[1].revents) return;  // the pipe is being destroyed
      ssize_t n = ::read(from_fd, chunk.data(), chunk.size());
      if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
      if (n <= 0) {
        die(n == 0 ? "the DevTools pipe from Chromium was closed (end of file): Chromium exited or was killed"
                   : std::string("reading Chromium's DevTools pipe failed (") + std::strerror(errno) +
                         "): Chromium exited or was killed");
        return;
      }
      buf.append(chunk.data(), static_cast<size_t>(n));
      size_t start = 0;
      while (true) {
        size_t nul = buf.find('\0', std::max(start, scanned));
        if (nul == std::string::npos) break;
        route(buf.substr(start, nul - start));
        start = nul + 1;
        scanned = start;
      }
      buf.erase(0, start);
      scanned = buf.size();
      if (buf.size() > k_max_message) {
        die("Chromium sent a DevTools message over " + std::to_string(k_max_message >> 20) + " MiB");
        return;
      }
    }
  }
};

cdp_pipe::cdp_pipe(int to_chromium, int from_chromium) : s_(std::make_unique<state>()) {
  s_->to_fd = to_chromium;
  s_->from_fd = from_chromium;
  int wake[2];
  if (::pipe2(wake, O_CLOEXEC) != 0) {
    const std::string why = std::strerror(errno);
    ::close(to_chromium);
    ::close(from_chromium);
    throw std::runtime_error("cannot make a pipe for the DevTools reader: " + why);
  }
  s_->wake_read = wake[0];
  s_->wake_write = wake[1];
  ::fcntl(s_->to_fd, F_SETFL, ::fcntl(s_->to_fd, F_GETFL) | O_NONBLOCK);
  s_->reader = std::thread([st = s_.get()] { st->read_loop(); });
}

cdp_pipe::~cdp_pipe() {
  char one = 1;
  while (::write(s_->wake_write, &one, 1) < 0 && errno == EINTR) {
  }
  s_->reader.join();
  for (int fd : {s_->to_fd, s_->from_fd, s_->wake_read, s_->wake_write})
    if (fd >= 0) ::close(fd);
}

bool cdp_pipe::dead() const {
  std::lock_guard<std::mutex> lock(s_->mu);
  return !s_->dead_reason.empty();
}

std::string cdp_pipe::dead_reason() const {
  std::lock_guard<std::mutex> lock(s_->mu);
  return s_->dead_reason;
}

cdp_connection::cdp_connection(std::shared_ptr<cdp_pipe> pipe)
    : pipe_(std::move(pipe)), ch_(std::make_unique<channel>()) {
  cdp_pipe::state& s = *pipe_->s_;
  std::lock_guard<std::mutex> lock(s.mu);
  if (!s.dead_reason.empty()) throw cdp_error(cdp_error::kind::dead, s.dead_reason);
  s.channels.insert(ch_.get());
}

cdp_connection::~cdp_connection() {
  cdp_pipe::state& s = *pipe_->s_;
  std::lock_guard<std::mutex> lock(s.mu);
  s.channels.erase(ch_.get());
  for (auto it = s.pending.begin(); it != s.pending.end();) it = it->second == ch_.get() ? s.pending.erase(it) : ++it;
  for (auto it = s.sessions.begin(); it != s.sessions.end();)
    it = it->second == ch_.get() ? s.sessions.erase(it) : ++it;
}

bool cdp_connection::dead() const { return pipe_->dead(); }
std::string cdp_connection::dead_reason() const { return pipe_->dead_reason(); }

void cdp_connection::fail() const { throw cdp_error(cdp_error::kind::dead, pipe_->dead_reason()); }

json cdp_connection::call(const std::string& method, json params, const std::string& session_id,
                          std::chrono::milliseconds timeout) {
  cdp_pipe::state& s = *pipe_->s_;
  const auto deadline = clock::now() + timeout;
  int64_t id;
  {
    std::lock_guard<std::mutex> lock(s.mu);
    if (!s.dead_reason.empty()) throw cdp_error(cdp_error::kind::dead, s.dead_reason);
    id = s.next_id++;
    s.pending[id] = ch_.get();
  }
  auto forget = [&] {
    std::lock_guard<std::mutex> lock(s.mu);
    s.pending.erase(id);
    ch_->replies.erase(id);
  };
  json msg = {{"id", id}, {"method", method}, {"params", std::move(params)}};
  if (!session_id.empty()) msg["sessionId"] = session_id;
  std::string text = msg.dump(-1, ' ', false, json::error_handler_t::replace);
  text.push_back('\0');
  std::string error;
  {
    std::lock_guard<std::mutex> lock(s.write_mu);
    error = write_all(s.to_fd, text.data(), text.size(), deadline + std::chrono::seconds(5));
  }
  if (!error.empty()) {
    forget();
    s.die(error);
    fail();
  }
  std::unique_lock<std::mutex> lock(s.mu);
  while (true) {
    if (auto it = ch_->replies.find(id); it != ch_->replies.end()) {
      json reply = std::move(it->second);
      ch_->replies.erase(it);
      lock.unlock();
      if (auto err = reply.find("error"); err != reply.end()) {
        std::string message = err->value("message", std::string("error"));
        if (err->contains("data") && (*err)["data"].is_string()) message += ": " + (*err)["data"].get<std::string>();
        throw cdp_error(cdp_error::kind::protocol, method + ": " + message);
      }
      return reply.contains("result") ? std::move(reply["result"]) : json::object();
    }
    if (!s.dead_reason.empty()) {
      s.pending.erase(id);
      throw cdp_error(cdp_error::kind::dead, s.dead_reason);
    }
    if (ch_->cv.wait_until(lock, deadline) == std::cv_status::timeout && clock::now() >= deadline &&
        !ch_->replies.count(id)) {
      s.pending.erase(id);  // a late reply is dropped
      throw cdp_error(cdp_error::kind::timeout,
                      method + ": no answer from Chromium within " + std::to_string(timeout.count()) + " ms");
    }
  }
}

std::optional<cdp_event> cdp_connection::wait_event(const std::string& method, const std::string& session_id,
                                                    clock::time_point deadline) {
  return wait_event_if([&](const cdp_event& e) { return e.method == method && e.session_id == session_id; },
                       deadline);
}

std::optional<cdp_event> cdp_connection::wait_event_if(const std::function<bool(const cdp_event&)>& match,
                                                       clock::time_point deadline) {
  cdp_pipe::state& s = *pipe_->s_;
  std::unique_lock<std::mutex> lock(s.mu);
  size_t seen = 0;  // events[0, seen) did not match
  while (true) {
    if (ch_->events.size() >= k_max_events) seen = 0;  // the full queue dropped its oldest: indices moved
    for (; seen < ch_->events.size(); ++seen) {
      if (match(ch_->events[seen])) {
        cdp_event e = std::move(ch_->events[seen]);
        ch_->events.erase(ch_->events.begin() + static_cast<long>(seen));
        return e;
      }
    }
    if (!s.dead_reason.empty()) throw cdp_error(cdp_error::kind::dead, s.dead_reason);
    if (clock::now() >= deadline) return std::nullopt;
    ch_->cv.wait_until(lock, deadline);
  }
}

std::deque<cdp_event> cdp_connection::drain_events(clock::time_point deadline) {
  cdp_pipe::state& s = *pipe_->s_;
  std::unique_lock<std::mutex> lock(s.mu);
  while (s.dead_reason.empty() && clock::now() < deadline) ch_->cv.wait_until(lock, deadline);
  if (!s.dead_reason.empty()) throw cdp_error(cdp_error::kind::dead, s.dead_reason);
  std::deque<cdp_event> out;
  out.swap(ch_->events);
  return out;
}

}  // namespace kvarena
