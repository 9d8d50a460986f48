// site-store.cpp: seeding, snapshots and tenants (see site-store.h).
#include "site-store.h"

#include <cstdio>
#include <random>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "site-auth.h"

namespace kvarena::sites {
namespace {

// Tenant ids and session tokens need to be unique, not reproducible: random_device seeded.
std::string random_hex(int n_u64) {
  static std::mutex mu;
  static std::mt19937_64 rng{std::random_device{}()};
  std::lock_guard lock(mu);
  std::string out;
  for (int i = 0; i < n_u64; ++i) {
    char buf[17];
    std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(rng()));
    out += buf;
  }
  return out;
}

bool valid_tenant_id(std::string_view id) {
  if (id.empty() || id.size() > 40) return false;
  for (char c : id)
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-')) return false;
  return true;
}

nlohmann::json to_json(const sql_value& v) {
  if (auto* i = std::get_if<int64_t>(&v)) return *i;
  if (auto* d = std::get_if<double>(&v)) return *d;
  if (auto* s = std::get_if<std::string>(&v)) return *s;
  return nullptr;
}

}  // namespace

std::string site_state::start_session(int64_t user_id) {
  std::string token = random_hex(2);
  sessions[token] = login_session{user_id, {}};
  return token;
}

site_store::site_store(std::vector<std::shared_ptr<const site>> sites, uint64_t seed)
    : seed_(seed), sites_(std::move(sites)) {
  for (const auto& s : sites_) {
    if (snapshots_.count(s->name())) throw std::invalid_argument("two sites are named '" + s->name() + "'");
    sqlite_db db = sqlite_db::open_memory();
    db.exec("BEGIN");
    s->seed(db, seed);
    db.exec("COMMIT");
    snapshot_hashes_[s->name()] = db.content_hash();
    snapshots_[s->name()] = db.serialize();
  }
  create_tenant(std::string(kDefaultTenant));
}

const site* site_store::find_site(std::string_view name) const {
  for (const auto& s : sites_)
    if (s->name() == name) return s.get();
  return nullptr;
}

site_store::tenant_sites site_store::fresh_copies() const {
  tenant_sites copies;
  for (const auto& [name, image] : snapshots_) {
    auto st = std::make_shared<site_state>();
    st->db = sqlite_db::from_image(image);
    copies.emplace(name, std::move(st));
  }
  return copies;
}

std::string site_store::create_tenant(std::string id) {
  if (!id.empty() && !valid_tenant_id(id))
    throw std::invalid_argument("invalid tenant id '" + id + "': use 1-40 characters of a-z, 0-9 and '-'");
  tenant_sites copies = fresh_copies();  // outside the lock: the slow part
  std::lock_guard lock(mu_);
  if (id.empty()) {
    do id = "t-" + random_hex(1).substr(0, 8);
    while (tenants_.count(id));
  } else if (tenants_.count(id)) {
    throw std::invalid_argument("tenant '" + id + "' already exists");
  }
  tenants_.emplace(id, std::move(copies));
  return id;
}

void site_store::reset_tenant(std::string_view id) {
  tenant_sites states;
  {
    std::lock_guard lock(mu_);
    auto it = tenants_.find(id);
    if (it == tenants_.end()) throw std::out_of_range("unknown tenant '" + std::string(id) + "'");
    states = it->second;
  }
  for (auto& [name, st] : states) {
    sqlite_db fresh = sqlite_db::from_image(snapshots_.at(name));
    std::lock_guard lock(st->mu);
    st->db = std::move(fresh);
    st->sessions.clear();
  }
}

bool site_store::delete_tenant(std::string_view id) {
  if (id == kDefaultTenant) throw std::invalid_argument("the default tenant 'main' cannot be deleted (reset it instead)");
  std::lock_guard lock(mu_);
  auto it = tenants_.find(id);
  if (it == tenants_.end()) return false;
  tenants_.erase(it);  // requests in flight keep their site_state alive until they finish
  return true;
}

bool site_store::has_tenant(std::string_view id) const {
  std::lock_guard lock(mu_);
  return tenants_.find(id) != tenants_.end();
}

std::vector<std::string> site_store::tenants() const {
  std::lock_guard lock(mu_);
  std::vector<std::string> out;
  for (const auto& [id, sites] : tenants_) out.push_back(id);
  return out;
}

std::shared_ptr<site_state> site_store::state(std::string_view tenant, std::string_view site_name) const {
  std::lock_guard lock(mu_);
  auto t = tenants_.find(tenant);
  if (t == tenants_.end()) return nullptr;
  auto s = t->second.find(site_name);
  return s == t->second.end() ? nullptr : s->second;
}

std::shared_ptr<site_state> site_store::checked_state(std::string_view tenant, std::string_view site_name) const {
  if (!find_site(site_name)) throw std::out_of_range("unknown site '" + std::string(site_name) + "'");
  auto st = state(tenant, site_name);
  if (!st) throw std::out_of_range("unknown tenant '" + std::string(tenant) + "'");
  return st;
}

std::string site_store::content_hash(std::string_view tenant, std::string_view site_name) const {
  auto st = checked_state(tenant, site_name);
  std::lock_guard lock(st->mu);
  return st->db.content_hash();
}

std::string site_store::snapshot_hash(std::string_view site_name) const {
  auto it = snapshot_hashes_.find(site_name);
  if (it == snapshot_hashes_.end()) throw std::out_of_range("unknown site '" + std::string(site_name) + "'");
  return it->second;
}

size_t site_store::snapshot_bytes(std::string_view site_name) const {
  auto it = snapshots_.find(site_name);
  if (it == snapshots_.end()) throw std::out_of_range("unknown site '" + std::string(site_name) + "'");
  return it->second.size();
}

nlohmann::json site_store::query(std::string_view tenant, std::string_view site_name, std::string_view sql,
                                 const std::vector<sql_value>& params) const {
  auto st = checked_state(tenant, site_name);
  std::lock_guard lock(st->mu);
  auto stmt = st->db.prepare(sql);
  if (!stmt.readonly()) throw std::invalid_argument("site_store::query runs read-only SQL only: " + std::string(sql));
  stmt.bind_all(params);
  nlohmann::json rows = nlohmann::json::array();
  while (stmt.step()) {
    nlohmann::json row = nlohmann::json::object();
    for (int i = 0; i < stmt.columns(); ++i) row[stmt.column_name(i)] = to_json(stmt.value(i));
    rows.push_back(std::move(row));
  }
  return rows;
}

site_store::cookie site_store::login(std::string_view tenant, std::string_view site_name, std::string_view username) {
  auto st = checked_state(tenant, site_name);
  std::lock_guard lock(st->mu);
  auto user = find_user(st->db, username);
  if (!user) throw std::invalid_argument("no user '" + std::string(username) + "' on site '" + std::string(site_name) + "'");
  return {session_cookie_name(site_name), st->start_session(user->id), site_base_path(tenant, site_name)};
}

}  // namespace kvarena::sites
