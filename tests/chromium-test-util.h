// chromium-test-util.h: what the tests labelled `chromium` share (test-browser-chromium.cpp,
// test-env-chromium.cpp): skipping without /usr/bin/chromium, and the interactive lines of
// an observation, to compare the text and chromium backends by role and name.
#pragma once
#include <gtest/gtest.h>

#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "browser/chromium/chromium-process.h"

#define SKIP_WITHOUT_CHROMIUM()          \
  if (!::kvarena::chromium_available()) \
  GTEST_SKIP() << "/usr/bin/chromium is not installed (Debian package chromium)"

namespace kvarena::chromium_test {

// "role 'name'" of every line whose role an agent acts on, in order; the properties after
// the name are left out (they differ between backends, e.g. focused).
inline std::vector<std::string> interactive_lines(const std::string& obs) {
  static const std::set<std::string> roles = {"link", "button", "textbox", "searchbox", "combobox",
                                              "checkbox", "radio", "listbox", "spinbutton"};
  std::vector<std::string> out;
  std::istringstream in(obs);
  std::string line;
  while (std::getline(in, line)) {
    size_t close = line.find("] ");
    if (close == std::string::npos) continue;
    std::string rest = line.substr(close + 2);
    size_t space = rest.find(' ');
    if (!roles.count(rest.substr(0, space))) continue;
    std::string name = space == std::string::npos ? "" : rest.substr(space + 1);
    if (!name.empty()) name = name.substr(0, name.find(name[0], 1) == std::string::npos ? name.size() : name.find(name[0], 1) + 1);
    out.push_back(rest.substr(0, space) + " " + name);
  }
  return out;
}

}  // namespace kvarena::chromium_test
