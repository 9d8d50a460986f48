// test-tokenizer-train.cpp: the byte-level BPE trainer (engine/tokenizer/tokenizer-train.h). Merges
// of tiny corpora worked out by hand; agreement with a naive trainer (all pairs recounted
// after every merge) on random corpora; the trained vocabulary loaded back through
// tokenizer::from_gguf: round trips, special tokens, qwen2 single digits, compression;
// determinism; chunked pre-tokenization of large texts; errors. Needs no files.
#include <algorithm>
#include <map>
#include <random>
#include <set>

#include "engine-error.h"
#include "gguf-reader.h"
#include "test-util.h"
#include "tokenizer-pretokenize.h"
#include "tokenizer-train.h"
#include "tokenizer.h"
#include "unicode-tables.h"
#include "unicode-utf8.h"

namespace kvarena {
namespace {

using strings = std::vector<std::string>;

bpe_train_options options(int64_t vocab_size, int64_t min_frequency = 2) {
  bpe_train_options o;
  o.vocab_size = vocab_size;
  o.min_frequency = min_frequency;
  return o;
}

// `word` `count` times, one per line: the qwen2 pre-tokenizer makes each line one word and
// each "\n" a word of one byte (which has no pairs).
std::string repeat_lines(const std::vector<std::pair<std::string, int>>& words) {
  std::string text;
  for (const auto& [w, n] : words) {
    for (int i = 0; i < n; ++i) text += w + "\n";
  }
  return text;
}

std::unique_ptr<tokenizer> load(const bpe_train_result& r, const std::string& name) {
  const std::string path = (test::temp_dir(name) / "vocab.gguf").string();
  write_bpe_gguf(r, path);
  gguf_file f(path);
  return tokenizer::from_gguf(f);
}

// ---- merges worked out by hand ----------------------------------------------------------

// Sennrich et al.'s example: low x5, lower x2, newest x6, widest x3. Pair counts at each
// step (ties: smaller left string, then smaller right string, bytewise):
//  1. e s 9 = s t 9            -> "e s" ("e" < "s")
//  2. es t 9                   -> "es t"
//  3. l o 7 = o w 7            -> "l o"
//  4. lo w 7                   -> "lo w"
//  5. n e 6 = e w 6 = w est 6  -> "e w" ("e" < "n" < "w")
//  6. n ew 6 = ew est 6        -> "ew est"
//  7. n ewest 6                -> "n ewest"
//  8. w i 3 = i d 3 = d est 3  -> "d est"
//  9. w i 3 = i dest 3         -> "i dest"
// 10. w idest 3                -> "w idest"
// 11. e r 2 = low e 2          -> "e r"
// 12. low er 2                 -> "low er"; then every word is one token.
TEST(BpeTrain, HandComputedMerges) {
  const std::string text = repeat_lines({{"low", 5}, {"lower", 2}, {"newest", 6}, {"widest", 3}});
  const bpe_train_result r = train_bpe({text}, options(400));
  const strings expected = {"e s",   "es t",    "l o",    "lo w",    "e w", "ew est",
                            "n ewest", "d est", "i dest", "w idest", "e r", "low er"};
  EXPECT_EQ(r.merges, expected);
  ASSERT_EQ(r.tokens.size(), 256u + 12 + 3);
  const strings merged(r.tokens.begin() + 256, r.tokens.begin() + 268);
  EXPECT_EQ(merged, (strings{"es", "est", "lo", "low", "ew", "ewest", "newest", "dest", "idest", "widest",
                             "er", "lower"}));
  EXPECT_EQ(r.tokens[268], "<|endoftext|>");
  EXPECT_EQ(r.tokens[269], "<|im_start|>");
  EXPECT_EQ(r.tokens[270], "<|im_end|>");
  EXPECT_EQ(r.token_types[267], 1);
  EXPECT_EQ(r.token_types[268], 3);
  EXPECT_EQ(r.eos_id, 268);
  EXPECT_EQ(r.bos_id, -1);
  EXPECT_FALSE(r.add_bos);
  EXPECT_EQ(r.n_unique_words, 5);  // four words and "\n"
  EXPECT_EQ(r.n_words, 32);

  // The vocabulary size caps the merges: room for 3 merged tokens.
  const bpe_train_result small = train_bpe({text}, options(256 + 3 + 3));
  EXPECT_EQ(small.merges, (strings{"e s", "es t", "l o"}));
  EXPECT_EQ(small.tokens.size(), 262u);
  // min_frequency: the last two merges (count 2) are below 3.
  const bpe_train_result freq3 = train_bpe({text}, options(400, 3));
  EXPECT_EQ(freq3.merges, strings(expected.begin(), expected.end() - 2));
}

// Overlapping runs merge left to right without overlap, as the encoder applies a merge:
// aaaa x3, aaa x2. (a a) = 3*3 + 2*2 = 13 -> "a a"; then aaaa = [aa aa], aaa = [aa a]:
// (aa aa) 3 > (aa a) 2 -> "aa aa", then "aa a".
TEST(BpeTrain, HandComputedOverlappingRuns) {
  const std::string text = repeat_lines({{"aaaa", 3}, {"aaa", 2}});
  const bpe_train_result r = train_bpe({text}, options(400, 1));
  EXPECT_EQ(r.merges, (strings{"a a", "aa aa", "aa a"}));
  // Merges are written in GPT-2's character form (space = "Ġ"): "ab ab ab" is the words
  // "ab", " ab", " ab" (qwen2 keeps the space on the word): (a b) 3 > (Ġ a) 2 -> "a b",
  // then (Ġ ab) 2 -> "Ġ ab".
  const bpe_train_result sp = train_bpe({"ab ab ab"}, options(400, 2));
  EXPECT_EQ(sp.merges, (strings{"a b", "\xC4\xA0 ab"}));
}

// ---- agreement with a naive trainer -----------------------------------------------------

// Recounts every pair of every word after each merge; same tie-break, same stop rules.
strings naive_merges(const strings& texts, int64_t n_merged_tokens, int64_t min_frequency) {
  std::map<std::string, int64_t> counts;
  for (const std::string& t : texts) {
    strings words;
    pretokenize(t, pretokenizer::qwen2, words);
    for (const std::string& w : words) ++counts[w];
  }
  std::vector<std::pair<strings, int64_t>> words;
  for (const auto& [w, c] : counts) {
    strings syms;
    for (char ch : w) syms.emplace_back(1, ch);
    words.emplace_back(std::move(syms), c);
  }
  std::set<std::string> vocab;
  for (int b = 0; b < 256; ++b) vocab.insert(std::string(1, static_cast<char>(b)));
  strings merges;
  int64_t added = 0;
  while (added < n_merged_tokens) {
    std::map<std::pair<std::string, std::string>, int64_t> pairs;  // ordered: ties -> smallest
    for (const auto& [syms, c] : words) {
      for (size_t i = 0; i + 1 < syms.size(); ++i) pairs[{syms[i], syms[i + 1]}] += c;
    }
    const std::pair<std::string, std::string>* best = nullptr;
    int64_t best_count = 0;
    for (const auto& [p, c] : pairs) {
      if (c > best_count) best = &p, best_count = c;
    }
    if (!best || best_count < std::max<int64_t>(min_frequency, 1)) break;
    const auto [l, r] = *best;
    if (vocab.insert(l + r).second) ++added;
    merges.push_back(bpe_bytes_to_chars(l) + " " + bpe_bytes_to_chars(r));
    for (auto& [syms, c] : words) {
      strings out;
      for (size_t i = 0; i < syms.size();) {
        if (i + 1 < syms.size() && syms[i] == l && syms[i + 1] == r) {
          out.push_back(l + r);
          i += 2;
        } else {
          out.push_back(syms[i++]);
        }
      }
      syms = std::move(out);
    }
  }
  return merges;
}

TEST(BpeTrain, AgreesWithNaiveTrainer) {
  std::mt19937 rng(12345);
  // Small alphabets make runs ("abab", "aaaa"), repeated pairs in one word, and merges
  // whose result is already a token ("a"+"ab" after "aa"+"b").
  const strings alphabets[] = {{"a", "b"}, {"a", "b", "c", " "}, {"x", "y", "\xC3\xA9", "1", ".", " "}};
  int cases = 0;
  for (const strings& alpha : alphabets) {
    for (int round = 0; round < 4; ++round) {
      strings texts;
      for (int t = 0; t < 3; ++t) {
        std::string text;
        const int n_words = 40 + static_cast<int>(rng() % 200);
        for (int w = 0; w < n_words; ++w) {
          const int len = 1 + static_cast<int>(rng() % 9);
          for (int i = 0; i < len; ++i) text += alpha[rng() % alpha.size()];
          text += rng() % 4 == 0 ? "\n" : " ";
        }
        texts.push_back(std::move(text));
      }
      for (int64_t min_freq : {1, 2}) {
        bpe_train_options o = options(256 + 3 + 60, min_freq);
        const bpe_train_result r = train_bpe(texts, o);
        const strings expected = naive_merges(texts, 60, min_freq);
        ASSERT_EQ(r.merges, expected) << "alphabet " << alpha.size() << " round " << round << " min_freq "
                                      << min_freq;
        ++cases;
      }
    }
  }
  EXPECT_EQ(cases, 24);
}

// ---- the trained vocabulary in the engine's tokenizer -----------------------------------

std::string varied_text() {
  const strings lines = {
      "The quick brown fox jumps over the lazy dog. The dog sleeps; the fox runs away!",
      "In 2024, the price was $1,299.99 (about 15% off); order #40213 shipped on 03/14.",
      "Привет, мир! Как дела? Всё хорошо, спасибо.",
      "日本語のテキストも少し入れます。東京は大きな都市です。",
      "Caf\xC3\xA9 na\xC3\xAFve r\xC3\xA9sum\xC3\xA9 \xE2\x80\x94 \xF0\x9F\x99\x82 emoji and symbols \xE2\x9C\x93 \xE2\x82\xAC 5.",
      "<|im_start|>user\nClick the search button and type 'red shoes'.<|im_end|>\n",
      "<|im_start|>assistant\nclick [42] type [7] [red shoes]<|im_end|><|endoftext|>",
      "    def tokenize(self, text):\n        return self.encode(text)\n",
      "{\"id\": 17, \"name\": \"shopping cart\", \"items\": [1, 2, 3]}",
  };
  std::string text;
  for (int rep = 0; rep < 6; ++rep) {
    for (const std::string& l : lines) text += l + "\n";
  }
  return text;
}

TEST(BpeTrain, RoundTripThroughGguf) {
  const std::string train = varied_text();
  ASSERT_GT(train.size(), 3000u);
  const bpe_train_result r = train_bpe({train}, options(600));
  ASSERT_GT(r.merges.size(), 100u);
  const auto tok = load(r, "roundtrip");
  EXPECT_EQ(tok->n_vocab(), static_cast<int64_t>(r.tokens.size()));
  EXPECT_EQ(tok->bos_id(), -1);
  EXPECT_FALSE(tok->adds_bos());
  EXPECT_EQ(tok->eos_id(), r.eos_id);

  const strings samples = {
      train,
      "The quick brown fox",
      "Zebras quantum-tunnel through 98765 walls \xE2\x80\x94 unseen words, \xC3\xBC" "ber-na\xC3\xAFve!",
      "\t\ttabs  and   spaces   \n\n\r\n trailing ",
      "\xF0\x9F\x98\x80\xF0\x9F\x8E\x89 \xE4\xB8\xAD\xE6\x96\x87 \xD8\xA7\xD9\x84\xD8\xB9\xD8\xB1\xD8\xA8\xD9\x8A\xD8\xA9",
      "",
      "x",
      "<|im_start|>system\nYou are helpful.<|im_end|>",
  };
  for (const std::string& s : samples) {
    EXPECT_EQ(tok->decode(tok->encode(s, false, false)), s) << s.substr(0, 60);
    // With special parsing, decode drops control tokens; their pieces are still their text.
    std::string pieces;
    for (int32_t id : tok->encode(s, false, true)) pieces += tok->token_to_piece(id);
    EXPECT_EQ(pieces, s) << s.substr(0, 60);
  }

  // Special tokens: one id each (the last three of the vocabulary), control, under
  // parse_special; without it their text is ordinary text.
  const int32_t n = static_cast<int32_t>(r.tokens.size());
  const auto ids = tok->encode("<|im_start|>user<|im_end|><|endoftext|>", false, true);
  ASSERT_GE(ids.size(), 4u);
  EXPECT_EQ(ids.front(), n - 2);
  EXPECT_EQ(ids[ids.size() - 2], n - 1);
  EXPECT_EQ(ids.back(), n - 3);
  EXPECT_TRUE(tok->is_control(n - 2));
  EXPECT_GT(tok->encode("<|im_start|>", false, false).size(), 1u);
  // They were split out before training: no learnt token holds their pieces.
  for (int32_t id = 256; id < n - 3; ++id) {
    EXPECT_EQ(r.tokens[id].find("<|"), std::string::npos) << r.tokens[id];
    EXPECT_EQ(r.tokens[id].find("|>"), std::string::npos) << r.tokens[id];
  }

  // qwen2 splits numbers into single digits: every digit is a token of its own.
  const auto digits = tok->encode("2024 1299 40213", false, false);
  int n_digit_tokens = 0;
  for (int32_t id : digits) {
    const std::string piece = tok->token_to_piece(id);
    if (piece.find_first_of("0123456789") != std::string::npos) {
      EXPECT_EQ(piece.size(), 1u) << piece;
      ++n_digit_tokens;
    }
  }
  EXPECT_EQ(n_digit_tokens, 13);

  // Compression on the training text.
  const size_t n_tokens = tok->encode(train, false, true).size();
  EXPECT_LT(n_tokens * 2, train.size()) << n_tokens << " tokens for " << train.size() << " bytes";

  // The GGUF: vocabulary only, ChatML template.
  const std::string path = (test::temp_dir("gguf") / "v.gguf").string();
  write_bpe_gguf(r, path);
  gguf_file f(path);
  EXPECT_TRUE(f.tensors().empty());
  EXPECT_EQ(f.get_string("tokenizer.ggml.model").value_or(""), "gpt2");
  EXPECT_EQ(f.get_string("tokenizer.ggml.pre").value_or(""), "qwen2");
  EXPECT_NE(f.get_string("tokenizer.chat_template").value_or("").find("<|im_start|>"), std::string::npos);
  EXPECT_EQ(f.get_bool("tokenizer.ggml.add_bos_token"), std::optional<bool>(false));
}

// Training text encodes the way training split it: a word seen in training that became
// one token encodes as that one token.
TEST(BpeTrain, TrainedWordsEncodeAsOneToken) {
  const std::string text = repeat_lines({{"low", 5}, {"lower", 2}, {"newest", 6}, {"widest", 3}});
  const bpe_train_result r = train_bpe({text}, options(400));
  const auto tok = load(r, "words");
  for (const char* w : {"low", "lower", "newest", "widest"}) {
    const auto ids = tok->encode(w, false);
    ASSERT_EQ(ids.size(), 1u) << w;
    EXPECT_EQ(r.tokens[ids[0]], w);
  }
  EXPECT_EQ(tok->encode(text, false).size(), 32u);  // 16 words + 16 newlines
}

// letters_apart: " Books", "'Books" and "[Books" are one qwen2 word each; split where the
// letters begin, every context counts "Books" (30 times in all), and the four merges of its
// letters come first (ties by left string: "B" < "k" < "o"): "B o", "Bo o", "Boo k",
// "Book s". After them only "'\n" and "]\n" (10 each) are pairs. Without the option the
// three prefixed words (10 each) are merged whole, so " Books" is a token of its own.
TEST(BpeTrain, LettersApartGivesANameOneTokenInEveryContext) {
  std::string text;
  for (int i = 0; i < 10; ++i) text += " Books\n'Books'\n[Books]\n";
  bpe_train_options o = options(400);
  o.letters_apart = true;
  const bpe_train_result apart = train_bpe({text}, o);
  EXPECT_EQ(apart.merges, (strings{"B o", "Bo o", "Boo k", "Book s", "' Ċ", "] Ċ"}));
  const auto tok = load(apart, "letters-apart");
  const int32_t books = tok->encode("Books", false).at(0);
  EXPECT_EQ(tok->token_to_piece(books), "Books");
  for (const char* s : {" Books", "'Books", "[Books"}) {
    const auto ids = tok->encode(s, false);
    ASSERT_EQ(ids.size(), 2u) << s;
    EXPECT_EQ(ids[1], books) << s;
  }

  const bpe_train_result joint = train_bpe({text}, options(400));
  const auto tok_joint = load(joint, "letters-joint");
  EXPECT_EQ(tok_joint->encode(" Books", false).size(), 1u);
}

// On varied text, no token of a letters-apart vocabulary holds both a letter and another
// character (tokens that are whole UTF-8 text; byte pieces of a multi-byte letter are not
// judged), and the text still round-trips.
TEST(BpeTrain, LettersApartTokensAreAllLettersOrNone) {
  const std::string text = varied_text();
  bpe_train_options o = options(700);
  o.letters_apart = true;
  const bpe_train_result r = train_bpe({text}, o);
  const auto tok = load(r, "letters-apart-varied");
  int mixed = 0, letter_tokens = 0;
  for (int32_t id = 0; id < tok->n_vocab(); ++id) {
    if (r.token_types[id] != 1) continue;  // the special tokens are written as they are
    // A piece of a multi-byte letter has no code points to classify (and is part of a letter).
    const std::string piece = tok->token_to_piece(id);
    if (!unicode::utf8_is_valid(piece)) continue;
    bool any_letter = false, any_other = false;
    for (uint32_t cp : unicode::utf8_to_cpts(piece)) {
      const bool letter = unicode::cpt_flags(cp) & unicode::cpt_letter;
      (letter ? any_letter : any_other) = true;
    }
    letter_tokens += any_letter && !any_other;
    if (any_letter && any_other) {
      ++mixed;
      ADD_FAILURE() << "mixed token '" << tok->token_to_piece(id) << "'";
    }
  }
  EXPECT_EQ(mixed, 0);
  EXPECT_GT(letter_tokens, 50);
  const auto ids = tok->encode(text, false);
  EXPECT_EQ(tok->decode(ids), text);
}

TEST(BpeTrain, Deterministic) {
  const strings texts = {varied_text(), "another text with other words, 123 and more words"};
  const bpe_train_result a = train_bpe(texts, options(700));
  const bpe_train_result b = train_bpe(texts, options(700));
  EXPECT_EQ(a.merges, b.merges);
  EXPECT_EQ(a.tokens, b.tokens);
  EXPECT_GT(a.merges.size(), 100u);
}

// Texts over the 1 MiB pre-tokenization piece: the pieces are cut where no word spans the
// cut, so the words are exactly those of the whole text.
TEST(BpeTrain, LargeTextCountsTheSameWords) {
  std::mt19937 rng(7);
  const strings parts = {"alpha", " beta", "  gamma", "\n", "\n\n", " \n", "12345", "...", "!\n", "\xC3\xA9t\xC3\xA9",
                         "\t", "x\ny", "'s", " \xE3\x80\x80"};
  std::string text;
  while (text.size() < (5u << 18)) text += parts[rng() % parts.size()];
  strings whole;
  pretokenize(text, pretokenizer::qwen2, whole);
  // The pieces training cuts the text into give exactly the words of the whole text, for
  // every pattern.
  const auto pieces = bpe_text_pieces(text, size_t(1) << 20);
  EXPECT_GE(pieces.size(), 2u);
  std::string joined;
  for (std::string_view p : pieces) joined += p;
  EXPECT_EQ(joined, text);
  for (pretokenizer pre : {pretokenizer::qwen2, pretokenizer::llama3, pretokenizer::gpt2, pretokenizer::bpe_default}) {
    strings all, by_piece;
    const std::string_view part = std::string_view(text).substr(0, 200000);
    pretokenize(part, pre, all);
    for (std::string_view p : bpe_text_pieces(part, 1 << 12)) pretokenize(p, pre, by_piece);
    EXPECT_TRUE(all == by_piece) << pretokenizer_name(pre);
  }
  std::set<std::string> unique(whole.begin(), whole.end());
  bpe_train_options o = options(300);
  o.special_tokens.clear();
  int64_t count_calls = 0;
  o.progress = [&](const char* phase, int64_t, int64_t) { count_calls += std::string(phase) == "count"; };
  const bpe_train_result r = train_bpe({text}, o);
  EXPECT_EQ(r.n_words, static_cast<int64_t>(whole.size()));
  EXPECT_EQ(r.n_unique_words, static_cast<int64_t>(unique.size()));
  EXPECT_EQ(r.n_bytes, static_cast<int64_t>(text.size()));
  EXPECT_GE(count_calls, 1);
  EXPECT_EQ(r.tokens.size(), 300u);
  EXPECT_EQ(r.eos_id, -1);
}

TEST(BpeTrain, Errors) {
  auto message = [](const strings& texts, const bpe_train_options& o) -> std::string {
    try {
      train_bpe(texts, o);
    } catch (const engine_error& e) {
      return e.what();
    }
    return "";
  };
  EXPECT_NE(message({"some text"}, options(258)).find("too small"), std::string::npos);
  EXPECT_NE(message({"", ""}, options(300)).find("no text"), std::string::npos);
  EXPECT_NE(message({}, options(300)).find("no text"), std::string::npos);
  EXPECT_NE(message({"<|endoftext|><|im_end|>"}, options(300)).find("besides special tokens"), std::string::npos);
  bpe_train_options dup = options(300);
  dup.special_tokens = {"<a>", "<a>"};
  EXPECT_NE(message({"text"}, dup).find("twice"), std::string::npos);
  bpe_train_options clash = options(300);
  clash.special_tokens = {"!"};  // the byte token of '!'
  EXPECT_NE(message({"text"}, clash).find("same text"), std::string::npos);
  // 256 + 3 specials exactly: no merges, still a valid vocabulary.
  const bpe_train_result r = train_bpe({"hello hello"}, options(259));
  EXPECT_TRUE(r.merges.empty());
  EXPECT_EQ(r.tokens.size(), 259u);
}

}  // namespace
}  // namespace kvarena
