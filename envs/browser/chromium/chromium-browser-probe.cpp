// chromium-browser-probe.cpp: page_probe over chromium_browser (JavaScript in the page).
#include "browser/chromium/chromium-browser-probe.h"

#include <stdexcept>

#include "browser/common/url-util.h"

namespace kvarena {

bool chromium_browser_probe::navigate(const std::string& url, std::string* err) {
  browser_result r = browser_.go_to(url);  // an HTTP error page still opens, as in VWA
  if (!r.ok() && err) *err = r.error;
  return r.ok();
}

std::string chromium_browser_probe::script_refusal() {
  const std::string url = browser_.current_url();
  const std::string origin = url_origin(url);
  if (!origin.empty() && origins_.count(origin)) return "";
  std::string allowed;
  for (const std::string& o : origins_) allowed += (allowed.empty() ? "" : ", ") + o;
  std::string shown = url.size() > 200 ? url.substr(0, 200) + "..." : url;
  return "refused to run the task's JavaScript on " + (shown.empty() ? std::string("an empty page") : shown) +
         ": a task's scripts run only on the origins of its sites (" +
         (allowed.empty() ? std::string("none: the task names no site with a URL") : allowed) + ")";
}

std::optional<std::string> chromium_browser_probe::eval_locator(const std::string& locator) {
  if (locator.empty()) return browser_.page_html();
  if (std::string why = script_refusal(); !why.empty()) throw std::runtime_error(why);
  std::string err;
  return browser_.evaluate_js(locator, &err);  // VWA: page.evaluate(f"() => {locator}")
}

bool chromium_browser_probe::run_prep_action(const std::string& js, std::string* err) {
  if (std::string why = script_refusal(); !why.empty()) {
    if (err) *err = why;
    return false;
  }
  std::string e;
  bool ok = browser_.evaluate_js(js, &e).has_value();
  if (!ok && err) *err = e;
  return ok;
}

}  // namespace kvarena
