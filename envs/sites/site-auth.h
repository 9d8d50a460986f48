// site-auth.h: login for every site: the users table the sites share, cookie sessions
// (one cookie per site, Path-scoped to /<tenant>/<site>, so tenants and sites never see
// each other's logins), the login/logout pages, and require_login() for pages that need a
// user. Every seeded user's password is kSeededPassword ("password").
#pragma once
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <string_view>

#include "site.h"

namespace kvarena::sites {

class seed_rng;

inline constexpr std::string_view kSeededPassword = "password";

// users(id, username UNIQUE, display_name, email UNIQUE, password, location, joined_at).
// Passwords are plain text on purpose: a local benchmark site, not a security boundary,
// and evaluators may read the table.
void create_users_table(sqlite_db& db);

// Inserts the seeded people of a site into `users`, ids 1, 2, ... in the order added:
// username "first.last" (then "first.last2", ... when taken), "<username>@example.com",
// the seeded password, and a join time in the seeded world's first 60 days.
class seeded_user_writer {
 public:
  explicit seeded_user_writer(sqlite_db& db);
  // The new user's id. Draws the join time from `rng`.
  int64_t add(seed_rng& rng, const std::string& first, const std::string& last, const std::string& location);

 private:
  sqlite_stmt ins_;
  std::set<std::string> taken_;
};

// "classifieds_session": the session cookie of a site.
std::string session_cookie_name(std::string_view site_name);

// Sets ctx.user / ctx.session_token from the request's cookie, if it names a live session.
void resolve_user(page_context& ctx);

// nullopt when a user is logged in; otherwise a redirect to the login page that comes
// back to `return_to` (a path relative to the site base; default: this page).
std::optional<http_response> require_login(const page_context& ctx, std::string_view return_to = "");

// The user with this username or email and password, if any.
std::optional<current_user> check_login(sqlite_db& db, std::string_view username_or_email, std::string_view password);
std::optional<current_user> find_user(sqlite_db& db, std::string_view username);

// GET/POST /login (with ?next=), GET/POST /logout.
void add_auth_routes(site_router& r, const site& s);

}  // namespace kvarena::sites
