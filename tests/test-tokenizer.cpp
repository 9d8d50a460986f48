// test-tokenizer.cpp: tokenizers against independent references: llama.cpp's test vectors
// for four vocabularies (shared/models/ggml-vocab-*.gguf.inp/.out), llama2.c's own
// tokenizer.bin cases, the gpt-3-encoder package's vectors, and a few outputs of llama.cpp
// itself (tools/llamaref, command noted beside each). Every vector also round-trips:
// decode(encode(s)) == s exactly, for both families (SentencePiece decode drops the one
// space its encoder prefixes). Unit tests of the pieces (UTF-8, classes, pre-tokenizers,
// a tiny tokenizer.bin) need no files.
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

#include "engine-error.h"
#include "gguf-reader.h"
#include "test-util.h"
#include "tokenizer-pretokenize.h"
#include "tokenizer.h"
#include "unicode-tables.h"
#include "unicode-utf8.h"
#include "vocab-vectors.h"

namespace kvarena {
namespace {

using ids = std::vector<int32_t>;
using test::vector_case;

// C-style escaping so that failures show whitespace and control bytes.
std::string show(std::string_view s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    if (c == '\n') out += "\\n";
    else if (c == '\t') out += "\\t";
    else if (c == '\r') out += "\\r";
    else if (c == '"' || c == '\\') out += std::string("\\") + static_cast<char>(c);
    else if (c < 0x20 || c == 0x7F) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02X", c);
      out += buf;
    } else out += static_cast<char>(c);
  }
  return out + "\"";
}

std::string show(const ids& v) {
  std::string out = "[";
  for (size_t i = 0; i < v.size(); ++i) {
    if (i) out += ' ';
    out += std::to_string(v[i]);
  }
  return out + "]";
}

std::string model_path(const std::string& name) { return test::shared_models_dir() + "/" + name; }

std::unique_ptr<tokenizer> load_gguf(const std::string& name) {
  gguf_file f(model_path(name));
  return tokenizer::from_gguf(f);
}


std::vector<vector_case> read_vectors(const std::string& vocab_name) {
  return test::read_vocab_vectors(model_path(vocab_name + ".inp"), model_path(vocab_name + ".out"));
}

// Encodes every vector (no BOS, no special parsing, as the vectors were made) and checks
// ids and the round trip; returns the number that passed both.
size_t check_vectors(const tokenizer& tok, const std::string& vocab_name) {
  const auto cases = read_vectors(vocab_name);
  size_t passed = 0;
  for (const auto& c : cases) {
    const ids got = tok.encode(c.text, /*add_bos=*/false);
    const std::string back = tok.decode(got);
    EXPECT_EQ(got, c.expected) << vocab_name << " text " << show(c.text) << "\n  expected "
                               << show(c.expected) << "\n  actual   " << show(got);
    EXPECT_EQ(back, c.text) << vocab_name << " round trip of " << show(c.text) << " gave " << show(back);
    passed += got == c.expected && back == c.text;
  }
  std::printf("[ vectors  ] %s: %zu/%zu passed\n", vocab_name.c_str(), passed, cases.size());
  return passed;
}

// ---- pieces that need no files ---------------------------------------------------------

TEST(Utf8, DecodesLenientlyLikeTheReference) {
  using namespace unicode;
  EXPECT_EQ(utf8_to_cpts("a\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80"),
            (std::vector<uint32_t>{'a', 0xE9, 0x20AC, 0x1F600}));
  // Stray continuation byte, truncated sequence, 0xFF: U+FFFD each, then resume.
  EXPECT_EQ(utf8_to_cpts("\x80z\xE2\x82q\xFF"),
            (std::vector<uint32_t>{0xFFFD, 'z', 0xFFFD, 0xFFFD, 'q', 0xFFFD}));
  EXPECT_TRUE(utf8_is_valid("h\xC3\xA9llo \xF0\x9F\x98\x80"));
  EXPECT_FALSE(utf8_is_valid("\xC0\x80"));          // overlong
  EXPECT_FALSE(utf8_is_valid("\xED\xA0\x80"));      // surrogate
  EXPECT_FALSE(utf8_is_valid("\xF0\x9F\x98"));      // truncated
  EXPECT_EQ(utf8_from_cpt(0x1F600), "\xF0\x9F\x98\x80");
}

