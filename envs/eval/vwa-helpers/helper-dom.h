// helper-dom.h: what the func: helpers read from a page without JavaScript: the probe's
// page HTML parsed once (browser/text/html-document.h), CSS queries over it
// (browser/text/css-select.h) and an element's text as a browser would give it (outerText /
// textContent). The helpers of VisualWebArena run JavaScript in the page; these small
// functions do the same reads on the parsed HTML, so they work with any page_probe.
// Also JavaScript's number parsing and printing, as the helpers return numbers as text.
#pragma once
#include <gumbo.h>

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "eval/page-probe.h"

namespace kvarena {
class html_document;
}

namespace kvarena::sites {

class helper_dom {
 public:
  explicit helper_dom(page_probe& page);  // parses page.page_html()
  explicit helper_dom(std::string html);
  ~helper_dom();

  // The first / every element under `scope` (the document when null) matching `css`;
  // std::invalid_argument on a selector the engine does not support.
  const GumboNode* first(std::string_view css, const GumboNode* scope = nullptr) const;
  std::vector<const GumboNode*> all(std::string_view css, const GumboNode* scope = nullptr) const;

 private:
  std::unique_ptr<html_document> doc_;
};

std::string outer_text(const GumboNode* n);    // innerText/outerText, trimmed; "" for null
std::string content_text(const GumboNode* n);  // textContent; "" for null
std::vector<const GumboNode*> element_children(const GumboNode* n);
std::string class_token(const GumboNode* n, size_t i);  // className.split(' ')[i], "" if none

// JavaScript's parseFloat / parseInt of a text (leading spaces skipped, the longest number
// prefix read); nullopt for NaN.
std::optional<double> js_parse_float(std::string_view s);
std::optional<long long> js_parse_int(std::string_view s);
// A number as Python prints what Playwright hands back: integral values without a
// fraction ("24", not "24.0"), others with up to 15 significant digits ("24.5").
std::string number_text(double v);

}  // namespace kvarena::sites
