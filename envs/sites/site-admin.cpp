// site-admin.cpp: the JSON admin API for tenants under /_admin/ (listed in site-server.h),
// so an env server in another process can create, reset and delete tenants over HTTP.
#include <chrono>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "site-server.h"

namespace kvarena::sites {

http_response sites_server::handle_admin(const http_request& req) {
  using json = nlohmann::json;
  auto segs = split_path(req.path);  // segs[0] == "_admin"
  if (segs.size() < 2 || segs[1] != "tenants")
    return http_response::json_error(404, "unknown admin path; see GET /_admin/tenants");
  // Parameters may come in the query or in a form body.
  auto param = [&](std::string_view name) {
    return req.form.has(name) ? req.form.get(name) : req.query.get(name);
  };
  try {
    if (segs.size() == 2) {
      if (req.method == "GET") return http_response::json(json{{"tenants", store_.tenants()}}.dump());
      if (req.method != "POST") return http_response::json_error(405, "use GET or POST on /_admin/tenants");
      std::string id = store_.create_tenant(param("id"));
      return http_response::json(json{{"tenant", id}, {"sites", site_urls(id)}}.dump(), 201);
    }
    std::string id(segs[2]);
    if (!store_.has_tenant(id)) return http_response::json_error(404, "unknown tenant '" + id + "'");
    if (segs.size() == 3) {
      if (req.method != "DELETE") return http_response::json_error(405, "use DELETE on /_admin/tenants/{id}");
      store_.delete_tenant(id);
      return http_response::json(json{{"deleted", id}}.dump());
    }
    std::string_view action = segs[3];
    if (segs.size() == 4 && action == "reset" && req.method == "POST") {
      auto t0 = std::chrono::steady_clock::now();
      store_.reset_tenant(id);
      double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
      return http_response::json(json{{"tenant", id}, {"reset_ms", ms}}.dump());
    }
    if (segs.size() == 4 && action == "hash" && req.method == "GET") {
      json hashes = json::object();
      for (const auto& s : store_.sites()) hashes[s->name()] = store_.content_hash(id, s->name());
      return http_response::json(json{{"tenant", id}, {"hashes", hashes}}.dump());
    }
    if (segs.size() == 4 && action == "login" && req.method == "POST") {
      auto c = store_.login(id, param("site"), param("user"));
      return http_response::json(json{{"cookie", {{"name", c.name}, {"value", c.value}, {"path", c.path}}}}.dump());
    }
    return http_response::json_error(404, "unknown admin action; use POST .../reset, GET .../hash, POST .../login");
  } catch (const std::invalid_argument& e) {
    return http_response::json_error(400, e.what());
  } catch (const std::out_of_range& e) {
    return http_response::json_error(404, e.what());
  }
}

}  // namespace kvarena::sites
