// chromium-browser-page.h: the private state of chromium_browser shared by its source files
// (chromium-browser.cpp: tabs, navigation, observation, evaluators; chromium-browser-
// actions.cpp: the page operations; chromium-browser-som.cpp: screenshot and Set-of-Marks;
// chromium-ax.cpp: DevTools AX tree -> ax_node), and the
// small helpers they share. Not for use outside the chromium backend.
#pragma once
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include <nlohmann/json.hpp>

#include "browser/common/ax-print.h"
#include "browser/common/ax-tree.h"
#include "cdp-connection.h"
#include "chromium-browser.h"

namespace kvarena {

// A layout box in CSS pixels, document coordinates.
struct layout_box {
  double x = 0, y = 0, width = 0, height = 0;
  std::string tag;  // the DOM node's name: "A", "BUTTON", "INPUT", "#text"
};

// What an [id] of the observation stands for.
struct chromium_node {
  int64_t backend_id = 0;  // Blink's backend DOM node id (the [id] itself)
  std::string role, name;
  bool in_view = false;
  bool above_view = false;  // not in view and above the window (else below)
};

// The current page as the last observation saw it.
struct chromium_browser::snapshot {
  bool valid = false;
  ax_node tree;
  std::string text;  // the printed window
  std::map<int64_t, chromium_node> nodes;  // printed nodes by id
  std::vector<int64_t> ids_in_view;        // in print order
  std::unordered_map<int64_t, layout_box> boxes;  // by backend id
  double scroll_y = 0;
};

struct chromium_browser::tab {
  std::string target_id;   // also the id of its main frame
  std::string session_id;  // flattened DevTools session of the target
  snapshot snap;
};

// Accessibility.getFullAXTree's "nodes" as an ax_node tree: ignored and InlineTextBox
// nodes left out (their children move up), properties printed as VWA prints CDP values
// (booleans True/False), ids = backend DOM node ids (nodes without one get 1e9 + AX id).
ax_node ax_tree_from_cdp(const nlohmann::json& nodes);

// DOMSnapshot.captureSnapshot's layout boxes (with the node's name) by backend node id,
// and the document's vertical scroll offset.
std::unordered_map<int64_t, layout_box> layout_boxes_from_cdp(const nlohmann::json& snapshot, double* scroll_y);

// Prints `tree` through the window [top, top + height) of the page: a node is in view when
// its box meets the window; a node without a box follows its parent (options of a closed
// <select>, the document); ancestors of visible nodes stay printed (ax-print.h).
ax_rendering render_in_viewport(const ax_node& tree, const std::unordered_map<int64_t, layout_box>& boxes,
                                double top, double height, std::map<int64_t, chromium_node>* nodes);

// A JavaScript string literal of `s` (JSON quoting is valid JavaScript).
inline std::string js_string(const std::string& s) {
  return nlohmann::json(s).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace kvarena
