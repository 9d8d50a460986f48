// browser.h: the interface every browser backend implements (the `text` backend now,
// `chromium` later): the agent's actions of specs/web-envs.md §3 as plain calls, the
// observation of §4, and what the evaluators read from the final page. Actions never throw
// for anything an agent can cause: they return a browser_result whose error says what went
// wrong and what to do, and the page stays as it was.
#pragma once
#include <cstdint>
#include <optional>
#include <cstdio>
#include <string>
#include <vector>

namespace kvarena {

struct browser_observation {
  std::string text;                // "Tab 0 (current): <title> | Tab 1: ...\n\n<tree>"
  std::string url;                 // the current tab's URL
  std::vector<std::string> tabs;   // every tab's title, in tab order
};

struct browser_result {
  std::string error;  // empty on success; else for the agent: what failed and what to do
  std::string note;   // success with a remark ("pressed Tab: no effect", "HTTP 404")
  bool ok() const { return error.empty(); }
};

// Tabs one browser may have open (start URLs, new_tab, links that open a tab): a page or
// a task must not be able to hold unbounded memory. Past it: an action error.
inline constexpr int k_max_tabs = 16;

inline std::string too_many_tabs_error() {
  return "cannot open another tab: " + std::to_string(k_max_tabs) +
         " tabs are open, the most a session may have; close one with close_tab first";
}

// A page that would take a session past its bytes limit (text_browser_options::
// max_session_bytes) beside the pages its tabs show: an action error (422 at session start).
inline std::string too_many_bytes_error(size_t page_bytes, size_t kept_bytes, size_t limit_bytes) {
  auto mib = [](size_t b) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.1f", static_cast<double>(b) / (1 << 20));
    std::string t = buf;
    if (t.size() > 2 && t.compare(t.size() - 2, 2, ".0") == 0) t.resize(t.size() - 2);
    return t + " MiB";
  };
  return "cannot show this page (" + mib(page_bytes) + "): with the pages the other tabs show, this session would hold " +
         mib(kept_bytes) + ", more than its limit of " + mib(limit_bytes) + "; close tabs with close_tab first";
}
inline bool is_too_many_bytes_error(const std::string& error) { return error.rfind("cannot show this page (", 0) == 0; }

class browser {
 public:
  virtual ~browser() = default;

  // Page operations. Ids are the [id]s of the current observation.
  virtual browser_result click(int64_t id) = 0;
  // Appends to the field's text (it is not cleared first); press_enter then submits the form.
  virtual browser_result type(int64_t id, const std::string& text, bool press_enter) = 0;
  virtual browser_result hover(int64_t id) = 0;
  virtual browser_result press(const std::string& key_combination) = 0;  // "Enter", "Meta+a"
  virtual browser_result scroll(const std::string& direction) = 0;       // "up" or "down"
  virtual browser_result clear(int64_t id) = 0;

  // Tabs.
  virtual browser_result new_tab() = 0;
  virtual browser_result tab_focus(int index) = 0;
  virtual browser_result close_tab() = 0;

  // Navigation.
  virtual browser_result go_to(const std::string& url) = 0;
  virtual browser_result go_back() = 0;
  virtual browser_result go_forward() = 0;

  virtual browser_observation observe() = 0;

  // For the evaluators.
  virtual std::string current_url() const = 0;
  virtual std::string page_html() const = 0;  // the current page's HTML
  // document.querySelector(selector).<property> on the current page, for the properties
  // outerText, innerText, textContent, value. nullopt with *error where JavaScript would
  // throw (no element matches, a selector it cannot parse) or the property is unsupported.
  virtual std::optional<std::string> query_selector_property(const std::string& selector,
                                                             const std::string& property,
                                                             std::string* error) = 0;
};

}  // namespace kvarena
