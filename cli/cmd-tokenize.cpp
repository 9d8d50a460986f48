// cmd-tokenize.cpp: `kvarena tokenize --model M "text" [--no-bos] [--special] [-f FILE]`
// prints {"n_vocab":N,"tokens":[...],"pieces":[...]} (a piece that is not valid UTF-8 on its
// own, such as half of a multi-byte character, is null), the same shape as llamaref's;
// `--decode 1,2,3` prints {"text":"..."} instead. M is a GGUF (a vocabulary-only one will do)
// or a llama2.c tokenizer.bin.
#include <cstdio>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli-commands.h"
#include "engine-error.h"
#include "tokenizer.h"
#include "unicode-utf8.h"

namespace kvarena::cli {

namespace {

struct tokenize_args {
  std::string model;
  std::string text;
  std::string file;    // -f: read the text from here (bytes as they are)
  std::string decode;  // "1,2,3": decode these ids instead
  bool no_bos = false;
  bool special = false;
};

std::vector<int32_t> parse_ids(const std::string& list) {
  std::vector<int32_t> ids;
  size_t pos = 0;
  while (pos <= list.size()) {
    size_t end = list.find(',', pos);
    if (end == std::string::npos) end = list.size();
    const std::string item = list.substr(pos, end - pos);
    size_t used = 0;
    long long v = 0;
    try {
      v = std::stoll(item, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used == 0 || used != item.size() || v < INT32_MIN || v > INT32_MAX) {
      throw engine_error("--decode: '" + item + "' is not a token id (want a list like 1,2,3)");
    }
    ids.push_back(static_cast<int32_t>(v));
    pos = end + 1;
  }
  return ids;
}

std::string dump(const nlohmann::ordered_json& j) {
  // Decoded text can hold invalid UTF-8 (a cut multi-byte character): print U+FFFD there.
  return j.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

int run_tokenize(const tokenize_args& a) {
  const auto tok = tokenizer::from_file(a.model);
  if (!a.decode.empty()) {
    nlohmann::ordered_json out = {{"text", tok->decode(parse_ids(a.decode))}};
    std::printf("%s\n", dump(out).c_str());
    return 0;
  }
  std::string text = a.text;
  if (!a.file.empty()) {
    std::ifstream in(a.file, std::ios::binary);
    if (!in) throw engine_error(a.file + ": cannot open the text file");
    text.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  const std::vector<int32_t> ids = tok->encode(text, !a.no_bos, a.special);
  nlohmann::ordered_json pieces = nlohmann::ordered_json::array();
  for (int32_t id : ids) {
    const std::string p = tok->token_to_piece(id);
    if (unicode::utf8_is_valid(p)) {
      pieces.push_back(p);
    } else {
      pieces.push_back(nullptr);
    }
  }
  nlohmann::ordered_json out = {{"n_vocab", tok->n_vocab()}, {"tokens", ids}, {"pieces", pieces}};
  std::printf("%s\n", dump(out).c_str());
  return 0;
}

}  // namespace

void add_tokenize_command(CLI::App& app, command_fn& run) {
  auto* sub = app.add_subcommand("tokenize", "Text to token ids (or ids to text with --decode)");
  auto a = std::make_shared<tokenize_args>();
  sub->add_option("--model,-m", a->model, "GGUF (vocabulary-only is fine) or llama2.c tokenizer.bin")
      ->required();
  sub->add_option("text", a->text, "Text to tokenize (or use -f)");
  sub->add_option("-f,--file", a->file, "Read the text from this file");
  sub->add_option("--decode", a->decode, "Comma-separated token ids to decode");
  sub->add_flag("--no-bos", a->no_bos, "Do not add BOS (where the vocabulary would)");
  sub->add_flag("--special", a->special, "Parse control-token text such as <|im_start|>");
  sub->callback([&run, a] { run = [a] { return run_tokenize(*a); }; });
}

}  // namespace kvarena::cli
