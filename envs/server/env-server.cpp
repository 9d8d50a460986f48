// env-server.cpp: routes of the env API onto sessions (see env-server.h, env-api.h): one
// handler per route (env_server::impl), the checks of a create request in env-create.cpp.
#include "server/env-server.h"

#include <set>

#include <cstdio>
#include <functional>

#include "server/env-api.h"
#include "server/env-browsers.h"
#include "server/env-create.h"
#include "server/env-session-table.h"
#include "server/env-session.h"
#include "sites/http-router.h"

namespace kvarena {
namespace {

using api_request = sites::http_request;
using api_response = sites::http_response;
using route_fn = std::function<api_response(const api_request&, const sites::path_params&)>;

constexpr const char* k_routes_help =
    "the routes are GET /v1/health, POST /v1/sessions, POST /v1/sessions/{id}/step, "
    "POST /v1/sessions/{id}/evaluate, GET and DELETE /v1/sessions/{id}";

api_response json_response(std::string body, int status = 200) { return sites::http_response::json(std::move(body), status); }

api_response error_response(const env_api_error& e) {
  api_response r = json_response(to_json_text(e), e.status());
  if (e.status() == 503) r.add_header("Retry-After", "1");
  return r;
}

}  // namespace

struct env_server::impl {
  const env_server_options& options;  // env_server::opt_, which outlives this
  env_sites sites;
  env_browsers browsers;
  env_session_table table;
  sites::router<route_fn> routes;
  sites::http_server http;

  impl(env_server& owner, const env_server_options& opt)
      : options(opt),
        sites(opt.sites),
        browsers(browsers_options_for(opt)),
        table(opt.max_sessions, opt.idle_timeout, [this](env_session& s) { sites.release(s.lease()); }),
        http(http_options_for(opt), [&owner](const api_request& req) { return owner.handle(req); }) {
    add_routes();
  }

  static env_browsers_options browsers_options_for(const env_server_options& opt) {
    env_browsers_options b{opt.browser, opt.chromium, opt.chromium_browser};
    b.text.http.allow_file_urls = opt.allow_file_urls;
    b.chromium_browser.allow_file_urls = opt.allow_file_urls;
    return b;
  }

  // The HTTP layer's own limit is generous so that the API answers a too-large body
  // itself, with its JSON error shape; only grossly oversized bodies meet the HTML 413.
  static sites::http_server_options http_options_for(const env_server_options& opt) {
    sites::http_server_options h = opt.http;
    h.body_limit_bytes = opt.body_limit_bytes * 4;
    h.json_errors = true;  // even the HTTP layer's own refusals keep the API's error shape
    return h;
  }

  // One handler per route (env-api.h lists them).
  void add_routes() {
    using handler = api_response (impl::*)(const api_request&, const sites::path_params&);
    auto route = [this](handler h) {
      return [this, h](const api_request& req, const sites::path_params& p) { return (this->*h)(req, p); };
    };
    routes.add("GET", "/v1/health", route(&impl::health));
    routes.add("POST", "/v1/sessions", route(&impl::create_session));
    routes.add("POST", "/v1/sessions/{id}/step", route(&impl::step_session));
    routes.add("POST", "/v1/sessions/{id}/evaluate", route(&impl::evaluate_session));
    routes.add("GET", "/v1/sessions/{id}", route(&impl::session_info));
    routes.add("DELETE", "/v1/sessions/{id}", route(&impl::delete_session));
  }

  // GET /v1/health
  api_response health(const api_request&, const sites::path_params&) {
    env_health h;
    h.sessions = static_cast<int64_t>(table.size());
    h.max_sessions = static_cast<int64_t>(table.max_sessions());
    h.sites_mode = sites.mode();
    h.sites = sites.site_names();
    h.browsers = browsers.available();
    return json_response(to_json_text(h));
  }

  // POST /v1/sessions: the stages of env-create.h, then a tenant's session with its browser.
  api_response create_session(const api_request& req, const sites::path_params&) {
    env_create_request cr;
    from_json_text(req.body, cr);
    task t = parse_create_task(cr);
    table.check_capacity();

    env_sites::lease lease = sites.acquire();
    struct release_guard {  // gives the tenant back unless the session took it
      env_sites& sites;
      const env_sites::lease& lease;
      bool armed = true;
      ~release_guard() {
        if (armed) sites.release(lease);
      }
    } guard{sites, lease};

    const std::set<std::string> elsewhere = apply_site_urls(options.sites.site_urls, cr.sites, lease.urls);
    fill_site_placeholders(t, lease.urls, sites);
    check_start_urls(t, options.allow_file_urls);
    std::vector<env_login> logins = plan_logins(t, lease, elsewhere, sites);
    env_session_options so = session_options_for(cr, options);
    const int viewport_height = viewport_height_of(t);

    std::unique_ptr<session_browser> browser = browsers.make(cr.browser, viewport_height);
    auto session = std::make_shared<env_session>(table.new_id(), std::move(t), lease, so, std::move(browser));
    session->start(logins);
    env_created created{session->id(), session->observe()};
    table.add(session);
    guard.armed = false;
    return json_response(to_json_text(created), 201);
  }

  // POST /v1/sessions/{id}/step
  api_response step_session(const api_request& req, const sites::path_params& p) {
    env_step_request sr;
    from_json_text(req.body, sr);
    return with_session(p, [&](env_session& s) { return json_response(to_json_text(s.step(sr.action))); });
  }

