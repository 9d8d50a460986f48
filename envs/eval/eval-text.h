// eval-text.h: the text rules shared by string_match and program_html (specs/web-envs.md
// §2): clean(), word tokens, the include/exclude/exact/one_of matches, numbers and
// numeric conditions. Pure functions over bytes; any input (empty, huge, invalid UTF-8)
// is fine.
//
// clean(s) follows WA (a superset of VWA's): trim ASCII whitespace, strip one pair of
// surrounding quotes ('...' or "..."), lowercase. Lowercasing covers ASCII and the
// Latin-1 capitals À..Þ (UTF-8 C3 80..C3 9E, not ×); other scripts are left as they are.
//
// word_tokens(s) approximates nltk's word_tokenize (Treebank rules), which VWA uses for
// the single-token rule ("170" must be a token of the answer, so "000000170" does not
// match but "$170" and "170." do):
//   - split on ASCII whitespace;
//   - ; @ # $ % & ? ! ( ) [ ] { } < > " ` are tokens of their own;
//   - , and : are tokens of their own unless a digit follows ("1,000" and "5:30" stay);
//   - leading and trailing ' are split off, and the clitics n't 's 'm 'd 're 've 'll;
//   - a trailing run of '.' is split off every word (nltk does so only at a sentence end);
//   - everything else (letters, digits, - / + = * _ ~ ^ | \, non-ASCII bytes) joins words.
#pragma once
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kvarena {

std::string clean_answer(std::string_view s);

std::vector<std::string> word_tokens(std::string_view s);

// clean(ref) == clean(pred).
bool text_exact_match(std::string_view ref, std::string_view pred);

// The single-token rule: when clean(ref) is one word token it must equal a token of
// clean(pred); otherwise clean(ref) must be a substring of clean(pred).
bool text_must_include(std::string_view ref, std::string_view pred);

// Any " |OR| " alternative of `item` passes text_must_include.
bool text_must_include_any(std::string_view item, std::string_view pred);

// Any clean(ref) is a substring of clean(pred) (no token rule, as VWA).
bool text_one_of(const std::vector<std::string>& refs, std::string_view pred);

// The first number in the text after removing commas: optional '-' (not after a letter
// or digit), digits, optional .digits; "$1,234.50" -> 1234.5, "about 5 items" -> 5.
// nullopt when there is none. (VWA requires the whole answer to be an integer.)
std::optional<double> parse_first_number(std::string_view s);

// "< 700", "<= 3", "> 0", ">= 2.5", "== 1,000": operator then number, spaces allowed.
struct numeric_condition {
  enum class op { lt, le, gt, ge, eq };
  op kind = op::eq;
  double value = 0;
};
std::optional<numeric_condition> parse_condition(std::string_view s);

// == and the non-strict comparisons allow 1e-8 of slack as VWA does; < and > are strict
// (VWA lets "< 5" pass 5 through the same slack; kvarena does not).
bool condition_holds(double x, const numeric_condition& c);

// Every " |OR| " alternative must parse; true if any holds for x. *bad gets the first
// alternative that does not parse (then the result is false).
bool conditions_hold_any(std::string_view alternatives, double x, std::string* bad);

// "a |OR| b" -> {"a", "b"} (also for " |AND| "); a text without the separator -> {s}.
std::vector<std::string> split_on(std::string_view s, std::string_view separator);

// At most max_len bytes of `s` for a message ("..." after when cut), line breaks shown as
// \n, cut on a UTF-8 boundary, and each byte that is not part of valid UTF-8 replaced by
// '?', so messages are always valid UTF-8 (they end up in JSON and prompts).
std::string message_snippet(std::string_view s, size_t max_len = 80);

// message_snippet in single quotes, for evaluator details and notes.
std::string quote_for_detail(std::string_view s, size_t max_len = 80);

}  // namespace kvarena
