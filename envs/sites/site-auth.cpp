// site-auth.cpp: users table, cookie sessions and the login/logout pages (see site-auth.h).
#include "site-auth.h"

#include "seed-data.h"

namespace kvarena::sites {

void create_users_table(sqlite_db& db) {
  db.exec(R"sql(
    CREATE TABLE users (
      id INTEGER PRIMARY KEY,
      username TEXT NOT NULL UNIQUE,
      display_name TEXT NOT NULL,
      email TEXT NOT NULL UNIQUE,
      password TEXT NOT NULL,
      location TEXT NOT NULL DEFAULT '',
      joined_at TEXT NOT NULL
    ))sql");
}

seeded_user_writer::seeded_user_writer(sqlite_db& db)
    : ins_(db.prepare(
          "INSERT INTO users (id, username, display_name, email, password, location, joined_at) "
          "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)")) {}

int64_t seeded_user_writer::add(seed_rng& rng, const std::string& first, const std::string& last,
                                const std::string& location) {
  int64_t id = int64_t(taken_.size()) + 1;
  const std::string stem = lower_ascii(first) + "." + lower_ascii(last);
  std::string username = stem;
  for (int n = 2; taken_.count(username); ++n) username = stem + std::to_string(n);
  taken_.insert(username);
  ins_.bind_all({id, username, first + " " + last, username + "@example.com", std::string(kSeededPassword), location,
                 seed_datetime(rng.uniform(0, 60 * 24 * 60))});
  ins_.step();
  ins_.reset();
  return id;
}

std::string session_cookie_name(std::string_view site_name) { return std::string(site_name) + "_session"; }

namespace {
std::optional<current_user> user_from(sqlite_stmt& st) {
  if (!st.step()) return std::nullopt;
  return current_user{st.int64(0), st.text(1), st.text(2)};
}

// Only paths inside the site: no scheme, no "//host" (no open redirect).
std::string safe_next(std::string_view next) {
  if (next.empty() || next.front() != '/' || next.rfind("//", 0) == 0 || next.find('\\') != std::string_view::npos)
    return "/";
  return std::string(next);
}
}  // namespace

std::optional<current_user> find_user(sqlite_db& db, std::string_view username) {
  auto st = db.prepare("SELECT id, username, display_name FROM users WHERE username = ?1");
  st.bind(1, std::string(username));
  return user_from(st);
}

std::optional<current_user> check_login(sqlite_db& db, std::string_view username_or_email, std::string_view password) {
  auto st = db.prepare(
      "SELECT id, username, display_name FROM users "
      "WHERE (username = ?1 OR lower(email) = lower(?1)) AND password = ?2");
  st.bind(1, std::string(username_or_email)).bind(2, std::string(password));
  return user_from(st);
}

void resolve_user(page_context& ctx) {
  for (const auto& token : ctx.req.cookies.get_all(session_cookie_name(ctx.owner.name()))) {
    auto it = ctx.state.sessions.find(token);
    if (it == ctx.state.sessions.end()) continue;
    auto st = ctx.db.prepare("SELECT id, username, display_name FROM users WHERE id = ?1");
    st.bind(1, it->second.user_id);
    if (auto user = user_from(st)) {
      ctx.user = std::move(user);
      ctx.session_token = token;
      return;
    }
  }
}

std::optional<http_response> require_login(const page_context& ctx, std::string_view return_to) {
  if (ctx.user) return std::nullopt;
  std::string next = return_to.empty() ? ctx.relative_target() : std::string(return_to);
  return http_response::redirect(ctx.url("/login?next=" + url_encode(next)));
}

namespace {

http_response login_page(page_context& ctx, const site& s, std::string_view username, std::string_view next,
                         std::vector<std::string> errors, int status) {
  html content = error_summary(errors);
  if (ctx.user) content += element("p", text("You are signed in as " + ctx.user->display_name + "."));
  content += element(
      "form", {{"method", "post"}, {"action", ctx.url("/login")}},
      hidden_input("next", next) +
          labeled_input("login-username", "Username or email", "username", username, field_opts().mark_required()) +
          labeled_input("login-password", "Password", "password", "", field_opts().input_type("password").mark_required()) +
          submit_button("Log in"));
  return s.render(ctx, "Log in", content, status);
}

}  // namespace

void add_auth_routes(site_router& r, const site& s) {
  r.add("GET", "/login", [&s](page_context& ctx) {
    return login_page(ctx, s, "", safe_next(ctx.req.query.get("next", "/")), {}, 200);
  });
  r.add("POST", "/login", [&s](page_context& ctx) {
    std::string username = ctx.req.form.get("username");
    std::string next = safe_next(ctx.req.form.get("next", "/"));
    auto user = check_login(ctx.db, username, ctx.req.form.get("password"));
    if (!user) return login_page(ctx, s, username, next, {"Wrong username or password."}, 422);
    if (!ctx.session_token.empty()) ctx.state.sessions.erase(ctx.session_token);
    auto res = http_response::redirect(ctx.url(next));
    res.set_cookie(session_cookie_name(s.name()), ctx.state.start_session(user->id), ctx.base);
    return res;
  });
  auto logout = [&s](page_context& ctx) {
    if (!ctx.session_token.empty()) ctx.state.sessions.erase(ctx.session_token);
    auto res = http_response::redirect(ctx.url("/"));
    res.set_cookie(session_cookie_name(s.name()), "", ctx.base, 0);
    return res;
  };
  r.add("POST", "/logout", logout);
  r.add("GET", "/logout", logout);
}

}  // namespace kvarena::sites
