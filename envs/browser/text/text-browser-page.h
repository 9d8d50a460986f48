// text-browser-page.h: the private state of text_browser shared by its two source files
// (text-browser.cpp: tabs, navigation, observation; text-browser-actions.cpp: the page
// operations). Not for use outside the text backend.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "browser/common/ax-print.h"
#include "browser/common/ax-tree.h"
#include "form-state.h"
#include "html-document.h"
#include "text-browser.h"

namespace kvarena {

// One loaded page: the document, what the agent changed in it, and where it looks.
struct text_browser::page {
  std::string url;
  long status = 200;
  std::unique_ptr<html_document> doc;
  std::unique_ptr<form_state> state;  // points into *doc
  const GumboNode* focused = nullptr;  // nullptr: the document has focus
  bool select_all = false;             // Control+a in the focused field: next type replaces
  int top_line = 0;                    // the viewport's first tree line
  size_t bytes = 0;                    // what it counts against max_session_bytes (its HTML)
};

struct text_browser::tab {
  std::vector<std::unique_ptr<page>> history;  // (history) oldest first
  int index = 0;                               // the page shown
};

// What an [id] of the observation stands for.
struct text_browser::target {
  const GumboNode* dom = nullptr;  // element, or text node for a StaticText
  std::string role;
  std::string name;
  bool value_text = false;  // the StaticText showing a field's value (dom is the field)
};

// The current page's tree printed through its viewport.
inline ax_rendering render_page(const text_browser::page& p, int viewport_lines, ax_node* tree_out = nullptr) {
  ax_node tree = build_ax_tree(*p.doc, *p.state, p.focused);
  ax_rendering r = render_ax_tree(tree, p.top_line, viewport_lines);
  if (tree_out) *tree_out = std::move(tree);
  return r;
}

// "a link", "an img", "text (StaticText)": for messages about what an id is.
std::string role_phrase(const std::string& role);

}  // namespace kvarena
