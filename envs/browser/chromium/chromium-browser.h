// chromium-browser.h: the `chromium` browser backend: a real headless Chromium
// (chromium-process.h) driven over the DevTools protocol (cdp-connection.h). Each
// chromium_browser has its own connection on the process's DevTools pipe and its own
// browser context (own cookies, so its own site tenant), disposed with it; one process
// serves many of them.
//
// Same observation as the text backend (text-browser.h): the accessibility tree of
// Accessibility.getFullAXTree printed by ax-print.h in VWA's format and pruning, but the
// viewport is real layout (DOMSnapshot bounds against the window; ancestors of visible
// nodes stay printed, as in VWA). Ids are Blink's backend DOM node ids: stable for the life
// of a page. Actions go through the page as a user would: the element is scrolled into view
// and clicked, hovered or typed into at the centre of its box with Input.dispatch*Event;
// options of a <select> and typing into a <select> choose the option like the text backend.
//
// Errors: an id not in view, a field that cannot be typed into, a URL that cannot be opened
// get the text backend's messages. A page that does not finish loading within
// `load_timeout` leaves the tab where it stopped and returns an error saying so. When
// Chromium is gone (crashed, killed) every call returns an error saying the session must be
// recreated; observe() says the same in its text.
// Not thread-safe: one chromium_browser per env session, used from one thread at a time.
#pragma once
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "browser/common/browser.h"

namespace kvarena {

class chromium_process;
class cdp_connection;
struct ax_node;

struct chromium_browser_options {
  int viewport_width_px = 1280;   // VWA's viewport is 1280x2048
  int viewport_height_px = 2048;
  std::chrono::milliseconds load_timeout{15000};     // a navigation until its load event
  std::chrono::milliseconds command_timeout{15000};  // any other DevTools command
  // After an input event: how long the page must stay quiet (no navigation started, no
  // network request of its own in flight) before the input counts as done; any activity
  // restarts it. A navigation is followed until its load (load_timeout).
  std::chrono::milliseconds settle_time{100};
  // Requests started by an input that never end (long polls) stop counting after this.
  std::chrono::milliseconds network_idle_timeout{2000};
  // goto and the evaluators' navigations open file:// too (--allow-file-urls); else http(s)
  // only (common/url-policy.h). Chromium itself refuses file:// links from http pages.
  bool allow_file_urls = false;
};

class chromium_browser final : public browser {
 public:
  // Opens a browser context with one blank tab in `process`. Throws std::runtime_error when
  // Chromium cannot be reached.
  chromium_browser(std::shared_ptr<chromium_process> process, chromium_browser_options options = {});
  ~chromium_browser() override;

  browser_result click(int64_t id) override;
  browser_result type(int64_t id, const std::string& text, bool press_enter) override;
  browser_result hover(int64_t id) override;
  browser_result press(const std::string& key_combination) override;
  browser_result scroll(const std::string& direction) override;
  browser_result clear(int64_t id) override;

  browser_result new_tab() override;
  browser_result tab_focus(int index) override;
  browser_result close_tab() override;

  browser_result go_to(const std::string& url) override;
  browser_result go_back() override;
  browser_result go_forward() override;

  browser_observation observe() override;

  std::string current_url() const override;
  std::string page_html() const override;
  std::optional<std::string> query_selector_property(const std::string& selector,
                                                     const std::string& property,
                                                     std::string* error) override;

  // Beyond the interface.
  // Runs a JavaScript expression in the current page (promises awaited); its value as text
  // (strings as they are, other values as JSON), nullopt with *error when it throws.
  std::optional<std::string> evaluate_js(const std::string& expression, std::string* error);
  // POSTs an application/x-www-form-urlencoded body from a page of the URL's origin (so
  // the browser context keeps the cookies it sets), e.g. to log in; the tab is left on
  // that origin. *status and *final_url describe the response; false with *error.
  bool post_form(const std::string& url, const std::string& body, long* status, std::string* final_url,
                 std::string* error);
  // Runs a JavaScript expression that acts on the page as input would (e.g. submits a
  // form) and waits for what it started, as after a click (a navigation until loaded).
  browser_result run_js_as_input(const std::string& expression);
  // The current viewport as PNG bytes (Page.captureScreenshot); empty with *error.
  std::string screenshot_png(std::string* error);
  // What Set-of-Marks shows of the current observation, in observation order: the
  // interactive elements in view with a box (CSS pixels in the viewport) and the page's
  // text in view (interactive false, no mark).
  struct element_box {
    int64_t id;
    std::string role, name;
    std::string tag;  // the DOM node's name: "A", "BUTTON", "INPUT" ("#text" for text)
    double x, y, width, height;
    bool interactive;
  };
  std::vector<element_box> som_elements(std::string* error);

  int tab_count() const { return static_cast<int>(tabs_.size()); }
  int current_tab() const { return current_; }
  // Whether the Chromium behind this browser is gone.
  bool dead() const;

  // Defined in chromium-browser-page.h, for the backend's own source files.
  struct tab;
  struct snapshot;

 private:
  friend struct chromium_browser_ops;
  std::unique_ptr<tab> open_tab(const std::string& url);
  void attach_tab(tab& t);
  tab& current();
  const tab& current() const;
  browser_result navigate_current(const std::string& url);
  browser_result wait_for_load(tab& t, const std::string& what);
  browser_result after_input(tab& t);
  bool adopt_popups();  // true when a popup past k_max_tabs was closed
  snapshot& current_snapshot();
  browser_result guarded(const char* what, const std::function<browser_result()>& fn);

  std::shared_ptr<chromium_process> process_;
  chromium_browser_options options_;
  std::unique_ptr<cdp_connection> cdp_;
  std::string context_id_;
  std::vector<std::unique_ptr<tab>> tabs_;
  int current_ = 0;
};

}  // namespace kvarena
