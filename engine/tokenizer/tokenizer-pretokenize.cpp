// tokenizer-pretokenize.cpp: hand-written matchers for the pre-tokenizer patterns. Each
// matcher answers "how long is the pattern's match starting at pos?" the way a
// leftmost-first regex engine would (alternatives tried in order, greedy runs), and a
// splitter walks a segment with it. Lookahead never sees past the segment's end.
#include "tokenizer-pretokenize.h"

#include <array>
#include <utility>

#include "unicode-tables.h"
#include "unicode-utf8.h"

namespace kvarena {

namespace {

using unicode::cpt_flags;
constexpr uint8_t k_letter = unicode::cpt_letter;
constexpr uint8_t k_number = unicode::cpt_number;
constexpr uint8_t k_space = unicode::cpt_whitespace;
constexpr uint8_t k_mark = unicode::cpt_mark;
constexpr uint8_t k_punct = unicode::cpt_punctuation;
constexpr uint32_t k_no_cpt = 0xFFFFFFFF;  // "past the segment end"

uint8_t flags_of(uint32_t cp) {
  static const std::array<uint8_t, 128> ascii = [] {
    std::array<uint8_t, 128> a{};
    for (uint32_t c = 0; c < 128; ++c) a[c] = cpt_flags(c);
    return a;
  }();
  return cp < 128 ? ascii[cp] : cpt_flags(cp);
}

// The code points of the whole text and their classes.
struct cpt_text {
  std::vector<uint32_t> cpts;
  std::vector<uint8_t> flags;
};

// One segment [begin, end) of a cpt_text; reads past `end` see "nothing".
struct segment {
  const cpt_text& t;
  size_t end;

