// tokenizer-bpe.cpp: byte-level BPE (GPT-2, Qwen2, Llama-3). Encoding: split out special
// tokens, pre-tokenize into words, then within each word start from one symbol per byte
// (the byte's printable stand-in character: space is "Ġ") and apply merges, lowest rank
// first (leftmost on ties), until none applies. Merges are looked up by (left id, right id).
// The SentencePiece-style variant (Gemma 4) writes spaces as "▁", starts from one symbol per
// UTF-8 character instead, takes a run of line feeds whole when it is a token, and spells a
// final symbol that is no token as <0xNN> byte tokens.
#include <algorithm>
#include <array>
#include <cstdio>
#include <queue>
#include <string>
#include <vector>

#include "tokenizer-vocab.h"
#include "unicode-utf8.h"

namespace kvarena {

namespace {

// GPT-2's byte <-> character map: printable Latin-1 bytes stand for themselves, the other
// 68 (controls, space, 0x7F-0xA0, 0xAD) take U+0100 onward in byte order.
std::array<uint32_t, 256> byte_to_cpt_table() {
  std::array<uint32_t, 256> map{};
  uint32_t next = 256;
  for (uint32_t b = 0; b < 256; ++b) {
    const bool printable = (b >= 33 && b <= 126) || (b >= 161 && b <= 172) || (b >= 174 && b <= 255);
    map[b] = printable ? b : next++;
  }
  return map;
}

// (left id, right id) -> (rank, merged id), open addressing. Flat: a few hundred thousand
// merges load and are looked up once per adjacent pair while encoding.
class merge_table {
 public:
  struct merge {
    int32_t rank;
    int32_t result;  // id of left + right
  };

  void reserve(size_t n) {
    size_t capacity = 16;
    while (capacity < n * 2) capacity *= 2;
    slots_.assign(capacity, slot{k_empty, {}});
  }
  // Keeps the first merge of a pair (the lowest rank), as the reference does.
  void insert(int32_t left, int32_t right, merge m) {
    const uint64_t key = pair_key(left, right);
    const size_t mask = slots_.size() - 1;
    for (size_t i = mix(key) & mask;; i = (i + 1) & mask) {
      if (slots_[i].key == key) return;
      if (slots_[i].key == k_empty) {
        slots_[i] = {key, m};
        return;
      }
    }
  }
  const merge* find(int32_t left, int32_t right) const {
    if (left < 0 || right < 0 || slots_.empty()) return nullptr;
    const uint64_t key = pair_key(left, right);
    const size_t mask = slots_.size() - 1;
    for (size_t i = mix(key) & mask;; i = (i + 1) & mask) {
      if (slots_[i].key == key) return &slots_[i].value;
      if (slots_[i].key == k_empty) return nullptr;
    }
  }

 private:
  static constexpr uint64_t k_empty = ~0ull;  // ids are < 2^31, so no pair key is all ones
  struct slot {
    uint64_t key;
    merge value;
  };
  static uint64_t pair_key(int32_t left, int32_t right) {
    return (static_cast<uint64_t>(static_cast<uint32_t>(left)) << 32) | static_cast<uint32_t>(right);
  }
  static uint64_t mix(uint64_t x) {
    x ^= x >> 33;
    x *= 0xFF51AFD7ED558CCDull;
    return x ^ (x >> 33);
  }
  std::vector<slot> slots_;  // (capacity, a power of two)
};

class tokenizer_bpe final : public tokenizer_base {
 public:
  tokenizer_bpe(tokenizer_vocab vocab, const std::vector<std::string>& merges, pretokenizer pre,
                bool spm_style)
      : tokenizer_base(std::move(vocab)),
        pre_(pre),
        ignore_merges_(pre == pretokenizer::llama3),
        spm_style_(spm_style) {
    const auto byte_cpt = byte_to_cpt_table();
    cpt_byte_.assign(256 + 68, -1);
    for (int b = 0; b < 256; ++b) {
      byte_char_[b] = unicode::utf8_from_cpt(byte_cpt[b]);
      byte_token_[b] = vocab_.find(byte_char_[b]);
      cpt_byte_[byte_cpt[b]] = static_cast<int16_t>(b);
      char name[8];
      std::snprintf(name, sizeof name, "<0x%02X>", b);
      byte_fallback_[b] = spm_style ? vocab_.find(name) : byte_token_[b];
    }
    merges_.reserve(merges.size());
    std::string joined;
    for (size_t rank = 0; rank < merges.size(); ++rank) {
      const std::string& m = merges[rank];
      const size_t space = m.find(' ', 1);
      if (space == std::string::npos) continue;
      const std::string_view left(m.data(), space);
      const std::string_view right(m.data() + space + 1, m.size() - space - 1);
      joined.assign(left);
      joined.append(right);
      const int32_t l = vocab_.find(left), r = vocab_.find(right), result = vocab_.find(joined);
      if (l < 0 || r < 0 || result < 0) continue;
      merges_.insert(l, r, {static_cast<int32_t>(rank), result});
    }
  }

 protected:
  void encode_fragment(std::string_view text, bool /*after_special*/,
                       std::vector<int32_t>& out) const override {
    std::vector<std::string> words;
    if (!spm_style_) {
      pretokenize(text, pre_, words);
      for (const std::string& w : words) encode_word(w, out);
      return;
    }
    std::string escaped;
    for (char c : text) escaped += c == ' ' ? std::string_view(k_space_mark) : std::string_view(&c, 1);
    pretokenize(escaped, pre_, words);
    for (const std::string& w : words) {
      // A run of line feeds that is a token is taken whole (the reference's Gemma 4 rule).
      if (w.find_first_not_of('\n') == std::string::npos) {
        if (int32_t id = vocab_.find(w); id >= 0) {
          out.push_back(id);
          continue;
        }
      }
      encode_word(w, out);
    }
  }

