// test-browser-util.h: what the browser tests (test-browser-*.cpp) share that needs no
// network: a page template, the printed accessibility tree of an HTML string, and the
// [id] of an observation line. The loopback server is in test-browser-server.h.
#pragma once
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <regex>
#include <sstream>
#include <string>

#include "browser/common/ax-print.h"
#include "browser/common/ax-tree.h"
#include "browser/text/form-state.h"
#include "browser/text/html-document.h"

namespace kvarena::browser_test {

inline std::string page(const std::string& title, const std::string& body) {
  return "<!DOCTYPE html><html><head><title>" + title + "</title></head><body>" + body +
         "</body></html>";
}

// The [id] on the first observation line containing `needle`; -1 when none.
inline int64_t id_of(const std::string& obs, const std::string& needle) {
  std::istringstream in(obs);
  std::string line;
  while (std::getline(in, line)) {
    if (line.find(needle) == std::string::npos) continue;
    size_t open = line.find('['), close = line.find(']');
    if (open != std::string::npos && close > open) return std::stoll(line.substr(open + 1, close - open - 1));
  }
  return -1;
}

inline std::string strip_ids(const std::string& s) { return std::regex_replace(s, std::regex(R"(\[\d+\] )"), "[] "); }

// The printed tree of an HTML string (whole page, no viewport limit).
inline std::string tree_of(const std::string& html, bool keep_ids = false) {
  html_document doc(html);
  form_state state(doc);
  std::string text = render_ax_tree(build_ax_tree(doc, state, nullptr), 0, 1 << 30).text;
  return keep_ids ? text : strip_ids(text);
}

inline std::string body_tree(const std::string& body) {
  std::string t = tree_of(page("T", body));
  std::string head = "[] RootWebArea 'T' focused: True\n";
  EXPECT_EQ(t.substr(0, head.size()), head);
  return t.substr(std::min(t.size(), head.size()));
}

}  // namespace kvarena::browser_test
