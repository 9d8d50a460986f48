// cmd-train-tokenizer.cpp: `kvarena train-tokenizer --input FILE... --vocab N --out PREFIX`
// trains a byte-level BPE vocabulary (engine/tokenizer/tokenizer-train.h) on the files (each one
// text) and writes PREFIX.gguf (vocabulary-only GGUF that tokenizer::from_gguf loads) and
// PREFIX.json (tokens, token_types, merges, ids, chat template). It then loads the GGUF
// back, encodes the input with it and prints one JSON object on stdout: the vocabulary
// size, merges, and the compression (bytes per token). Progress goes to stderr.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli-commands.h"
#include "engine-error.h"
#include "gguf-reader.h"
#include "tokenizer-train.h"
#include "tokenizer.h"

namespace kvarena::cli {

namespace {

using json = nlohmann::ordered_json;

struct train_args {
  std::vector<std::string> inputs;
  int64_t vocab = 4096;
  std::string out;
  std::string special = "<|endoftext|>,<|im_start|>,<|im_end|>";
  std::string pre = "qwen2";
  int64_t min_frequency = 2;
  bool letters_apart = false;
  bool quiet = false;
};

std::vector<std::string> split_list(const std::string& list) {
  std::vector<std::string> items;
  size_t pos = 0;
  while (pos < list.size()) {
    size_t end = list.find(',', pos);
    if (end == std::string::npos) end = list.size();
    if (end > pos) items.push_back(list.substr(pos, end - pos));
    pos = end + 1;
  }
  return items;
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

double round3(double v) { return std::round(v * 1000) / 1000; }

void write_json(const bpe_train_result& r, const std::string& path) {
  json j;
  j["model"] = "gpt2";
  j["pre"] = pretokenizer_name(r.pre);
  j["tokens"] = r.tokens;
  j["token_types"] = r.token_types;
  j["merges"] = r.merges;
  j["bos_token_id"] = r.bos_id;
  j["eos_token_id"] = r.eos_id;
  j["add_bos"] = r.add_bos;
  j["chat_template"] = r.chat_template;
  std::ofstream f(path, std::ios::binary);
  if (!f) throw engine_error(path + ": cannot write");
  f << j.dump(1, ' ', false, json::error_handler_t::replace) << '\n';
  if (!f) throw engine_error(path + ": write failed");
}

int run_train(const train_args& a) {
  const auto pre = pretokenizer_from_name(a.pre);
  if (!pre) {
    throw engine_error("train-tokenizer: --pre '" + a.pre + "' is not supported (qwen2, llama-bpe, gpt-2, default)");
  }
  bpe_train_options opt;
  opt.vocab_size = a.vocab;
  opt.special_tokens = split_list(a.special);
  opt.pre = *pre;
  opt.min_frequency = a.min_frequency;
  opt.letters_apart = a.letters_apart;
  const int64_t smallest = 256 + static_cast<int64_t>(opt.special_tokens.size());
  if (a.vocab < smallest) {
    throw engine_error("train-tokenizer: --vocab " + std::to_string(a.vocab) + " is too small: it must be at least " +
                       std::to_string(smallest) + " (256 byte tokens + " +
                       std::to_string(opt.special_tokens.size()) + " special tokens)");
  }

  std::vector<std::string> texts;
  int64_t n_bytes = 0;
  for (const std::string& path : a.inputs) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw engine_error("train-tokenizer: " + path + ": cannot open the input file");
    texts.emplace_back(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    n_bytes += static_cast<int64_t>(texts.back().size());
  }
  if (n_bytes == 0) throw engine_error("train-tokenizer: the input files are empty");

  if (!a.quiet) {
    opt.progress = [](const char* phase, int64_t done, int64_t total) {
      if (std::string(phase) == "count") {
        std::fprintf(stderr, "train-tokenizer: counting words: %.1f / %.1f MB\n", done / 1e6, total / 1e6);
      } else {
        std::fprintf(stderr, "train-tokenizer: merges: %lld / %lld\n", static_cast<long long>(done),
                     static_cast<long long>(total));
      }
    };
  }
  const auto t0 = std::chrono::steady_clock::now();
  const bpe_train_result r = train_bpe(texts, opt);
  const double train_s = seconds_since(t0);

  const std::string gguf_path = a.out + ".gguf";
  const std::string json_path = a.out + ".json";
  write_bpe_gguf(r, gguf_path);
  write_json(r, json_path);

  // Compression, measured with the vocabulary as the engine loads it.
  const auto t1 = std::chrono::steady_clock::now();
  gguf_file f(gguf_path);
  const auto tok = tokenizer::from_gguf(f);
  int64_t n_tokens = 0;
  for (const std::string& t : texts) {
    // Piece by piece (the same words as the whole text), so a large input is not
    // pre-tokenized in one go.
    for (std::string_view piece : bpe_text_pieces(t, size_t(1) << 20)) {
      n_tokens += static_cast<int64_t>(tok->encode(piece, false, true).size());
    }
  }
  const double encode_s = seconds_since(t1);

  json j;
  j["gguf"] = gguf_path;
  j["json"] = json_path;
  j["vocab_size"] = tok->n_vocab();
  j["merges"] = r.merges.size();
  j["special_tokens"] = opt.special_tokens.size();
  j["pre"] = pretokenizer_name(r.pre);
  j["letters_apart"] = a.letters_apart;
  j["input_files"] = a.inputs.size();
  j["input_bytes"] = n_bytes;
  j["words"] = r.n_words;
  j["unique_words"] = r.n_unique_words;
  j["input_tokens"] = n_tokens;
  j["bytes_per_token"] = n_tokens > 0 ? round3(static_cast<double>(n_bytes) / n_tokens) : 0.0;
  j["train_seconds"] = round3(train_s);
  j["encode_seconds"] = round3(encode_s);
  std::fprintf(stderr, "train-tokenizer: vocab %lld (%zu merges), %lld bytes -> %lld tokens (%.3f bytes/token); "
               "trained in %.2f s; wrote %s, %s\n",
               static_cast<long long>(tok->n_vocab()), r.merges.size(), static_cast<long long>(n_bytes),
               static_cast<long long>(n_tokens), n_tokens > 0 ? static_cast<double>(n_bytes) / n_tokens : 0.0,
               train_s, gguf_path.c_str(), json_path.c_str());
  std::printf("%s\n", j.dump(-1, ' ', false, json::error_handler_t::replace).c_str());
  return 0;
}

}  // namespace

void add_train_tokenizer_command(CLI::App& app, command_fn& run) {
  auto* sub = app.add_subcommand("train-tokenizer", "Train a byte-level BPE vocabulary (GGUF + JSON)");
  auto a = std::make_shared<train_args>();
  sub->add_option("--input,-i", a->inputs, "Text files to train on (each one text)")->required();
  sub->add_option("--vocab", a->vocab, "Total vocabulary size (256 bytes + merges + specials)")->capture_default_str();
  sub->add_option("--out,-o", a->out, "Output prefix: writes PREFIX.gguf and PREFIX.json")->required();
  sub->add_option("--special", a->special, "Comma-separated special tokens (\"\" for none)")->capture_default_str();
  sub->add_option("--pre", a->pre, "Pre-tokenizer: qwen2, llama-bpe, gpt-2 or default")->capture_default_str();
  sub->add_option("--min-frequency", a->min_frequency, "Pairs seen fewer times are not merged")
      ->capture_default_str();
  sub->add_flag("--letters-apart", a->letters_apart,
                "Learn no merge that joins a letter to another character, so a word encodes the same "
                "after a space, a quote or a bracket");
  sub->add_flag("--quiet,-q", a->quiet, "No progress lines on stderr");
  sub->callback([&run, a] { run = [a] { return run_train(*a); }; });
}

}  // namespace kvarena::cli
