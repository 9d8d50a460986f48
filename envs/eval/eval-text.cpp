// eval-text.cpp: see eval-text.h for the rules and how they relate to VWA's.
#include "eval/eval-text.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>


namespace kvarena {
namespace {

bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}
bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_alnum(char c) {
  return is_digit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
  return s;
}

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

// Splits one whitespace-free word into the clitic/quote/period pieces (see header).
void split_word(std::string w, std::vector<std::string>& out) {
  size_t quotes = 0;  // leading quotes, each its own token (erased at once: no n^2)
  while (quotes + 1 < w.size() && w[quotes] == '\'') ++quotes;
  out.insert(out.end(), quotes, "'");
  w.erase(0, quotes);
  std::vector<std::string> tail;  // pieces split off the end, innermost last
  for (bool changed = true; changed && w.size() > 1;) {
    changed = false;
    size_t dots = 0;
    while (dots < w.size() && w[w.size() - 1 - dots] == '.') ++dots;
    if (dots > 0 && dots < w.size()) {
      tail.emplace_back(dots, '.');
      w.resize(w.size() - dots);
      changed = true;
    } else if (w.back() == '\'') {
      tail.emplace_back("'");
      w.pop_back();
      changed = true;
    }
  }
  for (const char* clitic : {"n't", "'s", "'m", "'d", "'re", "'ve", "'ll"}) {
    size_t len = std::strlen(clitic);
    if (w.size() > len && ends_with(w, clitic)) {
      tail.emplace_back(w.substr(w.size() - len));
      w.erase(w.size() - len);
      break;
    }
  }
  if (!w.empty()) out.push_back(std::move(w));
  for (auto it = tail.rbegin(); it != tail.rend(); ++it) out.push_back(std::move(*it));
}

}  // namespace

std::string clean_answer(std::string_view s) {
  s = trim(s);
  if (!s.empty() && (s.front() == '\'' || s.front() == '"') && s.back() == s.front()) {
    s = s.size() >= 2 ? s.substr(1, s.size() - 2) : std::string_view();
  }
  std::string out(s);
  for (size_t i = 0; i < out.size(); ++i) {
    unsigned char c = static_cast<unsigned char>(out[i]);
    if (c >= 'A' && c <= 'Z') {
      out[i] = static_cast<char>(c - 'A' + 'a');
    } else if (c == 0xC3 && i + 1 < out.size()) {
      unsigned char d = static_cast<unsigned char>(out[i + 1]);
      if (d >= 0x80 && d <= 0x9E && d != 0x97) out[i + 1] = static_cast<char>(d + 0x20);
      ++i;
    }
  }
  return out;
}

std::vector<std::string> word_tokens(std::string_view s) {
  static constexpr std::string_view k_alone = ";@#$%&?!()[]{}<>\"`";
  std::vector<std::string> out;
  std::string cur;
  auto flush = [&] {
    if (!cur.empty()) split_word(std::move(cur), out);
    cur.clear();
  };
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (is_space(c)) {
      flush();
    } else if (k_alone.find(c) != std::string_view::npos) {
      flush();
      out.emplace_back(1, c);
    } else if ((c == ',' || c == ':') && !(i + 1 < s.size() && is_digit(s[i + 1]))) {
      flush();
      out.emplace_back(1, c);
    } else {
      cur += c;
    }
  }
  flush();
  return out;
}

bool text_exact_match(std::string_view ref, std::string_view pred) {
  return clean_answer(ref) == clean_answer(pred);
}

bool text_must_include(std::string_view ref, std::string_view pred) {
  std::string r = clean_answer(ref), p = clean_answer(pred);
  std::vector<std::string> ref_tokens = word_tokens(r);
  if (ref_tokens.size() == 1) {
    std::vector<std::string> pred_tokens = word_tokens(p);
    return std::find(pred_tokens.begin(), pred_tokens.end(), ref_tokens[0]) != pred_tokens.end();
  }
  return p.find(r) != std::string::npos;
}

bool text_must_include_any(std::string_view item, std::string_view pred) {
  for (const std::string& alt : split_on(item, " |OR| "))
    if (text_must_include(alt, pred)) return true;
  return false;
}

bool text_one_of(const std::vector<std::string>& refs, std::string_view pred) {
  std::string p = clean_answer(pred);
  for (const std::string& r : refs)
    if (p.find(clean_answer(r)) != std::string::npos) return true;
  return false;
}

