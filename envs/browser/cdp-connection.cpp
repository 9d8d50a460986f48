// cdp-connection.cpp: the DevTools WebSocket client (see cdp-connection.h). Every socket
// operation is asynchronous on a private io_context that the calling thread runs until the
// operation completes or the deadline passes; one read is kept pending across calls.
#include "cdp-connection.h"

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/websocket.hpp>

#include <map>

namespace kvarena {

namespace beast = boost::beast;
namespace websocket = boost::beast::websocket;
using tcp = boost::asio::ip::tcp;
using json = nlohmann::json;

struct cdp_connection::impl {
  boost::asio::io_context ioc;
  websocket::stream<tcp::socket> ws{ioc};
  beast::flat_buffer read_buf;
  bool read_pending = false;
  bool read_done = false;
  boost::system::error_code read_ec;
  std::map<int64_t, json> replies;  // id -> whole reply message, until its call takes it

  // Runs the io_context until `done` or the deadline; false on timeout.
  bool run_until(const bool& done, clock::time_point deadline) {
    while (!done) {
      if (ioc.stopped()) ioc.restart();
      if (clock::now() >= deadline) {  // what has already arrived still counts
        ioc.poll();
        return done;
      }
      ioc.run_one_until(deadline);
    }
    return true;
  }
};

cdp_connection::cdp_connection(const std::string& host, int port, const std::string& path,
                               std::chrono::milliseconds connect_timeout)
    : impl_(std::make_unique<impl>()) {
  const auto deadline = clock::now() + connect_timeout;
  const std::string where = "ws://" + host + ":" + std::to_string(port) + path;
  boost::system::error_code ec;
  auto address = boost::asio::ip::make_address(host, ec);
  if (ec) fail("cannot connect to Chromium's DevTools at " + where + ": bad address");
  bool done = false;
  impl_->ws.next_layer().async_connect(tcp::endpoint(address, static_cast<unsigned short>(port)),
                                       [&](boost::system::error_code e) { ec = e, done = true; });
  if (!impl_->run_until(done, deadline)) fail("timed out connecting to Chromium's DevTools at " + where);
  if (ec) fail("cannot connect to Chromium's DevTools at " + where + ": " + ec.message());
  impl_->ws.read_message_max(256u << 20);  // full AX trees and screenshots are large
  done = false;
  impl_->ws.async_handshake(host + ":" + std::to_string(port), path,
                            [&](boost::system::error_code e) { ec = e, done = true; });
  if (!impl_->run_until(done, deadline)) fail("timed out in the WebSocket handshake with " + where);
  if (ec) fail("the WebSocket handshake with " + where + " failed: " + ec.message());
}

cdp_connection::~cdp_connection() {
  boost::system::error_code ec;
  impl_->ws.next_layer().close(ec);  // no close handshake: Chromium may be gone already
}

void cdp_connection::fail(const std::string& why) {
  if (dead_reason_.empty()) dead_reason_ = why;
  throw cdp_error(cdp_error::kind::dead, dead_reason_);
}

bool cdp_connection::read_one(clock::time_point deadline) {
  if (dead()) fail(dead_reason_);
  impl& m = *impl_;
  if (!m.read_pending) {
    m.read_pending = true;
    m.read_done = false;
    m.ws.async_read(m.read_buf, [&m](boost::system::error_code ec, size_t) {
      m.read_ec = ec;
      m.read_done = true;
    });
  }
  if (!m.run_until(m.read_done, deadline)) return false;
  m.read_pending = false;
  if (m.read_ec) fail("the connection to Chromium was lost (" + m.read_ec.message() + "): Chromium exited or was killed");
  std::string text = beast::buffers_to_string(m.read_buf.data());
  m.read_buf.consume(m.read_buf.size());
  json msg = json::parse(text, nullptr, false);
  if (msg.is_discarded() || !msg.is_object()) return true;  // not CDP: ignore
  if (auto id = msg.find("id"); id != msg.end() && id->is_number_integer()) {
    const int64_t reply_id = id->get<int64_t>();  // before msg is moved from
    m.replies[reply_id] = std::move(msg);
  } else if (auto method = msg.find("method"); method != msg.end() && method->is_string()) {
    cdp_event e;
    e.method = method->get<std::string>();
    if (auto s = msg.find("sessionId"); s != msg.end() && s->is_string()) e.session_id = s->get<std::string>();
    if (auto p = msg.find("params"); p != msg.end()) e.params = std::move(*p);
    events_.push_back(std::move(e));
    if (events_.size() > 4096) events_.pop_front();  // nobody waits for these
  }
  return true;
}

json cdp_connection::call(const std::string& method, json params, const std::string& session_id,
                          std::chrono::milliseconds timeout) {
  if (dead()) fail(dead_reason_);
  const auto deadline = clock::now() + timeout;
  const int64_t id = next_id_++;
  json msg = {{"id", id}, {"method", method}, {"params", std::move(params)}};
  if (!session_id.empty()) msg["sessionId"] = session_id;
  std::string text = msg.dump(-1, ' ', false, json::error_handler_t::replace);
  impl& m = *impl_;
  bool done = false;
  boost::system::error_code ec;
  m.ws.text(true);
  m.ws.async_write(boost::asio::buffer(text), [&](boost::system::error_code e, size_t) { ec = e, done = true; });
  if (!m.run_until(done, deadline + std::chrono::seconds(5))) fail("writing to Chromium's DevTools socket hung");
  if (ec) fail("the connection to Chromium was lost (" + ec.message() + "): Chromium exited or was killed");
  while (true) {
    if (auto it = m.replies.find(id); it != m.replies.end()) {
      json reply = std::move(it->second);
      m.replies.erase(it);
      if (auto err = reply.find("error"); err != reply.end()) {
        std::string message = err->value("message", std::string("error"));
        if (err->contains("data") && (*err)["data"].is_string()) message += ": " + (*err)["data"].get<std::string>();
        throw cdp_error(cdp_error::kind::protocol, method + ": " + message);
      }
      return reply.contains("result") ? std::move(reply["result"]) : json::object();
    }
    if (!read_one(deadline)) {
      throw cdp_error(cdp_error::kind::timeout, method + ": no answer from Chromium within " +
                                                    std::to_string(timeout.count()) + " ms");
    }
    if (m.replies.size() > 64) m.replies.erase(m.replies.begin());  // replies to timed-out calls
  }
}

std::optional<cdp_event> cdp_connection::wait_event(const std::string& method, const std::string& session_id,
                                                    clock::time_point deadline) {
  return wait_event_if([&](const cdp_event& e) { return e.method == method && e.session_id == session_id; },
                       deadline);
}

std::optional<cdp_event> cdp_connection::wait_event_if(const std::function<bool(const cdp_event&)>& match,
                                                       clock::time_point deadline) {
  size_t seen = 0;
  while (true) {
    for (; seen < events_.size(); ++seen) {
      if (match(events_[seen])) {
        cdp_event e = std::move(events_[seen]);
        events_.erase(events_.begin() + static_cast<long>(seen));
        return e;
      }
    }
    if (!read_one(deadline)) return std::nullopt;
    if (events_.size() >= 4096) seen = 0;  // the full queue dropped its oldest: indices moved
  }
}

std::deque<cdp_event> cdp_connection::drain_events(clock::time_point deadline) {
  while (read_one(deadline)) {
  }
  std::deque<cdp_event> out;
  out.swap(events_);
  return out;
}

}  // namespace kvarena
