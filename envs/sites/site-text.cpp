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

}  // namespace kvarena::sites
