// http-server.h: a small asynchronous HTTP/1.1 server (Boost.Beast, hidden behind a pimpl)
// that turns each request into an http_request, calls one handler and writes its
// http_response. What it guarantees, so handlers need not care:
//   - keep-alive and pipelined requests; every read and write has a deadline, so a slow or
//     silent client is disconnected after `io_timeout`;
//   - bodies over `body_limit_bytes` -> 413, headers over `header_limit_bytes` -> 431,
//     malformed requests and unsafe targets ("/../etc/passwd", "%2e%2e", encoded '/')
//     -> 400, each with a short HTML body, before the handler runs;
//   - HEAD is answered as GET without the body; a handler that throws -> 500;
//   - at most `max_connections` open at once: one more gets 503 and is closed.
// The handler is called concurrently from `threads` threads and must be thread-safe.
// Not here: routing (http-router.h) and the sites (site-server.h).
#pragma once
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "http-message.h"

namespace kvarena::sites {

struct http_server_options {
  std::string host = "127.0.0.1";  // "0.0.0.0" to listen on every interface
  uint16_t port = 0;               // 0: the OS picks a free port; port() reports it
  int threads = 2;                 // io_context threads
  size_t body_limit_bytes = 1 << 20;
  size_t header_limit_bytes = 16 << 10;
  std::chrono::milliseconds io_timeout{30000};  // per read/write, incl. idle keep-alive
  // Errors the server answers itself (malformed request 400, body 413, headers 431, a
  // throwing handler 500): a short HTML page by default, the env API's JSON error shape
  // ({"error": {"code", "message"}}) when set.
  bool json_errors = false;
  // Connections open at once at most (0: no limit). One past it is answered 503 with
  // Retry-After and closed without reading its request, so idle or slow clients cannot
  // hold every descriptor and thread of the server.
  size_t max_connections = 512;
};

class http_server {
 public:
  using handler_fn = std::function<http_response(const http_request&)>;

  http_server(http_server_options opt, handler_fn handler);
  ~http_server();  // stops
  http_server(const http_server&) = delete;
  http_server& operator=(const http_server&) = delete;

  // Binds, listens and starts the threads. Throws std::runtime_error naming the address
  // when it cannot bind (port in use, bad host).
  void start();
  // Closes the listener and every connection, joins the threads. Idempotent.
  void stop();

  bool running() const;
  uint16_t port() const;         // the bound port (after start)
  size_t connections() const;    // open now (refused ones not counted)
  std::string base_url() const;  // "http://127.0.0.1:8080" (127.0.0.1 when bound to 0.0.0.0)

 private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

}  // namespace kvarena::sites
