// text-browser-actions.cpp: the page operations of the text browser (click, type, hover,
// press, scroll, clear) and what an [id] resolves to. Every refusal says what the id is and
// what the agent can do instead.
#include <algorithm>
#include <cstdlib>
#include <initializer_list>

#include "browser/common/ax-semantics.h"
#include "dom-text.h"
#include "form-submit.h"
#include "browser/common/str-util.h"
#include "text-browser-page.h"
#include "browser/common/url-util.h"

namespace kvarena {
namespace {

std::string bracket(int64_t id) {
  std::string s(1, '[');  // appends only: GCC 12 warns falsely on "[" + std::string
  return s.append(std::to_string(id)).append("]");
}

const ax_node* find_node(const ax_node& n, int64_t id) {
  if (n.id == id) return &n;
  for (const ax_node& c : n.children)
    if (const ax_node* f = find_node(c, id)) return f;
  return nullptr;
}

// The element a click lands on: the nearest link, control, option, label or summary.
bool is_clickable(const GumboNode* n) {
  if (!is_element(n)) return false;
  switch (n->v.element.tag) {
    case GUMBO_TAG_A: case GUMBO_TAG_AREA: return has_attr(n, "href");
    case GUMBO_TAG_INPUT: return input_type(n) != "hidden";
    case GUMBO_TAG_BUTTON: case GUMBO_TAG_SELECT: case GUMBO_TAG_TEXTAREA: case GUMBO_TAG_OPTION:
    case GUMBO_TAG_LABEL: case GUMBO_TAG_SUMMARY:
      return true;
    default:
      return false;
  }
}

// The control a <label> stands for: its for= target, else its first labelable descendant.
const GumboNode* labelled_control(const html_document& doc, const GumboNode* label) {
  if (const char* f = attr(label, "for"); f && *f) return doc.element_by_id(f);
  int start = doc.index_of(label);
  for (int i = start + 1; i < doc.node_count(); ++i) {
    const GumboNode* n = doc.node(i);
    const GumboNode* p = n;
    while (p && p != label) p = p->parent;
    if (!p) break;  // left the label's subtree
    if (has_tag(n, GUMBO_TAG_INPUT) || has_tag(n, GUMBO_TAG_SELECT) ||
        has_tag(n, GUMBO_TAG_TEXTAREA) || has_tag(n, GUMBO_TAG_BUTTON))
      return n;
  }
  return nullptr;
}

// The first `limit` code points of s.
std::string truncate_code_points(const std::string& s, size_t limit) {
  size_t n = 0;
  for (size_t i = 0; i < s.size(); ++i)
    if ((static_cast<unsigned char>(s[i]) & 0xC0) != 0x80 && n++ == limit) return s.substr(0, i);
  return s;
}

void erase_last_code_point(std::string* s) {
  while (!s->empty()) {
    bool lead = (static_cast<unsigned char>(s->back()) & 0xC0) != 0x80;
    s->pop_back();
    if (lead) break;
  }
}

}  // namespace

std::optional<text_browser::target> text_browser::resolve_target(int64_t id, std::string* error) const {
  const page& p = current_page();
  ax_node tree;
  ax_rendering r = render_page(p, viewport_lines(), &tree);
  const ax_node* n = find_node(tree, id);
  if (!n || !ax_node_is_printed(*n)) {
    *error = "no matching element: " + bracket(id) +
             " is not on the current page; ids are listed in the observation";
    return std::nullopt;
  }
  if (std::find(r.ids_in_view.begin(), r.ids_in_view.end(), id) == r.ids_in_view.end()) {
    bool above = false;
    for (const ax_line& l : ax_layout(tree))
      if (l.node == n) above = l.line < r.top_line;
    *error = "no matching element: " + bracket(id) +
             " is on this page but not in the current viewport; scroll " +
             (above ? "up" : "down") + " to bring it into view, or use an id from the observation";
    return std::nullopt;
  }
  return target{n->dom, n->role, n->name, n->is_value_text};
}

browser_result text_browser::submit(const GumboNode* form, const GumboNode* submitter) {
  if (!form)
    return {"", "the button is not inside a form and the text browser runs no JavaScript; nothing happened"};
  page& p = current_page();
  std::string err;
  std::optional<http_request> req = build_form_submission(*p.doc, *p.state, form, submitter, p.url, &err);
  if (!req) return {"", err};
  std::string target_attr = submitter && has_attr(submitter, "formtarget")
                                ? attr_or(submitter, "formtarget") : attr_or(form, "target");
  return navigate(*req, lower_trim(target_attr) == "_blank");
}

browser_result text_browser::press_enter_in(const GumboNode* field) {
  page& p = current_page();
  int64_t id = ax_id(*p.doc, field);
  if (has_tag(field, GUMBO_TAG_TEXTAREA)) {  // Enter types a newline there
    p.state->set_value(field, p.state->value(field) + "\n");
    return {};
  }
  const GumboNode* form = form_owner(*p.doc, field);
  if (!form) return {"", "pressed Enter in " + bracket(id) + ": it is not in a form, so nothing was submitted"};
  const GumboNode* button = default_button(*p.doc, form);
  if (button && is_disabled(button))
    return {"", "pressed Enter in " + bracket(id) + ": the form's submit button is disabled; nothing was submitted"};
  return submit(form, button);
}

browser_result text_browser::activate(const GumboNode* element, int64_t id, bool from_label) {
  page& p = current_page();
  const GumboNode* n = is_element(element) ? element : element ? element->parent : nullptr;
  while (n && is_element(n) && !is_clickable(n)) n = n->parent;
  if (!is_element(n))
    return {"", "clicked " + bracket(id) + ": it is not a link, button or form control, so nothing happened"};

  switch (n->v.element.tag) {
    case GUMBO_TAG_A:
    case GUMBO_TAG_AREA: {
      std::string href = attr_or(n, "href");
      std::optional<std::string> url = resolve_url(p.doc->base_url(p.url), href);
      if (!url) return {"cannot follow the link " + bracket(id) + ": its href '" + href + "' is not a valid URL", ""};
      std::string scheme = url_scheme(*url);
      if (scheme == "javascript")
        return {"", "the link " + bracket(id) + " runs JavaScript, which the text browser does not execute; nothing happened"};
      if (scheme == "mailto" || scheme == "tel")
        return {"", "the link " + bracket(id) + " opens a " + scheme + ": address, which a browser hands to another program; nothing happened"};
      return load_url(*url, attr_equals(n, "target", "_blank"));
    }
    case GUMBO_TAG_LABEL: {
      const GumboNode* control = labelled_control(*p.doc, n);
      if (control && !from_label) return activate(control, id, true);
      return {"", "clicked the label " + bracket(id) + ": it labels no control, so nothing happened"};
    }
    case GUMBO_TAG_SUMMARY:
      return {"", "the details under " + bracket(id) + " are always shown in full by the text browser"};
    case GUMBO_TAG_OPTION: {
      const GumboNode* select = option_select(n);
      if (is_disabled(n) || is_disabled(select))
        return {"cannot select the option " + bracket(id) + ": it is disabled", ""};
      p.state->choose_option(n);
      p.focused = select;
      p.select_all = false;
      return {};
    }
    default:
      break;
  }

  // A form control.
  if (is_disabled(n)) return {"cannot click " + bracket(id) + ": it is disabled", ""};
  p.focused = n;
  p.select_all = false;
  const GumboNode* form = form_owner(*p.doc, n);
  if (has_tag(n, GUMBO_TAG_SELECT))
    return {"", "the options of " + bracket(id) +
                    " are listed under it: click one, or type its text into " + bracket(id)};
  if (has_tag(n, GUMBO_TAG_TEXTAREA) || is_text_field(n)) return {};
  std::string type = has_tag(n, GUMBO_TAG_INPUT) ? input_type(n)
                     : lower_trim(attr_or(n, "type", "submit"));
  if (type == "checkbox") {
    p.state->set_checked(n, !p.state->checked(n));
    return {};
  }
  if (type == "radio") {
    p.state->set_checked(n, true);
    return {};
  }
  if (type == "file") return {"", "file uploads are not supported by the text browser; nothing happened"};
  if (type == "reset") {
    if (form) p.state->reset(form);
    return {"", "reset the form's fields to their defaults"};
  }
  if (is_submit_button(n)) return submit(form, n);
  return {"", "the button " + bracket(id) + " does nothing without JavaScript (the text browser runs none)"};
}

browser_result text_browser::click(int64_t id) {
  std::string err;
  std::optional<target> t = resolve_target(id, &err);
  if (!t) return {err, ""};
  return activate(t->dom, id);
}

browser_result text_browser::hover(int64_t id) {
  std::string err;
  if (!resolve_target(id, &err)) return {err, ""};
  return {};
}

browser_result text_browser::type(int64_t id, const std::string& text, bool press_enter) {
  std::string err;
  std::optional<target> t = resolve_target(id, &err);
  if (!t) return {err, ""};
  page& p = current_page();
  const GumboNode* el = t->dom;
  if (has_tag(el, GUMBO_TAG_SELECT)) {
    if (is_disabled(el)) return {"cannot type into " + bracket(id) + ": the " + t->role + " is disabled", ""};
    // Pick the option whose label (or value) equals, starts with, or contains the text.
    std::string want = lower_trim(text);
    std::vector<const GumboNode*> options;
    for (const GumboNode* o : select_options(el))
      if (!is_disabled(o)) options.push_back(o);
    const GumboNode* chosen = nullptr;
    for (int pass = 0; pass < 3 && !chosen && !want.empty(); ++pass)
      for (const GumboNode* o : options) {
        std::string label = lower_trim(option_label(o));
        bool hit = pass == 0 ? label == want || lower_trim(option_value(o)) == want
                 : pass == 1 ? label.rfind(want, 0) == 0
                             : label.find(want) != std::string::npos;
        if (hit) {
          chosen = o;
          break;
        }
      }
    if (!chosen) {
      std::string list;
      for (size_t i = 0; i < options.size() && i < 20; ++i)
        list += (i ? ", " : "") + py_repr(option_label(options[i]));
      if (options.size() > 20) list += ", ...";
      return {"cannot select '" + text + "' in " + bracket(id) + ": no option matches; its options are " +
                  (list.empty() ? "none" : list),
              ""};
    }
    if (!p.state->selected(chosen) || !is_multi_select(el)) p.state->choose_option(chosen);
    p.focused = el;
    p.select_all = false;
    return {};
  }
  if (!is_text_field(el) && (is_text_role(t->role) || t->role == "combobox"))
    return {"cannot type into " + bracket(id) + ": this " + t->role +
                " is not a form field but a widget that needs JavaScript, which the text browser does not run",
            ""};
  if (!is_text_field(el))
    return {"cannot type into " + bracket(id) + ": it is " + role_phrase(t->role) +
                ", not a textbox; type into a textbox, searchbox or combobox from the observation",
            ""};
  if (is_disabled(el)) return {"cannot type into " + bracket(id) + ": the " + t->role + " is disabled", ""};
  if (is_readonly(el)) return {"cannot type into " + bracket(id) + ": the " + t->role + " is read-only", ""};
  std::string value = p.select_all && p.focused == el ? "" : p.state->value(el);
  value += text;
  if (const char* max = attr(el, "maxlength")) {
    int limit = std::atoi(max);
    if (limit >= 0 && utf8_length(value) > static_cast<size_t>(limit)) value = truncate_code_points(value, limit);
  }
  p.state->set_value(el, value);
  p.focused = el;
  p.select_all = false;
  if (press_enter) return press_enter_in(el);
  return {};
}

browser_result text_browser::clear(int64_t id) {
  std::string err;
  std::optional<target> t = resolve_target(id, &err);
  if (!t) return {err, ""};
  const GumboNode* el = t->dom;
  if (has_tag(el, GUMBO_TAG_SELECT))
    return {"cannot clear " + bracket(id) + ": it is " + role_phrase(t->role) + "; click one of its options instead", ""};
  if (!is_text_field(el))
    return {"cannot clear " + bracket(id) + ": it is " + role_phrase(t->role) + ", not a textbox", ""};
  if (is_disabled(el) || is_readonly(el))
    return {"cannot clear " + bracket(id) + ": the " + t->role + " is " + (is_disabled(el) ? "disabled" : "read-only"), ""};
  page& p = current_page();
  p.state->set_value(el, "");
  p.focused = el;
  p.select_all = false;
  return {};
}

browser_result text_browser::press(const std::string& key_combination) {
  std::string combo = lower_trim(key_combination);
  if (combo.empty()) return {"press needs a key, e.g. press [Enter] or press [Control+a]", ""};
  std::vector<std::string> keys = key_combination_parts(combo);  // "control+a" -> control, a
  std::string key = keys.back();
  auto has_mod = [&](std::initializer_list<const char*> names) {
    for (size_t i = 0; i + 1 < keys.size(); ++i)
      for (const char* m : names)
        if (keys[i] == m) return true;
    return false;
  };
  page& p = current_page();
  const GumboNode* f = p.focused;
  bool text_focus = f && is_text_field(f) && !is_disabled(f) && !is_readonly(f);
  std::string focus_id = f ? bracket(ax_id(*p.doc, f)) : "";

  bool choice_focus = has_tag(f, GUMBO_TAG_INPUT) &&
                      (input_type(f) == "checkbox" || input_type(f) == "radio");
  if (key == "enter" && keys.size() == 1) {
    if (f && (is_text_field(f) || choice_focus)) return press_enter_in(f);  // implicit submission
    if (has_tag(f, GUMBO_TAG_SELECT))
      return {"", "pressed Enter on " + focus_id + ": Enter does not submit a form from a " +
                      "combobox; click the form's submit button"};
    if (f) return activate(f, ax_id(*p.doc, f));  // a button or a link
    return {"", "pressed Enter: no form field has focus (click or type into one first); nothing happened"};
  }
  if ((key == "space" || key == " ") && keys.size() == 1 && f && !is_text_field(f) &&
      !has_tag(f, GUMBO_TAG_SELECT))
    return activate(f, ax_id(*p.doc, f));  // toggles a checkbox, presses a button
  if (key == "a" && has_mod({"control", "ctrl", "meta", "cmd", "command"})) {
    if (!text_focus) return {"", "pressed " + key_combination + ": no text field has focus; nothing was selected"};
    p.select_all = true;
    return {"", "selected all text in " + focus_id + "; the next type replaces it"};
  }
  if ((key == "backspace" || key == "delete") && keys.size() == 1) {
    if (!text_focus) return {"", "pressed " + key_combination + ": no text field has focus; nothing happened"};
    std::string v = p.select_all ? "" : p.state->value(f);
    if (!p.select_all && key == "backspace") erase_last_code_point(&v);
    p.state->set_value(f, v);
    p.select_all = false;
    return {};
  }
  if (keys.size() == 1 && (key == "pagedown" || key == "pageup"))
    return scroll(key == "pagedown" ? "down" : "up");
  if (has_mod({"alt"}) && (key == "arrowleft" || key == "arrowright"))
    return key == "arrowleft" ? go_back() : go_forward();
  return {"", "pressed " + key_combination + ": it has no effect in the text browser"};
}

browser_result text_browser::scroll(const std::string& direction) {
  std::string d = lower_trim(direction);
  if (d != "up" && d != "down")
    return {"cannot scroll '" + direction + "': the direction is up or down, e.g. scroll [down]", ""};
  page& p = current_page();
  int total = render_page(p, viewport_lines()).total_lines;
  int step = viewport_lines();
  int max_top = std::max(0, total - step);
  int top = d == "down" ? std::min(p.top_line + step, max_top) : std::max(0, p.top_line - step);
  if (top == p.top_line)
    return {"", d == "down" ? "already at the bottom of the page" : "already at the top of the page"};
  p.top_line = top;
  return {};
}

}  // namespace kvarena
