// chromium-browser-probe.cpp: page_probe over chromium_browser (JavaScript in the page).
#include "browser/chromium-browser-probe.h"

namespace kvarena {

bool chromium_browser_probe::navigate(const std::string& url, std::string* err) {
  browser_result r = browser_.go_to(url);  // an HTTP error page still opens, as in VWA
  if (!r.ok() && err) *err = r.error;
  return r.ok();
}

std::optional<std::string> chromium_browser_probe::eval_locator(const std::string& locator) {
  if (locator.empty()) return browser_.page_html();
  std::string err;
  return browser_.evaluate_js(locator, &err);  // VWA: page.evaluate(f"() => {locator}")
}

bool chromium_browser_probe::run_prep_action(const std::string& js, std::string* err) {
  std::string e;
  bool ok = browser_.evaluate_js(js, &e).has_value();
  if (!ok && err) *err = e;
  return ok;
}

}  // namespace kvarena
