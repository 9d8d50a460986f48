// text-browser-probe.h: the evaluators' view of a text_browser (eval/page-probe.h):
// navigation, the page HTML, and locators of the form document.querySelector('S').<prop>
// (and document.body.<prop>) answered by the CSS selector engine. Other JavaScript cannot
// run here: such locators give nullopt (the evaluator then uses ""), and the only prep
// action understood is document.querySelector('S').click().
#pragma once
#include "browser/text/text-browser.h"
#include "eval/page-probe.h"

namespace kvarena {

class text_browser_probe final : public page_probe {
 public:
  explicit text_browser_probe(text_browser& browser) : browser_(browser) {}

  std::string current_url() override;
  bool navigate(const std::string& url, std::string* err) override;
  std::string page_html() override;
  std::optional<std::string> eval_locator(const std::string& locator) override;
  bool run_prep_action(const std::string& js, std::string* err) override;

 private:
  text_browser& browser_;
};

}  // namespace kvarena
