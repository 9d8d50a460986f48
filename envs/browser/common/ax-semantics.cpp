// ax-semantics.cpp: roles (explicit, then implicit per tag) and accessible names.
#include "ax-semantics.h"

#include <cctype>
#include <cstdlib>
#include <unordered_set>

#include "browser/text/dom-text.h"
#include "str-util.h"

namespace kvarena {
namespace {

// ARIA roles accepted in role= (the reference harness's list).
const std::unordered_set<std::string>& aria_roles() {
  static const std::unordered_set<std::string> roles = {
      "alert", "alertdialog", "application", "article", "banner", "blockquote", "button",
      "caption", "cell", "checkbox", "code", "columnheader", "combobox", "complementary",
      "contentinfo", "definition", "deletion", "dialog", "directory", "document", "emphasis",
      "feed", "figure", "form", "generic", "grid", "gridcell", "group", "heading", "img",
      "insertion", "link", "list", "listbox", "listitem", "log", "main", "marquee", "math",
      "meter", "menu", "menubar", "menuitem", "menuitemcheckbox", "menuitemradio",
      "navigation", "none", "note", "option", "paragraph", "presentation", "progressbar",
      "radio", "radiogroup", "region", "row", "rowgroup", "rowheader", "scrollbar", "search",
      "searchbox", "separator", "slider", "spinbutton", "status", "strong", "subscript",
      "superscript", "switch", "tab", "table", "tablist", "tabpanel", "term", "textbox",
      "time", "timer", "toolbar", "tooltip", "tree", "treegrid", "treeitem"};
  return roles;
}

bool is_native_control(const GumboNode* n) {
  return has_tag(n, GUMBO_TAG_INPUT) || has_tag(n, GUMBO_TAG_SELECT) ||
         has_tag(n, GUMBO_TAG_TEXTAREA) || has_tag(n, GUMBO_TAG_BUTTON);
}

// Has an author-given name (a landmark that needs one to be exposed).
bool has_author_name(const GumboNode* n) {
  return has_attr(n, "aria-label") || has_attr(n, "aria-labelledby") || has_attr(n, "title");
}

// <header>/<footer> are landmarks only outside sectioning content.
bool in_sectioning_content(const GumboNode* n) {
  for (const GumboNode* p = parent_element(n); p; p = parent_element(p)) {
    GumboTag t = p->v.element.tag;
    if (t == GUMBO_TAG_ARTICLE || t == GUMBO_TAG_ASIDE || t == GUMBO_TAG_MAIN ||
        t == GUMBO_TAG_NAV || t == GUMBO_TAG_SECTION)
      return true;
  }
  return false;
}

std::string explicit_role(const GumboNode* n) {
  std::string roles = ascii_lower(attr_or(n, "role"));
  size_t i = 0;
  while (i < roles.size()) {  // the first recognised token wins
    while (i < roles.size() && std::isspace(static_cast<unsigned char>(roles[i]))) ++i;
    size_t j = i;
    while (j < roles.size() && !std::isspace(static_cast<unsigned char>(roles[j]))) ++j;
    std::string token = roles.substr(i, j - i);
    if (aria_roles().count(token)) return token;
    i = j;
  }
  return "";
}

std::string input_role(const GumboNode* n) {
  std::string t = input_type(n);
  if (t == "checkbox" || t == "radio") return t;
  if (t == "submit" || t == "reset" || t == "button" || t == "image" || t == "file" || t == "color")
    return "button";
  if (t == "search") return "searchbox";
  if (t == "number") return "spinbutton";
  if (t == "range") return "slider";
  if (t == "hidden") return "";
  return "textbox";
}

std::string implicit_role(const GumboNode* n) {
  switch (n->v.element.tag) {
    case GUMBO_TAG_A: return has_attr(n, "href") ? "link" : "generic";
    case GUMBO_TAG_AREA: return has_attr(n, "href") ? "link" : "";
    case GUMBO_TAG_BUTTON: return "button";
    case GUMBO_TAG_INPUT: return input_role(n);
    case GUMBO_TAG_TEXTAREA: return "textbox";
    case GUMBO_TAG_SELECT: {
      bool list = is_multi_select(n) || std::atoi(attr_or(n, "size", "0").c_str()) > 1;
      return list ? "listbox" : "combobox";
    }
    case GUMBO_TAG_OPTION: return "option";
    case GUMBO_TAG_OPTGROUP: return "group";
    case GUMBO_TAG_IMG: {
      const char* alt = attr(n, "alt");
      return alt && !*alt && !has_attr(n, "title") ? "" : "img";  // alt="" is decorative
    }
    case GUMBO_TAG_H1: case GUMBO_TAG_H2: case GUMBO_TAG_H3:
    case GUMBO_TAG_H4: case GUMBO_TAG_H5: case GUMBO_TAG_H6: return "heading";
    case GUMBO_TAG_UL: case GUMBO_TAG_OL: case GUMBO_TAG_MENU: case GUMBO_TAG_DL: return "list";
    case GUMBO_TAG_LI: return "listitem";
    case GUMBO_TAG_TABLE: return "table";
    case GUMBO_TAG_TR: return "row";
    case GUMBO_TAG_TD: return "cell";
    case GUMBO_TAG_TH: return attr_equals(n, "scope", "row") ? "rowheader" : "columnheader";
    case GUMBO_TAG_CAPTION: return "generic";  // it names the table; its text stays
    case GUMBO_TAG_NAV: return "navigation";
    case GUMBO_TAG_MAIN: return "main";
    case GUMBO_TAG_ASIDE: return "complementary";
    case GUMBO_TAG_ARTICLE: return "article";
    case GUMBO_TAG_FORM: return has_author_name(n) ? "form" : "generic";
    case GUMBO_TAG_SECTION: return has_author_name(n) ? "region" : "Section";
    case GUMBO_TAG_HEADER: return in_sectioning_content(n) ? "generic" : "banner";
    case GUMBO_TAG_FOOTER: return in_sectioning_content(n) ? "generic" : "contentinfo";
    case GUMBO_TAG_P: return "paragraph";
    case GUMBO_TAG_BLOCKQUOTE: return "blockquote";
    case GUMBO_TAG_LABEL: return "LabelText";
    case GUMBO_TAG_LEGEND: return "Legend";
    case GUMBO_TAG_FIELDSET: case GUMBO_TAG_DETAILS: return "group";
    case GUMBO_TAG_SUMMARY: return "DisclosureTriangle";
    case GUMBO_TAG_STRONG: case GUMBO_TAG_B: return "strong";
    case GUMBO_TAG_TIME: return "time";
    case GUMBO_TAG_HR: return "separator";
    case GUMBO_TAG_IFRAME: case GUMBO_TAG_FRAME: case GUMBO_TAG_FRAMESET: case GUMBO_TAG_OBJECT:
    case GUMBO_TAG_EMBED: case GUMBO_TAG_CANVAS: case GUMBO_TAG_VIDEO: case GUMBO_TAG_AUDIO:
    case GUMBO_TAG_SVG: case GUMBO_TAG_MATH: case GUMBO_TAG_BR: case GUMBO_TAG_WBR:
    case GUMBO_TAG_DATALIST:
      return "";
    default:  // gumbo 0.10 has no GUMBO_TAG_DIALOG
      if (tag_name(n) == "dialog") return has_attr(n, "open") ? "dialog" : "";
      return "generic";
  }
}

}  // namespace

std::string ax_collapse(std::string_view s) {
  std::string t;
  t.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\xC2' && i + 1 < s.size() && s[i + 1] == '\xA0') {  // U+00A0
      t.push_back(' ');
      ++i;
    } else {
      t.push_back(s[i]);
    }
  }
  return collapse_whitespace(t);
}

