// tokenizer-pretokenize.h: splits text into the "words" that byte-level BPE merges within,
// the job the pre-tokenizer regex does in GPT-2, Qwen2 and Llama-3 tokenizers. Each pattern
// is a hand-written matcher over code points (std::regex has no \p classes), written to
// agree with llama.cpp's splitter, the reference. Not for SentencePiece vocabularies: they
// have no pre-tokenizer.
#pragma once
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kvarena {

enum class pretokenizer {
  // 's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
  gpt2,
  // (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*
  //   |\s*[\r\n]+|\s+(?!\S)|\s+
  llama3,
  // as llama3 but single digits: \p{N}
  qwen2,
  // Qwen3.5: as qwen2, with combining marks (\p{M}) counted as letters:
  // (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?[\p{L}\p{M}]+|\p{N}
  //   | ?[^\s\p{L}\p{M}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
  qwen35,
  // StarCoder, Refact, Command-R: two patterns in turn: \p{N} (every digit alone), then gpt2
  starcoder,
  // Falcon: [\p{P}$+<=>^~|`]+ , then gpt2 , then [0-9][0-9][0-9]
  falcon,
  // DeepSeek-Coder: [\r\n] , then \s?\p{L}+ , then \s?\p{P}+ , then [\x{4E00}-\x{9FA5}
  //   \x{0800}-\x{4E00}\x{AC00}-\x{D7FF}]+ , then \p{N}
  deepseek_coder,
  // Gemma 4 (SentencePiece-style BPE): only runs of line feeds split off: [^\n]+|[\n]+
  newlines,
  // llama.cpp's fallback for BPE vocabularies with pre "default" or none: four patterns
  // applied in turn, each splitting the pieces of the one before:
  // [\p{P}$+<=>^~|]+ , then gpt2 , then \p{N}+ , then [0-9][0-9][0-9]
  bpe_default,
};

// The pre-tokenizer for a GGUF tokenizer.ggml.pre name; nullopt when not supported.
std::optional<pretokenizer> pretokenizer_from_name(std::string_view name);
// The supported names, comma-separated, for error messages.
std::string pretokenizer_names();
const char* pretokenizer_name(pretokenizer kind);

// Appends the words of `text` to `words`, in order; their concatenation is `text` (after
// invalid UTF-8 bytes are replaced by U+FFFD, as the reference does).
void pretokenize(std::string_view text, pretokenizer kind, std::vector<std::string>& words);

}  // namespace kvarena
