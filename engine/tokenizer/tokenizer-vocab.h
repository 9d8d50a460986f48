// tokenizer-vocab.h: what both tokenizer families share: the token table (text, type,
// score) with text -> id lookup and the special ids; the special-token split that runs
// before any pre-tokenization; and tokenizer_base, the encode/decode frame each family
// (tokenizer-bpe.cpp, tokenizer-spm.cpp) fills in. Internal to the tokenizer files.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "tokenizer-pretokenize.h"
#include "tokenizer.h"

namespace kvarena {

// tokenizer.ggml.token_type values.
enum class token_type : uint8_t {
  undefined = 0, normal = 1, unknown = 2, control = 3, user_defined = 4, unused = 5, byte = 6,
};

// A piece of the input after special tokens are split out: either text to tokenize
// (token < 0; bytes [begin, end) of the input) or one special token.
struct text_fragment {
  int32_t token;
  size_t begin;
  size_t end;
};

class tokenizer_vocab {
 public:
  tokenizer_vocab() = default;

  // Takes the token table; types/scores may be empty (all normal / all 0). Throws
  // engine_error "SOURCE: ..." on a size mismatch.
  void assign(const std::string& source, std::vector<std::string> texts, std::vector<token_type> types,
              std::vector<float> scores);

  int64_t size() const { return static_cast<int64_t>(texts_.size()); }
  bool valid(int32_t id) const { return id >= 0 && id < static_cast<int32_t>(texts_.size()); }
  const std::string& text(int32_t id) const { return texts_[id]; }
  token_type type(int32_t id) const { return types_[id]; }
  float score(int32_t id) const { return scores_.empty() ? 0.0f : scores_[id]; }
  // The id whose text is exactly `s`, or -1. When texts repeat, the last id wins (as in the
  // reference).
  int32_t find(std::string_view s) const;

  // Throws engine_error "token id N is out of range ..." unless valid(id).
  void require(int32_t id) const;
  // The byte a byte-type token ("<0xNN>") stands for, or -1 for other tokens.
  int byte_value(int32_t id) const;

  // Marks a special token "rstrip": ASCII whitespace right after it is dropped when it is
  // split out (llama.cpp's LLAMA_TOKEN_ATTR_RSTRIP; Phi-3 sets it on its chat tokens).
  void set_rstrip(int32_t id, bool on);

  // Splits `text` at special tokens, as the reference does: user-defined tokens always, and
  // control and unknown tokens too when parse_special. Longer tokens are split out first,
  // everywhere, then shorter ones inside what is left.
  std::vector<text_fragment> split_special(std::string_view text, bool parse_special) const;

  int32_t bos = -1;
  int32_t eos = -1;
  int32_t unk = -1;
  bool add_bos = false;
  bool add_eos = false;

 private:
  std::vector<std::string> texts_;  // (n_vocab) token text as stored ("Ġthe", "▁the", "<0x0A>")
  std::vector<token_type> types_;   // (n_vocab)
  std::vector<float> scores_;       // (n_vocab) or empty
  // Open-addressing hash index over texts_: (capacity, a power of two) slots holding
  // (hash >> 32) << 32 | (id + 1); 0 = empty. Flat, because loading does ~3 lookups per merge.
  std::vector<uint64_t> index_;
  std::vector<int32_t> specials_;   // control/user-defined/unknown ids, longest text first
  std::vector<bool> rstrip_;        // (n_vocab) or empty: set_rstrip's marks
};

// The frame both families share: BOS/EOS, the special-token split, and decode (which skips
// control and unknown tokens). A family supplies how one text fragment encodes and what
// bytes one token stands for.
class tokenizer_base : public tokenizer {
 public:
  // decode_drops_first_space: SentencePiece's decode, undoing the encoder's space prefix.
  explicit tokenizer_base(tokenizer_vocab vocab, bool decode_drops_first_space = false)
      : vocab_(std::move(vocab)), decode_drops_first_space_(decode_drops_first_space) {}

  std::vector<int32_t> encode(std::string_view text, bool add_bos, bool parse_special) const final;
  std::string token_to_piece(int32_t id) const final;
  std::string decode(const std::vector<int32_t>& ids) const final;

  int64_t n_vocab() const final { return vocab_.size(); }
  int32_t bos_id() const final { return vocab_.bos; }
  int32_t eos_id() const final { return vocab_.eos; }
  bool adds_bos() const final { return vocab_.add_bos && vocab_.bos >= 0; }
  bool is_control(int32_t id) const final {
    return vocab_.valid(id) && vocab_.type(id) == token_type::control;
  }

 protected:
  // Appends the ids of one fragment of plain text; after_special: it starts the input or
  // follows a special token.
  virtual void encode_fragment(std::string_view text, bool after_special,
                               std::vector<int32_t>& out) const = 0;
  // Appends the bytes a (valid) token stands for.
  virtual void append_piece(int32_t id, std::string& out) const = 0;

  tokenizer_vocab vocab_;
  const bool decode_drops_first_space_;
};

// The two families, built by tokenizer.cpp's factories from a filled vocabulary.
// Byte-level BPE. merges: "left right" strings, rank = index; a merge whose parts or result
// are not tokens is ignored. spm_style: SentencePiece-style BPE over raw UTF-8 (Gemma 4):
// spaces become "▁", unknown characters <0xNN> byte tokens.
std::unique_ptr<tokenizer> make_bpe_tokenizer(tokenizer_vocab vocab,
                                              const std::vector<std::string>& merges,
                                              pretokenizer pre, bool spm_style = false);
// SentencePiece-style BPE with scores and <0xNN> byte fallback.
std::unique_ptr<tokenizer> make_spm_tokenizer(tokenizer_vocab vocab, bool add_space_prefix);

}  // namespace kvarena
