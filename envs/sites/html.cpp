// html.cpp: element builders, form controls and the page frame (see html.h).
#include "html.h"

#include <cstdio>

namespace kvarena::sites {

html text(std::string_view s) { return html::raw(escape_html(s)); }

namespace {
std::string open_tag(std::string_view tag, std::initializer_list<attr> attrs) {
  std::string s = "<";
  s += tag;
  for (const auto& a : attrs) {
    if (a.name.empty()) continue;
    s += " ";
    s += a.name;
    s += "=\"" + escape_html(a.value) + "\"";
  }
  return s + ">";
}
}  // namespace

html element(std::string_view tag, std::initializer_list<attr> attrs, const html& children) {
  return html::raw(open_tag(tag, attrs) + children.str() + "</" + std::string(tag) + ">");
}

html element(std::string_view tag, const html& children) { return element(tag, {}, children); }

html void_element(std::string_view tag, std::initializer_list<attr> attrs) { return html::raw(open_tag(tag, attrs)); }

html link(std::string_view href, std::string_view label) { return element("a", {{"href", std::string(href)}}, text(label)); }

html join(const std::vector<html>& parts) {
  html out;
  for (const auto& p : parts) out += p;
  return out;
}

html list(const std::vector<html>& items, std::string_view tag, std::string_view cls) {
  html inner;
  for (const auto& item : items) inner += element("li", item);
  return element(tag, {{cls.empty() ? "" : "class", std::string(cls)}}, inner);
}

namespace {
// Label, control, then the help and error lines the control points to.
html field_frame(std::string_view id, std::string_view label, const field_opts& o, const html& control) {
  html out = element("label", {{"for", std::string(id)}}, text(label) + (o.required ? text(" (required)") : html()));
  out += control;
  if (!o.help.empty()) out += element("small", {{"id", std::string(id) + "-help"}}, text(o.help));
  if (!o.error.empty()) out += element("p", {{"id", std::string(id) + "-error"}, {"class", "field-error"}}, text(o.error));
  return element("div", {{"class", "field"}}, out);
}

std::string described_by(std::string_view id, const field_opts& o) {
  std::string s;
  if (!o.help.empty()) s += std::string(id) + "-help";
  if (!o.error.empty()) {
    if (!s.empty()) s += ' ';
    s += std::string(id) + "-error";
  }
  return s;
}
}  // namespace

html labeled_input(std::string_view id, std::string_view label, std::string_view name, std::string_view value,
                   const field_opts& o) {
  std::string desc = described_by(id, o);
  html control = void_element(
      "input", {{"type", o.type},
                {"id", std::string(id)},
                {"name", std::string(name)},
                {"value", std::string(value)},
                {o.placeholder.empty() ? "" : "placeholder", o.placeholder},
                {o.required ? "required" : "", "required"},
                {o.extra_name, o.extra_value},
                {desc.empty() ? "" : "aria-describedby", desc},
                {o.error.empty() ? "" : "aria-invalid", "true"}});
  return field_frame(id, label, o, control);
}

html labeled_textarea(std::string_view id, std::string_view label, std::string_view name, std::string_view value,
                      const field_opts& o) {
  std::string desc = described_by(id, o);
  html control = element("textarea",
                         {{"id", std::string(id)},
                          {"name", std::string(name)},
                          {"rows", std::to_string(o.rows)},
                          {o.placeholder.empty() ? "" : "placeholder", o.placeholder},
                          {o.required ? "required" : "", "required"},
                          {desc.empty() ? "" : "aria-describedby", desc},
                          {o.error.empty() ? "" : "aria-invalid", "true"}},
                         text(value));
  return field_frame(id, label, o, control);
}

html labeled_select(std::string_view id, std::string_view label, std::string_view name,
                    const std::vector<option_item>& options, std::string_view selected, const field_opts& o) {
  html inner;
  html group_inner;
  std::string group;
  auto flush = [&] {
    if (!group.empty()) inner += element("optgroup", {{"label", group}}, group_inner);
    else inner += group_inner;
    group_inner = html();
  };
  for (const auto& opt : options) {
    if (opt.group != group) {
      flush();
      group = opt.group;
    }
    group_inner += element("option", {{"value", opt.value}, {opt.value == selected ? "selected" : "", "selected"}},
                           text(opt.label));
  }
  flush();
  std::string desc = described_by(id, o);
  html control = element("select",
                         {{"id", std::string(id)},
                          {"name", std::string(name)},
                          {o.required ? "required" : "", "required"},
                          {desc.empty() ? "" : "aria-describedby", desc},
                          {o.error.empty() ? "" : "aria-invalid", "true"}},
                         inner);
  return field_frame(id, label, o, control);
}

html hidden_input(std::string_view name, std::string_view value) {
  return void_element("input", {{"type", "hidden"}, {"name", std::string(name)}, {"value", std::string(value)}});
}

html submit_button(std::string_view label) { return element("button", {{"type", "submit"}}, text(label)); }

html post_button(std::string_view action, std::string_view label,
                 const std::vector<std::pair<std::string, std::string>>& hidden) {
  html inner;
  for (const auto& [n, v] : hidden) inner += hidden_input(n, v);
  inner += submit_button(label);
  return element("form", {{"method", "post"}, {"action", std::string(action)}, {"class", "inline"}}, inner);
}

html error_summary(const std::vector<std::string>& errors) {
  if (errors.empty()) return {};
  std::vector<html> items;
  for (const auto& e : errors) items.push_back(text(e));
  return element("div", {{"role", "alert"}, {"class", "errors"}},
                 element("p", text(errors.size() == 1 ? "Please fix this problem:" : "Please fix these problems:")) +
                     list(items));
}

html notice(std::string_view message) {
  if (message.empty()) return {};
  return element("p", {{"role", "status"}, {"class", "notice"}}, text(message));
}

std::string render_page(const page_chrome& c, std::string_view title, const html& main_content,
                        std::string_view notice_text) {
  html header = element("p", {{"class", "site-title"}}, link(c.home_href, c.site_title));
  if (!c.nav.empty()) {
    std::vector<html> items;
    for (const auto& n : c.nav) items.push_back(link(n.href, n.label));
    header += element("nav", {{"aria-label", "Main"}}, list(items));
  }
  if (!c.search_action.empty()) {
    header += element(
        "form", {{"role", "search"}, {"method", "get"}, {"action", c.search_action}},
        element("label", {{"for", "site-search"}}, text("Search")) +
            void_element("input", {{"type", "search"},
                                   {"id", "site-search"},
                                   {"name", "q"},
                                   {"value", c.search_value},
                                   {c.search_placeholder.empty() ? "" : "placeholder", c.search_placeholder}}) +
            submit_button("Search"));
  }
  html account;
  if (!c.user_display.empty())
    account = element("span", text("Signed in as " + c.user_display)) + text(" ") + post_button(c.logout_action, "Log out");
  else if (!c.login_href.empty())
    account = link(c.login_href, "Log in");
  header += element("div", {{"class", "account"}}, account);

  html body = element("header", header) +
              element("main", element("h1", text(title)) + notice(notice_text) + main_content) +
              element("footer", element("p", text(c.footer)));
  return "<!DOCTYPE html>\n<html lang=\"en\">\n<head><meta charset=\"utf-8\"><title>" +
         escape_html(std::string(title) + " | " + c.site_title) + "</title></head>\n<body>\n" + body.str() +
         // The stylesheet link takes the place of the one whitespace node the newlines after
         // the content made (so no newline follows it): the text browser numbers nodes in DOM
         // preorder and a field's value text after the last node, so one node more anywhere
         // would change ids an agent has learnt to read.
         (c.stylesheet_href.empty() ? std::string("\n")
                                    : "<link rel=\"stylesheet\" href=\"" + escape_html(c.stylesheet_href) + "\">") +
         (c.stylesheet_href.empty() ? "</body>\n</html>\n" : "</body></html>");
}

std::string format_money(int64_t cents) {
  if (cents == 0) return "Free";
  bool neg = cents < 0;
  uint64_t v = neg ? uint64_t(-cents) : uint64_t(cents);
  std::string whole = std::to_string(v / 100);
  std::string grouped;
  for (size_t i = 0; i < whole.size(); ++i) {
    if (i > 0 && (whole.size() - i) % 3 == 0) grouped += ',';
    grouped += whole[i];
  }
  char frac[4];
  std::snprintf(frac, sizeof frac, "%02u", unsigned(v % 100));
  return std::string(neg ? "-$" : "$") + grouped + "." + frac;
}

}  // namespace kvarena::sites
