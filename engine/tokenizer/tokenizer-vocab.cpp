// tokenizer-vocab.cpp: the token table shared by both tokenizer families, the special-token
// split that runs before either, and tokenizer_base, their common encode/decode frame.
#include "tokenizer-vocab.h"

#include <algorithm>

#include "engine-error.h"

namespace kvarena {

namespace {

uint64_t text_hash(std::string_view s) {
  uint64_t h = 0x9E3779B97F4A7C15ull ^ s.size();  // FNV-1a, then a final mix
  for (unsigned char c : s) h = (h ^ c) * 0x100000001B3ull;
  h ^= h >> 29;
  h *= 0xBF58476D1CE4E5B9ull;
  return h ^ (h >> 32);
}

// C's isspace in the "C" locale: what the reference's rstrip skips.
bool is_ascii_space(char c) { return c == ' ' || (c >= '\t' && c <= '\r'); }

}  // namespace

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
  size_t capacity = 16;
  while (capacity < texts_.size() * 2) capacity *= 2;
  index_.assign(capacity, 0);
  const size_t mask = capacity - 1;
  for (size_t id = 0; id < texts_.size(); ++id) {
    const uint64_t h = text_hash(texts_[id]);
    const uint64_t entry = (h & 0xFFFFFFFF00000000ull) | (id + 1);
    for (size_t i = h & mask;; i = (i + 1) & mask) {
      const uint64_t slot = index_[i];
      if (slot == 0 || ((slot ^ h) >> 32 == 0 && texts_[(slot & 0xFFFFFFFF) - 1] == texts_[id])) {
        index_[i] = entry;  // a repeated text: the later id replaces the earlier
        break;
      }
    }
  }

  rstrip_.clear();
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


int32_t tokenizer_vocab::find(std::string_view s) const {
  if (index_.empty()) return -1;
  const uint64_t h = text_hash(s);
  const size_t mask = index_.size() - 1;
  for (size_t i = h & mask;; i = (i + 1) & mask) {
    const uint64_t slot = index_[i];
    if (slot == 0) return -1;
    if ((slot ^ h) >> 32 == 0) {
      const int32_t id = static_cast<int32_t>((slot & 0xFFFFFFFF) - 1);
      if (texts_[id] == s) return id;
    }
  }
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

void tokenizer_vocab::set_rstrip(int32_t id, bool on) {
  require(id);
  if (rstrip_.empty()) rstrip_.assign(texts_.size(), false);
  rstrip_[id] = on;
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
    const bool rstrip = !rstrip_.empty() && rstrip_[id];
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
        while (rstrip && from < part.size() && is_ascii_space(part[from])) ++from;
        split = true;
      }
      if (from < part.size()) next.push_back({-1, f.begin + from, f.end});
    }
    if (split) frags.swap(next);
  }
  return frags;
}

std::vector<int32_t> tokenizer_base::encode(std::string_view text, bool add_bos,
                                            bool parse_special) const {
  std::vector<int32_t> out;
  if (add_bos && adds_bos()) out.push_back(vocab_.bos);
  bool after_special = true;  // the input's start counts as one
  for (const text_fragment& f : vocab_.split_special(text, parse_special)) {
    if (f.token >= 0) {
      out.push_back(f.token);
      after_special = true;
    } else {
      encode_fragment(text.substr(f.begin, f.end - f.begin), after_special, out);
      after_special = false;
    }
  }
  if (add_bos && vocab_.add_eos && vocab_.eos >= 0) out.push_back(vocab_.eos);
  return out;
}

std::string tokenizer_base::token_to_piece(int32_t id) const {
  vocab_.require(id);
  std::string piece;
  append_piece(id, piece);
  return piece;
}

std::string tokenizer_base::decode(const std::vector<int32_t>& ids) const {
  std::string text;
  bool first = true;
  for (int32_t id : ids) {
    vocab_.require(id);
    const token_type t = vocab_.type(id);
    if (t == token_type::control || t == token_type::unknown) continue;
    const size_t start = text.size();
    append_piece(id, text);
    if (first && decode_drops_first_space_ && text.size() > start && text[start] == ' ') {
      text.erase(start, 1);
    }
    first = false;
  }
  return text;
}

}  // namespace kvarena