std::optional<double> parse_first_number(std::string_view s) {
  std::string t;
  t.reserve(s.size());
  for (char c : s)
    if (c != ',') t += c;
  for (size_t i = 0; i < t.size(); ++i) {
    bool starts = is_digit(t[i]) || (t[i] == '.' && i + 1 < t.size() && is_digit(t[i + 1]));
    if (!starts) continue;
    size_t begin = i;
    if (i > 0 && t[i - 1] == '-' && (i == 1 || !is_alnum(t[i - 2]))) begin = i - 1;
    size_t end = i;
    while (end < t.size() && is_digit(t[end])) ++end;
    if (end + 1 < t.size() && t[end] == '.' && is_digit(t[end + 1])) {  // also ".5"
      ++end;
      while (end < t.size() && is_digit(t[end])) ++end;
    }
    double v = 0;
    auto res = std::from_chars(t.data() + begin, t.data() + end, v);
    if (res.ec != std::errc() || !std::isfinite(v)) return std::nullopt;
    return v;
  }
  return std::nullopt;
}

std::optional<numeric_condition> parse_condition(std::string_view s) {
  s = trim(s);
  static constexpr std::pair<std::string_view, numeric_condition::op> k_ops[] = {
      {"<=", numeric_condition::op::le}, {">=", numeric_condition::op::ge},
      {"==", numeric_condition::op::eq}, {"<", numeric_condition::op::lt},
      {">", numeric_condition::op::gt}};
  for (const auto& [text, kind] : k_ops) {
    if (s.substr(0, text.size()) != text) continue;
    std::string num;
    for (char c : trim(s.substr(text.size())))
      if (c != ',') num += c;
    if (num.empty()) return std::nullopt;
    const char* first = num.data();
    if (*first == '+') ++first;
    double v = 0;
    auto res = std::from_chars(first, num.data() + num.size(), v);
    if (res.ec != std::errc() || res.ptr != num.data() + num.size() || !std::isfinite(v))
      return std::nullopt;
    return numeric_condition{kind, v};
  }
  return std::nullopt;
}

bool condition_holds(double x, const numeric_condition& c) {
  constexpr double tol = 1e-8;
  switch (c.kind) {
    case numeric_condition::op::lt: return x < c.value;
    case numeric_condition::op::le: return x <= c.value + tol;
    case numeric_condition::op::gt: return x > c.value;
    case numeric_condition::op::ge: return x >= c.value - tol;
    case numeric_condition::op::eq: return std::fabs(x - c.value) <= tol;
  }
  return false;
}

bool conditions_hold_any(std::string_view alternatives, double x, std::string* bad) {
  bool any = false;
  for (const std::string& alt : split_on(alternatives, " |OR| ")) {
    auto c = parse_condition(alt);
    if (!c) {
      if (bad) *bad = alt;
      return false;
    }
    any = any || condition_holds(x, *c);
  }
  return any;
}

std::vector<std::string> split_on(std::string_view s, std::string_view separator) {
  std::vector<std::string> out;
  if (separator.empty()) return {std::string(s)};
  size_t start = 0;
  for (;;) {
    size_t at = s.find(separator, start);
    if (at == std::string_view::npos) break;
    out.emplace_back(s.substr(start, at - start));
    start = at + separator.size();
  }
  out.emplace_back(s.substr(start));
  return out;
}

namespace {
// Length of the valid UTF-8 sequence at s[i], or 0 when the bytes there are not one.
size_t utf8_sequence_length(std::string_view s, size_t i) {
  unsigned char c = static_cast<unsigned char>(s[i]);
  size_t n = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 0;
  if (n == 0 || i + n > s.size()) return 0;
  for (size_t k = 1; k < n; ++k)
    if ((static_cast<unsigned char>(s[i + k]) >> 6) != 0x2) return 0;
  if (n == 2 && c < 0xC2) return 0;  // overlong
  if (n == 3) {
    unsigned char d = static_cast<unsigned char>(s[i + 1]);
    if ((c == 0xE0 && d < 0xA0) || (c == 0xED && d >= 0xA0)) return 0;  // overlong, surrogate
  }
  if (n == 4) {
    unsigned char d = static_cast<unsigned char>(s[i + 1]);
    if ((c == 0xF0 && d < 0x90) || c > 0xF4 || (c == 0xF4 && d >= 0x90)) return 0;
  }
  return n;
}
}  // namespace

std::string message_snippet(std::string_view s, size_t max_len) {
  std::string out;
  size_t i = 0;
  while (i < s.size() && i < max_len) {
    size_t n = utf8_sequence_length(s, i);
    if (n == 0) {
      out += '?';
      ++i;
    } else if (i + n > max_len) {
      break;  // do not cut a character
    } else if (s[i] == '\n') {
      out += "\\n";
      ++i;
    } else if (s[i] == '\r') {
      out += "\\r";
      ++i;
    } else {
      out.append(s.substr(i, n));
      i += n;
    }
  }
  if (i < s.size()) out += "...";
  return out;
}

std::string quote_for_detail(std::string_view s, size_t max_len) {
  std::string out(1, '\'');
  out += message_snippet(s, max_len);
  out += '\'';
  return out;
}

}  // namespace kvarena
