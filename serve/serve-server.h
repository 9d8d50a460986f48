// serve-server.h: `kvarena serve` as an object: the scheduler (serve-scheduler.h), the
// routes (serve-routes.h) and the HTTP server (envs/sites/http-server.h) over one loaded
// model. Binds 127.0.0.1 by default; an address other than loopback needs a token.
#pragma once
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include "kv/kv-policy-registry.h"
#include "model.h"
#include "serve-routes.h"
#include "serve-scheduler.h"
#include "sites/http-server.h"
#include "tokenizer.h"

namespace kvarena::serve {

struct serve_options {
  std::string host = "127.0.0.1";
  uint16_t port = 8080;        // 0: a free port (port() tells)
  int http_threads = 4;        // connections are served asynchronously; these only parse and route
  std::string model_id;        // "" -> the model file's name without .gguf
  std::string token;           // "": none (then only a loopback host)
  scheduler_options engine;    // backend, --parallel, --queue, threads, context
  kv_policy_spec default_kv;   // requests without "kv" (name "": the plain cache)
  std::chrono::milliseconds timeout{600000};
  size_t body_limit_bytes = 16u << 20;
};

// "" when the server may bind `host` with `token`; else why not and what to do.
std::string serve_bind_refusal(const std::string& host, const std::string& token);

class serve_server {
 public:
  serve_server(const model& m, const tokenizer& tok, serve_options opt);
  ~serve_server();  // stop()
  // Binds and starts; throws std::runtime_error naming the address (or the bind refusal).
  void start();
  // Cancels the requests in flight, then closes the connections. Idempotent.
  void stop();
  std::string base_url() const;
  uint16_t port() const;
  const serve_options& options() const { return opt_; }

 private:
  serve_options opt_;
  std::unique_ptr<serve_scheduler> sched_;
  std::unique_ptr<serve_routes> routes_;
  std::unique_ptr<sites::http_server> http_;  // last: destroyed first
};

}  // namespace kvarena::serve
