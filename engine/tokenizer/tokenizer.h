// tokenizer.h: text <-> token ids. Two families behind one interface: byte-level BPE
// (GPT-2, Qwen2, Llama-3; vocab + merges + a pre-tokenizer pattern) and SentencePiece-style
// BPE with scores (Llama/Llama-2; from GGUF or a llama2.c tokenizer.bin). Exact agreement
// with the reference vectors in shared/models is the contract.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace kvarena {

class gguf_file;

class tokenizer {
 public:
  virtual ~tokenizer() = default;

  // From GGUF metadata (tokenizer.ggml.*); throws engine_error naming the file if missing/bad.
  static std::unique_ptr<tokenizer> from_gguf(const gguf_file& file);
  // From a llama2.c tokenizer.bin (SentencePiece-style, BOS = 1, EOS = 2). n_vocab < 0: read
  // tokens to the end of the file.
  static std::unique_ptr<tokenizer> from_llama2c(const std::string& path, int64_t n_vocab = -1);
  // A GGUF (a vocabulary-only one is enough) or a llama2.c tokenizer.bin, told apart by the
  // GGUF magic.
  static std::unique_ptr<tokenizer> from_file(const std::string& path);

  // add_bos: prepend BOS when the vocabulary says so (add_bos_token / family default); also
  // appends EOS where the vocabulary sets add_eos_token, as llama.cpp's add_special does.
  // parse_special: recognise control-token text such as "<|im_start|>" in the input.
  // User-defined tokens (type 4) are always recognised, as in llama.cpp and HF tokenizers.
  virtual std::vector<int32_t> encode(std::string_view text, bool add_bos,
                                      bool parse_special = false) const = 0;
  // The bytes of one token's piece (SPM: "▁" -> " ", <0xNN> -> byte; BPE: byte map undone;
  // control and user-defined tokens: their text). Ids out of range throw engine_error.
  virtual std::string token_to_piece(int32_t id) const = 0;
  // Concatenated pieces of all but control and unknown tokens; SPM drops the leading space
  // of the first piece (the one its encoder adds), so decode(encode(s)) == s.
  virtual std::string decode(const std::vector<int32_t>& ids) const = 0;

  virtual int64_t n_vocab() const = 0;
  virtual int32_t bos_id() const = 0;  // -1 when none
  virtual int32_t eos_id() const = 0;  // -1 when none
  virtual bool adds_bos() const = 0;   // whether encode(..., add_bos=true) prepends BOS
  virtual bool is_control(int32_t id) const = 0;
};

}  // namespace kvarena