bool is_ax_hidden(const GumboNode* n) {
  return is_not_rendered(n) || attr_equals(n, "aria-hidden", "true");
}

std::string ax_role(const GumboNode* n) {
  if (!is_element(n)) return "";
  std::string role = explicit_role(n);
  if (role == "none" || role == "presentation") {
    if (is_native_control(n)) return implicit_role(n);  // controls keep their semantics
    return implicit_role(n).empty() ? "" : "generic";
  }
  if (!role.empty()) return role;
  return implicit_role(n);
}

bool role_names_from_content(const std::string& role) {
  static const std::unordered_set<std::string> roles = {
      "button", "cell", "checkbox", "columnheader", "gridcell", "heading", "link", "menuitem",
      "menuitemcheckbox", "menuitemradio", "option", "radio", "row", "rowheader", "switch",
      "tab", "tooltip", "treeitem", "DisclosureTriangle"};
  return roles.count(role) > 0;
}

bool is_text_role(const std::string& role) {
  return role == "textbox" || role == "searchbox" || role == "spinbutton";
}

ax_namer::ax_namer(const html_document& doc, const form_state& state) : doc_(doc), state_(state) {
  for (int i = 0; i < doc.node_count(); ++i) {
    const GumboNode* n = doc.node(i);
    if (has_tag(n, GUMBO_TAG_LABEL))
      if (const char* f = attr(n, "for"); f && *f) labels_for_[f].push_back(n);
  }
}

std::string ax_namer::shown_value(const GumboNode* field) const {
  std::string v = state_.value(field);
  if (has_tag(field, GUMBO_TAG_INPUT) && input_type(field) == "password") {
    std::string dots;
    for (size_t i = utf8_length(v); i > 0; --i) dots += "\xE2\x80\xA2";  // U+2022
    return dots;
  }
  return v;
}

