// tokenizer-train.cpp: byte-level BPE training (see tokenizer-train.h for the contract).
// Two phases: count the distinct words of the input (special-token split and
// pre-tokenization by the engine's own code, so training and encoding cut text the same
// way), then merge pairs, most frequent first, with incrementally kept pair counts.
#include "tokenizer-train.h"

#include <algorithm>
#include <array>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

#include "engine-error.h"
#include "gguf-writer.h"
#include "tokenizer-vocab.h"
#include "unicode-tables.h"
#include "unicode-utf8.h"

namespace kvarena {

namespace {

// GPT-2's byte <-> character map, as tokenizer-bpe.cpp builds it: printable Latin-1 bytes
// stand for themselves, the other 68 take U+0100 onward in byte order.
const std::array<std::string, 256>& byte_chars() {
  static const std::array<std::string, 256> table = [] {
    std::array<std::string, 256> t;
    uint32_t next = 256;
    for (uint32_t b = 0; b < 256; ++b) {
      const bool printable = (b >= 33 && b <= 126) || (b >= 161 && b <= 172) || (b >= 174 && b <= 255);
      t[b] = unicode::utf8_from_cpt(printable ? b : next++);
    }
    return t;
  }();
  return table;
}

// Calls f on each maximal run of `word` whose code points are all letters or all not
// letters ("'Books'" -> "'", "Books", "'"), in order.
template <typename F>
void for_each_letter_run(std::string_view word, F&& f) {
  size_t run_begin = 0, pos = 0;
  bool run_letter = false;
  while (pos < word.size()) {
    const size_t at = pos;
    const bool letter = unicode::cpt_flags(unicode::utf8_decode(word, pos)) & unicode::cpt_letter;
    if (at > 0 && letter != run_letter) {
      f(word.substr(run_begin, at - run_begin));
      run_begin = at;
    }
    run_letter = letter;
  }
  if (pos > run_begin) f(word.substr(run_begin));
}

// A distinct pre-tokenized word: its symbols so far and how often the input holds it.
struct word {
  std::vector<int32_t> syms;  // token ids, starting from one per byte
  int64_t count;
};

// ---- phase 2: merging ----

uint64_t pair_key(int32_t left, int32_t right) {
  return (static_cast<uint64_t>(static_cast<uint32_t>(left)) << 32) | static_cast<uint32_t>(right);
}
int32_t key_left(uint64_t key) { return static_cast<int32_t>(key >> 32); }
int32_t key_right(uint64_t key) { return static_cast<int32_t>(key & 0xFFFFFFFFu); }

struct pair_data {
  int64_t count = 0;
  // Words that held the pair when it was counted; may hold words that lost it since (and
  // repeats): checked when the pair is merged.
  std::vector<int32_t> words;
};

struct heap_entry {
  int64_t count;
  uint64_t key;
};

class bpe_trainer {
 public:
  bpe_trainer(std::vector<word> words, const bpe_train_options& o) : words_(std::move(words)), opt_(o) {
    tokens_.reserve(static_cast<size_t>(std::max<int64_t>(o.vocab_size, 256)));
    for (int b = 0; b < 256; ++b) add_token(std::string(1, static_cast<char>(b)));
  }

  // Merges until the vocabulary has `n_tokens` (byte + merged) tokens or no pair is left
  // that reaches min_frequency.
  void run(int64_t n_tokens) {
    count_pairs();
    const int64_t base = static_cast<int64_t>(tokens_.size());
    const int64_t wanted = n_tokens - base;
    const int64_t min_count = std::max<int64_t>(opt_.min_frequency, 1);
    int64_t reported = 0;
    while (static_cast<int64_t>(tokens_.size()) < n_tokens && !heap_.empty()) {
      std::pop_heap(heap_.begin(), heap_.end(), heap_less{this});
      const heap_entry top = heap_.back();
      heap_.pop_back();
      auto it = pairs_.find(top.key);
      const int64_t current = it == pairs_.end() ? 0 : it->second.count;
      if (current != top.count) {  // out of date: back in with the count it has now
        if (current >= min_count) push(current, top.key);
        continue;
      }
      if (current < min_count) break;
      merge(top.key, it->second);
      const int64_t done = static_cast<int64_t>(tokens_.size()) - base;
      if (opt_.progress && opt_.progress_every > 0 && done - reported >= opt_.progress_every) {
        reported = done;
        opt_.progress("merge", done, wanted);
      }
    }
    if (opt_.progress) opt_.progress("merge", static_cast<int64_t>(tokens_.size()) - base, wanted);
  }