TEST(UnicodeTables, ClassesOfSampleCodePoints) {
  using namespace unicode;
  EXPECT_TRUE(cpt_flags('a') & cpt_letter);
  EXPECT_TRUE(cpt_flags(0x4E2D) & cpt_letter);   // 中
  EXPECT_TRUE(cpt_flags(0x00E9) & cpt_letter);   // é
  EXPECT_TRUE(cpt_flags('7') & cpt_number);
  EXPECT_TRUE(cpt_flags(0x00BD) & cpt_number);   // ½ (No)
  EXPECT_TRUE(cpt_flags(0x0663) & cpt_number);   // Arabic-Indic 3
  EXPECT_TRUE(cpt_flags(' ') & cpt_whitespace);
  EXPECT_TRUE(cpt_flags(0x3000) & cpt_whitespace);
  EXPECT_TRUE(cpt_flags(0x0085) & cpt_whitespace);
  EXPECT_FALSE(cpt_flags(0x001C) & cpt_whitespace);  // Python's isspace says yes; \s says no
  EXPECT_TRUE(cpt_flags('!') & cpt_punctuation);
  EXPECT_TRUE(cpt_flags(0x1F600) & cpt_symbol);
  EXPECT_TRUE(cpt_flags(0x0301) & cpt_mark);
  EXPECT_EQ(cpt_flags(0x0378), 0);  // unassigned
  EXPECT_EQ(cpt_flags(0x110000), 0);
}

std::vector<std::string> split(std::string_view text, pretokenizer kind) {
  std::vector<std::string> words;
  pretokenize(text, kind, words);
  return words;
}
using words = std::vector<std::string>;

TEST(Pretokenize, Gpt2) {
  EXPECT_EQ(split("Hello world's  test\n\n 123abc!!", pretokenizer::gpt2),
            (words{"Hello", " world", "'s", " ", " test", "\n\n", " 123", "abc", "!!"}));
  EXPECT_EQ(split("I'M  ", pretokenizer::gpt2), (words{"I", "'", "M", "  "}));  // case-sensitive
  EXPECT_EQ(split("\t\ta", pretokenizer::gpt2), (words{"\t", "\t", "a"}));  // only " " joins a word
}

TEST(Pretokenize, Llama3AndQwen2) {
  EXPECT_EQ(split("I'M 1234567 ok\r\n\n  x", pretokenizer::llama3),
            (words{"I", "'M", " ", "123", "456", "7", " ok", "\r\n\n", " ", " x"}));
  EXPECT_EQ(split("I'M 1234567 ok", pretokenizer::qwen2),
            (words{"I", "'M", " ", "1", "2", "3", "4", "5", "6", "7", " ok"}));
  EXPECT_EQ(split("(hello)...\n\nworld", pretokenizer::llama3), (words{"(hello", ")...\n\n", "world"}));
}

// The newer patterns, expectations worked out by hand from llama.cpp's regexes (the
// vocabulary-level checks are in test-tokenizer-llamacpp.cpp).
TEST(Pretokenize, Qwen35MarksJoinLetters) {
  EXPECT_EQ(split("e\xCC\x81x 1", pretokenizer::qwen2), (words{"e", "\xCC\x81x", " ", "1"}));
  EXPECT_EQ(split("e\xCC\x81x 1", pretokenizer::qwen35), (words{"e\xCC\x81x", " ", "1"}));
}

TEST(Pretokenize, StarcoderFalconDeepseekCoderGemma4) {
  EXPECT_EQ(split("abc 123 x", pretokenizer::starcoder), (words{"abc", " ", "1", "2", "3", " x"}));
  EXPECT_EQ(split("a `b` 12345,", pretokenizer::falcon),
            (words{"a", " ", "`", "b", "`", " ", "123", "45", ","}));
  EXPECT_EQ(split("Hi\n \xE4\xB8\x96\xE7\x95\x8C x,1", pretokenizer::deepseek_coder),
            (words{"Hi", "\n", " ", "\xE4\xB8\x96\xE7\x95\x8C", " x", ",", "1"}));
  // Line breaks alone, before \s?\p{L}+ could take one; U+3000 (whitespace) ends a CJK run.
  EXPECT_EQ(split("x\ny", pretokenizer::deepseek_coder), (words{"x", "\n", "y"}));
  EXPECT_EQ(split("\xE4\xB8\x96\xE3\x80\x80\xE7\x95\x8C", pretokenizer::deepseek_coder),
            (words{"\xE4\xB8\x96", "\xE3\x80\x80", "\xE7\x95\x8C"}));
  EXPECT_EQ(split("a b\n\nc\n", pretokenizer::newlines), (words{"a b", "\n\n", "c", "\n"}));
}

TEST(Pretokenize, DefaultChain) {
  EXPECT_EQ(split("a+b 12345", pretokenizer::bpe_default), (words{"a", "+", "b", " ", "123", "45"}));
}

