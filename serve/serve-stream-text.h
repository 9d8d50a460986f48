// serve-stream-text.h: how much of a generation's text may be streamed while it goes on.
// Held back: the end of the text that is the start of a stop string (generate() cuts a
// stop string from the result once it is complete: "...<|im" waits, "...abc" does not), and
// an incomplete UTF-8 character at the end (a token may end inside one). So what was
// streamed is always a prefix of the final text, and every streamed piece is whole
// characters.
#pragma once
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace kvarena::serve {

class stream_text_gate {
 public:
  explicit stream_text_gate(const std::vector<std::string>& stops);
  // The text not streamed yet that may be streamed now; `text` is the whole text so far.
  std::string_view next(const std::string& text);
  // At the end: the rest of the final text (cut at its stop string).
  std::string_view rest(const std::string& final_text);
  size_t sent() const { return sent_; }

 private:
  std::vector<std::string> stops_;
  size_t sent_ = 0;
};

// The longest n <= limit such that text[0, n) does not end inside a UTF-8 character.
size_t utf8_complete_prefix(std::string_view text, size_t limit);

}  // namespace kvarena::serve
