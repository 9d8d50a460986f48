// helper-dom.cpp: see helper-dom.h.
#include "helper-dom.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>

#include "browser/text/css-select.h"
#include "browser/text/dom-text.h"
#include "browser/text/html-document.h"

namespace kvarena::sites {
namespace {

css_selector_list parse_css(std::string_view css) {
  std::string err;
  auto sel = css_selector_list::parse(css, &err);
  if (!sel) throw std::invalid_argument("CSS selector '" + std::string(css) + "': " + err);
  return *sel;
}

}  // namespace

helper_dom::helper_dom(page_probe& page) : helper_dom(page.page_html()) {}
helper_dom::helper_dom(std::string html) : doc_(std::make_unique<html_document>(std::move(html))) {}
helper_dom::~helper_dom() = default;

const GumboNode* helper_dom::first(std::string_view css, const GumboNode* scope) const {
  return query_selector(scope ? scope : doc_->document(), parse_css(css));
}

std::vector<const GumboNode*> helper_dom::all(std::string_view css, const GumboNode* scope) const {
  return query_selector_all(scope ? scope : doc_->document(), parse_css(css));
}

std::string outer_text(const GumboNode* n) {
  // The text browser's innerText ends a table cell with a tab (the separator between
  // cells); a browser reading one element alone gives its text without it.
  std::string s = n ? inner_text(n) : std::string();
  const char* ws = " \t\n\r";
  size_t b = s.find_first_not_of(ws);
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(ws) - b + 1);
}
std::string content_text(const GumboNode* n) { return n ? text_content(n) : std::string(); }

std::vector<const GumboNode*> element_children(const GumboNode* n) {
  std::vector<const GumboNode*> out;
  const GumboVector* kids = child_vector(n);
  if (!kids) return out;
  for (unsigned i = 0; i < kids->length; ++i) {
    const GumboNode* c = static_cast<const GumboNode*>(kids->data[i]);
    if (is_element(c)) out.push_back(c);
  }
  return out;
}

std::string class_token(const GumboNode* n, size_t i) {
  std::string cls = attr_or(n, "class");
  size_t at = 0;
  for (size_t k = 0;; ++k) {  // split on single spaces, as JavaScript's split(' ')
    size_t sp = cls.find(' ', at);
    if (k == i) return cls.substr(at, sp == std::string::npos ? std::string::npos : sp - at);
    if (sp == std::string::npos) return "";
    at = sp + 1;
  }
}

std::optional<double> js_parse_float(std::string_view s) {
  size_t i = 0;
  while (i < s.size() && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r')) ++i;
  std::string t(s.substr(i));
  if (t.empty()) return std::nullopt;
  char* end = nullptr;
  // strtod also reads hex and "inf"/"nan", which parseFloat does not: refuse them.
  if (t.size() > 1 && (t[1] == 'x' || t[1] == 'X' || t[0] == 'i' || t[0] == 'I' || t[0] == 'n' || t[0] == 'N'))
    return std::nullopt;
  double v = std::strtod(t.c_str(), &end);
  if (end == t.c_str()) return std::nullopt;
  return v;
}

std::optional<long long> js_parse_int(std::string_view s) {
  size_t i = 0;
  while (i < s.size() && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r')) ++i;
  bool neg = false;
  if (i < s.size() && (s[i] == '-' || s[i] == '+')) neg = s[i++] == '-';
  size_t b = i;
  long long v = 0;
  while (i < s.size() && s[i] >= '0' && s[i] <= '9' && i - b < 18) v = v * 10 + (s[i++] - '0');
  if (i == b) return std::nullopt;
  return neg ? -v : v;
}

std::string number_text(double v) {
  if (std::isfinite(v) && v == std::floor(v) && std::fabs(v) < 1e15) return std::to_string(static_cast<long long>(v));
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.15g", v);
  return buf;
}

}  // namespace kvarena::sites
