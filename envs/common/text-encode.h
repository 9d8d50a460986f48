// text-encode.h: the two text encoders every part of envs/ (and tasks/) shares, so there is
// one copy of each: a code point as UTF-8, and HTML escaping of & < > " '. Header-only.
// (The engine has its own UTF-8 encoder in engine/tokenizer/unicode-utf8.h: envs never includes
// engine, and the engine uses nothing from the rest of the repo.)
#pragma once
#include <string>
#include <string_view>

namespace kvarena {

// Appends the UTF-8 form of cp (1 to 4 bytes). Callers map values above U+10FFFF
// themselves when they can occur; only the low 21 bits are written.
inline void append_utf8(std::string& out, unsigned cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | ((cp >> 18) & 0x07));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

// Escapes & < > " ' (' as &#39;, which HTML4 and HTML5 both read): safe in text and in
// quoted attribute values.
inline std::string escape_html(std::string_view s) {
  std::string out;
  out.reserve(s.size() + s.size() / 8);
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

}  // namespace kvarena
