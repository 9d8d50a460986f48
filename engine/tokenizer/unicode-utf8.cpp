// unicode-utf8.cpp: UTF-8 decoding (lenient, llama.cpp-compatible) and encoding.
#include "unicode-utf8.h"

namespace kvarena::unicode {

namespace {
bool is_cont(std::string_view s, size_t i) {
  return i < s.size() && (static_cast<uint8_t>(s[i]) & 0xC0) == 0x80;
}
}  // namespace

uint32_t utf8_decode(std::string_view s, size_t& pos) {
  const uint8_t b0 = static_cast<uint8_t>(s[pos]);
  if (b0 < 0x80) {
    pos += 1;
    return b0;
  }
  auto cont = [&](size_t i) -> uint32_t { return static_cast<uint8_t>(s[pos + i]) & 0x3F; };
  if ((b0 & 0xE0) == 0xC0 && is_cont(s, pos + 1)) {
    const uint32_t cp = (uint32_t(b0 & 0x1F) << 6) | cont(1);
    pos += 2;
    return cp;
  }
  if ((b0 & 0xF0) == 0xE0 && is_cont(s, pos + 1) && is_cont(s, pos + 2)) {
    const uint32_t cp = (uint32_t(b0 & 0x0F) << 12) | (cont(1) << 6) | cont(2);
    pos += 3;
    return cp;
  }
  if ((b0 & 0xF8) == 0xF0 && is_cont(s, pos + 1) && is_cont(s, pos + 2) && is_cont(s, pos + 3)) {
    const uint32_t cp = (uint32_t(b0 & 0x07) << 18) | (cont(1) << 12) | (cont(2) << 6) | cont(3);
    pos += 4;
    return cp;
  }
  pos += 1;  // stray continuation byte, truncated sequence, or 0xF8..0xFF
  return k_replacement_cpt;
}

std::vector<uint32_t> utf8_to_cpts(std::string_view s) {
  std::vector<uint32_t> cpts;
  cpts.reserve(s.size());
  for (size_t pos = 0; pos < s.size();) cpts.push_back(utf8_decode(s, pos));
  return cpts;
}

void utf8_append(std::string& out, uint32_t cp) {
  if (cp > 0x10FFFF) cp = k_replacement_cpt;
  if (cp < 0x80) {
    out.push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

std::string utf8_from_cpt(uint32_t cp) {
  std::string s;
  utf8_append(s, cp);
  return s;
}

bool utf8_is_valid(std::string_view s) {
  for (size_t pos = 0; pos < s.size();) {
    const uint8_t b0 = static_cast<uint8_t>(s[pos]);
    if (b0 < 0x80) {
      pos += 1;
      continue;
    }
    size_t n = 0;
    uint32_t min_cp = 0;
    if ((b0 & 0xE0) == 0xC0) {
      n = 2, min_cp = 0x80;
    } else if ((b0 & 0xF0) == 0xE0) {
      n = 3, min_cp = 0x800;
    } else if ((b0 & 0xF8) == 0xF0) {
      n = 4, min_cp = 0x10000;
    } else {
      return false;
    }
    for (size_t i = 1; i < n; ++i) {
      if (!is_cont(s, pos + i)) return false;
    }
    size_t p = pos;
    const uint32_t cp = utf8_decode(s, p);
    if (cp < min_cp || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return false;
    pos += n;
  }
  return true;
}

}  // namespace kvarena::unicode
