// chromium-ax.cpp: DevTools accessibility and layout data -> the printed observation of the
// chromium backend (see chromium-browser-page.h).
#include <cstdlib>
#include <functional>
#include <optional>

#include "browser/common/ax-semantics.h"
#include "chromium-browser-page.h"

namespace kvarena {
namespace {

using json = nlohmann::json;

constexpr int64_t k_no_backend_id_base = 1000000000;

// A CDP AXValue as VWA prints it (Python's str() of the JSON value); nullopt when it has no
// "value" (idrefs, node lists), which VWA skips.
std::optional<std::string> printed_value(const json& v) {
  auto it = v.find("value");
  if (it == v.end()) return std::nullopt;
  if (it->is_boolean()) return it->get<bool>() ? "True" : "False";
  if (it->is_string()) return it->get<std::string>();
  if (it->is_number_integer()) return std::to_string(it->get<int64_t>());
  if (it->is_number()) return it->dump();
  return std::nullopt;
}

// The properties the text backend prints (ax-tree.h); Chromium's others (url, autocomplete,
// valuetext, ...) are left out so both backends print the same lines.
bool printed_property(const std::string& name) {
  static const char* const k_names[] = {"disabled", "focused", "hasPopup", "level", "multiselectable",
                                        "required", "checked", "expanded", "pressed", "selected"};
  for (const char* n : k_names)
    if (name == n) return true;
  return false;
}

std::string string_value(const json& node, const char* key) {
  auto it = node.find(key);
  if (it == node.end() || !it->is_object()) return "";
  auto v = it->find("value");
  return v != it->end() && v->is_string() ? v->get<std::string>() : "";
}

}  // namespace

ax_node ax_tree_from_cdp(const json& nodes) {
  std::unordered_map<std::string, const json*> by_id;
  const json* root = nullptr;
  for (const json& n : nodes) {
    std::string id = n.value("nodeId", std::string());
    by_id[id] = &n;
    if (!root && !n.contains("parentId")) root = &n;
  }
  ax_node out;
  out.role = "RootWebArea";
  if (!root) return out;

  // Appends n (or, when it is left out, its children) under `parent`.
  std::function<void(const json&, ax_node&, int)> add = [&](const json& n, ax_node& parent, int depth) {
    if (depth > kMaxAxDepth) return;
    std::string role = string_value(n, "role");
    std::string name = ax_collapse(string_value(n, "name"));
    // Left out with their children moved up: ignored nodes, text boxes, list bullets (the
    // text backend has neither), and whitespace-only text.
    bool skip = n.value("ignored", false) || role == "InlineTextBox" || role == "ListMarker" || role == "none" ||
                role.empty() || (role == "StaticText" && name.empty());
    ax_node* self = &parent;
    if (!skip) {
      ax_node a;
      if (auto b = n.find("backendDOMNodeId"); b != n.end() && b->is_number_integer())
        a.id = static_cast<int>(b->get<int64_t>());
      else
        a.id = static_cast<int>(k_no_backend_id_base + std::atoll(n.value("nodeId", std::string("0")).c_str()));
      a.role = role;
      a.name = std::move(name);
      if (auto props = n.find("properties"); props != n.end() && props->is_array())
        for (const json& p : *props)
          if (auto v = p.find("value"); v != p.end() && printed_property(p.value("name", std::string())))
            if (auto text = printed_value(*v)) a.props.push_back({p.value("name", std::string()), *text});
      parent.children.push_back(std::move(a));
      self = &parent.children.back();
    }
    if (auto kids = n.find("childIds"); kids != n.end() && kids->is_array())
      for (const json& c : *kids)
        if (auto it = by_id.find(c.is_string() ? c.get<std::string>() : c.dump()); it != by_id.end())
          add(*it->second, *self, depth + 1);
  };
  ax_node holder;
  add(*root, holder, 0);
  if (holder.children.size() == 1 && holder.children[0].role == "RootWebArea") return std::move(holder.children[0]);
  out.children = std::move(holder.children);
  return out;
}

std::unordered_map<int64_t, layout_box> layout_boxes_from_cdp(const json& snap, double* scroll_y) {
  std::unordered_map<int64_t, layout_box> out;
  *scroll_y = 0;
  auto docs = snap.find("documents");
  if (docs == snap.end() || !docs->is_array() || docs->empty()) return out;
  const json& doc = (*docs)[0];  // the main frame; iframes are not in the observation
  *scroll_y = doc.value("scrollOffsetY", 0.0);
  const json& backend = doc["nodes"]["backendNodeId"];
  const json& names = doc["nodes"]["nodeName"];  // indices into the snapshot's strings
  const json& strings = snap["strings"];
  const json& layout = doc["layout"];
  const json& index = layout["nodeIndex"];
  const json& bounds = layout["bounds"];
  for (size_t i = 0; i < index.size() && i < bounds.size(); ++i) {
    size_t node = index[i].get<size_t>();
    const json& b = bounds[i];
    if (node >= backend.size() || b.size() < 4) continue;
    layout_box box{b[0].get<double>(), b[1].get<double>(), b[2].get<double>(), b[3].get<double>(), ""};
    if (node < names.size() && names[node].is_number_integer()) {
      const size_t k = names[node].get<size_t>();
      if (k < strings.size() && strings[k].is_string()) box.tag = strings[k].get<std::string>();
    }
    out.emplace(backend[node].get<int64_t>(), box);  // first box (continuations follow it)
  }
  return out;
}

ax_rendering render_in_viewport(const ax_node& tree, const std::unordered_map<int64_t, layout_box>& boxes,
                                double top, double height, std::map<int64_t, chromium_node>* nodes) {
  const double bottom = top + height;
  // Whether each node itself is in the window (a node without a box follows its parent),
  // and whether it lies above it.
  std::unordered_map<const ax_node*, std::pair<bool, bool>> self_in_view;
  std::function<void(const ax_node&, bool, bool)> mark = [&](const ax_node& n, bool parent_in, bool parent_above) {
    bool in = parent_in, above = parent_above;
    if (auto it = boxes.find(n.id); it != boxes.end()) {
      const layout_box& b = it->second;
      in = b.y < bottom && b.y + b.height > top && (b.width > 0 || b.height > 0);
      above = !in && b.y + b.height <= top;
    }
    if (n.role == "RootWebArea") in = true, above = false;
    self_in_view[&n] = {in, above};
    for (const ax_node& c : n.children) mark(c, in, above);
  };
  mark(tree, true, false);
  // A printed line is in view when its node or any descendant is.
  std::unordered_map<const ax_node*, bool> subtree_in_view;
  std::function<bool(const ax_node&)> any = [&](const ax_node& n) {
    bool in = self_in_view[&n].first;
    for (const ax_node& c : n.children) in = any(c) || in;
    subtree_in_view[&n] = in;
    return in;
  };
  any(tree);
  std::vector<ax_line> lines = ax_layout(tree);
  std::vector<char> line_in_view(lines.size(), 0);
  for (size_t i = 0; i < lines.size(); ++i) line_in_view[i] = subtree_in_view[lines[i].node];
  std::unordered_map<const ax_node*, size_t> index_of;
  for (size_t i = 0; i < lines.size(); ++i) index_of[lines[i].node] = i;
  if (nodes) {
    nodes->clear();
    for (size_t i = 0; i < lines.size(); ++i) {
      const ax_node& n = *lines[i].node;
      auto [in, above] = self_in_view[&n];
      chromium_node& info = (*nodes)[n.id];
      info.backend_id = n.id;
      info.role = n.role;
      info.name = n.name;
      info.in_view = line_in_view[i];
      info.above_view = !line_in_view[i] && above;
    }
  }
  return render_ax_lines(tree, [&](const ax_line& l) { return line_in_view[index_of[l.node]] != 0; });
}

}  // namespace kvarena