  const std::vector<std::string>& tokens() const { return tokens_; }  // raw bytes
  const std::vector<std::pair<int32_t, int32_t>>& merges() const { return merges_; }

 private:
  // Max-heap order: higher count first; on equal counts the smaller (left, right) byte
  // strings first.
  struct heap_less {
    const bpe_trainer* t;
    bool operator()(const heap_entry& a, const heap_entry& b) const {
      if (a.count != b.count) return a.count < b.count;
      return t->pair_less(b.key, a.key);
    }
  };
  bool pair_less(uint64_t a, uint64_t b) const {
    const int32_t al = key_left(a), bl = key_left(b);
    if (al != bl) return tokens_[al] < tokens_[bl];  // texts are distinct, so ids decide equality
    return tokens_[key_right(a)] < tokens_[key_right(b)];
  }

  int32_t add_token(std::string bytes) {
    const int32_t id = static_cast<int32_t>(tokens_.size());
    ids_.emplace(bytes, id);
    tokens_.push_back(std::move(bytes));
    return id;
  }

  void push(int64_t count, uint64_t key) {
    heap_.push_back({count, key});
    std::push_heap(heap_.begin(), heap_.end(), heap_less{this});
  }

  void count_pairs() {
    for (size_t w = 0; w < words_.size(); ++w) {
      const word& wd = words_[w];
      for (size_t i = 0; i + 1 < wd.syms.size(); ++i) {
        pair_data& p = pairs_[pair_key(wd.syms[i], wd.syms[i + 1])];
        p.count += wd.count;
        if (p.words.empty() || p.words.back() != static_cast<int32_t>(w)) p.words.push_back(static_cast<int32_t>(w));
      }
    }
    const int64_t min_count = std::max<int64_t>(opt_.min_frequency, 1);
    heap_.reserve(pairs_.size());
    for (const auto& [key, p] : pairs_) {
      if (p.count >= min_count) heap_.push_back({p.count, key});
    }
    std::make_heap(heap_.begin(), heap_.end(), heap_less{this});
  }

  void add(int32_t left, int32_t right, int64_t delta) { pairs_[pair_key(left, right)].count += delta; }
  // A pair that the merge created (it holds the new token): counted, indexed, re-queued.
  void add_new(int32_t left, int32_t right, int64_t delta, int32_t w) {
    const uint64_t key = pair_key(left, right);
    pair_data& p = pairs_[key];
    p.count += delta;
    if (p.words.empty() || p.words.back() != w) p.words.push_back(w);
    touched_.push_back(key);
  }

  // Replaces every occurrence of (left, right) by the merged token, left to right without
  // overlap (as the encoder applies a merge), in the words that hold it; pair counts follow
  // locally: at an occurrence l r between a and b, (a l), (l r), (r b) lose the word's count
  // and (a Z), (Z b) gain it, where a run "l r l r" shares its middle pair.
  void merge(uint64_t key, pair_data& pd) {
    const int32_t l = key_left(key), r = key_right(key);
    std::string text = tokens_[l] + tokens_[r];
    int32_t z;
    if (auto found = ids_.find(text); found != ids_.end()) {
      z = found->second;  // already a token (reached by another split): no new token
    } else {
      z = add_token(std::move(text));
    }
    merges_.emplace_back(l, r);

    std::vector<int32_t> list = std::move(pd.words);
    pd.words.clear();
    std::sort(list.begin(), list.end());
    list.erase(std::unique(list.begin(), list.end()), list.end());
    touched_.clear();
    std::vector<int32_t> out;
    for (int32_t w : list) {
      word& wd = words_[w];
      std::vector<int32_t>& s = wd.syms;
      const size_t n = s.size();
      auto at = [&](size_t i) { return i + 1 < n && s[i] == l && s[i + 1] == r; };
      size_t first = 0;
      while (first + 1 < n && !at(first)) ++first;
      if (first + 1 >= n) continue;  // lost the pair to an earlier merge
      const int64_t c = wd.count;
      out.assign(s.begin(), s.begin() + static_cast<std::ptrdiff_t>(first));
      bool prev_merged = false;  // the symbol before i is a Z made just now
      for (size_t i = first; i < n;) {
        if (!at(i)) {
          out.push_back(s[i]);
          ++i;
          prev_merged = false;
          continue;
        }
        add(l, r, -c);
        if (i > 0) {
          if (prev_merged) {
            add_new(z, z, c, w);  // (r l) already went as the previous occurrence's right pair
          } else {
            add(s[i - 1], l, -c);
            add_new(s[i - 1], z, c, w);
          }
        }
        if (i + 2 < n) {
          add(r, s[i + 2], -c);
          if (!at(i + 2)) add_new(z, s[i + 2], c, w);  // else the next occurrence adds (Z Z)
        }
        out.push_back(z);
        i += 2;
        prev_merged = true;
      }
      s.swap(out);
    }
    pairs_.erase(key);  // its count is 0 now: every occurrence was replaced

    const int64_t min_count = std::max<int64_t>(opt_.min_frequency, 1);
    std::sort(touched_.begin(), touched_.end());
    touched_.erase(std::unique(touched_.begin(), touched_.end()), touched_.end());
    for (uint64_t k : touched_) {
      const int64_t count = pairs_[k].count;
      if (count >= min_count) push(count, k);
    }
  }

