// tokenizer.cpp: the factories: read a vocabulary from GGUF metadata (tokenizer.ggml.*) or
// a llama2.c tokenizer.bin and build the matching family (tokenizer-bpe.cpp,
// tokenizer-spm.cpp). Defaults for keys a file leaves out follow llama.cpp's loader.
#include "tokenizer.h"

#include <cctype>
#include <cstring>
#include <fstream>
#include <iterator>

#include "engine-error.h"
#include "gguf-reader.h"
#include "tokenizer-vocab.h"

namespace kvarena {

namespace {

// Texts that llama.cpp's loader (the reference) makes control tokens whatever the file says:
// its end-of-generation list. Qwen2's vocabulary, for one, has "</s>" as a normal token, and
// the reference splits it out under parse_special; so do we.
constexpr const char* k_control_looking[] = {
    "<|eot_id|>", "<|im_end|>", "<|end|>", "<|return|>", "<|call|>", "<|flush|>", "<|calls|>",
    "<end_of_turn>", "<|endoftext|>", "</s>", "<|eom_id|>", "<EOT>", "_<EOT>", "[EOT]", "[EOS]",
    "<|end_of_text|>", "<end_of_utterance>", "<eos>", "<turn|>", "<|tool_response>",
    "<\xEF\xBD\x9C" "end\xE2\x96\x81" "of\xE2\x96\x81" "sentence\xEF\xBD\x9C>",  // <｜end▁of▁sentence｜>
    "[e~[",
};

std::vector<token_type> types_from_gguf(const gguf_file& f, const std::vector<std::string>& texts) {
  std::vector<token_type> types(texts.size(), token_type::normal);
  if (const auto* raw = f.get_int_array("tokenizer.ggml.token_type")) {
    if (raw->size() < texts.size()) {
      f.fail("tokenizer.ggml.token_type has " + std::to_string(raw->size()) + " entries for " +
             std::to_string(texts.size()) + " tokens");
    }
    for (size_t i = 0; i < texts.size(); ++i) {
      const int64_t t = (*raw)[i];
      types[i] = t >= 1 && t <= 6 ? static_cast<token_type>(t) : token_type::undefined;
    }
  }
  for (size_t i = 0; i < texts.size(); ++i) {
    const std::string& t = texts[i];
    if (t.size() < 4 || t.size() > 32 || (t[0] != '<' && t[0] != '_' && t[0] != '[')) continue;
    for (const char* c : k_control_looking) {
      if (t == c) types[i] = token_type::control;
    }
  }
  return types;
}

std::vector<float> scores_from_gguf(const gguf_file& f) {
  std::vector<float> scores;
  const gguf_value* v = f.find("tokenizer.ggml.scores");
  if (!v) return scores;
  gguf_value probe;
  probe.type = v->elem_type;
  if (v->type == gguf_vtype::array && probe.is_int()) {  // some converters write int32 scores
    for (int64_t s : *f.get_int_array("tokenizer.ggml.scores")) scores.push_back(static_cast<float>(s));
  } else {
    for (double s : *f.get_float_array("tokenizer.ggml.scores")) scores.push_back(static_cast<float>(s));
  }
  return scores;
}

// A special id from `key`, or `fallback`; ids outside the vocabulary are ignored, as the
// reference does.
int32_t special_id(const gguf_file& f, const std::string& key, int32_t fallback, int64_t n_vocab) {
  auto ok = [&](int64_t id) { return id >= 0 && id < n_vocab; };
  if (auto id = f.get_int(key); id && ok(*id)) return static_cast<int32_t>(*id);
  return ok(fallback) ? fallback : -1;
}

// The reference's one per-model token rule that changes encoding here: when general.name
// (lowercased) contains "phi-3" or "phi3", every special token drops the ASCII whitespace
// after it (rstrip), "</s>" too, but not <unk>, <s>, <|endoftext|>.
void apply_name_rules(const gguf_file& f, tokenizer_vocab& vocab) {
  std::string name = f.get_string("general.name").value_or("");
  for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (name.find("phi-3") == std::string::npos && name.find("phi3") == std::string::npos) return;
  for (int32_t id = 0; id < vocab.size(); ++id) {
    const token_type t = vocab.type(id);
    if (t == token_type::control || t == token_type::user_defined || t == token_type::unknown) {
      vocab.set_rstrip(id, true);
    }
  }
  auto set = [&](const char* text, bool on) {
    if (int32_t id = vocab.find(text); id >= 0) vocab.set_rstrip(id, on);
  };
  set("</s>", true);
  for (const char* text : {"<unk>", "<s>", "<|endoftext|>"}) set(text, false);
}

}  // namespace

std::unique_ptr<tokenizer> tokenizer::from_gguf(const gguf_file& file) {
  const std::string& path = file.path();
  const auto model = file.get_string("tokenizer.ggml.model");
  if (!model) file.fail("missing metadata key 'tokenizer.ggml.model' (the file has no vocabulary)");
  const auto* texts = file.get_string_array("tokenizer.ggml.tokens");
  if (!texts) file.fail("missing metadata key 'tokenizer.ggml.tokens'");

  tokenizer_vocab vocab;
  vocab.assign(path, *texts, types_from_gguf(file, *texts), scores_from_gguf(file));
  apply_name_rules(file, vocab);
  const int64_t n = vocab.size();

  if (*model == "llama") {
    vocab.bos = special_id(file, "tokenizer.ggml.bos_token_id", 1, n);
    vocab.eos = special_id(file, "tokenizer.ggml.eos_token_id", 2, n);
    vocab.unk = special_id(file, "tokenizer.ggml.unknown_token_id", 0, n);
    vocab.add_bos = file.get_bool("tokenizer.ggml.add_bos_token").value_or(true);
    vocab.add_eos = file.get_bool("tokenizer.ggml.add_eos_token").value_or(false);
    const bool space_prefix = file.get_bool("tokenizer.ggml.add_space_prefix").value_or(true);
    return make_spm_tokenizer(std::move(vocab), space_prefix);
  }
  if (*model == "gpt2") {
    const std::string pre_name = file.get_string("tokenizer.ggml.pre").value_or("default");
    const auto pre = pretokenizer_from_name(pre_name);
    if (!pre) {
      file.fail("pre-tokenizer 'tokenizer.ggml.pre' = '" + pre_name + "' is not supported (supported: " +
                pretokenizer_names() + ")");
    }
    const auto* merges = file.get_string_array("tokenizer.ggml.merges");
    if (!merges) file.fail("missing metadata key 'tokenizer.ggml.merges' (needed by a gpt2 tokenizer)");
    vocab.bos = special_id(file, "tokenizer.ggml.bos_token_id", -1, n);
    vocab.eos = special_id(file, "tokenizer.ggml.eos_token_id", -1, n);
    vocab.unk = special_id(file, "tokenizer.ggml.unknown_token_id", -1, n);
    // Llama-3 vocabularies want BOS even where the file does not say so.
    vocab.add_bos = file.get_bool("tokenizer.ggml.add_bos_token").value_or(*pre == pretokenizer::llama3);
    vocab.add_eos = file.get_bool("tokenizer.ggml.add_eos_token").value_or(false);
    return make_bpe_tokenizer(std::move(vocab), *merges, *pre);
  }
  if (*model == "gemma4") {
    // SentencePiece-style BPE: merges over raw UTF-8 with "▁" for spaces; the reference
    // ignores tokenizer.ggml.pre here and always adds BOS.
    const auto* merges = file.get_string_array("tokenizer.ggml.merges");
    if (!merges) file.fail("missing metadata key 'tokenizer.ggml.merges' (needed by a gemma4 tokenizer)");
    vocab.bos = special_id(file, "tokenizer.ggml.bos_token_id", -1, n);
    vocab.eos = special_id(file, "tokenizer.ggml.eos_token_id", -1, n);
    vocab.unk = special_id(file, "tokenizer.ggml.unknown_token_id", -1, n);
    vocab.add_bos = true;
    vocab.add_eos = file.get_bool("tokenizer.ggml.add_eos_token").value_or(false);
    return make_bpe_tokenizer(std::move(vocab), *merges, pretokenizer::newlines, /*spm_style=*/true);
  }
  file.fail("tokenizer model 'tokenizer.ggml.model' = '" + *model +
            "' is not supported (supported: llama, gpt2, gemma4)");
}

// tokenizer.bin: int32 max_token_length, then per token: f32 score, int32 length, bytes.
// llama2.c writes "▁" as a plain space and BOS/EOS as "\n<s>\n" / "\n</s>\n"; they are put
// back into GGUF form here so the SentencePiece code sees one vocabulary shape.
std::unique_ptr<tokenizer> tokenizer::from_llama2c(const std::string& path, int64_t n_vocab) {
  std::ifstream in(path, std::ios::binary);
  if (!in) fail_file(path, "cannot open the tokenizer file");
  const std::string data((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  size_t pos = 0;
  auto read_i32 = [&](int32_t& v) {
    if (data.size() - pos < 4) return false;
    std::memcpy(&v, data.data() + pos, 4);
    pos += 4;
    return true;
  };
  int32_t max_len = 0;
  if (!read_i32(max_len) || max_len <= 0) fail_file(path, "not a llama2.c tokenizer.bin (bad header)");

  std::vector<std::string> texts;
  std::vector<float> scores;
  std::vector<token_type> types;
  while (n_vocab < 0 ? pos < data.size() : static_cast<int64_t>(texts.size()) < n_vocab) {
    const size_t index = texts.size();
    float score = 0;
    int32_t len = 0;
    int32_t score_bits = 0;
    if (!read_i32(score_bits) || !read_i32(len) || len < 0 || static_cast<size_t>(len) > data.size() - pos) {
      fail_file(path, "truncated at token " + std::to_string(index) +
                          (n_vocab >= 0 ? " of " + std::to_string(n_vocab) : std::string()));
    }
    if (len > max_len) {
      fail_file(path, "token " + std::to_string(index) + " is " + std::to_string(len) +
                          " bytes, over the header's max_token_length " + std::to_string(max_len) +
                          " (is this a llama2.c tokenizer.bin?)");
    }
    std::memcpy(&score, &score_bits, 4);
    std::string text = data.substr(pos, len);
    pos += len;
    token_type type = token_type::normal;
    if (index == 0) {
      type = token_type::unknown;
    } else if (index == 1 || index == 2) {
      type = token_type::control;
      if (text == "\n<s>\n") text = "<s>";
      if (text == "\n</s>\n") text = "</s>";
    } else if (text.size() == 6 && text.compare(0, 3, "<0x") == 0 && text[5] == '>') {
      type = token_type::byte;
    } else {
      std::string escaped;
      for (char c : text) {
        if (c == ' ') {
          escaped += "\xE2\x96\x81";  // "▁"
        } else {
          escaped += c;
        }
      }
      text = std::move(escaped);
    }
    texts.push_back(std::move(text));
    scores.push_back(score);
    types.push_back(type);
  }
  if (texts.size() < 3) fail_file(path, "a llama2.c tokenizer needs at least <unk>, <s>, </s>");

  tokenizer_vocab vocab;
  vocab.assign(path, std::move(texts), std::move(types), std::move(scores));
  vocab.unk = 0;
  vocab.bos = 1;
  vocab.eos = 2;
  vocab.add_bos = true;
  return make_spm_tokenizer(std::move(vocab), /*add_space_prefix=*/true);
}

std::unique_ptr<tokenizer> tokenizer::from_file(const std::string& path) {
  char magic[4] = {};
  {
    std::ifstream in(path, std::ios::binary);
    if (!in) fail_file(path, "cannot open the file");
    in.read(magic, 4);
  }
  if (std::memcmp(magic, "GGUF", 4) == 0) {
    gguf_file f(path);
    return from_gguf(f);
  }
  return from_llama2c(path);
}

}  // namespace kvarena
