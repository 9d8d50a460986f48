// str-util.h: the few ASCII and UTF-8 string helpers the browser files share (HTML's
// "ASCII whitespace" and "ASCII lowercase", key combinations, UTF-8 counting). Header-only; UTF-8 encoding
// is common/text-encode.h's append_utf8.
#pragma once
#include <string>
#include <string_view>
#include <vector>

namespace kvarena {

// HTML's ASCII whitespace: space, tab, LF, CR, FF.
inline bool is_ascii_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f';
}

inline std::string ascii_lower(std::string_view s) {
  std::string out(s);
  for (char& c : out)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return out;
}

inline std::string_view trim_ascii(std::string_view s) {
  while (!s.empty() && is_ascii_space(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_ascii_space(s.back())) s.remove_suffix(1);
  return s;
}

// Attribute keywords compare this way ("  POST " == "post").
inline std::string lower_trim(std::string_view s) { return ascii_lower(trim_ascii(s)); }

// The keys of a press combination, lowercased: "Control+a" -> control, a; "control++" ->
// control, + (a '+' right after a separator is the key itself).
inline std::vector<std::string> key_combination_parts(std::string_view combination) {
  std::vector<std::string> keys;
  std::string part;
  for (char c : lower_trim(combination)) {
    if (c == '+' && !part.empty()) {
      keys.push_back(part);
      part.clear();
    } else {
      part += c;
    }
  }
  if (!part.empty()) keys.push_back(part);
  return keys;
}

// Code points in a UTF-8 string (continuation bytes not counted).
inline size_t utf8_length(std::string_view s) {
  size_t n = 0;
  for (char c : s) n += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  return n;
}

}  // namespace kvarena
