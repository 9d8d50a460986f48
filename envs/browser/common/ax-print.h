// ax-print.h: an accessibility tree as the reference harness prints it (VWA
// processors.py): one node a line, indented by depth with tabs,
// `[<id>] <role> <repr(name)> <prop>: <value> ...`, with
//   - nameless structural nodes (generic, img, list, strong, paragraph, banner, navigation,
//     Section, LabelText, Legend, listitem; listitem even with properties) not printed,
//     their children printed one level up;
//   - properties focusable, editable, readonly, level, settable, multiline, invalid left out;
//   - a StaticText whose text appears in one of the 3 kept lines before it dropped.
//     (VWA also drops every StaticText whose text holds a quote, a regex accident; here
//     such lines are kept.)
//
// Viewport (an approximation: there is no layout): every printed node is one line of
// estimated height, and the viewport shows `height_lines` consecutive lines from
// `top_line`. As in VWA, a node is shown when its subtree's lines meet the window, so the
// ancestors of visible nodes (RootWebArea, main, a table) stay printed after a scroll.
// The caller maps pixels to lines (text-browser.h: 2048 px / 16 px a line = 128 lines).
#pragma once
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "ax-tree.h"

namespace kvarena {

// Python's repr() of a str: single quotes unless the text holds ' and no ", escapes.
std::string py_repr(std::string_view s);

// Whether a node gets a line of its own (VWA's rule for nameless structural nodes).
bool ax_node_is_printed(const ax_node& n);

// "[id] role 'name' prop: value ..." without indentation.
std::string ax_node_line(const ax_node& n);

// One printed node in page order: its line, the last line of its subtree, its depth.
struct ax_line {
  const ax_node* node;
  int depth;       // tabs
  int line;        // 0-based line index on the whole page
  int last_line;   // last line of its printed subtree (== line for a leaf)
};
std::vector<ax_line> ax_layout(const ax_node& root);

struct ax_rendering {
  std::string text;            // the printed window, lines joined by '\n'
  std::vector<int> ids_in_view;  // printed nodes in the window, including repeats dropped
  int total_lines = 0;         // printed lines on the whole page
  int top_line = 0;            // the window's first line
};
ax_rendering render_ax_tree(const ax_node& root, int top_line, int height_lines);

// The same printing with any notion of "in view" (the chromium backend uses real layout):
// a line is printed when `in_view` says so; the StaticText dedup applies as above.
// total_lines and top_line are left 0.
ax_rendering render_ax_lines(const ax_node& root, const std::function<bool(const ax_line&)>& in_view);

}  // namespace kvarena
