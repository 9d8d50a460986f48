// model-random-vocab.cpp: the synthetic tokenizers written into random models: a
// SentencePiece-style vocabulary with scores (tokenizer.ggml.model = llama) and a GPT-2
// byte-level BPE vocabulary with merges (gpt2). Both are built so that every multi-char
// token can be reached by pairwise merges of shorter tokens (its prefix + its last char),
// which keeps tokenization of English-like text non-trivial for both engines.
#include <cstdio>
#include <string>
#include <unordered_set>
#include <vector>

#include "engine-error.h"
#include "model-random.h"

namespace kvarena {

namespace {

// Common English words and web-agent vocabulary; their prefixes become pieces first.
const char* const k_words[] = {
    "the", "of", "and", "to", "in", "is", "you", "that", "it", "he", "was", "for", "on", "are",
    "as", "with", "his", "they", "at", "be", "this", "have", "from", "or", "one", "had", "by",
    "word", "but", "not", "what", "all", "were", "we", "when", "your", "can", "said", "there",
    "use", "an", "each", "which", "she", "do", "how", "their", "if", "will", "up", "other",
    "about", "out", "many", "then", "them", "these", "so", "some", "her", "would", "make",
    "like", "him", "into", "time", "has", "look", "two", "more", "write", "go", "see", "number",
    "no", "way", "could", "people", "my", "than", "first", "water", "been", "call", "who",
    "its", "now", "find", "long", "down", "day", "did", "get", "come", "made", "may", "part",
    "over", "new", "sound", "take", "only", "little", "work", "know", "place", "year", "live",
    "me", "back", "give", "most", "very", "after", "thing", "our", "just", "name", "good",
    "sentence", "man", "think", "say", "great", "where", "help", "through", "much", "before",
    "line", "right", "too", "mean", "old", "any", "same", "tell", "follow", "came", "want",
    "show", "also", "around", "form", "three", "small", "set", "put", "end", "does", "another",
    "well", "large", "must", "big", "even", "such", "because", "turn", "here", "why", "ask",
    "went", "read", "need", "land", "different", "home", "us", "move", "try", "kind", "hand",
    "picture", "again", "change", "off", "play", "air", "away", "house", "point", "page",
    "letter", "answer", "found", "study", "still", "learn", "should", "world", "hello", "model",
    "token", "agent", "click", "search", "button", "price", "cart", "order", "user", "login",
    "account", "The", "I", "A", "It", "In", "This", "We", "You", "He",
};
// Frequent word-internal pieces (no leading space marker).
const char* const k_pieces[] = {
    "ing", "ed", "er", "ly", "tion", "es", "ment", "ness", "able", "est", "al", "ous", "ive",
    "ity", "en", "re", "st", "th", "nd", "an", "in", "on", "at", "or", "ar", "ou", "it", "is",
    "he", "ll", "ve", "se", "le", "ce", "de", "te", "ne", "ge", "ic", "ion", "ers", "ies",
};

// Collects tokens in order, skipping duplicates; for BPE also the merge that makes each.
class vocab_builder {
 public:
  vocab_builder(synthetic_vocab& v, int64_t limit, bool with_merges)
      : v_(v), limit_(limit), merges_(with_merges) {}
  bool full() const { return int64_t(v_.tokens.size()) >= limit_; }
  bool has(const std::string& t) const { return seen_.count(t) > 0; }
  // Adds `t` (type `type`) if new and there is room.
  void add(const std::string& t, int32_t type) {
    if (full() || !seen_.insert(t).second) return;
    v_.tokens.push_back(t);
    v_.token_types.push_back(type);
  }
  // Adds every prefix of the char sequence `chars` of >= 2 chars, each as (prefix, last).
  void add_with_prefixes(const std::vector<std::string>& chars) {
    std::string cur = chars[0];
    for (size_t i = 1; i < chars.size() && !full(); ++i) {
      const std::string next = cur + chars[i];
      if (!has(next)) {
        if (merges_) v_.merges.push_back(cur + " " + chars[i]);
        add(next, 1);
      }
      cur = next;
    }
  }
  // Generated pieces: `lead` + every lowercase string of length 1, 2, ... (and the same
  // without lead), in order of length, until the vocabulary is full. Every string's
  // prefix one char shorter was generated (or is a base symbol) before it.
  void fill_letters(const std::string& lead) {
    for (int len = 1; !full(); ++len) {
      for (int with_lead = 1; with_lead >= 0 && !full(); --with_lead) {
        const int n = with_lead ? len : len + 1;  // letters in this group
        std::vector<int> digit(size_t(n), 0);
        while (!full()) {
          std::vector<std::string> chars;
          if (with_lead) chars.push_back(lead);
          for (int d : digit) chars.push_back(std::string(1, char('a' + d)));
          add_with_prefixes(chars);
          int k = n - 1;  // odometer increment
          while (k >= 0 && ++digit[size_t(k)] == 26) digit[size_t(k--)] = 0;
          if (k < 0) break;
        }
      }
    }
  }