TEST(Pretokenize, InvalidUtf8BecomesReplacementCharacter) {
  EXPECT_EQ(split("a\xFF", pretokenizer::gpt2), (words{"a", "\xEF\xBF\xBD"}));
}

// A tiny llama2.c tokenizer.bin: <unk>, <s>, </s>, 256 byte tokens, then pieces with scores.
std::string write_tiny_llama2c(const std::vector<std::pair<std::string, float>>& pieces) {
  const auto dir = test::temp_dir("tokenizer-tiny");
  const std::string path = (dir / "tokenizer.bin").string();
  std::ofstream f(path, std::ios::binary);
  auto put_i32 = [&](int32_t v) { f.write(reinterpret_cast<const char*>(&v), 4); };
  auto put_token = [&](const std::string& t, float score) {
    f.write(reinterpret_cast<const char*>(&score), 4);
    put_i32(static_cast<int32_t>(t.size()));
    f.write(t.data(), static_cast<std::streamsize>(t.size()));
  };
  put_i32(16);
  put_token("<unk>", 0);
  put_token("\n<s>\n", 0);
  put_token("\n</s>\n", 0);
  for (int b = 0; b < 256; ++b) {
    char name[8];
    std::snprintf(name, sizeof name, "<0x%02X>", b);
    put_token(name, 0);
  }
  for (const auto& [t, s] : pieces) put_token(t, s);
  return path;
}

TEST(SpmTiny, HighestScoreMergesFirstAndBytesFallBack) {
  // ids 259.. : " " a b c ab bc " a"  (llama2.c writes "▁" as a space)
  const std::string path = write_tiny_llama2c(
      {{" ", -1}, {"a", -2}, {"b", -2}, {"c", -2}, {"ab", -5}, {"bc", -3}, {" a", -4}});
  auto tok = tokenizer::from_llama2c(path);
  ASSERT_EQ(tok->n_vocab(), 266);
  EXPECT_TRUE(tok->adds_bos());
  EXPECT_TRUE(tok->is_control(1));
  // "▁abc": "bc" (-3) beats "▁a" (-4) and "ab" (-5); then "▁a"; "▁abc" is no token.
  EXPECT_EQ(tok->encode("abc", true), (ids{1, 265, 264}));
  // "é" is no token: its two UTF-8 bytes come out as <0xC3> <0xA9> (ids 3 + byte).
  EXPECT_EQ(tok->encode("é", false), (ids{259, 3 + 0xC3, 3 + 0xA9}));
  EXPECT_EQ(tok->decode({1, 265, 264}), "abc");
  EXPECT_EQ(tok->decode(tok->encode("é a", true)), "é a");
  EXPECT_EQ(tok->token_to_piece(265), " a");
  EXPECT_EQ(tok->encode("", true), (ids{1}));
  EXPECT_EQ(tok->encode("<s>a", false, /*parse_special=*/true), (ids{1, 265}));
  EXPECT_THROW(tok->decode({999}), engine_error);
}

TEST(SpmTiny, TruncatedFileIsAnError) {
  const std::string path = write_tiny_llama2c({});
  EXPECT_THROW(tokenizer::from_llama2c(path, 300), engine_error);
  // max_token_length 2, then a 5-byte token: not a tokenizer.bin (a checkpoint, say).
  std::ofstream(path, std::ios::binary | std::ios::trunc).write("\x02\0\0\0\0\0\0\0\x05\0\0\0<unk>", 17);
  EXPECT_THROW(tokenizer::from_llama2c(path), engine_error);
  std::ofstream(path, std::ios::binary | std::ios::trunc).write("\x10\0\0\0\0\0", 6);
  try {
    tokenizer::from_llama2c(path);
    FAIL() << "no error for a truncated file";
  } catch (const engine_error& e) {
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
  }
}

// ---- reference vectors (shared/models) ---------------------------------------------------

TEST(TokenizerVectors, Gpt2) {
  KVARENA_REQUIRE_SHARED_MODELS();
  auto tok = load_gguf("ggml-vocab-gpt-2.gguf");
  EXPECT_EQ(tok->n_vocab(), 50257);
  EXPECT_FALSE(tok->adds_bos());
  check_vectors(*tok, "ggml-vocab-gpt-2.gguf");
}

TEST(TokenizerVectors, LlamaSpm) {
  KVARENA_REQUIRE_SHARED_MODELS();
  auto tok = load_gguf("ggml-vocab-llama-spm.gguf");
  EXPECT_EQ(tok->n_vocab(), 32000);
  EXPECT_TRUE(tok->adds_bos());
  check_vectors(*tok, "ggml-vocab-llama-spm.gguf");
}

