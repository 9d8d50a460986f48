// text-browser.cpp: tabs, history, page loading, the observation, and the evaluators'
// helpers. The page operations (click, type, press, ...) are in text-browser-actions.cpp.
#include <algorithm>

#include "common/text-encode.h"
#include "common/url-policy.h"
#include "css-select.h"
#include "dom-text.h"
#include "browser/common/str-util.h"
#include "text-browser-page.h"
#include "browser/common/url-util.h"

namespace kvarena {
namespace {

// The last path segment, for the title of a non-HTML page ("photo.png").
std::string file_name_of(const std::string& url) {
  url_parts u = parse_url(url);
  std::string path = u.path;
  while (!path.empty() && path.back() == '/') path.pop_back();
  std::string name = percent_decode(path.substr(path.rfind('/') + 1), false);
  return name.empty() ? url : name;
}

bool is_html_type(const std::string& type) {
  return type.empty() || type == "text/html" || type == "application/xhtml+xml";
}

bool is_text_type(const std::string& type) {
  return type.rfind("text/", 0) == 0 || type == "application/json" ||
         type == "application/javascript" || type == "application/xml" ||
         (type.size() > 5 && type.compare(type.size() - 5, 5, "+json") == 0) ||
         (type.size() > 4 && type.compare(type.size() - 4, 4, "+xml") == 0);
}

}  // namespace

std::string role_phrase(const std::string& role) {
  if (role == "StaticText") return "text (StaticText)";
  if (role == "RootWebArea") return "the page itself (RootWebArea)";
  bool vowel = !role.empty() && std::string("aeiouAEIOU").find(role[0]) != std::string::npos;
  return std::string(vowel ? "an " : "a ") + role;
}

text_browser::text_browser(text_browser_options options)
    : options_(std::move(options)), http_(options_.http) {
  tabs_.push_back(std::make_unique<tab>());
  tabs_[0]->history.push_back(make_page("about:blank", 200, "text/html", ""));
}

text_browser::~text_browser() = default;

text_browser::page& text_browser::current_page() {
  tab& t = *tabs_[current_];
  return *t.history[t.index];
}

const text_browser::page& text_browser::current_page() const {
  const tab& t = *tabs_[current_];
  return *t.history[t.index];
}

int text_browser::viewport_lines() const {
  return std::max(1, options_.viewport_height_px / std::max(1, options_.line_height_px));
}

const html_document& text_browser::document() const { return *current_page().doc; }

std::unique_ptr<text_browser::page> text_browser::make_page(const std::string& url, long status,
                                                            const std::string& content_type,
                                                            const std::string& body) {
  std::string type = lower_trim(content_type.substr(0, content_type.find(';')));
  std::string html;
  if (is_html_type(type)) {
    html = decode_to_utf8(body, content_type);
  } else if (is_text_type(type)) {
    html = "<html><head><title>" + escape_html(file_name_of(url)) + "</title></head><body><pre>" +
           escape_html(decode_to_utf8(body, content_type)) + "</pre></body></html>";
  } else if (type.rfind("image/", 0) == 0) {
    std::string name = escape_html(file_name_of(url));
    html = "<html><head><title>" + name + "</title></head><body><img alt=\"" + name +
           "\" src=\"" + escape_html(url) + "\"></body></html>";
  } else {
    html = "<html><head><title>" + escape_html(file_name_of(url)) + "</title></head><body><p>" +
           escape_html(type) + " content (" + std::to_string(body.size()) +
           " bytes) that the text browser does not display.</p></body></html>";
  }
  auto p = std::make_unique<page>();
  p->url = url;
  p->status = status;
  p->bytes = html.size() + url.size();
  p->doc = std::make_unique<html_document>(std::move(html));
  p->state = std::make_unique<form_state>(*p->doc);
  return p;
}

void text_browser::scroll_to_fragment(page& p) const {
  p.top_line = 0;
  std::string frag = percent_decode(url_fragment(p.url), false);
  if (frag.empty()) return;
  const GumboNode* anchor = p.doc->element_by_id(frag);
  for (int i = 0; !anchor && i < p.doc->node_count(); ++i)
    if (has_tag(p.doc->node(i), GUMBO_TAG_A) && attr_or(p.doc->node(i), "name") == frag)
      anchor = p.doc->node(i);
  if (!anchor) return;
  ax_node tree = build_ax_tree(*p.doc, *p.state, p.focused);
  std::vector<ax_line> lines = ax_layout(tree);
  int anchor_index = p.doc->index_of(anchor);
  for (const ax_line& l : lines) {
    if (l.node->dom && !l.node->is_value_text && p.doc->index_of(l.node->dom) >= anchor_index) {
      int max_top = std::max(0, static_cast<int>(lines.size()) - viewport_lines());
      p.top_line = std::min(l.line, max_top);
      return;
    }
  }
}

size_t text_browser::held_bytes() const {
  size_t total = 0;
  for (const auto& t : tabs_)
    for (const auto& p : t->history) total += p->bytes;
  return total;
}

std::string text_browser::room_for(size_t bytes, bool in_new_tab) const {
  size_t kept = bytes;  // the pages that stay current: every tab's but the one navigating
  for (int i = 0; i < tab_count(); ++i)
    if (in_new_tab || i != current_) kept += tabs_[i]->history[tabs_[i]->index]->bytes;
  if (kept <= options_.max_session_bytes) return "";
  return too_many_bytes_error(bytes, kept, options_.max_session_bytes);
}

void text_browser::push_page(std::unique_ptr<page> p, bool in_new_tab) {
  if (in_new_tab) {
    tabs_.push_back(std::make_unique<tab>());
    current_ = static_cast<int>(tabs_.size()) - 1;
    tabs_.back()->history.push_back(std::move(p));
  } else {
    tab& t = *tabs_[current_];
    t.history.resize(t.index + 1);  // a new page drops the forward entries
    t.history.push_back(std::move(p));
    t.index = static_cast<int>(t.history.size()) - 1;
    while (static_cast<int>(t.history.size()) > std::max(1, options_.max_history)) {
      t.history.erase(t.history.begin());
      --t.index;
    }
  }
  // Over max_session_bytes: drop history that no tab shows, from the tab holding the most,
  // its oldest back entry first, then its forward entries (room_for made sure this ends).
  size_t total = held_bytes();
  while (total > options_.max_session_bytes) {
    tab* victim = nullptr;
    size_t most = 0;
    for (auto& t : tabs_) {
      size_t spare = 0;
      for (int i = 0; i < static_cast<int>(t->history.size()); ++i)
        if (i != t->index) spare += t->history[i]->bytes;
      if (spare > most) most = spare, victim = t.get();
    }
    if (!victim) break;
    if (victim->index > 0) {
      total -= victim->history.front()->bytes;
      victim->history.erase(victim->history.begin());
      --victim->index;
    } else {
      total -= victim->history.back()->bytes;
      victim->history.pop_back();
    }
  }
}

browser_result text_browser::navigate(const http_request& request, bool in_new_tab) {
  std::string scheme = url_scheme(request.url);
  if (lower_trim(request.url) == "about:blank") {
    push_page(make_page("about:blank", 200, "text/html", ""), in_new_tab);
    return {};
  }
  if (scheme == "javascript")
    return {"", "the target runs JavaScript, which the text browser does not execute; nothing happened"};
  if (in_new_tab && tab_count() >= k_max_tabs) return {too_many_tabs_error(), ""};
  if (std::string why = refused_url_reason(request.url, options_.http.allow_file_urls); !why.empty())
    return {why + " (and about:blank)", ""};
  http_response res = http_.fetch(request);
  if (!res.ok) return {res.error, ""};
  std::string final_url = res.final_url;
  std::string fragment = url_fragment(request.url);
  if (!fragment.empty() && final_url.find('#') == std::string::npos) final_url += "#" + fragment;
  std::unique_ptr<page> p = make_page(final_url, res.status, res.content_type, res.body);
  if (std::string why = room_for(p->bytes, in_new_tab); !why.empty()) return {why, ""};
  scroll_to_fragment(*p);
  push_page(std::move(p), in_new_tab);
  browser_result r;
  if (res.status >= 400)
    r.note = "the server answered HTTP " + std::to_string(res.status) + " for " + final_url;
  return r;
}

browser_result text_browser::load_url(const std::string& url, bool in_new_tab) {
  page& cur = current_page();
  // Same-document fragment navigation: no fetch, just scroll to the anchor.
  if (!in_new_tab && url.find('#') != std::string::npos &&
      url_without_fragment(url) == url_without_fragment(cur.url) && cur.url != "about:blank") {
    cur.url = url;
    scroll_to_fragment(cur);
    return {};
  }
  http_request req;
  req.url = url;
  std::string scheme = url_scheme(cur.url);
  if (scheme == "http" || scheme == "https") req.referer = url_without_fragment(cur.url);
  return navigate(req, in_new_tab);
}

browser_result text_browser::go_to(const std::string& url) {
  std::string text = url;
  size_t b = text.find_first_not_of(" \t\r\n");
  if (b == std::string::npos) return {"goto needs a URL, e.g. goto [http://127.0.0.1:8080/]", ""};
  std::string target;
  if (text[b] == '/' && text.compare(b, 2, "//") != 0) {  // a path: relative to this page
    std::optional<std::string> r = resolve_url(current_page().url, text);
    if (!r) return {"cannot go to '" + text + "': a path needs a current http page; use a full URL", ""};
    target = *r;
  } else {
    target = url_from_user_input(text);
  }
  return load_url(target, false);
}

browser_result text_browser::go_back() {
  tab& t = *tabs_[current_];
  if (t.index == 0) return {"cannot go back: this tab has no earlier page", ""};
  --t.index;
  return {};
}

browser_result text_browser::go_forward() {
  tab& t = *tabs_[current_];
  if (t.index + 1 >= static_cast<int>(t.history.size()))
    return {"cannot go forward: there is no later page in this tab (go_forward works after go_back)", ""};
  ++t.index;
  return {};
}

browser_result text_browser::new_tab() {
  if (tab_count() >= k_max_tabs) return {too_many_tabs_error(), ""};
  push_page(make_page("about:blank", 200, "text/html", ""), true);
  return {};
}

browser_result text_browser::tab_focus(int index) {
  if (index < 0 || index >= tab_count())
    return {"tab " + std::to_string(index) + " does not exist (" + std::to_string(tab_count()) +
                (tab_count() == 1 ? " tab open: use tab_focus [0]" : " tabs open: use 0 to " + std::to_string(tab_count() - 1)) + ")",
            ""};
  current_ = index;
  return {};
}

browser_result text_browser::close_tab() {
  tabs_.erase(tabs_.begin() + current_);
  if (tabs_.empty()) {  // as VWA: a fresh blank tab replaces the last one
    tabs_.push_back(std::make_unique<tab>());
    tabs_[0]->history.push_back(make_page("about:blank", 200, "text/html", ""));
    current_ = 0;
    return {"", "closed the last tab; a new blank tab was opened"};
  }
  current_ = tab_count() - 1;
  return {};
}

browser_observation text_browser::observe() {
  browser_observation obs;
  std::string header;
  for (int i = 0; i < tab_count(); ++i) {
    const tab& t = *tabs_[i];
    std::string title = t.history[t.index]->doc->title();
    obs.tabs.push_back(title);
    if (i) header += " | ";
    header += "Tab " + std::to_string(i) + (i == current_ ? " (current): " : ": ") + title;
  }
  const page& p = current_page();
  obs.text = header + "\n\n" + render_page(p, viewport_lines()).text;
  obs.url = p.url;
  return obs;
}

std::string text_browser::current_url() const { return current_page().url; }

std::string text_browser::page_html() const { return current_page().doc->html(); }

std::optional<std::string> text_browser::query_selector_property(const std::string& selector,
                                                                 const std::string& property,
                                                                 std::string* error) {
  std::string parse_error;
  std::optional<css_selector_list> sel = css_selector_list::parse(selector, &parse_error);
  if (!sel) {
    if (error) *error = "invalid CSS selector: " + parse_error;
    return std::nullopt;
  }
  const page& p = current_page();
  const GumboNode* el = query_selector(p.doc->document(), *sel);
  if (!el) {
    if (error) *error = "no element matches the selector '" + selector + "' on " + p.url;
    return std::nullopt;
  }
  if (property == "outerText" || property == "innerText") return inner_text(el);
  if (property == "textContent") return text_content(el);
  if (property == "value") {
    if (has_tag(el, GUMBO_TAG_INPUT) || has_tag(el, GUMBO_TAG_TEXTAREA)) return p.state->value(el);
    if (has_tag(el, GUMBO_TAG_SELECT)) {
      std::vector<const GumboNode*> chosen = p.state->selected_options(el);
      return chosen.empty() ? "" : option_value(chosen.front());
    }
    if (has_tag(el, GUMBO_TAG_OPTION)) return option_value(el);
    return attr_or(el, "value");  // button, li, data, meter...; elsewhere JS gives undefined
  }
  if (error)
    *error = "unsupported property '" + property +
             "': the text browser evaluates outerText, innerText, textContent and value";
  return std::nullopt;
}

bool text_browser::click_selector(const std::string& selector, std::string* error) {
  std::string parse_error;
  std::optional<css_selector_list> sel = css_selector_list::parse(selector, &parse_error);
  if (!sel) {
    *error = "invalid CSS selector: " + parse_error;
    return false;
  }
  const page& p = current_page();
  const GumboNode* el = query_selector(p.doc->document(), *sel);
  if (!el) {
    *error = "no element matches the selector '" + selector + "' on " + p.url;
    return false;
  }
  browser_result r = activate(el, ax_id(*p.doc, el));
  if (!r.ok()) *error = r.error;
  return r.ok();
}

}  // namespace kvarena
