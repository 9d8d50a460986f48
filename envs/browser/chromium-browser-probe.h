// chromium-browser-probe.h: the evaluators' view of a chromium_browser (eval/page-probe.h).
// Unlike the text backend, locators and prep actions are real JavaScript, run in the page
// with Runtime.evaluate, so any VWA locator works.
#pragma once
#include "browser/chromium-browser.h"
#include "eval/page-probe.h"

namespace kvarena {

class chromium_browser_probe final : public page_probe {
 public:
  explicit chromium_browser_probe(chromium_browser& browser) : browser_(browser) {}

  std::string current_url() override { return browser_.current_url(); }
  bool navigate(const std::string& url, std::string* err) override;
  std::string page_html() override { return browser_.page_html(); }
  std::optional<std::string> eval_locator(const std::string& locator) override;
  bool run_prep_action(const std::string& js, std::string* err) override;

 private:
  chromium_browser& browser_;
};

}  // namespace kvarena
