// env-sites.cpp: tenants of the in-process sites, or the external site map (env-sites.h).
#include "server/env-sites.h"

#include <algorithm>

#include <cstdio>
#include <stdexcept>

#include <nlohmann/json.hpp>  // site_store::query rows (the fallback login user)

#include "server/env-api.h"
#include "sites/site-classifieds.h"
#include "sites/site-forum.h"
#include "sites/site-shopping.h"

namespace kvarena {
namespace {

std::string without_trailing_slash(std::string url) {
  while (!url.empty() && url.back() == '/') url.pop_back();
  return url;
}

std::string trim(const std::string& s) {
  size_t b = s.find_first_not_of(" \t");
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(" \t") - b + 1);
}

bool is_http_url(const std::string& s) { return s.rfind("http://", 0) == 0 || s.rfind("https://", 0) == 0; }

// The documented default agent user of each site (see env-sites.h).
const std::map<std::string, std::string>& documented_users() {
  static const std::map<std::string, std::string> users = {
      {"classifieds", sites::classifieds::kFixedUsername},
      {"shopping", sites::shopping::kFixedUsername},
      {"reddit", sites::forum::kFixedUsername},
  };
  return users;
}

}  // namespace

env_sites::env_sites(env_sites_options opt) : opt_(std::move(opt)) {
  if (opt_.external_url.empty()) {
    sites::sites_options so;
    so.http.host = "127.0.0.1";
    so.http.port = 0;
    so.http.threads = opt_.threads;
    so.seed = opt_.seed;
    so.admin_api = false;  // tenants are managed here, in-process
    server_ = std::make_unique<sites::sites_server>(so);
    return;
  }
  const std::string& spec = opt_.external_url;
  auto bad = [&](const std::string& why) {
    return std::invalid_argument("--sites-url '" + spec + "': " + why +
                                 " (give a kvarena sites server's URL, e.g. http://127.0.0.1:8080, or "
                                 "name=URL pairs, e.g. classifieds=http://127.0.0.1:9980,shopping=http://127.0.0.1:7770)");
  };
  if (spec.find('=') == std::string::npos) {
    std::string root = without_trailing_slash(trim(spec));
    if (!is_http_url(root)) throw bad("not an http:// URL");
    for (const auto& s : sites::builtin_sites())
      external_urls_[s->name()] = root + sites::site_base_path(sites::kDefaultTenant, s->name());
    external_home_ = root + "/" + std::string(sites::kDefaultTenant) + "/";
    return;
  }
  size_t pos = 0;
  while (pos <= spec.size()) {
    size_t comma = spec.find(',', pos);
    std::string item = trim(spec.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos));
    pos = comma == std::string::npos ? spec.size() + 1 : comma + 1;
    if (item.empty()) continue;
    size_t eq = item.find('=');
    if (eq == std::string::npos || eq == 0) throw bad("'" + item + "' is not name=URL");
    std::string name = trim(item.substr(0, eq)), url = without_trailing_slash(trim(item.substr(eq + 1)));
    if (!is_http_url(url)) throw bad("the URL of '" + name + "' is not an http:// URL");
    if (name == "homepage") external_home_ = url;
    else external_urls_[name] = url;
  }
  if (external_urls_.empty()) throw bad("no sites named");
}

env_sites::~env_sites() { stop(); }

void env_sites::start() {
  if (server_) server_->start();
}

void env_sites::stop() {
  if (server_) server_->stop();
}

std::vector<std::string> env_sites::site_names() const {
  std::vector<std::string> names;
  if (server_) {
    for (const auto& s : server_->store().sites()) names.push_back(s->name());
  } else {
    for (const auto& [name, url] : external_urls_) names.push_back(name);
  }
  for (const auto& [name, url] : opt_.site_urls)
    if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
  return names;
}

env_sites::lease env_sites::acquire() {
  lease l;
  if (server_) {
    l.tenant = server_->store().create_tenant();
    l.urls = server_->site_urls(l.tenant);
    l.urls["homepage"] = server_->base_url() + "/" + l.tenant + "/";
  } else {
    l.urls = external_urls_;
    if (!external_home_.empty()) l.urls["homepage"] = external_home_;
  }
  for (const auto& [name, url] : opt_.site_urls) l.urls[name] = url;  // --site NAME=URL
  return l;
}

void env_sites::release(const lease& l) {
  if (!server_ || l.tenant.empty()) return;
  try {
    server_->store().delete_tenant(l.tenant);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "kvarena env-server: cannot drop tenant %s: %s\n", l.tenant.c_str(), e.what());
  }
}

std::string env_sites::default_user(const std::string& site, const std::string& tenant) const {
  if (auto it = documented_users().find(site); it != documented_users().end()) return it->second;
  if (server_) {
    try {
      auto rows = server_->store().query(tenant, site, "SELECT username FROM users ORDER BY id LIMIT 1");
      if (!rows.empty()) return rows[0]["username"].get<std::string>();
    } catch (const std::exception&) {
      // no users table: fall through to the error
    }
  }
  throw env_api_error(422, "the task requires login on '" + site +
                               "', but no default agent user is known for that site here; start the task "
                               "logged out (require_login false) and log in with actions");
}

}  // namespace kvarena
