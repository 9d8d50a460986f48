// serve-routes.h: the HTTP API of `kvarena serve` (OpenAI-compatible):
//   POST /v1/chat/completions   messages rendered by the model's chat template
//   POST /v1/completions        a raw prompt
//   GET  /v1/models             the one model served
//   GET  /health                {"status": "ok", "slots": {...}} (no token needed)
// (also without the /v1 prefix). A request is parsed and checked here (400 before any
// engine work), queued on the scheduler (503 when its queue is full), and answered when
// done (non-streamed) or token by token as Server-Sent Events (stream: true). A client
// that closes its connection cancels its request. With a token, every route but /health
// needs "Authorization: Bearer TOKEN" (401). Errors: OpenAI's {"error": {...}} shape.
#pragma once
#include <chrono>
#include <cstdint>
#include <functional>
#include <string>

#include "chat-template.h"
#include "kv/kv-policy-registry.h"
#include "model.h"
#include "serve-scheduler.h"
#include "sites/http-message.h"
#include "sites/http-router.h"
#include "tokenizer.h"

namespace kvarena::serve {

struct routes_config {
  std::string model_id;     // the name /v1/models lists and answers carry
  std::string token;        // "": no authentication
  kv_policy_spec default_kv;  // requests without a "kv" object
  std::chrono::milliseconds timeout{600000};  // a request's deadline after it arrives
  int64_t n_ctx = 0;        // the sequences' context (resolved, > 0)
};

class serve_routes {
 public:
  serve_routes(const model& m, const tokenizer& tok, serve_scheduler& sched, routes_config cfg);
  sites::http_response handle(const sites::http_request& req);

 private:
  using handler_fn = std::function<sites::http_response(const sites::http_request&)>;
  sites::http_response generate(const sites::http_request& req, bool chat);

  const model& model_;
  const tokenizer& tok_;
  serve_scheduler& sched_;
  routes_config cfg_;
  chat_template chat_;
  int64_t created_ = 0;  // unix seconds at start (/v1/models)
  sites::router<handler_fn> routes_;
};

}  // namespace kvarena::serve
