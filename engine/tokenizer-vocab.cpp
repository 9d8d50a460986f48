// tokenizer-vocab.cpp: the token table shared by both tokenizer families, and the
// special-token split that runs before either.
#include "tokenizer-vocab.h"

#include <algorithm>

#include "engine-error.h"

namespace kvarena {

void tokenizer_vocab::assign(const std::string& source, std::vector<std::string> texts,
                             std::vector<token_type> types, std::vector<float> scores) {
  if (texts.empty()) fail_file(source, "the vocabulary has no tokens");
  if (!types.empty() && types.size() < texts.size()) {
    fail_file(source, "token_type has " + std::to_string(types.size()) + " entries for " +
                          std::to_string(texts.size()) + " tokens");
  }
  if (!scores.empty() && scores.size() < texts.size()) {
    fail_file(source, "scores has " + std::to_string(scores.size()) + " entries for " +
                          std::to_string(texts.size()) + " tokens");
  }
  types.resize(texts.size(), token_type::normal);
  if (!scores.empty()) scores.resize(texts.size());
  // An empty text could never be matched and would make the special split spin; the
  // reference renames such tokens the same way.
  for (size_t i = 0; i < texts.size(); ++i) {
    if (texts[i].empty()) texts[i] = "[EMPTY_" + std::to_string(i) + "]";
  }

  texts_ = std::move(texts);
  types_ = std::move(types);
  scores_ = std::move(scores);
  index_.clear();
  index_.reserve(texts_.size());
  for (size_t i = 0; i < texts_.size(); ++i) index_[texts_[i]] = static_cast<int32_t>(i);

  specials_.clear();
  for (size_t i = 0; i < texts_.size(); ++i) {
    const token_type t = types_[i];
    if (t == token_type::control || t == token_type::user_defined || t == token_type::unknown) {
      specials_.push_back(static_cast<int32_t>(i));
    }
  }
  std::stable_sort(specials_.begin(), specials_.end(), [&](int32_t a, int32_t b) {
    return texts_[a].size() > texts_[b].size();
  });
}

void tokenizer_vocab::require(int32_t id) const {
  if (!valid(id)) {
    throw engine_error("token id " + std::to_string(id) + " is out of range (vocabulary of " +
                       std::to_string(size()) + " tokens)");
  }
}

int tokenizer_vocab::byte_value(int32_t id) const {
  const std::string& t = texts_[id];
  if (types_[id] != token_type::byte || t.size() != 6 || t.compare(0, 3, "<0x") != 0 || t[5] != '>') {
    return -1;
  }
  auto hex = [](char c) {
    return c >= '0' && c <= '9' ? c - '0' : c >= 'A' && c <= 'F' ? c - 'A' + 10 : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
  };
  const int hi = hex(t[3]), lo = hex(t[4]);
  return hi < 0 || lo < 0 ? -1 : hi * 16 + lo;
}

std::vector<text_fragment> tokenizer_vocab::split_special(std::string_view text,
                                                          bool parse_special) const {
  std::vector<text_fragment> frags;
  if (text.empty()) return frags;
  frags.push_back({-1, 0, text.size()});

  // Most texts hold none of the specials' first bytes: then there is nothing to split.
  bool first_byte[256] = {};
  bool any = false;
  for (int32_t id : specials_) {
    if (!parse_special && types_[id] != token_type::user_defined) continue;
    first_byte[static_cast<uint8_t>(texts_[id][0])] = true;
    any = true;
  }
  if (!any) return frags;
  bool present = false;
  for (char c : text) present |= first_byte[static_cast<uint8_t>(c)];
  if (!present) return frags;

  std::vector<text_fragment> next;
  for (int32_t id : specials_) {
    if (!parse_special && types_[id] != token_type::user_defined) continue;
    const std::string& needle = texts_[id];
    next.clear();
    bool split = false;
    for (const text_fragment& f : frags) {
      if (f.token >= 0) {
        next.push_back(f);
        continue;
      }
      const std::string_view part = text.substr(f.begin, f.end - f.begin);
      size_t from = 0;
      for (size_t hit; (hit = part.find(needle, from)) != std::string_view::npos;) {
        if (hit > from) next.push_back({-1, f.begin + from, f.begin + hit});
        next.push_back({id, f.begin + hit, f.begin + hit + needle.size()});
        from = hit + needle.size();
        split = true;
      }
      if (from < part.size()) next.push_back({-1, f.begin + from, f.end});
    }
    if (split) frags.swap(next);
  }
  return frags;
}

}  // namespace kvarena