  // POST /v1/sessions/{id}/evaluate
  api_response evaluate_session(const api_request& req, const sites::path_params& p) {
    env_evaluate_request er;
    from_json_text(req.body, er);
    return with_session(p, [&](env_session& s) { return json_response(to_json_text(s.evaluate(er.answer))); });
  }

  // GET /v1/sessions/{id}
  api_response session_info(const api_request&, const sites::path_params& p) {
    return with_session(p, [&](env_session& s) { return json_response(to_json_text(s.info())); });
  }

  // DELETE /v1/sessions/{id}
  api_response delete_session(const api_request&, const sites::path_params& p) {
    const std::string& id = p.at("id");
    if (!table.close(id, options.session_lock_timeout))
      throw env_api_error(404, "unknown session '" + id + "': it was already deleted, closed after being idle, "
                                                          "or never created");
    return json_response(to_json_text(env_deleted{id}));
  }

  // Finds a session and holds its mutex for the rest of the request.
  api_response with_session(const sites::path_params& p, const std::function<api_response(env_session&)>& fn) {
    const std::string& id = p.at("id");
    auto not_found = [&] {
      return env_api_error(404, "unknown session '" + id +
                                    "': it was deleted, closed after being idle, or never created; create one "
                                    "with POST /v1/sessions");
    };
    std::shared_ptr<env_session> s = table.find(id);
    if (!s) throw not_found();
    std::unique_lock lock(s->mutex(), std::defer_lock);
    if (!lock.try_lock_for(options.session_lock_timeout))
      throw env_api_error(503, "session " + id + " is still busy with an earlier request after " +
                                   std::to_string(options.session_lock_timeout.count() / 1000) +
                                   " s; send one request at a time per session");
    if (s->closed()) throw not_found();
    return fn(*s);
  }
};

env_server::env_server(env_server_options opt) : opt_(std::move(opt)), impl_(std::make_unique<impl>(*this, opt_)) {}

env_server::~env_server() { stop(); }

std::string bind_refusal(const std::string& host, const std::string& token) {
  if (!token.empty() || is_loopback_host(host)) return "";
  return "refusing to serve the env API on " + host +
         " without a token: anyone who reaches it could drive browsers as this user; give --token TOKEN (or set "
         "KVARENA_ENV_TOKEN), or bind 127.0.0.1";
}

void env_server::start() {
  if (std::string why = bind_refusal(opt_.http.host, opt_.token); !why.empty()) throw std::runtime_error(why);
  impl_->sites.start();
  try {
    impl_->http.start();
  } catch (...) {
    impl_->sites.stop();
    throw;
  }
  impl_->table.start_reaper();
}

void env_server::stop() {
  impl_->http.stop();  // joins the handler threads: no request runs after this
  impl_->table.stop_reaper();
  impl_->table.close_all(opt_.session_lock_timeout);
  impl_->sites.stop();
}

uint16_t env_server::port() const { return impl_->http.port(); }
std::string env_server::base_url() const { return impl_->http.base_url(); }
size_t env_server::session_count() const { return impl_->table.size(); }
size_t env_server::reap_idle_sessions() { return impl_->table.reap_idle(); }
sites::sites_server* env_server::sites_server() { return impl_->sites.server(); }

std::shared_ptr<chromium_process> env_server::chromium() { return impl_->browsers.host().current(); }

api_response env_server::handle(const api_request& req) {
  try {
    if (!opt_.token.empty() && !sites::bearer_token_matches(req.header("authorization"), opt_.token)) {
      api_response r = error_response(env_api_error(
          401, req.header("authorization").empty()
                   ? "this env server needs a token: send \"Authorization: Bearer <token>\" (the --token or "
                     "KVARENA_ENV_TOKEN it was started with)"
                   : "the bearer token is wrong: send the --token or KVARENA_ENV_TOKEN the env server was started with"));
      r.add_header("WWW-Authenticate", "Bearer");
      return r;
    }
    if (req.body.size() > opt_.body_limit_bytes)
      throw env_api_error(413, "the request body has " + std::to_string(req.body.size()) +
                                   " bytes, more than this env server's limit of " +
                                   std::to_string(opt_.body_limit_bytes) + " bytes");
    auto match = impl_->routes.find(req.method, req.path);
    if (match.kind == decltype(match)::not_found)
      throw env_api_error(404, "no such API path '" + req.path + "'; " + k_routes_help);
    if (match.kind == decltype(match)::method_not_allowed) {
      api_response r = error_response(
          env_api_error(405, "'" + req.path + "' accepts " + match.allow + " only; " + k_routes_help));
      r.add_header("Allow", match.allow);
      return r;
    }
    return (*match.handler)(req, match.params);
  } catch (const env_api_error& e) {
    if (e.status() >= 500)
      std::fprintf(stderr, "kvarena env-server: %d on %s %s: %s\n", e.status(), req.method.c_str(), req.path.c_str(),
                   e.what());
    return error_response(e);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "kvarena env-server: 500 on %s %s: %s\n", req.method.c_str(), req.path.c_str(), e.what());
    return error_response(env_api_error(500, std::string("internal error of the env server (please report): ") +
                                                 e.what()));
  }
}

}  // namespace kvarena