TEST(TokenizerVectors, Qwen2) {
  KVARENA_REQUIRE_SHARED_MODELS();
  auto tok = load_gguf("ggml-vocab-qwen2.gguf");
  EXPECT_EQ(tok->n_vocab(), 151936);
  check_vectors(*tok, "ggml-vocab-qwen2.gguf");
}

TEST(TokenizerVectors, LlamaBpe) {
  KVARENA_REQUIRE_SHARED_MODELS();
  auto tok = load_gguf("ggml-vocab-llama-bpe.gguf");
  EXPECT_EQ(tok->n_vocab(), 128256);
  check_vectors(*tok, "ggml-vocab-llama-bpe.gguf");
}

// karpathy/llama2.c's test_all.py / run.c expectations (with BOS = 1).
TEST(TokenizerVectors, Llama2cTokenizerBin) {
  KVARENA_REQUIRE_SHARED_MODELS();
  auto tok = tokenizer::from_llama2c(model_path("llama2c-tokenizer.bin"));
  EXPECT_EQ(tok->n_vocab(), 32000);
  const std::vector<vector_case> cases = {
      {"", {1}},
      {"I believe the meaning of life is", {1, 306, 4658, 278, 6593, 310, 2834, 338}},
      {"Simply put, the theory of relativity states that ",
       {1, 3439, 17632, 1925, 29892, 278, 6368, 310, 14215, 537, 5922, 393, 29871}},
  };
  for (const auto& c : cases) {
    const ids got = tok->encode(c.text, /*add_bos=*/true);
    EXPECT_EQ(got, c.expected) << "text " << show(c.text) << "\n  expected " << show(c.expected)
                               << "\n  actual   " << show(got);
    EXPECT_EQ(tok->decode(got), c.text);
  }
  // The same vocabulary as the Llama-2 GGUF: its vectors hold for the .bin too.
  for (const auto& c : read_vectors("ggml-vocab-llama-spm.gguf")) {
    EXPECT_EQ(tok->encode(c.text, false), c.expected) << "text " << show(c.text);
  }
}

// gpt-3-encoder@1.1.4's tests (same vocabulary as GPT-2's encoder.json / vocab.bpe).
TEST(TokenizerVectors, Gpt3EncoderPackage) {
  KVARENA_REQUIRE_SHARED_MODELS();
  auto tok = load_gguf("ggml-vocab-gpt-2.gguf");
  const std::vector<vector_case> cases = {
      {"", {}},
      {" ", {220}},
      {"\t", {197}},
      {"This is some text", {1212, 318, 617, 2420}},
      {"indivisible", {521, 452, 12843}},
      {"hello \xF0\x9F\x91\x8B world \xF0\x9F\x8C\x8D", {31373, 50169, 233, 995, 12520, 234, 235}},
  };
  for (const auto& c : cases) {
    const ids got = tok->encode(c.text, true);
    EXPECT_EQ(got, c.expected) << "text " << show(c.text) << "\n  expected " << show(c.expected)
                               << "\n  actual   " << show(got);
    EXPECT_EQ(tok->decode(got), c.text);
  }
}

// Expected ids from llama.cpp: llamaref tokenize MODEL TEXT [--no-bos] [--special].
TEST(TokenizerSpecial, ControlAndUserDefinedTokens) {
  KVARENA_REQUIRE_SHARED_MODELS();
  auto qwen = load_gguf("ggml-vocab-qwen2.gguf");
  const std::string chat = "<|im_start|>user\nHi there<|im_end|>[PAD151646]x";
  EXPECT_EQ(qwen->encode(chat, false, true), (ids{151644, 872, 198, 13048, 1052, 151645, 151646, 87}));
  // Without parse_special control tokens are text; user-defined ones are still split out.
  EXPECT_EQ(qwen->encode(chat, false, false),
            (ids{27, 91, 318, 4906, 91, 29, 872, 198, 13048, 1052, 27, 91, 318, 6213, 91, 29, 151646, 87}));
  EXPECT_EQ(qwen->decode(qwen->encode(chat, false, false)), chat);
  EXPECT_TRUE(qwen->is_control(151644));
  EXPECT_FALSE(qwen->is_control(151646));
  // "</s>" is a normal token in this vocabulary, but the reference treats it as control.
  EXPECT_EQ(qwen->encode("a</s>b<|endoftext|>", false, true), (ids{64, 128247, 65, 151643}));

  auto llama3 = load_gguf("ggml-vocab-llama-bpe.gguf");
  EXPECT_TRUE(llama3->adds_bos());
  EXPECT_EQ(llama3->encode("Hello world", true), (ids{128000, 9906, 1917}));
  EXPECT_EQ(llama3->encode("<|begin_of_text|>Hello<|eot_id|> world", true, true),
            (ids{128000, 128000, 9906, 128009, 1917}));
  EXPECT_EQ(llama3->token_to_piece(128009), "<|eot_id|>");
  EXPECT_EQ(llama3->decode({128000, 9906, 128009, 1917}), "Hello world");

  auto spm = load_gguf("ggml-vocab-llama-spm.gguf");
  // After a special token the next text gets the space prefix again.
  EXPECT_EQ(spm->encode("<s>Hello</s> x <unk>", true, true), (ids{1, 1, 15043, 2, 29871, 921, 29871, 0}));
  EXPECT_EQ(spm->token_to_piece(15043), " Hello");
  EXPECT_EQ(spm->token_to_piece(13), "\n");  // <0x0A>

  auto gpt2 = load_gguf("ggml-vocab-gpt-2.gguf");
  EXPECT_EQ(gpt2->encode("a<|endoftext|>b", true, true), (ids{64, 50256, 65}));
  EXPECT_EQ(gpt2->encode("a<|endoftext|>b", true, false), (ids{64, 27, 91, 437, 1659, 5239, 91, 29, 65}));
}

