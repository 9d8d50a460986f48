// site-server.h: the local web sites on one HTTP server. Every site of every tenant is
// mounted at
//     http://127.0.0.1:PORT/<tenant>/<site>/...      e.g. /t-3f2a9c01/classifieds/search?q=bike
// so the per-tenant base URL (site_base_url) is what a task's __CLASSIFIEDS__ maps to,
// a text browser needs nothing but URLs and cookies, and links stay inside the tenant.
// "/" lists the tenants and sites; "/<tenant>/" lists that tenant's sites.
//
// Admin API (JSON, for an env server in another process; same host binding):
//   GET    /_admin/tenants                         -> {"tenants": [...]}
//   POST   /_admin/tenants[?id=name]               -> 201 {"tenant", "sites": {name: base URL}}
//   POST   /_admin/tenants/{id}/reset              -> {"tenant", "reset_ms"}
//   DELETE /_admin/tenants/{id}                    -> {"deleted": id}
//   GET    /_admin/tenants/{id}/hash               -> {"tenant", "hashes": {site: hash}}
//   POST   /_admin/tenants/{id}/login?site=S&user=U -> {"cookie": {"name", "value", "path"}}
// Errors: {"error": {"code", "message"}}.
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "http-server.h"
#include "site-store.h"
#include "site.h"

namespace kvarena::sites {

struct sites_options {
  http_server_options http;  // host 127.0.0.1, port 0 (free port) by default
  uint64_t seed = 1;         // same seed -> same site content
  bool admin_api = true;     // serve /_admin/...
};

class sites_server {
 public:
  explicit sites_server(sites_options opt, std::vector<std::shared_ptr<const site>> sites = builtin_sites());
  ~sites_server();

  void start();  // throws std::runtime_error when it cannot bind
  void stop();
  uint16_t port() const { return http_.port(); }
  std::string base_url() const { return http_.base_url(); }  // "http://127.0.0.1:PORT"

  site_store& store() { return store_; }
  // "http://127.0.0.1:PORT/<tenant>/<site>" (no trailing slash), for task placeholders.
  std::string site_base_url(std::string_view tenant, std::string_view site_name) const;
  // {"classifieds": "http://127.0.0.1:PORT/<tenant>/classifieds", ...} for every site.
  std::map<std::string, std::string> site_urls(std::string_view tenant) const;

  // The dispatcher the HTTP server calls; callable directly (no socket) in tests.
  http_response handle(const http_request& req);

 private:
  http_response handle_site(const http_request& req, std::string_view tenant, std::string_view site_name);
  http_response handle_admin(const http_request& req);  // site-admin.cpp
  http_response index_page(std::string_view tenant) const;

  sites_options opt_;
  site_store store_;
  std::map<std::string, site_router, std::less<>> routers_;  // site name -> pages
  http_server http_;
};

}  // namespace kvarena::sites
