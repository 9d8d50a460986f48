// text-browser.h: the `text` browser backend: libcurl + gumbo, no JavaScript. Tabs, each
// with its own history; one cookie jar for the browser (all tabs); forms submitted with
// the values the agent typed, checked and selected; the observation is the accessibility
// tree of ax-tree.h printed in the VWA format (ax-print.h) through an estimated viewport.
//
// Behaviour worth knowing:
//   - History entries are snapshots: go_back/go_forward restore the earlier page with its
//     typed values and scroll position, without refetching (like a back-forward cache).
//   - Viewport: 2048 px / 16 px a line = 128 tree lines; scroll moves by a full viewport and
//     stops at the end of the page (ax-print.h explains the approximation).
//   - An id must be in the current viewport, as in VWA; an id that is on the page but
//     scrolled away gets an error that says which way to scroll.
//   - Links with target=_blank open a new tab and focus it. close_tab on the last tab
//     leaves one blank tab, as VWA does; focus goes to the last tab.
//   - Enter submits the focused field's form (implicit submission, with its default
//     button); in a <textarea> it types a newline. Meta+a / Control+a selects the field's
//     text so the next type replaces it; Backspace/Delete then clear it.
//   - HTTP error statuses show the server's page (with a note); transport failures return
//     an error and leave the page unchanged.
// Not thread-safe: one text_browser per env session, used from one thread at a time.
#pragma once
#include <gumbo.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "browser/common/browser.h"
#include "http-fetch.h"

namespace kvarena {

class html_document;

struct text_browser_options {
  http_options http;
  int viewport_height_px = 2048;  // VWA's viewport is 1280x2048
  int line_height_px = 16;        // estimated height of one printed tree line
  int max_history = 50;           // pages kept per tab (oldest dropped)
  // The pages all tabs hold together, history included (bytes of their HTML): past it the
  // oldest history goes first (other tabs' too, never a tab's current page); a page that
  // would not fit beside every tab's current page is refused with an action error.
  size_t max_session_bytes = 64u << 20;
};

class text_browser final : public browser {
 public:
  explicit text_browser(text_browser_options options = {});
  ~text_browser() override;

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

  // Beyond the interface: clicks the first element matching a CSS selector, wherever it
  // is on the page (the evaluators' prep actions); false with *error when none matches.
  bool click_selector(const std::string& selector, std::string* error);

  int tab_count() const { return static_cast<int>(tabs_.size()); }
  int current_tab() const { return current_; }
  size_t session_bytes() const { return held_bytes(); }  // what max_session_bytes bounds
  int viewport_lines() const;
  const html_document& document() const;  // the current page's parsed HTML
  http_client& http() { return http_; }   // the cookie jar (e.g. to log in before a task)

  // Defined in text-browser-page.h, for the backend's own source files.
  struct page;
  struct tab;
  struct target;

 private:
  page& current_page();
  const page& current_page() const;
  // Fetches and shows a page in the current tab (or a new tab); the page is unchanged on error.
  browser_result navigate(const http_request& request, bool in_new_tab);
  browser_result load_url(const std::string& url, bool in_new_tab);
  void push_page(std::unique_ptr<page> p, bool in_new_tab);
  // "" when a page of `bytes` fits beside the pages that stay current; else the error.
  std::string room_for(size_t bytes, bool in_new_tab) const;
  size_t held_bytes() const;
  std::unique_ptr<page> make_page(const std::string& url, long status,
                                  const std::string& content_type, const std::string& body);
  void scroll_to_fragment(page& p) const;

  std::optional<target> resolve_target(int64_t id, std::string* error) const;
  browser_result activate(const GumboNode* element, int64_t id, bool from_label = false);
  browser_result submit(const GumboNode* form, const GumboNode* submitter);
  browser_result press_enter_in(const GumboNode* field);

  text_browser_options options_;
  http_client http_;
  std::vector<std::unique_ptr<tab>> tabs_;
  int current_ = 0;
};

}  // namespace kvarena
