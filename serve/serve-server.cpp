// serve-server.cpp: see serve-server.h.
#include "serve-server.h"

#include <stdexcept>

#include "serve-kv.h"
#include "sites/http-bearer.h"

namespace kvarena::serve {

std::string serve_bind_refusal(const std::string& host, const std::string& token) {
  if (!token.empty() || sites::is_loopback_host(host)) return "";
  return "refusing to serve the model on " + host +
         " without a token: anyone who reaches it could use this machine's CPU or GPU; give --token TOKEN, or bind "
         "127.0.0.1";
}

serve_server::serve_server(const model& m, const tokenizer& tok, serve_options opt) : opt_(std::move(opt)) {
  if (opt_.engine.n_ctx <= 0) opt_.engine.n_ctx = m.config.n_ctx;
  if (opt_.model_id.empty()) opt_.model_id = "kvarena";
  check_kv_spec(opt_.default_kv, m.config);
  opt_.default_kv.text = kv_spec_label(opt_.default_kv);
  sched_ = std::make_unique<serve_scheduler>(m, tok, opt_.engine);
  routes_config rc;
  rc.model_id = opt_.model_id;
  rc.token = opt_.token;
  rc.default_kv = opt_.default_kv;
  rc.timeout = opt_.timeout;
  rc.n_ctx = opt_.engine.n_ctx;
  routes_ = std::make_unique<serve_routes>(m, tok, *sched_, rc);
  sites::http_server_options ho;
  ho.host = opt_.host;
  ho.port = opt_.port;
  ho.threads = opt_.http_threads;
  ho.json_errors = true;
  ho.body_limit_bytes = opt_.body_limit_bytes;
  http_ = std::make_unique<sites::http_server>(ho, [this](const sites::http_request& r) { return routes_->handle(r); });
}

serve_server::~serve_server() { stop(); }

void serve_server::start() {
  if (std::string why = serve_bind_refusal(opt_.host, opt_.token); !why.empty()) throw std::runtime_error(why);
  http_->start();
}

void serve_server::stop() {
  if (sched_) sched_->stop();  // no producer writes to a connection after this
  if (http_) http_->stop();
}

std::string serve_server::base_url() const { return http_->base_url(); }
uint16_t serve_server::port() const { return http_->port(); }

}  // namespace kvarena::serve
