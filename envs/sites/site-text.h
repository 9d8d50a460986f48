// site-text.h: small text helpers every built-in site shares: trimming form input, LIKE
// patterns and search words for the SQL searches, and the guard on "return to" paths.
#pragma once
#include <string>
#include <string_view>
#include <vector>

namespace kvarena::sites {

// `s` without leading and trailing spaces, tabs, CRs and LFs.
std::string trim(std::string s);
// LIKE pattern matching `word` literally anywhere (escape char '\').
std::string like_pattern(std::string_view word);
// The whitespace-separated words of a search query, at most 10.
std::vector<std::string> words_of(std::string_view q);
// `next` from a form when it is a path inside the site ("/cart"), else `fallback`.
std::string safe_return(std::string_view next, std::string_view fallback);

}  // namespace kvarena::sites
