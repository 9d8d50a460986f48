// site-server.cpp: dispatch of /<tenant>/<site>/... to the sites' routers, and the index
// pages (see site-server.h).
#include "site-server.h"

#include "site-auth.h"
#include "site-style.h"

namespace kvarena::sites {

sites_server::sites_server(sites_options opt, std::vector<std::shared_ptr<const site>> sites)
    : opt_(std::move(opt)),
      store_(std::move(sites), opt_.seed),
      http_(opt_.http, [this](const http_request& req) { return handle(req); }) {
  for (const auto& s : store_.sites()) {
    site_router& r = routers_[s->name()];
    add_auth_routes(r, *s);
    add_style_routes(r, *s);
    s->add_routes(r);
  }
}

sites_server::~sites_server() { stop(); }

void sites_server::start() { http_.start(); }
void sites_server::stop() { http_.stop(); }

std::string sites_server::site_base_url(std::string_view tenant, std::string_view site_name) const {
  return base_url() + site_base_path(tenant, site_name);
}

std::map<std::string, std::string> sites_server::site_urls(std::string_view tenant) const {
  std::map<std::string, std::string> urls;
  for (const auto& s : store_.sites()) urls[s->name()] = site_base_url(tenant, s->name());
  return urls;
}

http_response sites_server::handle(const http_request& req) {
  auto segs = split_path(req.path);
  if (segs.empty()) return req.method == "GET" ? index_page("") : http_response::error(405, "use GET for this page");
  if (segs[0] == "_admin") {
    if (!opt_.admin_api) return http_response::json_error(404, "the admin API is disabled");
    return handle_admin(req);
  }
  if (!store_.has_tenant(segs[0]))
    return http_response::error(404, "unknown tenant '" + std::string(segs[0]) +
                                         "': the default tenant is 'main' (open /main/), others are created "
                                         "with POST /_admin/tenants");
  if (segs.size() == 1) return req.method == "GET" ? index_page(segs[0]) : http_response::error(405, "use GET for this page");
  return handle_site(req, segs[0], segs[1]);
}

http_response sites_server::handle_site(const http_request& req, std::string_view tenant, std::string_view site_name) {
  const site* s = store_.find_site(site_name);
  auto state = store_.state(tenant, site_name);
  if (!s || !state)
    return http_response::error(404, "no site '" + std::string(site_name) + "' here; open /" + std::string(tenant) +
                                         "/ for the list of sites");
  std::string base = site_base_path(tenant, site_name);
  std::string rest = req.path.size() > base.size() ? req.path.substr(base.size()) : std::string("/");

  std::lock_guard lock(state->mu);
  page_context ctx{req, {}, *state, state->db, *s, std::string(tenant), base, std::nullopt, ""};
  resolve_user(ctx);
  auto match = routers_.at(s->name()).find(req.method, rest);
  if (match.kind == site_router::match_result::not_found)
    return s->error_page(ctx, 404, "There is no page at this address.");
  if (match.kind == site_router::match_result::method_not_allowed) {
    auto res = http_response::error(405, "this page accepts " + match.allow + " requests only");
    res.add_header("Allow", match.allow);
    return res;
  }
  ctx.params = std::move(match.params);
  return (*match.handler)(ctx);
}

http_response sites_server::index_page(std::string_view tenant) const {
  std::vector<std::string> tenants = tenant.empty() ? store_.tenants() : std::vector<std::string>{std::string(tenant)};
  html content;
  for (const auto& t : tenants) {
    std::vector<html> items;
    for (const auto& s : store_.sites()) items.push_back(link(site_base_path(t, s->name()) + "/", s->title()));
    content += element("section", element("h2", text("Tenant " + t)) + list(items));
  }
  std::string title = tenant.empty() ? "kvarena sites" : "kvarena sites: " + std::string(tenant);
  return http_response::html("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>" +
                             escape_html(title) + "</title></head>\n<body><main>" +
                             element("h1", text(title)).str() + content.str() + "</main></body></html>\n");
}

}  // namespace kvarena::sites
