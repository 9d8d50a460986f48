// site.h: what a local web site implements, and what its page handlers receive.
//
// Adding a site (shopping, forum, ...) is one new file set plus one line:
//   1. class site_<name> : public site, in envs/sites/site-<name>*.{h,cpp}:
//        name()      URL segment and task placeholder key ("shopping" <-> __SHOPPING__)
//        title()     human title shown in the header
//        seed()      CREATE TABLEs (call create_users_table() from site-auth.h for login)
//                    and INSERT the deterministic rows for `seed` (use seed-data.h; never
//                    the wall clock or std:: distributions, whose output differs by library)
//        add_routes()  pages, relative to the site's base: r.add("GET", "/item/{id}", ...)
//        chrome()    nav links and search box of the page frame
//   2. one line in site-registry.cpp: sites.push_back(std::make_shared<site_<name>>());
// Login (/login, /logout), tenants, reset, content hashes and the HTTP server come for free.
//
// Every site of every tenant is served under /<tenant>/<site>/ (site_base_path); links
// in pages are built with ctx.url("/item/12") so they carry that prefix.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "html.h"
#include "http-message.h"
#include "http-router.h"
#include "sqlite-db.h"

namespace kvarena::sites {

struct login_session {
  int64_t user_id = 0;
  std::string flash;  // one-time message for the next page ("Listing posted.")
};

// One tenant's private copy of one site: its database and its login sessions.
// Lock `mu` for every access; the server holds it for the whole request.
struct site_state {
  std::mutex mu;
  sqlite_db db;
  std::unordered_map<std::string, login_session> sessions;  // cookie token -> session

  // A new login session for `user_id`; returns its cookie token (128 random bits, hex).
  std::string start_session(int64_t user_id);
};

struct current_user {
  int64_t id = 0;
  std::string username;
  std::string display_name;
};

class site;

// Everything a page handler needs for one request. The site state is locked.
struct page_context {
  const http_request& req;
  path_params params;         // captures of the route pattern
  site_state& state;
  sqlite_db& db;              // == state.db
  const site& owner;          // the site being served
  std::string tenant;         // "main", "t-3f2a9c01"
  std::string base;           // "/main/classifieds": prefix of every link to this site
  std::optional<current_user> user;  // set when the session cookie is valid
  std::string session_token;         // "" when logged out

  std::string url(std::string_view rel) const { return base + std::string(rel); }
  // This request's path relative to the base, with its query: "/search?q=bike".
  std::string relative_target() const;
  void flash(std::string message);  // shown once on the next page (needs a login session)
  std::string take_flash();
  // Integer path parameter; nullopt when absent or not a positive decimal number.
  std::optional<int64_t> param_id(std::string_view name) const;
};

using page_handler = std::function<http_response(page_context&)>;
using site_router = router<page_handler>;

class site {
 public:
  virtual ~site() = default;
  virtual std::string name() const = 0;
  virtual std::string title() const = 0;
  virtual void seed(sqlite_db& db, uint64_t seed) const = 0;
  virtual void add_routes(site_router& r) const = 0;
  // Site title, nav and search box; render() adds the account links.
  virtual page_chrome chrome(const page_context& ctx) const = 0;
  // This site's own CSS (site-<name>-style.cpp), served after the shared base at
  // kStylesheetPath (site-style.h) and linked from every page. Layout only: the pages'
  // accessibility tree does not depend on it.
  virtual std::string_view stylesheet() const { return {}; }

  // A full page in this site's frame, with the pending flash message.
  http_response render(page_context& ctx, std::string_view title, const html& content, int status = 200) const;
  // A 404/403/... page in the site's frame, so the agent can navigate on from it.
  http_response error_page(page_context& ctx, int status, std::string_view message) const;
};

// Where every site serves its stylesheet, relative to the site's base.
inline constexpr std::string_view kStylesheetPath = "/static/site.css";

// "/<tenant>/<site>" (no trailing slash): what a task's __SITE__ placeholder maps to,
// after the server's base URL.
std::string site_base_path(std::string_view tenant, std::string_view site_name);

// The sites this build serves, in a fixed order (site-registry.cpp).
std::vector<std::shared_ptr<const site>> builtin_sites();

}  // namespace kvarena::sites
