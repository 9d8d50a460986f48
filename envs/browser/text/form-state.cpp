// form-state.cpp: control classification and the live values of one page's form controls.
#include "form-state.h"

#include <vector>

#include "dom-text.h"
#include "browser/common/str-util.h"

namespace kvarena {
namespace {

// Preorder element walk below n (inclusive), without recursion.
template <typename F>
void walk_elements(const GumboNode* n, F visit) {
  std::vector<const GumboNode*> stack{n};
  while (!stack.empty()) {
    const GumboNode* e = stack.back();
    stack.pop_back();
    if (!is_element(e) && e->type != GUMBO_NODE_DOCUMENT) continue;
    if (e != n || is_element(e)) visit(e);
    if (const GumboVector* kids = child_vector(e))
      for (unsigned i = kids->length; i-- > 0;) stack.push_back(static_cast<const GumboNode*>(kids->data[i]));
  }
}

bool is_control(const GumboNode* n) {
  return has_tag(n, GUMBO_TAG_INPUT) || has_tag(n, GUMBO_TAG_TEXTAREA) ||
         has_tag(n, GUMBO_TAG_SELECT) || has_tag(n, GUMBO_TAG_BUTTON);
}

}  // namespace

std::string input_type(const GumboNode* input) {
  static const char* known[] = {"text", "search", "email", "password", "tel", "url", "number",
                                "checkbox", "radio", "submit", "reset", "button", "image",
                                "hidden", "file", "date", "datetime-local", "month", "week",
                                "time", "range", "color"};
  std::string t = lower_trim(attr_or(input, "type", "text"));
  for (const char* k : known)
    if (t == k) return t;
  return "text";
}

bool is_text_field(const GumboNode* n) {
  if (has_tag(n, GUMBO_TAG_TEXTAREA)) return true;
  if (!has_tag(n, GUMBO_TAG_INPUT)) return false;
  std::string t = input_type(n);
  return t == "text" || t == "search" || t == "email" || t == "password" || t == "tel" ||
         t == "url" || t == "number" || t == "date" || t == "datetime-local" || t == "month" ||
         t == "week" || t == "time";
}

bool is_submit_button(const GumboNode* n) {
  if (has_tag(n, GUMBO_TAG_BUTTON)) {
    // A missing or invalid type means submit.
    return !attr_equals(n, "type", "button") && !attr_equals(n, "type", "reset");
  }
  if (has_tag(n, GUMBO_TAG_INPUT)) {
    std::string t = input_type(n);
    return t == "submit" || t == "image";
  }
  return false;
}

bool is_disabled(const GumboNode* n) {
  if (!is_element(n)) return false;
  if (has_attr(n, "disabled") && (is_control(n) || has_tag(n, GUMBO_TAG_OPTION) ||
                                  has_tag(n, GUMBO_TAG_OPTGROUP) || has_tag(n, GUMBO_TAG_FIELDSET)))
    return true;
  if (has_tag(n, GUMBO_TAG_OPTION)) {
    const GumboNode* g = parent_element(n);
    if (has_tag(g, GUMBO_TAG_OPTGROUP) && has_attr(g, "disabled")) return true;
  }
  const GumboNode* child = n;
  for (const GumboNode* p = parent_element(n); p; child = p, p = parent_element(p)) {
    if (!has_tag(p, GUMBO_TAG_FIELDSET) || !has_attr(p, "disabled")) continue;
    // Inside the fieldset's first <legend> is exempt.
    const GumboVector* kids = child_vector(p);
    const GumboNode* first_legend = nullptr;
    for (unsigned i = 0; kids && i < kids->length && !first_legend; ++i)
      if (has_tag(static_cast<const GumboNode*>(kids->data[i]), GUMBO_TAG_LEGEND))
        first_legend = static_cast<const GumboNode*>(kids->data[i]);
    if (child != first_legend) return true;
  }
  return false;
}

bool is_readonly(const GumboNode* n) { return is_text_field(n) && has_attr(n, "readonly"); }

const GumboNode* form_owner(const html_document& doc, const GumboNode* control) {
  if (const char* id = attr(control, "form"); id && is_control(control)) {
    const GumboNode* f = doc.element_by_id(id);
    return has_tag(f, GUMBO_TAG_FORM) ? f : nullptr;
  }
  return closest(control, GUMBO_TAG_FORM);
}

std::vector<const GumboNode*> select_options(const GumboNode* select) {
  std::vector<const GumboNode*> out;
  if (!select) return out;
  walk_elements(select, [&](const GumboNode* e) {
    if (has_tag(e, GUMBO_TAG_OPTION)) out.push_back(e);
  });
  return out;
}

const GumboNode* option_select(const GumboNode* option) {
  if (!has_tag(option, GUMBO_TAG_OPTION)) return nullptr;
  const GumboNode* p = parent_element(option);
  if (has_tag(p, GUMBO_TAG_OPTGROUP)) p = parent_element(p);
  return has_tag(p, GUMBO_TAG_SELECT) ? p : nullptr;
}

bool is_multi_select(const GumboNode* select) { return has_attr(select, "multiple"); }

std::string option_label(const GumboNode* option) {
  if (const char* l = attr(option, "label"); l && *l) return collapse_whitespace(l);
  return collapse_whitespace(text_content(option));
}

std::string option_value(const GumboNode* option) {
  if (const char* v = attr(option, "value")) return v;
  return collapse_whitespace(text_content(option));
}

std::string form_state::value(const GumboNode* control) const {
  if (auto it = values_.find(key(control)); it != values_.end()) return it->second;
  if (has_tag(control, GUMBO_TAG_TEXTAREA)) return text_content(control);
  if (has_tag(control, GUMBO_TAG_INPUT)) {
    std::string t = input_type(control);
    if (t == "checkbox" || t == "radio") return attr_or(control, "value", "on");
    return attr_or(control, "value");
  }
  return "";
}

void form_state::set_value(const GumboNode* control, std::string value) {
  values_[key(control)] = std::move(value);
}

bool form_state::checked(const GumboNode* input) const {
  if (auto it = checked_.find(key(input)); it != checked_.end()) return it->second;
  return has_attr(input, "checked");
}

void form_state::set_checked(const GumboNode* input, bool on) {
  if (on && input_type(input) == "radio") {
    std::string name = attr_or(input, "name");
    const GumboNode* form = form_owner(*doc_, input);
    if (!name.empty())
      walk_elements(form ? form : doc_->document(), [&](const GumboNode* e) {
        if (e != input && has_tag(e, GUMBO_TAG_INPUT) && input_type(e) == "radio" &&
            attr_or(e, "name") == name && form_owner(*doc_, e) == form)
          checked_[key(e)] = false;
      });
  }
  checked_[key(input)] = on;
}

bool form_state::default_selected(const GumboNode* option) const {
  const GumboNode* select = option_select(option);
  if (!select || is_multi_select(select)) return has_attr(option, "selected");
  // Single select: the last option marked selected, else the first enabled option.
  std::vector<const GumboNode*> options = select_options(select);
  const GumboNode* chosen = nullptr;
  for (const GumboNode* o : options)
    if (has_attr(o, "selected")) chosen = o;
  if (!chosen)
    for (const GumboNode* o : options)
      if (!is_disabled(o)) {
        chosen = o;
        break;
      }
  return chosen == option;
}

bool form_state::selected(const GumboNode* option) const {
  if (auto it = selected_.find(key(option)); it != selected_.end()) return it->second;
  return default_selected(option);
}

void form_state::choose_option(const GumboNode* option) {
  const GumboNode* select = option_select(option);
  if (select && is_multi_select(select)) {
    selected_[key(option)] = !selected(option);
    return;
  }
  for (const GumboNode* o : select_options(select)) selected_[key(o)] = false;
  selected_[key(option)] = true;
}

std::vector<const GumboNode*> form_state::selected_options(const GumboNode* select) const {
  std::vector<const GumboNode*> out;
  for (const GumboNode* o : select_options(select))
    if (selected(o)) out.push_back(o);
  return out;
}

void form_state::reset(const GumboNode* form) {
  walk_elements(doc_->document(), [&](const GumboNode* e) {
    bool owned = form_owner(*doc_, e) == form;
    if (has_tag(e, GUMBO_TAG_OPTION)) owned = form_owner(*doc_, option_select(e)) == form;
    if (!owned) return;
    values_.erase(key(e));
    checked_.erase(key(e));
    selected_.erase(key(e));
  });
}

}  // namespace kvarena
