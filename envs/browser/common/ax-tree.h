// ax-tree.h: the accessibility tree of one page, built from the parsed DOM, the live form
// state and the focused element: roles and names from ax-semantics.h, the properties the
// reference trees print (disabled, focused, hasPopup, level, multiselectable, required,
// checked, expanded, pressed, selected), text nodes as StaticText, a text field's value as
// a StaticText child, a <select>'s options as option children.
//
// Ids are stable for the life of a page: a node's id is its DOM preorder index + 1 (the
// document, i.e. RootWebArea, is [1]); the synthetic value text of a field is
// node_count + 1 + the field's index. Re-rendering (after a scroll, a type) gives the same
// ids. Elements nested deeper than kMaxAxDepth are left out (Blink caps DOM depth too).
#pragma once
#include <gumbo.h>

#include <string>
#include <vector>

#include "browser/text/form-state.h"
#include "browser/text/html-document.h"

namespace kvarena {

constexpr int kMaxAxDepth = 512;

struct ax_property {
  std::string name;
  std::string value;  // as printed: "True"/"False" for booleans, "true"/"false"/"mixed" for tristates
};

struct ax_node {
  int id = 0;
  std::string role;
  std::string name;
  std::vector<ax_property> props;
  const GumboNode* dom = nullptr;  // the element or text node; for a value text, its field
  bool is_value_text = false;      // the synthetic StaticText showing a field's value
  std::vector<ax_node> children;
};

// `focused` may be nullptr (the document has focus: RootWebArea says focused: True).
ax_node build_ax_tree(const html_document& doc, const form_state& state, const GumboNode* focused);

int ax_id(const html_document& doc, const GumboNode* n);
int ax_value_text_id(const html_document& doc, const GumboNode* field);

}  // namespace kvarena
