// site-text.h: small text helpers every built-in site shares: trimming form input, LIKE
// patterns and search words for the SQL searches, the guard on "return to" paths, and the
// page pieces built from them (pagination, breadcrumbs, paragraphs).
#pragma once
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "site.h"

namespace kvarena::sites {

// `s` without leading and trailing spaces, tabs, CRs and LFs.
std::string trim(std::string s);
// LIKE pattern matching `word` literally anywhere (escape char '\').
std::string like_pattern(std::string_view word);
// The whitespace-separated words of a search query, at most 10.
std::vector<std::string> words_of(std::string_view q);
// `next` from a form when it is a path inside the site ("/cart"), else `fallback`.
std::string safe_return(std::string_view next, std::string_view fallback);

// <nav aria-label="Pagination">: Previous page, Page 1..pages (the current one a span with
// aria-current), Next page; `href(n)` is page n's URL. Nothing when pages <= 1.
html pagination_nav(int page, int pages, const std::function<std::string(int)>& href);
// A nested list: each top item followed by a <ul> of the items after it up to the next
// top (items before the first top are dropped); the outer <ul> has class `cls`.
struct tree_item {
  bool top;
  html item;
};
html two_level_list(const std::vector<tree_item>& items, std::string_view cls);
// <nav aria-label="Breadcrumb">: Home, then each (label, href).
html breadcrumb(const page_context& ctx, const std::vector<std::pair<std::string, std::string>>& crumbs);
// One <p> per non-empty line of `s`; skip_bare_cr: a line that is only "\r" counts as empty.
html text_paragraphs(std::string_view s, bool skip_bare_cr = false);

}  // namespace kvarena::sites
