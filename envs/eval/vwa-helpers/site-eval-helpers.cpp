// site-eval-helpers.cpp: the func: helpers of the local sites (see site-eval-helpers.h).
#include "site-eval-helpers.h"

#include "site-helpers-vwa.h"

#include <optional>
#include <regex>
#include <stdexcept>
#include <string>
#include <vector>

namespace kvarena::sites {
namespace {

std::string trim_slash(std::string s) {
  while (!s.empty() && s.back() == '/') s.pop_back();
  return s;
}

// "&amp;" and friends in an attribute value back to their characters (hrefs of the sites
// only ever hold &amp;; the rest is for pages of other servers).
std::string unescape_attr(std::string s) {
  static const std::pair<const char*, const char*> k_entities[] = {
      {"&amp;", "&"}, {"&quot;", "\""}, {"&#39;", "'"}, {"&lt;", "<"}, {"&gt;", ">"}};
  for (const auto& [from, to] : k_entities) {
    std::string f = from;
    for (size_t at = s.find(f); at != std::string::npos; at = s.find(f, at + 1)) s.replace(at, f.size(), to);
  }
  return s;
}

// Every href="..." of the page's <main> (the whole page when it has none), in order.
std::vector<std::string> main_hrefs(const std::string& html) {
  size_t from = html.find("<main");
  size_t to = html.find("</main>");
  if (from == std::string::npos) from = 0;
  if (to == std::string::npos || to < from) to = html.size();
  static const std::regex k_href(R"re(href\s*=\s*"([^"]*)")re");
  std::vector<std::string> out;
  auto begin = std::sregex_iterator(html.begin() + static_cast<std::ptrdiff_t>(from),
                                    html.begin() + static_cast<std::ptrdiff_t>(to), k_href);
  for (auto it = begin; it != std::sregex_iterator(); ++it) out.push_back(unescape_attr((*it)[1].str()));
  return out;
}

// The path of a URL or href without query and fragment ("/t-1/shop/orders/000000191").
std::string path_of(const std::string& href) {
  std::string s = href;
  if (size_t scheme = s.find("://"); scheme != std::string::npos) {
    size_t slash = s.find('/', scheme + 3);
    s = slash == std::string::npos ? "/" : s.substr(slash);
  }
  if (size_t q = s.find_first_of("?#"); q != std::string::npos) s.resize(q);
  return s;
}

// Opens base + rel and returns the absolute URL of the first link in its <main> whose
// path matches `path_pattern` (an ECMAScript regex over the path, anchored at its end).
std::optional<std::string> first_link(page_probe& page, const std::string& base, const std::string& rel,
                                      const std::string& path_pattern) {
  std::string err;
  std::string root = trim_slash(base);
  if (root.empty()) throw std::invalid_argument("no site base URL given (pass the site's placeholder, e.g. '__SHOPPING__')");
  if (!page.navigate(root + rel, &err)) throw std::runtime_error("cannot open " + root + rel + ": " + err);
  const std::regex pattern(path_pattern + "$");
  for (const std::string& href : main_hrefs(page.page_html()))
    if (std::regex_search(path_of(href), pattern)) return resolve_site_href(root, href);
  return std::nullopt;
}

std::string arg(const std::vector<std::string>& args, size_t i) { return i < args.size() ? args[i] : std::string(); }

// The text of the first element matching a CSS selector, through the probe's locator
// support; "" when nothing matches (VWA's get_query_text gives "" too).
std::optional<std::string> get_query_text(page_probe& page, const std::vector<std::string>& args) {
  // args[0] is "__page__"; the selector may also come alone.
  std::string selector = args.size() >= 2 ? args[1] : arg(args, 0);
  if (selector.empty() || selector == "__page__") throw std::invalid_argument("get_query_text needs a CSS selector");
  std::string quoted;
  for (char c : selector) {
    if (c == '\\' || c == '"') quoted += '\\';
    quoted += c;
  }
  return page.eval_locator("document.querySelector(\"" + quoted + "\").outerText").value_or("");
}

// reddit: /f/{forum}/{id}/{slug} is a post page; /f/{forum}/{id} redirects there. A
// comment page (/comment/{id}) links to its post.
std::optional<std::string> reddit_post_url(page_probe& page, const std::vector<std::string>& args) {
  std::string url = arg(args, 0);
  if (url.empty()) url = page.current_url();
  static const std::regex k_post(R"re(^(.*/f/[^/?#]+/[0-9]+)(/[^/?#]*)?)re");
  std::smatch m;
  std::string no_query = url.substr(0, url.find_first_of("?#"));
  if (std::regex_search(no_query, m, k_post)) return m[1].str() + m[2].str();
  static const std::regex k_comment(R"re(^(.*)/comment/[0-9]+/?$)re");
  if (std::regex_search(no_query, m, k_comment)) {
    std::string err;
    if (!page.navigate(no_query, &err)) throw std::runtime_error("cannot open " + no_query + ": " + err);
    static const std::regex k_post_path(R"re(/f/[^/]+/[0-9]+/[^/]*$)re");
    for (const std::string& href : main_hrefs(page.page_html()))
      if (std::regex_search(path_of(href), k_post_path)) return resolve_site_href(m[1].str(), href);
  }
  return std::nullopt;
}

// The logged-in user's page on the forum: the header links to /user/{name}.
std::optional<std::string> reddit_user_page(page_probe& page, const std::string& base) {
  std::string root = trim_slash(base);
  std::string err;
  if (!page.navigate(root + "/", &err)) throw std::runtime_error("cannot open " + root + "/: " + err);
  std::string html = page.page_html();
  size_t header_end = html.find("<main");
  static const std::regex k_user(R"re(href\s*=\s*"([^"]*/user/[^"/?#]+)")re");
  std::smatch m;
  std::string header = html.substr(0, header_end == std::string::npos ? html.size() : header_end);
  if (!std::regex_search(header, m, k_user)) return std::nullopt;
  return path_of(resolve_site_href(root, unescape_attr(m[1].str())));
}

std::optional<std::string> reddit_latest(page_probe& page, const std::vector<std::string>& args,
                                         const std::string& pattern) {
  std::string base = trim_slash(arg(args, 0));
  auto user_path = reddit_user_page(page, base);
  if (!user_path) return std::nullopt;
  // user_path is absolute ("/t-1/reddit/user/x"); make it relative to the base.
  std::string base_path = path_of(base);
  std::string rel = user_path->rfind(base_path, 0) == 0 ? user_path->substr(base_path.size()) : *user_path;
  return first_link(page, base, rel, pattern);
}

}  // namespace

std::string resolve_site_href(std::string_view base, std::string_view href) {
  std::string h(href);
  if (h.rfind("http://", 0) == 0 || h.rfind("https://", 0) == 0) return h;
  std::string b = trim_slash(std::string(base));
  if (!h.empty() && h.front() == '/') {
    size_t scheme = b.find("://");
    size_t slash = scheme == std::string::npos ? std::string::npos : b.find('/', scheme + 3);
    return (slash == std::string::npos ? b : b.substr(0, slash)) + h;
  }
  return b + "/" + h;
}

void register_site_eval_helpers(eval_helper_registry& r) {
  register_shopping_page_helpers(r);
  register_shopping_rest_helpers(r);
  register_reddit_helpers(r);
  register_gitlab_helpers(r);
  r.add("get_query_text", get_query_text);
  r.add("get_query_text_lowercase", [](page_probe& page, const std::vector<std::string>& args) {
    std::optional<std::string> text = get_query_text(page, args);
    for (char& ch : *text)
      if (ch >= 'A' && ch <= 'Z') ch = static_cast<char>(ch - 'A' + 'a');
    return text;
  });
  r.add("classifieds_get_latest_listing_url", [](page_probe& page, const std::vector<std::string>& args) {
    return first_link(page, arg(args, 0), "/my/listings", "/item/[0-9]+");
  });
  // With the site's URL as argument (kvarena's suites): the newest order of the logged-in
  // user from its order list; without (VWA's tasks): the REST API's newest order.
  const eval_site_helper_fn by_api = *r.find("shopping_get_latest_order_url");
  r.add("shopping_get_latest_order_url", [by_api](const eval_helper_call& c) {
    if (c.args.empty()) return by_api(c);
    return first_link(c.page, arg(c.args, 0), "/orders", "/orders/[0-9]+");
  });
  r.add("reddit_get_post_url", reddit_post_url);
  r.add("reddit_get_latest_post_url", [](page_probe& page, const std::vector<std::string>& args) {
    return reddit_latest(page, args, "/f/[^/]+/[0-9]+/[^/]*");
  });
  r.add("reddit_get_latest_comment_url", [](page_probe& page, const std::vector<std::string>& args) {
    return reddit_latest(page, args, "/comment/[0-9]+");
  });
}

const eval_helper_registry& site_eval_helpers() {
  static const eval_helper_registry registry = [] {
    eval_helper_registry r;
    register_site_eval_helpers(r);
    return r;
  }();
  return registry;
}

}  // namespace kvarena::sites
