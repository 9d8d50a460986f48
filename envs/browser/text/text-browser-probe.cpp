// text-browser-probe.cpp: page_probe over text_browser.
#include "browser/text/text-browser-probe.h"

#include "eval/eval-locator.h"

namespace kvarena {

std::string text_browser_probe::current_url() { return browser_.current_url(); }

bool text_browser_probe::navigate(const std::string& url, std::string* err) {
  browser_result r = browser_.go_to(url);  // an HTTP error page still opens, as in VWA
  if (!r.ok() && err) *err = r.error;
  return r.ok();
}

std::string text_browser_probe::page_html() { return browser_.page_html(); }

std::optional<std::string> text_browser_probe::eval_locator(const std::string& locator) {
  parsed_locator loc = parse_locator(locator);
  if (loc.kind == locator_kind::whole_page) return browser_.page_html();
  if (loc.kind != locator_kind::query_selector) return std::nullopt;  // needs JavaScript
  std::string err;
  return browser_.query_selector_property(loc.selector, element_property_name(loc.property), &err);
}

bool text_browser_probe::run_prep_action(const std::string& js, std::string* err) {
  // document.querySelector('S').click(), with the selector in '...', "..." or `...`.
  std::string s = js;
  while (!s.empty() && (s.back() == ';' || s.back() == ' ' || s.back() == '\n')) s.pop_back();
  const std::string head = "document.querySelector(", tail = ").click()";
  size_t start = s.find_first_not_of(" \n\t");
  bool shaped = start != std::string::npos && s.compare(start, head.size(), head) == 0 &&
                s.size() >= start + head.size() + tail.size() + 2 &&
                s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
  if (shaped) {
    std::string quoted = s.substr(start + head.size(), s.size() - tail.size() - start - head.size());
    char q = quoted.empty() ? 0 : quoted.front();
    if ((q == '\'' || q == '"' || q == '`') && quoted.size() >= 2 && quoted.back() == q) {
      std::string selector;
      for (size_t i = 1; i + 1 < quoted.size(); ++i) {
        if (quoted[i] == '\\' && i + 2 < quoted.size()) ++i;
        selector += quoted[i];
      }
      return browser_.click_selector(selector, err);
    }
  }
  if (err)
    *err = "the text browser runs no JavaScript; of prep actions it only understands "
           "document.querySelector('S').click()";
  return false;
}

}  // namespace kvarena
