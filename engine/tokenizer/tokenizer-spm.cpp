// tokenizer-spm.cpp: SentencePiece-style BPE (Llama, Llama-2; GGUF model "llama" and
// llama2.c's tokenizer.bin). Encoding, as llama.cpp does it: spaces become "▁" (U+2581),
// a "▁" is prepended to each text fragment that starts the input or follows a special
// token, the text is split into UTF-8 characters, and the adjacent pair whose concatenation
// is a token with the highest score is merged (leftmost on ties) until no pair is a token.
// Characters that are no token fall back to their bytes as <0xNN> tokens.
#include <array>
#include <queue>

#include "tokenizer-vocab.h"
#include "unicode-utf8.h"

namespace kvarena {

namespace {

constexpr std::string_view k_space_mark = "\xE2\x96\x81";  // "▁" U+2581

class tokenizer_spm final : public tokenizer_base {
 public:
  tokenizer_spm(tokenizer_vocab vocab, bool add_space_prefix)
      : tokenizer_base(std::move(vocab), /*decode_drops_first_space=*/add_space_prefix),
        add_space_prefix_(add_space_prefix) {
    static const char* k_hex = "0123456789ABCDEF";
    for (int b = 0; b < 256; ++b) {
      const char name[7] = {'<', '0', 'x', k_hex[b >> 4], k_hex[b & 15], '>', 0};
      int32_t id = vocab_.find(name);
      if (id < 0) id = vocab_.find(std::string(1, static_cast<char>(b)));  // as the reference
      byte_token_[b] = id;
    }
  }

 protected:
  void encode_fragment(std::string_view text, bool after_special,
                       std::vector<int32_t>& out) const override {
    std::string escaped;
    escaped.reserve(text.size() + 8);
    if (add_space_prefix_ && after_special) escaped += k_space_mark;
    for (char c : text) {
      if (c == ' ') {
        escaped += k_space_mark;
      } else {
        escaped += c;
      }
    }
    encode_escaped(escaped, out);
  }

 private:
  struct symbol {
    uint32_t begin;  // byte offset in the escaped text
    uint32_t size;   // bytes; 0 once merged into the left neighbour
    int32_t prev;
    int32_t next;
  };
  struct candidate {
    float score;
    int32_t left;
    int32_t right;
    uint32_t size;  // bytes of left + right when pushed
    bool operator<(const candidate& o) const {  // priority_queue top = highest score, leftmost
      return score != o.score ? score < o.score : left > o.left;
    }
  };

  void append_piece(int32_t id, std::string& out) const override {
    const std::string& text = vocab_.text(id);
    if (int b = vocab_.byte_value(id); b >= 0) {
      out.push_back(static_cast<char>(b));
      return;
    }
    if (vocab_.type(id) != token_type::normal) {
      out += text;
      return;
    }
    for (size_t pos = 0; pos < text.size();) {
      if (text.compare(pos, k_space_mark.size(), k_space_mark) == 0) {
        out.push_back(' ');
        pos += k_space_mark.size();
      } else {
        out.push_back(text[pos++]);
      }
    }
  }

  void encode_escaped(std::string_view s, std::vector<int32_t>& out) const {
    std::vector<symbol> syms;
    syms.reserve(s.size());
    for (size_t pos = 0; pos < s.size();) {
      const size_t n = std::min(unicode::utf8_len(static_cast<uint8_t>(s[pos])), s.size() - pos);
      const int32_t i = static_cast<int32_t>(syms.size());
      syms.push_back({static_cast<uint32_t>(pos), static_cast<uint32_t>(n), i - 1, -1});
      if (i > 0) syms[i - 1].next = i;
      pos += n;
    }
    std::priority_queue<candidate> queue;
    auto push = [&](int32_t left) {
      if (left < 0 || syms[left].next < 0) return;
      const symbol& l = syms[left];
      const symbol& r = syms[l.next];
      const int32_t id = vocab_.find(s.substr(l.begin, l.size + r.size));
      if (id >= 0) queue.push({vocab_.score(id), left, l.next, l.size + r.size});
    };
    for (int32_t i = 0; i + 1 < static_cast<int32_t>(syms.size()); ++i) push(i);
    while (!queue.empty()) {
      const candidate c = queue.top();
      queue.pop();
      symbol& l = syms[c.left];
      symbol& r = syms[c.right];
      // Stale when either side was merged since the push (sizes then differ).
      if (l.size == 0 || r.size == 0 || l.size + r.size != c.size) continue;
      l.size += r.size;
      r.size = 0;
      l.next = r.next;
      if (l.next >= 0) syms[l.next].prev = c.left;
      push(l.prev);
      push(c.left);
    }
    for (int32_t i = syms.empty() ? -1 : 0; i >= 0; i = syms[i].next) {
      const std::string_view piece = s.substr(syms[i].begin, syms[i].size);
      if (int32_t id = vocab_.find(piece); id >= 0) {
        out.push_back(id);
        continue;
      }
      for (char c : piece) {  // byte fallback
        const int32_t id = byte_token_[static_cast<uint8_t>(c)];
        if (id >= 0) {
          out.push_back(id);
        } else if (vocab_.unk >= 0) {
          out.push_back(vocab_.unk);
        }
      }
    }
  }

  bool add_space_prefix_;
  std::array<int32_t, 256> byte_token_{};  // byte -> <0xNN> token id, or -1
};

}  // namespace

std::unique_ptr<tokenizer> make_spm_tokenizer(tokenizer_vocab vocab, bool add_space_prefix) {
  return std::make_unique<tokenizer_spm>(std::move(vocab), add_space_prefix);
}

}  // namespace kvarena
