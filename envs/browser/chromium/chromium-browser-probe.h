// chromium-browser-probe.h: the evaluators' view of a chromium_browser (eval/page-probe.h).
// Unlike the text backend, locators and prep actions are real JavaScript, run in the page
// with Runtime.evaluate, so any VWA locator works. A task's scripts run only where the
// task belongs: when the current page's origin is not one of `script_origins` (the
// origins of the task's sites), a prep action fails and a JavaScript locator throws, each
// with an error naming the page and the allowed origins (the evaluator notes it and
// scores the target on ""). The whole-page locator ("") reads HTML and is not a script.
#pragma once
#include <set>
#include <string>

#include "browser/chromium/chromium-browser.h"
#include "eval/page-probe.h"

namespace kvarena {

class chromium_browser_probe final : public page_probe {
 public:
  chromium_browser_probe(chromium_browser& browser, std::set<std::string> script_origins)
      : browser_(browser), origins_(std::move(script_origins)) {}

  std::string current_url() override { return browser_.current_url(); }
  bool navigate(const std::string& url, std::string* err) override;
  std::string page_html() override { return browser_.page_html(); }
  std::optional<std::string> eval_locator(const std::string& locator) override;
  bool run_prep_action(const std::string& js, std::string* err) override;

  // "" when the current page may run the task's scripts; else why not.
  std::string script_refusal();

 private:
  chromium_browser& browser_;
  std::set<std::string> origins_;
};

}  // namespace kvarena
