// ax-tree.cpp: the DOM walk that builds ax_nodes, and their properties.
#include "ax-tree.h"

#include <cstdlib>

#include "ax-semantics.h"
#include "browser/text/dom-text.h"
#include "str-util.h"

namespace kvarena {
namespace {

const char* py_bool(bool b) { return b ? "True" : "False"; }

int heading_level(const GumboNode* n) {
  if (const char* l = attr(n, "aria-level")) {
    int v = std::atoi(l);
    if (v > 0) return v;
  }
  switch (n->v.element.tag) {
    case GUMBO_TAG_H1: return 1;
    case GUMBO_TAG_H2: return 2;
    case GUMBO_TAG_H3: return 3;
    case GUMBO_TAG_H4: return 4;
    case GUMBO_TAG_H5: return 5;
    case GUMBO_TAG_H6: return 6;
    default: return 2;  // role=heading without aria-level
  }
}

ax_node make_node(int id, std::string role, std::string name, const GumboNode* dom,
                  bool value_text = false) {
  ax_node n;
  n.id = id;
  n.role = std::move(role);
  n.name = std::move(name);
  n.dom = dom;
  n.is_value_text = value_text;
  return n;
}

class ax_builder {
 public:
  ax_builder(const html_document& doc, const form_state& state, const GumboNode* focused)
      : doc_(doc), state_(state), focused_(focused), namer_(doc, state) {}

  ax_node root() {
    ax_node r;
    r.id = ax_id(doc_, doc_.document());
    r.role = "RootWebArea";
    r.name = ax_collapse(doc_.title());
    r.dom = doc_.document();
    if (!focused_) r.props.push_back({"focused", "True"});
    add_children(doc_.document(), &r, 0);
    return r;
  }

 private:
  void add_children(const GumboNode* n, ax_node* parent, int depth) {
    if (const GumboVector* kids = child_vector(n))
      for (unsigned i = 0; i < kids->length; ++i)
        add(static_cast<const GumboNode*>(kids->data[i]), parent, depth);
  }

  void add(const GumboNode* n, ax_node* parent, int depth) {
    if (depth > kMaxAxDepth) return;
    if (is_text(n)) {
      std::string text = in_preformatted(n) ? std::string(n->v.text.text) : ax_collapse(n->v.text.text);
      if (text.find_first_not_of(" \t\r\n\f") == std::string::npos) return;
      parent->children.push_back(make_node(ax_id(doc_, n), "StaticText", text, n));
      return;
    }
    if (!is_element(n) || is_ax_hidden(n)) return;
    std::string role = ax_role(n);
    if (role.empty()) return;
    ax_node node = make_node(ax_id(doc_, n), role, namer_.name(n, role), n);
    add_properties(n, &node);
    if (has_tag(n, GUMBO_TAG_SELECT)) {
      add_options(n, &node);
    } else if (is_text_field(n)) {
      std::string value = namer_.shown_value(n);
      if (!value.empty())
        node.children.push_back(make_node(ax_value_text_id(doc_, n), "StaticText", value, n, true));
    } else if (!has_tag(n, GUMBO_TAG_INPUT) && !has_tag(n, GUMBO_TAG_IMG)) {
      add_children(n, &node, depth + 1);
    }
    parent->children.push_back(std::move(node));
  }

  void add_options(const GumboNode* select, ax_node* parent) {
    const GumboVector* kids = child_vector(select);
    for (unsigned i = 0; kids && i < kids->length; ++i) {
      auto* k = static_cast<const GumboNode*>(kids->data[i]);
      if (is_ax_hidden(k)) continue;
      if (has_tag(k, GUMBO_TAG_OPTION)) {
        ax_node o = make_node(ax_id(doc_, k), "option", option_label(k), k);
        if (is_disabled(k)) o.props.push_back({"disabled", "True"});
        o.props.push_back({"selected", py_bool(state_.selected(k))});
        parent->children.push_back(std::move(o));
      } else if (has_tag(k, GUMBO_TAG_OPTGROUP)) {
        ax_node g = make_node(ax_id(doc_, k), "group", namer_.name(k, "group"), k);
        add_options(k, &g);
        parent->children.push_back(std::move(g));
      }
    }
  }

  // In the order Chromium lists them (states, then widget attributes, then widget states).
  void add_properties(const GumboNode* n, ax_node* node) {
    const std::string& role = node->role;
    auto add = [&](const char* name, std::string value) { node->props.push_back({name, std::move(value)}); };
    bool native_select = has_tag(n, GUMBO_TAG_SELECT);
    bool native_choice = has_tag(n, GUMBO_TAG_INPUT) &&
                         (input_type(n) == "checkbox" || input_type(n) == "radio");
    if (is_disabled(n) || attr_equals(n, "aria-disabled", "true")) add("disabled", "True");
    if (n == focused_) add("focused", "True");
    if (role == "combobox" && native_select) {
      add("hasPopup", "menu");
    } else if (const char* popup = attr(n, "aria-haspopup")) {
      std::string v = lower_trim(popup);
      if (v != "false" && !v.empty()) add("hasPopup", v == "true" ? "menu" : v);
    }
    if (role == "heading") add("level", std::to_string(heading_level(n)));
    if (role == "listbox" && is_multi_select(n)) add("multiselectable", "True");
    bool required = has_attr(n, "required") || attr_equals(n, "aria-required", "true");
    if (is_text_role(role) && is_text_field(n)) add("required", py_bool(required));
    else if (required && (native_select || native_choice)) add("required", "True");
    if (native_choice) {
      add("checked", state_.checked(n) ? "true" : "false");
    } else if (const char* c = attr(n, "aria-checked")) {
      add("checked", lower_trim(c));
    }
    if (role == "combobox" && native_select) {
      add("expanded", "False");
    } else if (const char* e = attr(n, "aria-expanded")) {
      std::string v = lower_trim(e);
      if (v == "true" || v == "false") add("expanded", py_bool(v == "true"));
    }
    if (const char* p = attr(n, "aria-pressed")) add("pressed", lower_trim(p));
    if (const char* s = attr(n, "aria-selected")) add("selected", py_bool(lower_trim(s) == "true"));
    if (role == "separator") add("orientation", "horizontal");
  }

  const html_document& doc_;
  const form_state& state_;
  const GumboNode* focused_;
  ax_namer namer_;
};

}  // namespace

int ax_id(const html_document& doc, const GumboNode* n) { return doc.index_of(n) + 1; }

int ax_value_text_id(const html_document& doc, const GumboNode* field) {
  return doc.node_count() + 1 + doc.index_of(field);
}

ax_node build_ax_tree(const html_document& doc, const form_state& state, const GumboNode* focused) {
  return ax_builder(doc, state, focused).root();
}

}  // namespace kvarena
