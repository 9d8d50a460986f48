// som-list.cpp: VisualWebArena's Set-of-Marks list (see som-list.h).
#include "browser/chromium/som-list.h"

#include <set>

namespace kvarena {
namespace {

constexpr size_t k_max_text_bytes = 200;

// Whitespace runs as one space, trimmed, cut at a UTF-8 boundary.
std::string clean(const std::string& s) {
  std::string out;
  for (char c : s) {
    const bool space = c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
    if (space) {
      if (!out.empty() && out.back() != ' ') out += ' ';
    } else {
      out += c;
    }
  }
  while (!out.empty() && out.back() == ' ') out.pop_back();
  if (out.size() > k_max_text_bytes) {
    size_t cut = k_max_text_bytes;
    while (cut > 0 && (static_cast<unsigned char>(out[cut]) & 0xC0) == 0x80) --cut;
    out.resize(cut);
  }
  return out;
}

std::string upper(std::string s) {
  for (char& c : s)
    if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
  return s;
}

}  // namespace

std::string som_list_text(const std::vector<som_item>& items) {
  std::string out;
  std::set<std::string> listed;  // texts already on a line
  for (const som_item& it : items) {
    std::string text = clean(it.text);
    std::string line;
    if (it.interactive) {
      line = "[" + std::to_string(it.id) + "] [" + upper(it.tag.empty() ? "element" : it.tag) + "] [" + text + "]";
    } else {
      if (text.empty() || listed.count(text)) continue;
      line = "[] [StaticText] [" + text + "]";
    }
    listed.insert(text);
    if (!out.empty()) out += '\n';
    out += line;
  }
  return out;
}

}  // namespace kvarena