void ax_namer::append_content(const GumboNode* n, std::string* out, int depth,
                              const GumboNode* skip) const {
  if (depth > 256 || !n || n == skip) return;
  if (is_text(n)) {
    *out += n->v.text.text;
    return;
  }
  if (!is_element(n) || is_ax_hidden(n)) return;
  if (depth > 0) {  // a descendant's own label stands for its subtree
    if (const char* label = attr(n, "aria-label"); label && ax_collapse(label) != "") {
      *out += std::string(" ") + label + " ";
      return;
    }
  }
  switch (n->v.element.tag) {
    case GUMBO_TAG_IMG:
      *out += attr_or(n, "alt");
      return;
    case GUMBO_TAG_BR:
      *out += ' ';
      return;
    case GUMBO_TAG_TEXTAREA:
      *out += state_.value(n);
      return;
    case GUMBO_TAG_SELECT:
      for (const GumboNode* o : state_.selected_options(n)) {
        out->push_back(' ');
        out->append(option_label(o));
        out->push_back(' ');
      }
      return;
    case GUMBO_TAG_INPUT: {
      std::string t = input_type(n);
      if (is_text_field(n)) *out += shown_value(n);
      else if (t == "submit") *out += attr_or(n, "value", "Submit");
      else if (t == "reset") *out += attr_or(n, "value", "Reset");
      else if (t == "button") *out += attr_or(n, "value");
      return;
    }
    default:
      break;
  }
  bool block = is_block_element(n) || has_tag(n, GUMBO_TAG_TD) || has_tag(n, GUMBO_TAG_TH);
  if (block) *out += ' ';
  if (const GumboVector* kids = child_vector(n))
    for (unsigned i = 0; i < kids->length; ++i)
      append_content(static_cast<const GumboNode*>(kids->data[i]), out, depth + 1, skip);
  if (block) *out += ' ';
}

std::string ax_namer::content_text(const GumboNode* n) const {
  std::string out;
  append_content(n, &out, 0);
  return ax_collapse(out);
}

std::string ax_namer::label_text(const GumboNode* control) const {
  std::vector<const GumboNode*> labels;
  if (const char* id = attr(control, "id"); id && *id)
    if (auto it = labels_for_.find(id); it != labels_for_.end()) labels = it->second;
  if (const GumboNode* wrap = closest(control, GUMBO_TAG_LABEL); wrap && !has_attr(wrap, "for"))
    labels.push_back(wrap);
  std::string out;
  for (const GumboNode* label : labels) {
    // The control's own value does not name it: leave it out of a wrapping label's text.
    std::string text;
    append_content(label, &text, 0, control);
    std::string t = ax_collapse(text);
    if (!t.empty()) out += (out.empty() ? "" : " ") + t;
  }
  return out;
}

std::string ax_namer::name(const GumboNode* n, const std::string& role) const {
  if (const char* ids = attr(n, "aria-labelledby")) {
    std::string out, list = ids;
    size_t i = 0;
    while (i < list.size()) {
      size_t j = list.find_first_of(" \t\n\r\f", i);
      if (j == std::string::npos) j = list.size();
      if (j > i)
        if (const GumboNode* ref = doc_.element_by_id(list.substr(i, j - i))) {
          std::string t = has_attr(ref, "aria-label") ? ax_collapse(attr(ref, "aria-label"))
                                                      : content_text(ref);
          if (!t.empty()) out += (out.empty() ? "" : " ") + t;
        }
      i = j + 1;
    }
    if (!out.empty()) return out;
  }
  if (const char* label = attr(n, "aria-label")) {
    std::string t = ax_collapse(label);
    if (!t.empty()) return t;
  }
  std::string t;
  switch (n->v.element.tag) {
    case GUMBO_TAG_INPUT: {
      std::string type = input_type(n);
      if (type == "submit") return ax_collapse(attr_or(n, "value", "Submit"));
      if (type == "reset") return ax_collapse(attr_or(n, "value", "Reset"));
      if (type == "button") return ax_collapse(attr_or(n, "value"));
      if (type == "image") {
        t = ax_collapse(attr_or(n, "alt", attr_or(n, "value")));
        return t.empty() ? "Submit" : t;
      }
      t = label_text(n);
      if (t.empty() && is_text_field(n)) t = ax_collapse(attr_or(n, "placeholder"));
      if (t.empty() && type == "file") t = "Choose File";
      break;
    }
    case GUMBO_TAG_TEXTAREA:
      t = label_text(n);
      if (t.empty()) t = ax_collapse(attr_or(n, "placeholder"));
      break;
    case GUMBO_TAG_SELECT:
      t = label_text(n);
      break;
    case GUMBO_TAG_IMG:
    case GUMBO_TAG_AREA:
      t = ax_collapse(attr_or(n, "alt"));
      break;
    case GUMBO_TAG_OPTION:
      return option_label(n);
    case GUMBO_TAG_OPTGROUP:
      return ax_collapse(attr_or(n, "label"));
    case GUMBO_TAG_FIELDSET:
    case GUMBO_TAG_TABLE: {
      GumboTag want = has_tag(n, GUMBO_TAG_TABLE) ? GUMBO_TAG_CAPTION : GUMBO_TAG_LEGEND;
      const GumboVector* kids = child_vector(n);
      for (unsigned i = 0; kids && i < kids->length; ++i) {
        auto* k = static_cast<const GumboNode*>(kids->data[i]);
        if (has_tag(k, want)) {
          t = content_text(k);
          break;
        }
      }
      break;
    }
    default:
      break;
  }
  if (t.empty() && role_names_from_content(role)) t = content_text(n);
  if (t.empty()) t = ax_collapse(attr_or(n, "title"));
  return t;
}

}  // namespace kvarena