// Load and encode speed: Qwen2 (151k tokens, 151k merges), Llama-3 (128k, 280k) and Llama-2
// (32k, SentencePiece) load, then encode ~100 KB of English-like text (many distinct words).
// Targets: load well under 1 s, encode under ~0.5 s; the times are printed, never asserted.
// What is asserted is that the long text is encoded right: the ids are llama.cpp's for the
// same bytes (their count and an FNV-1a hash of the sequence, from `llamaref tokenize
// VOCAB.gguf -f TEXT --no-bos`, ../shared/tools/llamaref; TEXT written by the same
// generator in Python), and decoding them gives the text back.
TEST(TokenizerSpeed, LoadAndEncode) {
  KVARENA_REQUIRE_SHARED_MODELS();
  using clock = std::chrono::steady_clock;
  auto ms = [](auto a, auto b) { return std::chrono::duration<double, std::milli>(b - a).count(); };
  std::string text;
  uint32_t rng = 12345;
  const char* const words[] = {"the", "model", "It's", "we've", "tokenizer", "quick", "brown",
                               "fox", "jumps", "over", "lazy", "dog", "CamelCase", "(with", "parens)"};
  for (int i = 0; text.size() < 100 * 1024; ++i) {
    rng = rng * 1664525u + 1013904223u;
    text += words[(rng >> 16) % 15];
    if (rng % 7 == 0) text += std::to_string(rng % 100000);  // makes many words unique
    text += rng % 11 == 0 ? ".\n" : rng % 5 == 0 ? ", " : " ";
  }
  struct reference {
    const char* name;
    size_t n_tokens;
    uint64_t fnv1a;  // over the ids, each xored in whole, then times the 64-bit FNV prime
  };
  const reference refs[] = {{"ggml-vocab-qwen2.gguf", 33928, 0xdcbdb3990ce70bdcull},
                            {"ggml-vocab-llama-bpe.gguf", 28190, 0x7fe86110c59232f3ull},
                            {"ggml-vocab-llama-spm.gguf", 41153, 0x9407304137933984ull}};
  auto fnv1a = [](const ids& v) {
    uint64_t h = 0xcbf29ce484222325ull;
    for (const auto id : v) h = (h ^ uint64_t(id)) * 0x100000001b3ull;
    return h;
  };
  ASSERT_EQ(text.size(), 102401u);  // the text llama.cpp tokenized
  for (const reference& ref : refs) {
    const char* name = ref.name;
    auto t0 = clock::now();
    gguf_file f(model_path(name));
    auto t1 = clock::now();
    auto tok = tokenizer::from_gguf(f);
    auto t2 = clock::now();
    const ids got = tok->encode(text, false);
    auto t3 = clock::now();
    std::printf("[ speed    ] %s: gguf parse %.1f ms, tokenizer build %.1f ms, encode %zu bytes -> %zu tokens %.1f ms\n",
                name, ms(t0, t1), ms(t1, t2), text.size(), got.size(), ms(t2, t3));
    EXPECT_EQ(got.size(), ref.n_tokens) << name;
    EXPECT_EQ(fnv1a(got), ref.fnv1a) << name << ": not llama.cpp's ids";
    EXPECT_EQ(tok->decode(got), text) << name;
  }
}

}  // namespace
}  // namespace kvarena