  bool in(size_t p) const { return p < end; }
  uint32_t cpt(size_t p) const { return p < end ? t.cpts[p] : k_no_cpt; }
  uint8_t flags(size_t p) const { return p < end ? t.flags[p] : 0; }
  bool letter(size_t p) const { return flags(p) & k_letter; }
  bool number(size_t p) const { return flags(p) & k_number; }
  bool space(size_t p) const { return flags(p) & k_space; }
  bool newline(size_t p) const { return cpt(p) == '\r' || cpt(p) == '\n'; }
  // [^\s\p{L}\p{N}]: any code point of the segment that is none of those.
  bool other(size_t p) const { return other_than(p, k_letter); }
  // The same with `word` (\p{L}, or [\p{L}\p{M}]) for \p{L}.
  bool other_than(size_t p, uint8_t word) const {
    return p < end && !(t.flags[p] & (k_space | word | k_number));
  }
};

// 's|'t|'re|'ve|'m|'ll|'d at pos (the second letters case-insensitively when fold_case);
// the length, or 0.
size_t match_contraction(const segment& s, size_t pos, bool fold_case) {
  if (s.cpt(pos) != '\'' || !s.in(pos + 1)) return 0;
  auto lower = [&](size_t p) {
    const uint32_t c = s.cpt(p);
    return fold_case && c >= 'A' && c <= 'Z' ? c + ('a' - 'A') : c;
  };
  const uint32_t c1 = lower(pos + 1);
  if (c1 == 's' || c1 == 't' || c1 == 'm' || c1 == 'd') return 2;
  if (!s.in(pos + 2)) return 0;
  const uint32_t c2 = lower(pos + 2);
  if ((c1 == 'r' && c2 == 'e') || (c1 == 'v' && c2 == 'e') || (c1 == 'l' && c2 == 'l')) return 3;
  return 0;
}

// The whitespace alternatives at pos: \s*[\r\n]+ (only with newline_rule), then
// \s+(?!\S), then \s+. A run followed by a non-space gives up its last code point, which
// then starts the next word (" world"). 0 when pos is not whitespace.
size_t match_whitespace(const segment& s, size_t pos, bool newline_rule) {
  size_t n = 0;
  size_t through_last_newline = 0;
  while (s.space(pos + n)) {
    if (newline_rule && s.newline(pos + n)) through_last_newline = n + 1;
    ++n;
  }
  if (through_last_newline > 0) return through_last_newline;
  if (n > 1 && s.in(pos + n)) return n - 1;
  return n;
}

// The run of code points from p on that satisfy pred; its end.
template <class Pred>
size_t run_end(size_t p, Pred pred) {
  while (pred(p)) ++p;
  return p;
}

// 's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
size_t match_gpt2(const segment& s, size_t pos) {
  if (size_t n = match_contraction(s, pos, false)) return n;
  const size_t p = s.cpt(pos) == ' ' ? pos + 1 : pos;
  if (s.letter(p)) return run_end(p, [&](size_t q) { return s.letter(q); }) - pos;
  if (s.number(p)) return run_end(p, [&](size_t q) { return s.number(q); }) - pos;
  if (s.other(p)) return run_end(p, [&](size_t q) { return s.other(q); }) - pos;
  if (size_t n = match_whitespace(s, pos, false)) return n;
  return 1;  // unreachable with these classes; keeps the walk moving
}

// (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?W+|\p{N}{1,max_digits}
//   | ?[^\sW\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
// where W is \p{L}, or [\p{L}\p{M}] with marks_are_letters (Qwen3.5).
size_t match_llama3(const segment& s, size_t pos, size_t max_digits, bool marks_are_letters = false) {
  if (size_t n = match_contraction(s, pos, true)) return n;
  const uint8_t word = marks_are_letters ? (k_letter | k_mark) : k_letter;
  auto wordch = [&](size_t q) { return (s.flags(q) & word) != 0; };
  // One optional code point that is not \r, \n, a letter or a number, then letters.
  if (!s.newline(pos) && !s.number(pos) && (wordch(pos) || wordch(pos + 1))) {
    return run_end(pos + 1, wordch) - pos;
  }
  if (s.number(pos)) {
    size_t q = pos;
    while (s.number(q) && q - pos < max_digits) ++q;
    return q - pos;
  }
  const size_t p = s.cpt(pos) == ' ' ? pos + 1 : pos;
  if (s.other_than(p, word)) {
    const size_t q = run_end(p, [&](size_t i) { return s.other_than(i, word); });
    return run_end(q, [&](size_t i) { return s.newline(i); }) - pos;
  }
  if (size_t n = match_whitespace(s, pos, true)) return n;
  return 1;
}

using spans = std::vector<std::pair<size_t, size_t>>;  // [begin, end) in code points

// Splits every span with `match` (length of the match at pos, 0 for none). Matches become
// pieces; the stretches between them become pieces too (as llama.cpp's regex split keeps
// them).
template <class Match>
spans split_spans(const cpt_text& t, const spans& in, Match match) {
  spans out;
  out.reserve(in.size() * 2);
  for (auto [begin, end] : in) {
    const segment s{t, end};
    size_t gap = begin;
    for (size_t pos = begin; pos < end;) {
      const size_t n = match(s, pos);
      if (n == 0) {
        ++pos;
        continue;
      }
      if (gap < pos) out.emplace_back(gap, pos);
      out.emplace_back(pos, pos + n);
      pos += n;
      gap = pos;
    }
    if (gap < end) out.emplace_back(gap, end);
  }
  return out;
}

// [\p{P}\$\+<=>\^~\|]+ (llama.cpp's default pattern 1; note: no backquote), or with the
// backquote too (Falcon's first pattern).
size_t match_punct_run(const segment& s, size_t pos, bool backquote = false) {
  auto punct = [&](size_t p) {
    if (!s.in(p)) return false;
    const uint32_t c = s.cpt(p);
    return (s.flags(p) & k_punct) || c == '$' || c == '+' || c == '<' || c == '=' || c == '>' ||
           c == '^' || c == '~' || c == '|' || (backquote && c == '`');
  };
  return run_end(pos, punct) - pos;
}

// \p{N}: one number code point alone.
size_t match_one_number(const segment& s, size_t pos) { return s.number(pos) ? 1 : 0; }

// [^\n]+|[\n]+: a run of line feeds, or a run of anything else.
size_t match_newline_runs(const segment& s, size_t pos) {
  const bool lf = s.cpt(pos) == '\n';
  return run_end(pos, [&](size_t p) { return s.in(p) && (s.cpt(p) == '\n') == lf; }) - pos;
}

// [\r\n]: one line break code point alone.
size_t match_one_newline(const segment& s, size_t pos) { return s.newline(pos) ? 1 : 0; }

// \s?C+ for the class bits C: an optional whitespace code point, then a run of C.
size_t match_space_then_run(const segment& s, size_t pos, uint8_t cls) {
  auto in_class = [&](size_t p) { return (s.flags(p) & cls) != 0; };
  const size_t p = s.space(pos) && in_class(pos + 1) ? pos + 1 : pos;
  return in_class(p) ? run_end(p, in_class) - pos : 0;
}

// [\x{4E00}-\x{9FA5}\x{0800}-\x{4E00}\x{AC00}-\x{D7FF}]+ (DeepSeek's CJK run). The
// reference matches it on code points where every non-ASCII whitespace has become U+000B,
// so the whitespace in those ranges (U+1680, U+2000.., U+3000) is not part of a run.
size_t match_cjk_run(const segment& s, size_t pos) {
  auto cjk = [&](size_t p) {
    const uint32_t c = s.cpt(p);
    return s.in(p) && !s.space(p) && ((c >= 0x0800 && c <= 0x9FA5) || (c >= 0xAC00 && c <= 0xD7FF));
  };
  return run_end(pos, cjk) - pos;
}

size_t match_number_run(const segment& s, size_t pos) {
  return run_end(pos, [&](size_t p) { return s.number(p); }) - pos;
}

size_t match_three_ascii_digits(const segment& s, size_t pos) {
  auto digit = [&](size_t p) { return s.cpt(p) >= '0' && s.cpt(p) <= '9'; };
  return digit(pos) && digit(pos + 1) && digit(pos + 2) ? 3 : 0;
}

// Names as llama.cpp's converter writes them; aliases share the pattern and settings.
const std::pair<std::string_view, pretokenizer> k_pretokenizer_names[] = {
    {"default", pretokenizer::bpe_default}, {"", pretokenizer::bpe_default},
    {"gpt-2", pretokenizer::gpt2},          {"phi-2", pretokenizer::gpt2},
    {"mpt", pretokenizer::gpt2},            {"olmo", pretokenizer::gpt2},
    {"llama-bpe", pretokenizer::llama3},    {"llama3", pretokenizer::llama3},
    {"llama-v3", pretokenizer::llama3},     {"falcon3", pretokenizer::llama3},
    {"pixtral", pretokenizer::llama3},      {"qwen2", pretokenizer::qwen2},
    {"deepseek-r1-qwen", pretokenizer::qwen2}, {"qwen35", pretokenizer::qwen35},
    {"starcoder", pretokenizer::starcoder}, {"refact", pretokenizer::starcoder},
    {"command-r", pretokenizer::starcoder},
    {"falcon", pretokenizer::falcon},       {"deepseek-coder", pretokenizer::deepseek_coder},
};

}  // namespace

std::optional<pretokenizer> pretokenizer_from_name(std::string_view name) {
  for (const auto& [n, kind] : k_pretokenizer_names) {
    if (n == name) return kind;
  }
  return std::nullopt;
}

std::string pretokenizer_names() {
  std::string out;
  for (const auto& [n, kind] : k_pretokenizer_names) {
    if (n.empty()) continue;
    if (!out.empty()) out += ", ";
    out += n;
  }
  return out;
}

const char* pretokenizer_name(pretokenizer kind) {
  switch (kind) {
    case pretokenizer::gpt2: return "gpt-2";
    case pretokenizer::llama3: return "llama-bpe";
    case pretokenizer::qwen2: return "qwen2";
    case pretokenizer::qwen35: return "qwen35";
    case pretokenizer::starcoder: return "starcoder";
    case pretokenizer::falcon: return "falcon";
    case pretokenizer::deepseek_coder: return "deepseek-coder";
    case pretokenizer::newlines: return "gemma4";
    case pretokenizer::bpe_default: return "default";
  }
  return "?";
}

void pretokenize(std::string_view text, pretokenizer kind, std::vector<std::string>& words) {
  cpt_text t;
  t.cpts = unicode::utf8_to_cpts(text);
  t.flags.resize(t.cpts.size());
  for (size_t i = 0; i < t.cpts.size(); ++i) t.flags[i] = flags_of(t.cpts[i]);

  spans pieces;
  if (!t.cpts.empty()) pieces.emplace_back(0, t.cpts.size());
  switch (kind) {
    case pretokenizer::gpt2:
      pieces = split_spans(t, pieces, match_gpt2);
      break;
    case pretokenizer::llama3:
      pieces = split_spans(t, pieces, [](const segment& s, size_t p) { return match_llama3(s, p, 3); });
      break;
    case pretokenizer::qwen2:
      pieces = split_spans(t, pieces, [](const segment& s, size_t p) { return match_llama3(s, p, 1); });
      break;
    case pretokenizer::qwen35:
      pieces = split_spans(t, pieces, [](const segment& s, size_t p) { return match_llama3(s, p, 1, true); });
      break;
    case pretokenizer::starcoder:
      pieces = split_spans(t, pieces, match_one_number);
      pieces = split_spans(t, pieces, match_gpt2);
      break;
    case pretokenizer::falcon:
      pieces = split_spans(t, pieces, [](const segment& s, size_t p) { return match_punct_run(s, p, true); });
      pieces = split_spans(t, pieces, match_gpt2);
      pieces = split_spans(t, pieces, match_three_ascii_digits);
      break;
    case pretokenizer::deepseek_coder:
      pieces = split_spans(t, pieces, match_one_newline);
      pieces = split_spans(t, pieces, [](const segment& s, size_t p) { return match_space_then_run(s, p, k_letter); });
      pieces = split_spans(t, pieces, [](const segment& s, size_t p) { return match_space_then_run(s, p, k_punct); });
      pieces = split_spans(t, pieces, match_cjk_run);
      pieces = split_spans(t, pieces, match_one_number);
      break;
    case pretokenizer::newlines:
      pieces = split_spans(t, pieces, match_newline_runs);
      break;
    case pretokenizer::bpe_default:
      pieces = split_spans(t, pieces, [](const segment& s, size_t p) { return match_punct_run(s, p); });
      pieces = split_spans(t, pieces, match_gpt2);
      pieces = split_spans(t, pieces, match_number_run);
      pieces = split_spans(t, pieces, match_three_ascii_digits);
      break;
  }

  words.reserve(words.size() + pieces.size());
  for (auto [begin, end] : pieces) {
    std::string w;
    w.reserve(end - begin);
    for (size_t i = begin; i < end; ++i) unicode::utf8_append(w, t.cpts[i]);
    words.push_back(std::move(w));
  }
}

}  // namespace kvarena