 private:
  using merge = merge_table::merge;
  static constexpr const char* k_space_mark = "\xE2\x96\x81";  // U+2581 "▁"
  struct symbol {
    int32_t id;  // -1: merged into its left neighbour (or a text with no token)
    int32_t prev;
    int32_t next;
    int32_t begin;  // bytes [begin, begin + len) of the word
    int32_t len;
  };
  struct candidate {
    int32_t rank;
    int32_t left;  // symbol index; the right one is symbols[left].next when pushed
    int32_t left_id;
    int32_t right_id;
    int32_t result;
    bool operator<(const candidate& o) const {  // priority_queue top = lowest rank, leftmost
      return rank != o.rank ? rank > o.rank : left > o.left;
    }
  };

  void append_piece(int32_t id, std::string& out) const override {
    const std::string& text = vocab_.text(id);
    switch (vocab_.type(id)) {
      case token_type::control:
      case token_type::user_defined:
      case token_type::unknown:
        out += text;
        return;
      case token_type::byte:
        if (int b = vocab_.byte_value(id); b >= 0) {
          out.push_back(static_cast<char>(b));
          return;
        }
        break;
      default:
        break;
    }
    if (spm_style_) {
      for (size_t pos = 0; pos < text.size();) {
        if (text.compare(pos, 3, k_space_mark) == 0) {
          out += ' ';
          pos += 3;
        } else {
          out += text[pos++];
        }
      }
      return;
    }
    for (size_t pos = 0; pos < text.size();) {
      const uint32_t cp = unicode::utf8_decode(text, pos);
      if (cp < cpt_byte_.size() && cpt_byte_[cp] >= 0) {
        out.push_back(static_cast<char>(cpt_byte_[cp]));
      } else {
        unicode::utf8_append(out, cp);  // not a byte-level character: keep it as written
      }
    }
  }

  void encode_word(const std::string& word, std::vector<int32_t>& out) const {
    if (word.empty()) return;
    if (ignore_merges_) {  // Llama-3: a word that is a token is taken whole
      std::string mapped;
      for (char c : word) mapped += byte_char_[static_cast<uint8_t>(c)];
      if (int32_t id = vocab_.find(mapped); id >= 0) {
        out.push_back(id);
        return;
      }
    }
    std::vector<symbol> syms;  // (symbols) linked; one per byte, or per UTF-8 character
    syms.reserve(word.size());
    for (size_t pos = 0; pos < word.size();) {
      size_t len = 1;
      int32_t id = byte_token_[static_cast<uint8_t>(word[pos])];
      if (spm_style_) {
        len = std::min(word.size() - pos, unicode::utf8_len(static_cast<uint8_t>(word[pos])));
        id = vocab_.find(std::string_view(word).substr(pos, len));
      }
      const int32_t i = static_cast<int32_t>(syms.size());
      syms.push_back({id, i - 1, i + 1, static_cast<int32_t>(pos), static_cast<int32_t>(len)});
      pos += len;
    }
    syms.back().next = -1;
    const int32_t n = static_cast<int32_t>(syms.size());
    std::priority_queue<candidate> queue;
    auto push = [&](int32_t left) {
      if (left < 0 || syms[left].next < 0) return;
      const symbol& l = syms[left];
      const symbol& r = syms[l.next];
      if (const merge* m = merges_.find(l.id, r.id)) queue.push({m->rank, left, l.id, r.id, m->result});
    };
    for (int32_t i = 0; i + 1 < n; ++i) push(i);
    while (!queue.empty()) {
      const candidate c = queue.top();
      queue.pop();
      symbol& l = syms[c.left];
      // Stale when either side changed since the push (ids identify the text exactly).
      if (l.id != c.left_id || l.next < 0 || syms[l.next].id != c.right_id) continue;
      const int32_t right = l.next;
      l.id = c.result;
      l.len += syms[right].len;
      l.next = syms[right].next;
      if (l.next >= 0) syms[l.next].prev = c.left;
      syms[right].id = -1;
      syms[right].next = -2;  // dead: never matches as a right neighbour again
      push(l.prev);
      push(c.left);
    }
    for (int32_t i = 0; i >= 0; i = syms[i].next) {
      if (syms[i].id >= 0) {
        out.push_back(syms[i].id);
        continue;
      }
      // No token: its bytes' tokens; a byte without one is dropped, as the reference does.
      for (int32_t b = syms[i].begin; b < syms[i].begin + syms[i].len; ++b) {
        if (int32_t id = byte_fallback_[static_cast<uint8_t>(word[b])]; id >= 0) out.push_back(id);
      }
    }
  }

  pretokenizer pre_;
  bool ignore_merges_;                             // Llama-3 pre-tokenizer setting
  bool spm_style_;                                 // Gemma 4: "▁" spaces, UTF-8 symbols
  merge_table merges_;
  std::array<std::string, 256> byte_char_;         // byte -> its stand-in character (UTF-8)
  std::array<int32_t, 256> byte_token_{};          // byte -> id of that character, or -1
  std::array<int32_t, 256> byte_fallback_{};       // byte -> token for a symbol with no token
  std::vector<int16_t> cpt_byte_;                  // stand-in code point -> byte, or -1
};

}  // namespace

std::unique_ptr<tokenizer> make_bpe_tokenizer(tokenizer_vocab vocab,
                                              const std::vector<std::string>& merges,
                                              pretokenizer pre, bool spm_style) {
  return std::make_unique<tokenizer_bpe>(std::move(vocab), merges, pre, spm_style);
}

}  // namespace kvarena
