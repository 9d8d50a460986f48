// tokenizer-train.h: trains a byte-level BPE vocabulary (GPT-2 / Qwen2 style) from text,
// in the form tokenizer::from_gguf loads with tokenizer.ggml.model = "gpt2": tokens in
// GPT-2's byte-to-character form ("Ġthe"), merges "left right" in rank order. Training
// splits text exactly as encoding does: special tokens first (the engine's own split), then
// the engine's pre-tokenizer, so every merge learnt is one the encoder can apply.
//
// Algorithm: count the distinct words, start each from its bytes, then repeatedly merge
// the most frequent adjacent pair everywhere. Pair counts and a pair -> words index are
// kept and updated incrementally after each merge (only the words holding the pair are
// touched); the best pair comes from a max-heap with lazy invalidation (an entry whose
// count is out of date is re-pushed with the current count when it reaches the top).
//
// Ties (pairs of equal count) go to the pair whose (left bytes, right bytes) is smaller,
// compared as byte strings (unsigned), left first: e.g. ("a", "b") before ("a", "c")
// before ("b", "a"). Training is fully deterministic: same input and options, same output.
//
// Vocabulary order: the 256 byte tokens (byte 0..255, in GPT-2 character form), then the
// merged tokens in merge order, then the special tokens (type control). A merge whose
// result is already a token (e.g. "a"+"bc" after "ab"+"c") adds no token but is kept as a
// merge, as HF tokenizers' trainer does.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "tokenizer-pretokenize.h"

namespace kvarena {

struct bpe_train_options {
  // Total vocabulary size: 256 byte tokens + merged tokens + special tokens. Training stops
  // early when no pair reaches min_frequency.
  int64_t vocab_size = 4096;
  // Split out of the text before pre-tokenization (they never take part in merges) and
  // appended to the vocabulary as control tokens. Must be non-empty and distinct.
  std::vector<std::string> special_tokens = {"<|endoftext|>", "<|im_start|>", "<|im_end|>"};
  pretokenizer pre = pretokenizer::qwen2;
  // Split every pre-tokenized word where letters meet other characters before counting, so
  // no merge joins a letter to a space, quote, bracket or digit: " Books", "'Books" and
  // "[Books" then all end in the one token "Books", and a name reads the same in a
  // sentence, a quoted page label and a typed action. Encoding needs nothing new: the
  // GGUF keeps `pre`, and with no mixed merge the encoder's BPE stops at the same places.
  bool letters_apart = false;
  // A pair seen fewer times than this (counting word frequency) is never merged.
  int64_t min_frequency = 2;
  // Called now and then on long work: phase "count" (done/total = bytes of text read) and
  // "merge" (done/total = merges done / merges wanted), every progress_every merges and
  // once at the end of each phase. Optional.
  std::function<void(const char* phase, int64_t done, int64_t total)> progress;
  int64_t progress_every = 500;
};

struct bpe_train_result {
  std::vector<std::string> tokens;       // GPT-2 byte-character form; specials as written
  std::vector<int32_t> token_types;      // 1 normal, 3 control (tokenizer.ggml.token_type)
  std::vector<std::string> merges;       // "left right", rank order
  pretokenizer pre = pretokenizer::qwen2;
  int32_t bos_id = -1;                   // none
  int32_t eos_id = -1;                   // id of "<|endoftext|>" when it is a special token
  bool add_bos = false;
  std::string chat_template;             // ChatML (jinja), see bpe_chatml_template()

  // Statistics of the training input.
  int64_t n_bytes = 0;         // text bytes seen (specials included)
  int64_t n_words = 0;         // pre-tokenized words (with repeats)
  int64_t n_unique_words = 0;  // distinct words
};

// Trains on `texts` (each split and counted on its own). Throws engine_error on bad options
// (vocab_size below 256 + specials, empty or repeated special tokens) or when the input
// holds no text besides special tokens.
bpe_train_result train_bpe(const std::vector<std::string>& texts, const bpe_train_options& options);

// Writes a vocabulary-only GGUF (no tensors) that tokenizer::from_gguf loads:
// tokenizer.ggml.{model = "gpt2", pre, tokens, token_type, merges, eos_token_id,
// add_bos_token}, tokenizer.chat_template and general.name. Returns the file's size.
uint64_t write_bpe_gguf(const bpe_train_result& result, const std::string& path);

// Cuts `text` into pieces of about `chunk` bytes (more when no cut point follows) that
// pre-tokenize to exactly the words of the whole text: a cut falls only just after a '\n'
// with a printable, non-space ASCII character on both sides. Training pre-tokenizes large
// texts this way; so can a caller encoding a large text piece by piece (a special token
// containing such a "x\ny" could be cut, which training never meets: it splits specials out
// first).
std::vector<std::string_view> bpe_text_pieces(std::string_view text, size_t chunk);

// A ChatML chat template (jinja), as Qwen2 models ship it.
const std::string& bpe_chatml_template();

// GPT-2's byte -> character map (the string each byte stands for in the vocabulary), and a
// whole byte string in that form.
const std::string& bpe_byte_char(uint8_t byte);
std::string bpe_bytes_to_chars(const std::string& bytes);

}  // namespace kvarena
