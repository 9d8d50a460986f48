// json-nesting.cpp: the depth scan of json-nesting.h. Strings are skipped with their
// escapes, so brackets inside "..." do not count.
#include "common/json-nesting.h"

namespace kvarena {

bool json_nesting_within(std::string_view text, int max_depth, size_t* at) {
  int depth = 0;
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') ++i;
      else if (c == '"') in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > max_depth) {
        if (at) *at = i;
        return false;
      }
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return true;
}

}  // namespace kvarena
