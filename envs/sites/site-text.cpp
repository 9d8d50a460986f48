// site-text.cpp: the shared text helpers of the built-in sites (site-text.h).
#include "site-text.h"

#include <cctype>

namespace kvarena::sites {

std::string trim(std::string s) {
  auto space = [](unsigned char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; };
  while (!s.empty() && space(s.back())) s.pop_back();
  size_t i = 0;
  while (i < s.size() && space(s[i])) ++i;
  return s.substr(i);
}

std::string like_pattern(std::string_view word) {
  std::string p = "%";
  for (char c : word) {
    if (c == '%' || c == '_' || c == '\\') p += '\\';
    p += c;
  }
  return p + "%";
}

std::vector<std::string> words_of(std::string_view q) {
  std::vector<std::string> words;
  std::string cur;
  for (char c : q) {
    if (std::isspace(static_cast<unsigned char>(c))) {
      if (!cur.empty()) words.push_back(std::move(cur));
      cur.clear();
    } else {
      cur += c;
    }
  }
  if (!cur.empty()) words.push_back(std::move(cur));
  if (words.size() > 10) words.resize(10);
  return words;
}

std::string safe_return(std::string_view next, std::string_view fallback) {
  if (next.empty() || next.front() != '/' || next.rfind("//", 0) == 0 || next.find('\\') != std::string_view::npos)
    return std::string(fallback);
  return std::string(next);
}

html pagination_nav(int page, int pages, const std::function<std::string(int)>& href) {
  if (pages <= 1) return {};
  std::vector<html> items;
  if (page > 1) items.push_back(link(href(page - 1), "Previous page"));
  for (int i = 1; i <= pages; ++i) {
    if (i == page)
      items.push_back(element("span", {{"aria-current", "page"}}, text("Page " + std::to_string(i))));
    else
      items.push_back(link(href(i), "Page " + std::to_string(i)));
  }
  if (page < pages) items.push_back(link(href(page + 1), "Next page"));
  return element("nav", {{"aria-label", "Pagination"}}, list(items));
}

html two_level_list(const std::vector<tree_item>& items, std::string_view cls) {
  std::vector<html> tops;
  std::vector<html> children;
  html top;
  auto flush = [&] {
    if (!top.empty()) tops.push_back(top + list(children));
    children.clear();
  };
  for (const auto& [is_top, item] : items) {
    if (is_top) {
      flush();
      top = item;
    } else {
      children.push_back(item);
    }
  }
  flush();
  return list(tops, "ul", cls);
}

html breadcrumb(const page_context& ctx, const std::vector<std::pair<std::string, std::string>>& crumbs) {
  std::vector<html> items = {link(ctx.url("/"), "Home")};
  for (const auto& [label, href] : crumbs) items.push_back(link(href, label));
  return element("nav", {{"aria-label", "Breadcrumb"}}, list(items, "ol"));
}

html text_paragraphs(std::string_view s, bool skip_bare_cr) {
  html out;
  size_t start = 0;
  while (start <= s.size()) {
    size_t nl = s.find('\n', start);
    std::string_view line = s.substr(start, nl == std::string_view::npos ? std::string_view::npos : nl - start);
    if (!line.empty() && !(skip_bare_cr && line == "\r")) out += element("p", text(line));
    if (nl == std::string_view::npos) break;
    start = nl + 1;
  }
  return out;
}

}  // namespace kvarena::sites