 private:
  synthetic_vocab& v_;
  int64_t limit_;
  bool merges_;
  std::unordered_set<std::string> seen_;
};

// UTF-8 chars of `s` (ASCII only here, plus the lead marker passed separately).
std::vector<std::string> chars_of(const std::string& lead, const std::string& s) {
  std::vector<std::string> c;
  if (!lead.empty()) c.push_back(lead);
  for (char ch : s) c.push_back(std::string(1, ch));
  return c;
}

std::string utf8(uint32_t cp) {
  std::string s;
  if (cp < 0x80) {
    s += char(cp);
  } else if (cp < 0x800) {
    s += char(0xc0 | (cp >> 6));
    s += char(0x80 | (cp & 0x3f));
  } else {
    s += char(0xe0 | (cp >> 12));
    s += char(0x80 | ((cp >> 6) & 0x3f));
    s += char(0x80 | (cp & 0x3f));
  }
  return s;
}

void check_size(int64_t n_vocab, int64_t min) {
  if (n_vocab < min || n_vocab > (int64_t(1) << 24)) {
    throw engine_error("synthetic vocabulary: n_vocab " + std::to_string(n_vocab) + " must be in " +
                       std::to_string(min) + "..16777216");
  }
}

}  // namespace

synthetic_vocab make_spm_vocab(int64_t n_vocab) {
  check_size(n_vocab, 300);
  synthetic_vocab v;
  v.model = "llama";
  v.bos_id = 1;
  v.eos_id = 2;
  v.unk_id = 0;
  v.add_bos = true;
  vocab_builder b(v, n_vocab, false);
  b.add("<unk>", 2);
  b.add("<s>", 3);
  b.add("</s>", 3);
  for (int c = 0; c < 256; ++c) {
    char hex[8];
    std::snprintf(hex, sizeof(hex), "<0x%02X>", c);
    b.add(hex, 6);
  }
  const std::string space = "\u2581";  // SentencePiece's word-start marker
  b.add(space, 1);
  for (int c = 33; c < 127; ++c) b.add(std::string(1, char(c)), 1);
  for (const char* w : k_words) b.add_with_prefixes(chars_of(space, w));
  for (const char* p : k_pieces) b.add_with_prefixes(chars_of("", p));
  b.fill_letters(space);
  // Scores: 0 for special and byte tokens; normal pieces rank by order (earlier merges win).
  v.scores.assign(v.tokens.size(), 0.0f);
  int rank = 0;
  for (size_t i = 0; i < v.tokens.size(); ++i) {
    if (v.token_types[i] == 1) v.scores[i] = -float(rank++);
  }
  return v;
}

synthetic_vocab make_bpe_vocab(int64_t n_vocab, const std::string& pre) {
  check_size(n_vocab, 300);
  synthetic_vocab v;
  v.model = "gpt2";
  v.pre = pre;
  v.bos_id = v.eos_id = int32_t(n_vocab - 1);
  v.add_bos = false;
  vocab_builder b(v, n_vocab - 1, true);  // the last id is <|endoftext|>
  // GPT-2's byte -> printable code point map, in its token order: the printable bytes map
  // to themselves, the other 68 to U+0100 onward (so space is "Ġ", U+0120).
  std::vector<int> printable;
  for (int c = 33; c <= 126; ++c) printable.push_back(c);
  for (int c = 161; c <= 172; ++c) printable.push_back(c);
  for (int c = 174; c <= 255; ++c) printable.push_back(c);
  std::string byte_sym[256];
  std::vector<bool> is_printable(256, false);
  for (int c : printable) is_printable[size_t(c)] = true;
  for (int c : printable) byte_sym[c] = utf8(uint32_t(c));
  uint32_t next = 256;
  for (int c = 0; c < 256; ++c) {
    if (!is_printable[size_t(c)]) byte_sym[c] = utf8(next++);
  }
  for (int c : printable) b.add(byte_sym[c], 1);
  for (int c = 0; c < 256; ++c) {
    if (!is_printable[size_t(c)]) b.add(byte_sym[c], 1);
  }
  const std::string space = byte_sym[size_t(' ')];
  for (const char* w : k_words) b.add_with_prefixes(chars_of(space, w));
  for (const char* p : k_pieces) b.add_with_prefixes(chars_of("", p));
  b.fill_letters(space);
  v.tokens.push_back("<|endoftext|>");
  v.token_types.push_back(3);
  return v;
}

}  // namespace kvarena
