// test-tokenizer-llamacpp.cpp: the tokenizer against llama.cpp's own test vectors for the
// vocabularies that are not in ../shared/models: models/ggml-vocab-NAME.gguf with its
// .gguf.inp (texts separated by "\n__ggml_vocab_test__\n") and .gguf.out (llama.cpp's ids,
// one line per text), read at test time from the llama.cpp clone that
// ../shared/tools/llamaref/setup.sh makes ($LLAMAREF_CACHE, default ~/.cache/llamaref;
// nothing is committed here). Every family kvarena claims must give llama.cpp's ids for
// 100% of the cases and decode them back to the text; every other vocabulary there must be
// refused at load time with one line naming its tokenizer.ggml.pre (or model), never
// tokenized with a different pre-tokenizer. Label `model`: runs setup.sh when the clone is
// missing (as test-arch does) and skips, saying so, when that fails.
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <sstream>

#include "engine-error.h"
#include "gguf-reader.h"
#include "test-util.h"
#include "tokenizer.h"
#include "vocab-vectors.h"

namespace kvarena {
namespace {

namespace fs = std::filesystem;
using ids = std::vector<int32_t>;
using test::vector_case;

fs::path llamaref_cache() {
  const char* env = std::getenv("LLAMAREF_CACHE");
  const char* home = std::getenv("HOME");
  return env && *env ? fs::path(env) : fs::path(home ? home : "/root") / ".cache" / "llamaref";
}

// The bare llama.cpp clone of tools/llamaref/setup.sh (llama.cpp-VERSION.git), or "".
std::string find_llamacpp_git() {
  std::error_code ec;
  std::string best;
  for (const auto& e : fs::directory_iterator(llamaref_cache(), ec)) {
    const std::string n = e.path().filename().string();
    if (n.rfind("llama.cpp-", 0) == 0 && n.size() > 4 && n.substr(n.size() - 4) == ".git") best = std::max(best, e.path().string());
  }
  return best;
}

// The clone; when there is none yet, runs ../shared/tools/llamaref/setup.sh once per process
// (under the lock test-arch's fixture script takes, so parallel tests set up once) and
// looks again. "" when that fails too (no ../shared, no npm, offline).
std::string llamacpp_git_dir() {
  static const std::string dir = [] {
    if (std::string git = find_llamacpp_git(); !git.empty()) return git;
    const fs::path setup = fs::path(KVARENA_SOURCE_DIR) / ".." / "shared" / "tools" / "llamaref" / "setup.sh";
    std::error_code ec;
    if (!fs::exists(setup, ec)) return std::string();
    fs::create_directories(llamaref_cache(), ec);
    const std::string cmd = "flock '" + (llamaref_cache() / ".make_arch_fixture.lock").string() + "' bash '" +
                            setup.string() + "' >/dev/null 2>&1";
    if (std::system(cmd.c_str()) != 0) return std::string();
    return find_llamacpp_git();
  }();
  return dir;
}

// Writes models/<files> of the clone's HEAD into a fresh temporary folder; its path, or ""
// when git fails (a file missing from that llama.cpp version, say).
std::string extract(const std::string& git, const std::string& vocab, bool with_vectors) {
  const fs::path dir = test::temp_dir("tokenizer-llamacpp-" + vocab);
  std::string files = "'models/" + vocab + "'";
  if (with_vectors) files += " 'models/" + vocab + ".inp' 'models/" + vocab + ".out'";
  const std::string cmd = "git --git-dir='" + git + "' archive HEAD " + files + " | tar -x -C '" +
                          dir.string() + "' 2>&1";
  const int rc = std::system(cmd.c_str());
  if (rc != 0 || !fs::exists(dir / "models" / vocab)) return "";
  return (dir / "models").string();
}

std::string show(std::string_view s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    if (c == '\n') out += "\\n";
    else if (c == '\t') out += "\\t";
    else if (c == '\r') out += "\\r";
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



// A claimed vocabulary: every case gives llama.cpp's ids (no BOS, no special parsing, as
// llama.cpp's test-tokenizer-0 makes them) and decodes back to its text. Prints
// "N/N cases identical".
void check_claimed(const std::string& git, const std::string& vocab, int64_t n_vocab) {
  SCOPED_TRACE(vocab);
  const std::string dir = extract(git, vocab, true);
  ASSERT_FALSE(dir.empty()) << vocab << " is not in " << git;
  gguf_file f(dir + "/" + vocab);
  std::unique_ptr<tokenizer> tok;
  ASSERT_NO_THROW(tok = tokenizer::from_gguf(f));
  EXPECT_EQ(tok->n_vocab(), n_vocab);
  const auto cases = test::read_vocab_vectors(dir + "/" + vocab + ".inp", dir + "/" + vocab + ".out");
  ASSERT_GE(cases.size(), 30u);
  size_t identical = 0;
  for (const auto& c : cases) {
    const ids got = tok->encode(c.text, /*add_bos=*/false);
    const std::string back = tok->decode(got);
    EXPECT_EQ(got, c.expected) << vocab << " text " << show(c.text) << "\n  expected " << show(c.expected)
                               << "\n  actual   " << show(got);
    EXPECT_EQ(back, c.text) << vocab << " round trip of " << show(c.text) << " gave " << show(back);
    identical += got == c.expected && back == c.text;
  }
  std::printf("[ vectors  ] %s: %zu/%zu cases identical\n", vocab.c_str(), identical, cases.size());
  EXPECT_EQ(identical, cases.size());
}

// A vocabulary kvarena does not claim: loading it fails with one line that names `what`.
void check_refused(const std::string& git, const std::string& vocab, const std::string& what) {
  SCOPED_TRACE(vocab);
  const std::string dir = extract(git, vocab, false);
  ASSERT_FALSE(dir.empty()) << vocab << " is not in " << git;
  gguf_file f(dir + "/" + vocab);
  try {
    tokenizer::from_gguf(f);
    ADD_FAILURE() << vocab << " loaded; expected a refusal naming " << what;
  } catch (const engine_error& e) {
    const std::string msg = e.what();
    std::printf("[ refused  ] %s: %s\n", vocab.c_str(), msg.c_str());
    EXPECT_NE(msg.find("'" + what + "'"), std::string::npos) << msg;
    EXPECT_NE(msg.find("not supported"), std::string::npos) << msg;
    EXPECT_EQ(msg.find('\n'), std::string::npos) << "not one line: " << msg;
  }
}

#define REQUIRE_LLAMACPP_CLONE(git)                                                            \
  const std::string git = llamacpp_git_dir();                                                  \
  if (git.empty())                                                                             \
  GTEST_SKIP() << "llama.cpp's ggml-vocab test files are not available: no llama.cpp clone in " \
                  "$LLAMAREF_CACHE (~/.cache/llamaref) and bash ../shared/tools/llamaref/setup.sh " \
                  "did not make one"

// Phi-3 and Phi-3.5's Llama-2-style SentencePiece vocabulary (32064 tokens: Llama-2's
// 32000 plus <|endoftext|>, <|assistant|>, ... as added tokens). Phi-4 files are BPE
// (GPT2Tokenizer) with other pre-tokenizers, not this vocabulary.
TEST(TokenizerLlamacpp, Phi3) {
  REQUIRE_LLAMACPP_CLONE(git);
  check_claimed(git, "ggml-vocab-phi-3.gguf", 32064);
}

// Gemma 4: SentencePiece-style BPE (tokenizer.ggml.model "gemma4"): "▁" for spaces, merges
// over UTF-8 characters, <0xNN> byte fallback.
TEST(TokenizerLlamacpp, Gemma4) {
  REQUIRE_LLAMACPP_CLONE(git);
  check_claimed(git, "ggml-vocab-gemma-4.gguf", 262144);
}

// Special tokens and BOS, which the vectors leave out. Expected ids from llama.cpp:
// `llamaref tokenize VOCAB.gguf TEXT --special` (with BOS) and `... TEXT --no-bos`.
TEST(TokenizerLlamacpp, Phi3AndGemma4SpecialTokens) {
  REQUIRE_LLAMACPP_CLONE(git);
  const std::string phi_dir = extract(git, "ggml-vocab-phi-3.gguf", false);
  const std::string gemma_dir = extract(git, "ggml-vocab-gemma-4.gguf", false);
  ASSERT_FALSE(phi_dir.empty() || gemma_dir.empty());
  auto phi = tokenizer::from_gguf(gguf_file(phi_dir + "/ggml-vocab-phi-3.gguf"));
  // general.name "Phi3": llama.cpp strips the whitespace after Phi-3's chat tokens (rstrip),
  // so "<|user|>\n  Hi" is <|user|> " Hi".
  const std::string chat = "<|system|>\nYou are helpful.<|end|>\n<|user|>\n  Hi there <|end|>\n<|assistant|>\n";
  EXPECT_EQ(phi->encode(chat, true, true),
            (ids{1, 32006, 887, 526, 8444, 29889, 32007, 32010, 6324, 727, 29871, 32007, 32001}));
  EXPECT_EQ(phi->encode(chat, false, false),
            (ids{529, 29989, 5205, 29989, 29958, 13, 3492, 526, 8444, 19423, 29989, 355, 29989, 29958, 13,
                 29966, 29989, 1792, 29989, 29958, 13, 29871, 6324, 727, 529, 29989, 355, 29989, 29958, 13,
                 29966, 29989, 465, 22137, 29989, 29958, 13}));
  // Not stripped after <s>, <unk>, <|endoftext|>; stripped after </s>.
  const std::string plain = "a</s>  b<s> c<unk>\td<|endoftext|> e";
  EXPECT_EQ(phi->encode(plain, true, true), (ids{1, 263, 2, 289, 1, 29871, 274, 0, 29871, 12, 29881, 32000, 29871, 321}));

  auto gemma = tokenizer::from_gguf(gguf_file(gemma_dir + "/ggml-vocab-gemma-4.gguf"));
  EXPECT_TRUE(gemma->adds_bos());
  const std::string turn = "<|turn>user\nWrite  code:\n\n\tx = \"\xC3\xA9\" \xF0\x9F\x98\x80<turn|>\n<|turn>model\n";
  EXPECT_EQ(gemma->encode(turn, true, true),
            (ids{2, 105, 2364, 107, 6974, 138, 3970, 236787, 108, 255968, 236781, 578, 623, 236859, 236775,
                 163543, 106, 107, 105, 4368, 107}));
  EXPECT_EQ(gemma->encode(turn, false, false),
            (ids{236820, 236909, 887, 236813, 2364, 107, 6974, 138, 3970, 236787, 108, 255968, 236781, 578,
                 623, 236859, 236775, 163543, 236820, 887, 111038, 107, 236820, 236909, 887, 236813, 4368, 107}));
  EXPECT_EQ(gemma->decode(gemma->encode(turn, false, false)), turn);
  // User-defined tool-call tokens split out even without parse_special.
  const std::string call = "<|tool_call>call:f{a:<|\"|>x<|\"|>}<tool_call|>\n\n\n  end";
  EXPECT_EQ(gemma->encode(call, false, false),
            (ids{48, 6639, 236787, 236760, 236782, 236746, 236787, 52, 236781, 52, 236783, 49, 109, 138, 643}));
}

// Qwen3.5's pre-tokenizer: Qwen2's, with combining marks joined to letters.
TEST(TokenizerLlamacpp, Qwen35) {
  REQUIRE_LLAMACPP_CLONE(git);
  check_claimed(git, "ggml-vocab-qwen35.gguf", 151936);
  // The vectors' combining marks follow letters no merge joins them to, so they pass under
  // Qwen2's rule too; Thai's vowel marks inside words do not. Expected ids: `llamaref
  // tokenize ggml-vocab-qwen35.gguf TEXT --no-bos` (Qwen2's rule gives 143126 23271 ...).
  const std::string dir = extract(git, "ggml-vocab-qwen35.gguf", false);
  auto tok = tokenizer::from_gguf(gguf_file(dir + "/ggml-vocab-qwen35.gguf"));
  const std::string thai = "\xE0\xB8\xAA\xE0\xB8\xA7\xE0\xB8\xB1\xE0\xB8\xAA\xE0\xB8\x94\xE0\xB8\xB5"
                           "\xE0\xB8\x84\xE0\xB8\xA3\xE0\xB8\xB1\xE0\xB8\x9A \xE0\xB9\x84\xE0\xB8\xA1"
                           "\xE0\xB9\x88\xE0\xB9\x80\xE0\xB8\x9B\xE0\xB9\x87\xE0\xB8\x99\xE0\xB9\x84\xE0\xB8\xA3";
  EXPECT_EQ(tok->encode(thai, false), (ids{35648, 124294, 35648, 124311, 125459, 129214, 124027, 124520}));
  EXPECT_EQ(tok->decode(tok->encode(thai, false)), thai);
}

// GPT-2's pattern under other names and vocabularies.
TEST(TokenizerLlamacpp, Mpt) {
  REQUIRE_LLAMACPP_CLONE(git);
  check_claimed(git, "ggml-vocab-mpt.gguf", 50432);
}

// Digits split alone, then GPT-2's pattern: StarCoder, Refact, Command-R.
TEST(TokenizerLlamacpp, StarcoderRefactCommandR) {
  REQUIRE_LLAMACPP_CLONE(git);
  check_claimed(git, "ggml-vocab-starcoder.gguf", 49152);
  check_claimed(git, "ggml-vocab-refact.gguf", 49216);
  check_claimed(git, "ggml-vocab-command-r.gguf", 256000);
}

TEST(TokenizerLlamacpp, Falcon) {
  REQUIRE_LLAMACPP_CLONE(git);
  check_claimed(git, "ggml-vocab-falcon.gguf", 65024);
}

TEST(TokenizerLlamacpp, DeepseekCoder) {
  REQUIRE_LLAMACPP_CLONE(git);
  check_claimed(git, "ggml-vocab-deepseek-coder.gguf", 32256);
}

// A longer text (1041 bytes: code with backquotes (Falcon's first pattern takes "(`"), contractions in both cases, CJK, Korean,
// Hindi, Thai, Cyrillic, Arabic, NFC and NFD accents, fullwidth forms, NBSP and ideographic
// spaces, emoji with ZWJ and skin tones, other numerals, whitespace runs, CR LF) in every
// claimed vocabulary: the number of ids and an FNV-1a hash of the sequence are llama.cpp's,
// from `llamaref tokenize ggml-vocab-NAME.gguf -f TEXT --no-bos` (../shared/tools/llamaref,
// llama.cpp v0.4.0); the ids decode back to the text.
TEST(TokenizerLlamacpp, LongerTextSameAsLlamaref) {
  REQUIRE_LLAMACPP_CLONE(git);
  const std::string text =
    "# Release notes (v2.10.3)\n"
    "\n"
    "We've shipped `kvarena serve` -- it's faster: 1234567 tokens in 3.14159 s (~392,931 tok/s).\n"
    "```python\n"
    "def f(x):\n"
    "\treturn x**2  # squares\n"
    "\n"
    "\n"
    "print(f(12))\n"
    "```\n"
    "I'M sure you'LL like it; they'd said \"don't\" & 'won't'... (really?!) [yes] {ok} <tag/> $5+3=8 ^_^ ~/a|b\n"
    "URL: https://example.com/path?q=a&b=2#frag\r\n"
    "Chinese: \xE6\x88\x91\xE6\x83\xB3\xE5\x9C\xA8" "apple\xE5\xB7\xA5\xE4\xBD\x9C" "1314151\xE5\xA4\xA9\xEF\xBD\x9E \xE3\x80\x82\xE3\x80\x81 Korean: \xEC\x95\x88\xEB\x85\x95\xED\x95\x98\xEC\x84\xB8\xEC\x9A\x94 Japanese: \xE3\x81\x93\xE3\x82\x93\xE3\x81\xAB\xE3\x81\xA1\xE3\x81\xAF\xE3\x82\xAB\xE3\x82\xBF\xE3\x82\xAB\xE3\x83\x8A\n"
    "Hindi: \xE0\xA4\xA8\xE0\xA4\xAE\xE0\xA4\xB8\xE0\xA5\x8D\xE0\xA4\xA4\xE0\xA5\x87 \xE0\xA4\xA6\xE0\xA5\x81\xE0\xA4\xA8\xE0\xA4\xBF\xE0\xA4\xAF\xE0\xA4\xBE Thai: \xE0\xB8\xAA\xE0\xB8\xA7\xE0\xB8\xB1\xE0\xB8\xAA\xE0\xB8\x94\xE0\xB8\xB5\xE0\xB8\x84\xE0\xB8\xA3\xE0\xB8\xB1\xE0\xB8\x9A \xE0\xB9\x84\xE0\xB8\xA1\xE0\xB9\x88\xE0\xB9\x80\xE0\xB8\x9B\xE0\xB9\x87\xE0\xB8\x99\xE0\xB9\x84\xE0\xB8\xA3\n"
    "Russian: \xD0\x9F\xD1\x80\xD0\xB8\xD0\xB2\xD0\xB5\xD1\x82, \xD0\xBC\xD0\xB8\xD1\x80! Arabic: \xD9\x85\xD8\xB1\xD8\xAD\xD8\xA8\xD8\xA7 Greek: \xCE\x91\xCE\xB8\xCE\xAE\xCE\xBD\xCE\xB1\n"
    "Accents: caf\xC3\xA9 cafe\xCC\x81 na\xC3\xAFve Vie\xCC\xA3\xCC\x82t  \xC3\x85ngstr\xC3\xB6m \xC4\xB0stanbul \xC3\x9F\n"
    "Fullwidth: \xEF\xBC\xA1\xEF\xBC\xA2\xEF\xBC\xA3\xEF\xBC\x91\xEF\xBC\x92\xEF\xBC\x93 ideographic\xE3\x80\x80space nbsp\xC2\xA0here thin\xE2\x80\x89space\n"
    "Emoji: \xF0\x9F\x9A\x80 \xF0\x9F\x98\xB6\xE2\x80\x8D\xF0\x9F\x8C\xAB\xEF\xB8\x8F \xE2\x9C\x85 \xF0\x9F\x91\x8D\xF0\x9F\x8F\xBD \xF0\x9F\xA6\x99\xF0\x9F\xA6\x99\n"
    "Numbers: \xC2\xBD \xC2\xB2 \xD9\xA3\xD9\xA4 \xE0\xA5\xAA 2024-01-31 10:45pm 0x1F 1e-9 +44 20 7946 0958\n"
    "   leading spaces\n"
    "\n"
    "\n"
    "    \t mixed \t whitespace   \n"
    "Tabs\tand\ttabs, CamelCaseWords and snake_case_words, ALLCAPS!!!\n"
    "Quoted code: (`x`) and \"`y`\" or `.\n"
    "Ends with spaces   ";
  ASSERT_EQ(text.size(), 1041u);
  struct reference {
    const char* vocab;
    size_t n_tokens;
    uint64_t fnv1a;  // over the ids, each xored in whole, then times the 64-bit FNV prime
  };
  const reference refs[] = {
      {"ggml-vocab-phi-3.gguf", 506, 0xf30ceda7221b26e9ull},
      {"ggml-vocab-gemma-4.gguf", 386, 0x7b9f0a81d3a7b518ull},
      {"ggml-vocab-qwen35.gguf", 397, 0x7356110118a249e3ull},
      {"ggml-vocab-mpt.gguf", 437, 0x9239d0c35ac94b05ull},
      {"ggml-vocab-starcoder.gguf", 461, 0xd6383aff96ac8ea6ull},
      {"ggml-vocab-refact.gguf", 461, 0xb93445e8c7b93b75ull},
      {"ggml-vocab-command-r.gguf", 418, 0x4e3f480d9ebf699full},
      {"ggml-vocab-falcon.gguf", 511, 0x23f3cfd6cb0cb0d4ull},
      {"ggml-vocab-deepseek-coder.gguf", 564, 0x0fd3c60c1b81a8a7ull},
  };
  auto fnv1a = [](const ids& v) {
    uint64_t h = 0xcbf29ce484222325ull;
    for (const auto id : v) h = (h ^ uint64_t(id)) * 0x100000001b3ull;
    return h;
  };
  for (const reference& ref : refs) {
    const std::string dir = extract(git, ref.vocab, false);
    ASSERT_FALSE(dir.empty()) << ref.vocab;
    auto tok = tokenizer::from_gguf(gguf_file(dir + "/" + ref.vocab));
    const ids got = tok->encode(text, false);
    const bool same = got.size() == ref.n_tokens && fnv1a(got) == ref.fnv1a;
    std::printf("[ longer   ] %s: %zu ids, %s llama.cpp's\n", ref.vocab, got.size(), same ? "identical to" : "NOT");
    EXPECT_EQ(got.size(), ref.n_tokens) << ref.vocab;
    EXPECT_EQ(fnv1a(got), ref.fnv1a) << ref.vocab << ": not llama.cpp's ids";
    EXPECT_EQ(tok->decode(got), text) << ref.vocab;
  }
}

// Not claimed: refused when loading, with the name, instead of a guess.
TEST(TokenizerLlamacpp, UnclaimedAreRefusedByName) {
  REQUIRE_LLAMACPP_CLONE(git);
  check_refused(git, "ggml-vocab-deepseek-llm.gguf", "deepseek-llm");  // its own letter ranges
  check_refused(git, "ggml-vocab-bert-bge.gguf", "bert");                // WordPiece
  check_refused(git, "ggml-vocab-nomic-bert-moe.gguf", "t5");            // Unigram
}

}  // namespace
}  // namespace kvarena
