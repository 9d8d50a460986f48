// site.cpp: the page context helpers and the shared page frame of every site (see site.h).
#include "site.h"

#include <charconv>

namespace kvarena::sites {

std::string page_context::relative_target() const {
  // The raw target keeps its escapes (safe to put back into a URL); the decoded path is
  // the fallback for a target that spelled the prefix with escapes.
  std::string rel;
  if (req.target.rfind(base, 0) == 0) {
    rel = req.target.substr(base.size());
  } else {
    rel = req.path.size() > base.size() ? req.path.substr(base.size()) : std::string();
    if (size_t q = req.target.find('?'); q != std::string::npos) rel += req.target.substr(q);
  }
  if (rel.empty() || rel.front() != '/') rel = std::string(1, '/').append(rel);
  return rel;
}

void page_context::flash(std::string message) {
  if (auto it = state.sessions.find(session_token); it != state.sessions.end()) it->second.flash = std::move(message);
}

std::string page_context::take_flash() {
  auto it = state.sessions.find(session_token);
  if (it == state.sessions.end()) return {};
  return std::exchange(it->second.flash, std::string());
}

std::optional<int64_t> page_context::param_id(std::string_view name) const {
  auto it = params.find(name);
  if (it == params.end() || it->second.empty() || it->second.size() > 18) return std::nullopt;
  int64_t v = 0;
  auto [end, ec] = std::from_chars(it->second.data(), it->second.data() + it->second.size(), v);
  if (ec != std::errc() || end != it->second.data() + it->second.size() || v <= 0) return std::nullopt;
  return v;
}

http_response site::render(page_context& ctx, std::string_view title, const html& content, int status) const {
  page_chrome c = chrome(ctx);
  if (c.site_title.empty()) c.site_title = this->title();
  if (c.home_href.empty()) c.home_href = ctx.url("/");
  if (c.stylesheet_href.empty()) c.stylesheet_href = ctx.url(std::string(kStylesheetPath));
  if (ctx.user) {
    c.user_display = ctx.user->display_name;
    c.logout_action = ctx.url("/logout");
  } else {
    std::string rel = ctx.relative_target();
    c.login_href = rel.rfind("/login", 0) == 0 ? ctx.url("/login") : ctx.url("/login?next=" + url_encode(rel));
  }
  return http_response::html(render_page(c, title, content, ctx.take_flash()), status);
}

http_response site::error_page(page_context& ctx, int status, std::string_view message) const {
  std::string title = std::to_string(status) + " " + std::string(status_reason(status));
  return render(ctx, title, element("p", text(message)) + element("p", link(ctx.url("/"), "Go to the home page")),
                status);
}

std::string site_base_path(std::string_view tenant, std::string_view site_name) {
  std::string p(1, '/');
  return p.append(tenant).append(1, '/').append(site_name);
}

}  // namespace kvarena::sites
