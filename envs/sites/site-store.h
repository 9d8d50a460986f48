// site-store.h: the state of every site for every tenant.
//
// Each site is seeded once, deterministically from the seed, into an in-memory SQLite
// database that is serialized into a snapshot. A tenant (one env session, or "main" for
// a person with a browser) holds a private in-memory copy of every site made from those
// snapshots (sqlite3_deserialize: a memcpy), so create and reset take well under a
// millisecond per site and tenants never see each other's changes. Login sessions live
// with the tenant's copy and are dropped on reset.
//
// Thread safety: all methods may be called from any thread. Each site_state has its own
// mutex (held by the server for a whole request); the tenant map has another.
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "site.h"

namespace kvarena::sites {

inline constexpr std::string_view kDefaultTenant = "main";

class site_store {
 public:
  // Seeds every site (throws if a seed function fails) and creates the "main" tenant.
  site_store(std::vector<std::shared_ptr<const site>> sites, uint64_t seed);

  uint64_t seed() const { return seed_; }
  const std::vector<std::shared_ptr<const site>>& sites() const { return sites_; }
  const site* find_site(std::string_view name) const;

  // A new tenant with the seed state of every site. `id` "" picks a fresh "t-xxxxxxxx";
  // otherwise 1-40 of [a-z0-9-], not taken (std::invalid_argument says why not).
  std::string create_tenant(std::string id = "");
  // Back to the seed state (content hashes equal the snapshot's); logs everyone out.
  // std::out_of_range for an unknown tenant.
  void reset_tenant(std::string_view id);
  // false when unknown. The default tenant cannot be deleted (std::invalid_argument).
  bool delete_tenant(std::string_view id);
  bool has_tenant(std::string_view id) const;
  std::vector<std::string> tenants() const;

  // The tenant's copy of one site (lock its `mu` to use it); nullptr when either is unknown.
  std::shared_ptr<site_state> state(std::string_view tenant, std::string_view site_name) const;

  // Hash of every table's rows (sqlite_db::content_hash) of the tenant's copy / of the seed.
  // std::out_of_range for an unknown tenant or site.
  std::string content_hash(std::string_view tenant, std::string_view site_name) const;
  std::string snapshot_hash(std::string_view site_name) const;
  size_t snapshot_bytes(std::string_view site_name) const;

  // Read-only SQL over a tenant's copy, for evaluators (func: helpers): rows as an array
  // of {column: value} objects. std::invalid_argument for a statement that would write.
  nlohmann::json query(std::string_view tenant, std::string_view site_name, std::string_view sql,
                       const std::vector<sql_value>& params = {}) const;

  // A login session for `username` as if they had used the login form; returns the
  // cookie to set: {name, value, path}. Lets the env server start an agent logged in.
  struct cookie {
    std::string name, value, path;
  };
  cookie login(std::string_view tenant, std::string_view site_name, std::string_view username);

 private:
  using tenant_sites = std::map<std::string, std::shared_ptr<site_state>, std::less<>>;
  std::shared_ptr<site_state> checked_state(std::string_view tenant, std::string_view site_name) const;
  tenant_sites fresh_copies() const;

  uint64_t seed_;
  std::vector<std::shared_ptr<const site>> sites_;
  std::map<std::string, std::vector<unsigned char>, std::less<>> snapshots_;  // site -> serialized DB
  std::map<std::string, std::string, std::less<>> snapshot_hashes_;
  mutable std::mutex mu_;  // guards tenants_
  std::map<std::string, tenant_sites, std::less<>> tenants_;
};

}  // namespace kvarena::sites
