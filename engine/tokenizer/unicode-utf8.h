// unicode-utf8.h: UTF-8 <-> code points, as the tokenizers need them. Decoding is lenient
// in the way llama.cpp's is (the reference our tokenizers must agree with): a byte that
// does not start a well-formed sequence becomes U+FFFD and decoding resumes at the next
// byte. utf8_is_valid is the strict check (for printing pieces).
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace kvarena::unicode {

inline constexpr uint32_t k_replacement_cpt = 0xFFFD;

// Sequence length announced by a lead byte, from its high nibble alone (1 for ASCII and for
// stray continuation bytes, 2 for 0xC_/0xD_, 3 for 0xE_, 4 for 0xF_).
inline size_t utf8_len(uint8_t lead) {
  static constexpr uint8_t k_len[16] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 3, 4};
  return k_len[lead >> 4];
}

// Decodes the code point at s[pos] and advances pos. Lenient: continuation bytes are
// checked, overlong forms are accepted; anything else yields U+FFFD and pos advances by 1.
uint32_t utf8_decode(std::string_view s, size_t& pos);

// All code points of s (lenient, as above).
std::vector<uint32_t> utf8_to_cpts(std::string_view s);

// Appends the UTF-8 form of cp; code points above U+10FFFF are written as U+FFFD.
void utf8_append(std::string& out, uint32_t cp);
std::string utf8_from_cpt(uint32_t cp);

// Strict: well-formed UTF-8 (no overlong forms, no surrogates, nothing above U+10FFFF).
bool utf8_is_valid(std::string_view s);

}  // namespace kvarena::unicode
