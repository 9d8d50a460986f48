// url-view.cpp: see url-view.h.
#include "url-view.h"

#include <cctype>

namespace kvarena {

namespace {
std::string replace_all(std::string_view text, std::string_view from, std::string_view to) {
  if (from.empty()) return std::string(text);
  std::string out;
  size_t i = 0;
  for (size_t j; (j = text.find(from, i)) != std::string_view::npos; i = j + from.size()) {
    out.append(text.substr(i, j - i));
    out.append(to);
  }
  out.append(text.substr(i));
  return out;
}
}  // namespace

url_view::url_view(std::string_view url) {
  const size_t scheme = url.find("://");
  if (scheme == std::string_view::npos) return;
  size_t end = url.find('/', scheme + 3);
  if (end == std::string_view::npos) return;
  ++end;  // scheme://authority/
  // A tenant segment "t-<hex>/" belongs to the prefix too.
  if (url.substr(end, 2) == "t-") {
    size_t k = end + 2;
    while (k < url.size() && std::isxdigit(static_cast<unsigned char>(url[k]))) ++k;
    if (k > end + 2 && k < url.size() && url[k] == '/') end = k + 1;
  }
  prefix_ = std::string(url.substr(0, end));
}

std::string url_view::show(std::string_view text) const { return replace_all(text, prefix_, shown_origin); }
std::string url_view::real(std::string_view text) const {
  return prefix_.empty() ? std::string(text) : replace_all(text, shown_origin, prefix_);
}

}  // namespace kvarena