  std::vector<word> words_;
  const bpe_train_options& opt_;
  std::vector<std::string> tokens_;                 // raw bytes of each token
  std::unordered_map<std::string, int32_t> ids_;    // raw bytes -> id
  std::vector<std::pair<int32_t, int32_t>> merges_;
  std::unordered_map<uint64_t, pair_data> pairs_;   // pair_key -> count and words
  std::vector<heap_entry> heap_;
  std::vector<uint64_t> touched_;                   // pairs the current merge created
};

}  // namespace

// No word of any supported pattern spans a cut just after "x\ny" ('\n' between printable
// non-space ASCII): newline runs stop at their last '\n'; letter, number and punctuation
// runs take no '\n' in front or inside; a lone "\n" before a non-space is a word of its own
// (for gpt2's \s+(?!\S) too, since the byte before it is no space).
std::vector<std::string_view> bpe_text_pieces(std::string_view text, size_t chunk) {
  auto plain = [](char c) { return c >= 0x21 && c <= 0x7E; };
  std::vector<std::string_view> pieces;
  size_t begin = 0;
  while (begin < text.size()) {
    size_t end = text.size();
    if (chunk > 0 && text.size() - begin > chunk) {
      for (size_t p = begin + chunk; p + 1 < text.size(); ++p) {
        if (text[p] == '\n' && plain(text[p - 1]) && plain(text[p + 1])) {
          end = p + 1;
          break;
        }
      }
    }
    pieces.push_back(text.substr(begin, end - begin));
    begin = end;
  }
  return pieces;
}

const std::string& bpe_byte_char(uint8_t byte) { return byte_chars()[byte]; }

std::string bpe_bytes_to_chars(const std::string& bytes) {
  std::string out;
  out.reserve(bytes.size() * 2);
  for (char c : bytes) out += byte_chars()[static_cast<uint8_t>(c)];
  return out;
}

const std::string& bpe_chatml_template() {
  static const std::string t =
      "{% for message in messages %}"
      "{{ '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n' }}"
      "{% endfor %}"
      "{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}";
  return t;
}

bpe_train_result train_bpe(const std::vector<std::string>& texts, const bpe_train_options& o) {
  const std::vector<std::string>& specials = o.special_tokens;
  {
    std::unordered_set<std::string> seen;
    for (const std::string& s : specials) {
      if (s.empty()) throw engine_error("train BPE: a special token is empty");
      if (!seen.insert(s).second) throw engine_error("train BPE: special token '" + s + "' is given twice");
    }
  }
  const int64_t n_special = static_cast<int64_t>(specials.size());
  if (o.vocab_size < 256 + n_special) {
    throw engine_error("train BPE: vocabulary size " + std::to_string(o.vocab_size) +
                       " is too small: it must hold the 256 byte tokens and the " +
                       std::to_string(n_special) + " special tokens (at least " +
                       std::to_string(256 + n_special) + ")");
  }

  bpe_train_result res;
  res.pre = o.pre;

  // Special tokens are split out with the encoder's own code (a vocabulary of just them).
  tokenizer_vocab special_vocab;
  if (!specials.empty()) {
    special_vocab.assign("special tokens", specials,
                         std::vector<token_type>(specials.size(), token_type::control), {});
  }

  int64_t total_bytes = 0;
  for (const std::string& t : texts) total_bytes += static_cast<int64_t>(t.size());
  std::unordered_map<std::string, int64_t> counts;
  std::vector<std::string> words;
  int64_t done_bytes = 0, reported = 0;
  constexpr int64_t k_report_bytes = 8 << 20;
  for (const std::string& text : texts) {
    res.n_bytes += static_cast<int64_t>(text.size());
    std::vector<text_fragment> frags;
    if (specials.empty()) {
      if (!text.empty()) frags.push_back({-1, 0, text.size()});
    } else {
      frags = special_vocab.split_special(text, /*parse_special=*/true);
    }
    for (const text_fragment& f : frags) {
      if (f.token >= 0) continue;
      const std::string_view fragment = std::string_view(text).substr(f.begin, f.end - f.begin);
      for (std::string_view piece : bpe_text_pieces(fragment, size_t(1) << 20)) {
        words.clear();
        pretokenize(piece, o.pre, words);
        for (std::string& w : words) {
          if (w.empty()) continue;
          if (o.letters_apart) {
            for_each_letter_run(w, [&](std::string_view run) {
              ++counts[std::string(run)];
              ++res.n_words;
            });
            continue;
          }
          ++counts[std::move(w)];
          ++res.n_words;
        }
        const int64_t at = done_bytes + static_cast<int64_t>(piece.data() + piece.size() - text.data());
        if (o.progress && at - reported >= k_report_bytes) {
          reported = at;
          o.progress("count", at, total_bytes);
        }
      }
    }
    done_bytes += static_cast<int64_t>(text.size());
  }
  if (o.progress) o.progress("count", total_bytes, total_bytes);
  if (counts.empty()) {
    throw engine_error("train BPE: the input holds no text" +
                       std::string(res.n_bytes > 0 ? " besides special tokens" : "") + " to train on");
  }
  res.n_unique_words = static_cast<int64_t>(counts.size());

  // Words in byte order: the merge loop's work order (not its results) follows it.
  std::vector<std::pair<std::string, int64_t>> sorted(counts.begin(), counts.end());
  counts.clear();
  std::sort(sorted.begin(), sorted.end());
  std::vector<word> wl;
  wl.reserve(sorted.size());
  for (auto& [text, count] : sorted) {
    word w;
    w.count = count;
    w.syms.reserve(text.size());
    for (char c : text) w.syms.push_back(static_cast<uint8_t>(c));
    wl.push_back(std::move(w));
    std::string().swap(text);
  }
  sorted.clear();

  bpe_trainer trainer(std::move(wl), o);
  trainer.run(o.vocab_size - n_special);

  const std::vector<std::string>& raw = trainer.tokens();
  res.tokens.reserve(raw.size() + specials.size());
  for (const std::string& t : raw) res.tokens.push_back(bpe_bytes_to_chars(t));
  res.token_types.assign(res.tokens.size(), static_cast<int32_t>(token_type::normal));
  std::unordered_set<std::string> normal(res.tokens.begin(), res.tokens.end());
  for (const std::string& s : specials) {
    if (normal.count(s)) {
      throw engine_error("train BPE: special token '" + s +
                         "' has the same text as a byte or merged token (pick another text)");
    }
    if (s == "<|endoftext|>") res.eos_id = static_cast<int32_t>(res.tokens.size());
    res.tokens.push_back(s);
    res.token_types.push_back(static_cast<int32_t>(token_type::control));
  }
  res.merges.reserve(trainer.merges().size());
  for (auto [l, r] : trainer.merges()) res.merges.push_back(res.tokens[l] + " " + res.tokens[r]);
  res.bos_id = -1;
  res.add_bos = false;
  res.chat_template = bpe_chatml_template();
  return res;
}

uint64_t write_bpe_gguf(const bpe_train_result& r, const std::string& path) {
  gguf_writer w;
  w.set_string("general.name", "kvarena-bpe");
  w.set_string("tokenizer.ggml.model", "gpt2");
  w.set_string("tokenizer.ggml.pre", pretokenizer_name(r.pre));
  w.set_string_array("tokenizer.ggml.tokens", r.tokens);
  w.set_i32_array("tokenizer.ggml.token_type", r.token_types);
  w.set_string_array("tokenizer.ggml.merges", r.merges);
  if (r.bos_id >= 0) w.set_u32("tokenizer.ggml.bos_token_id", static_cast<uint32_t>(r.bos_id));
  if (r.eos_id >= 0) w.set_u32("tokenizer.ggml.eos_token_id", static_cast<uint32_t>(r.eos_id));
  w.set_bool("tokenizer.ggml.add_bos_token", r.add_bos);
  if (!r.chat_template.empty()) w.set_string("tokenizer.chat_template", r.chat_template);
  return w.write(path);
}

}  // namespace kvarena
