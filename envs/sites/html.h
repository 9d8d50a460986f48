// html.h: HTML building for the sites. `html` holds markup that is already safe; plain
// strings become markup only through text() or an attribute value, both escaped, so a
// user string cannot inject markup by construction. Helpers emit semantic, labelled
// elements (nav, main, h1, ul/li, table, form controls with <label for>) because the text
// browser builds its accessibility tree from exactly these; no JavaScript anywhere.
#pragma once
#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/text-encode.h"

namespace kvarena::sites {

// Escapes & < > " ' (common/text-encode.h, shared with the browser).
using kvarena::escape_html;

class html {
 public:
  html() = default;
  // Trusted markup only: string literals and the output of other helpers.
  static html raw(std::string markup) {
    html h;
    h.s_ = std::move(markup);
    return h;
  }
  const std::string& str() const { return s_; }
  bool empty() const { return s_.empty(); }
  html& operator+=(const html& o) {
    s_ += o.s_;
    return *this;
  }
  friend html operator+(html a, const html& b) { return a += b; }

 private:
  std::string s_;
};

html text(std::string_view s);  // escaped text

// An attribute; an empty name drops it, so optional attributes read
// {required ? "required" : "", "required"}. Values are escaped.
struct attr {
  std::string_view name;
  std::string value;
};
html element(std::string_view tag, std::initializer_list<attr> attrs, const html& children = {});
html element(std::string_view tag, const html& children);
html void_element(std::string_view tag, std::initializer_list<attr> attrs);  // <input>, <img>, <br>
html link(std::string_view href, std::string_view label);
html join(const std::vector<html>& parts);
html list(const std::vector<html>& items, std::string_view tag = "ul", std::string_view cls = "");

// Form controls. Each labelled control gets <label for=id>; an error is shown next to it
// (aria-describedby) and marks it aria-invalid.
// Built fluently: field_opts().input_type("password").mark_required().show_error(e).
struct field_opts {
  std::string type = "text";  // input type: text, search, number, password, email, ...
  bool required = false;
  std::string placeholder;
  std::string error;          // "" when valid
  std::string help;           // short hint under the control
  int rows = 6;               // textarea
  std::string extra_name;     // one more attribute, e.g. "step" ...
  std::string extra_value;    // ... and its value "any"

  field_opts& input_type(std::string t) { type = std::move(t); return *this; }
  field_opts& mark_required(bool r = true) { required = r; return *this; }
  field_opts& placeholder_text(std::string p) { placeholder = std::move(p); return *this; }
  field_opts& show_error(std::string e) { error = std::move(e); return *this; }
  field_opts& hint(std::string h) { help = std::move(h); return *this; }
  field_opts& text_rows(int n) { rows = n; return *this; }
  field_opts& attribute(std::string name, std::string value) {
    extra_name = std::move(name);
    extra_value = std::move(value);
    return *this;
  }
};
html labeled_input(std::string_view id, std::string_view label, std::string_view name, std::string_view value,
                   const field_opts& o = {});
html labeled_textarea(std::string_view id, std::string_view label, std::string_view name, std::string_view value,
                      const field_opts& o = {});
struct option_item {
  std::string value;
  std::string label;
  std::string group;  // <optgroup label=...>; consecutive items with the same group share one
};
html labeled_select(std::string_view id, std::string_view label, std::string_view name,
                    const std::vector<option_item>& options, std::string_view selected, const field_opts& o = {});
html hidden_input(std::string_view name, std::string_view value);
html submit_button(std::string_view label);
// A POST form that is just one button (delete, log out), with hidden fields.
html post_button(std::string_view action, std::string_view label,
                 const std::vector<std::pair<std::string, std::string>>& hidden = {});
html error_summary(const std::vector<std::string>& errors);  // role=alert list; empty -> nothing
html notice(std::string_view message);                       // role=status; empty -> nothing

// The frame every page of a site shares.
struct nav_link {
  std::string label;
  std::string href;
};
struct page_chrome {
  std::string site_title;          // "Classifieds"
  std::string home_href;           // "/main/classifieds/"
  std::vector<nav_link> nav;       // main navigation
  std::string search_action;       // GET form target; "" = no search box
  std::string search_value;        // current query, shown in the box
  std::string search_placeholder;  // e.g. "e.g., a blue used car"
  std::string user_display;        // "" when logged out
  std::string login_href;          // shown when logged out
  std::string logout_action;       // POST target shown when logged in
  std::string footer;              // plain text
  std::string stylesheet_href;     // <link rel=stylesheet> in <head>; "" = none (not in the page's tree)
};
// A complete document: header (site link, nav, search, account), <main> with <h1>title
// and the content, footer.
std::string render_page(const page_chrome& chrome, std::string_view title, const html& main_content,
                        std::string_view notice_text = "");

// "$1,250.00" from cents; "Free" for 0.
std::string format_money(int64_t cents);

}  // namespace kvarena::sites
