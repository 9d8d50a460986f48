// serve-stream-text.cpp: see serve-stream-text.h.
#include "serve-stream-text.h"

#include <algorithm>

namespace kvarena::serve {

size_t utf8_complete_prefix(std::string_view text, size_t limit) {
  size_t n = std::min(limit, text.size());
  size_t i = n;
  while (i > 0 && n - i < 4 && (static_cast<unsigned char>(text[i - 1]) & 0xC0) == 0x80) --i;
  if (i == 0) return n == 0 ? 0 : (n - i < 4 ? 0 : n);  // only continuation bytes: nothing whole
  const unsigned char lead = static_cast<unsigned char>(text[i - 1]);
  size_t len = 1;
  if ((lead & 0xE0) == 0xC0) len = 2;
  else if ((lead & 0xF0) == 0xE0) len = 3;
  else if ((lead & 0xF8) == 0xF0) len = 4;
  return (i - 1) + len > n ? i - 1 : n;
}

stream_text_gate::stream_text_gate(const std::vector<std::string>& stops) {
  for (const auto& s : stops)
    if (!s.empty()) stops_.push_back(s);
}

std::string_view stream_text_gate::next(const std::string& text) {
  // The longest end of the text that a stop string starts with (a whole stop string was
  // already cut by generate()).
  size_t hold = 0;
  for (const std::string& s : stops_)
    for (size_t k = std::min(s.size() - 1, text.size()); k > hold; --k)
      if (text.compare(text.size() - k, k, s, 0, k) == 0) {
        hold = k;
        break;
      }
  const size_t safe = utf8_complete_prefix(text, text.size() - hold);
  if (safe <= sent_) return {};
  std::string_view out(text.data() + sent_, safe - sent_);
  sent_ = safe;
  return out;
}

std::string_view stream_text_gate::rest(const std::string& final_text) {
  if (final_text.size() <= sent_) return {};
  std::string_view out(final_text.data() + sent_, final_text.size() - sent_);
  sent_ = final_text.size();
  return out;
}

}  // namespace kvarena::serve
