// page-element.cpp: see page-element.h.
#include "page-element.h"

#include <cctype>

namespace kvarena {
namespace {

// Calls fn(line) for each line of the observation with its leading tabs removed.
template <class Fn>
void for_each_line(std::string_view obs, Fn fn) {
  for (size_t a = 0; a < obs.size();) {
    size_t e = obs.find('\n', a);
    if (e == std::string_view::npos) e = obs.size();
    std::string_view l = obs.substr(a, e - a);
    l.remove_prefix(std::min(l.find_first_not_of('\t'), l.size()));
    if (!fn(l)) return;
    a = e + 1;
  }
}

// "[84] StaticText '$23.99' ..." -> 84, or -1 when the line is no element's.
int64_t line_id(std::string_view l) {
  if (l.size() < 3 || l[0] != '[') return -1;
  int64_t id = 0;
  size_t i = 1;
  for (; i < l.size() && std::isdigit(static_cast<unsigned char>(l[i])); ++i) id = id * 10 + (l[i] - '0');
  return (i > 1 && i + 1 < l.size() && l[i] == ']' && l[i + 1] == ' ') ? id : -1;
}

// The quoted name of an element line ("[84] StaticText '$23.99'" -> "$23.99").
std::optional<std::string> line_name(std::string_view l) {
  const size_t role = l.find("] ");
  if (role == std::string_view::npos) return std::nullopt;
  const size_t q = l.find_first_of("'\"", role + 2);
  if (q == std::string_view::npos || l.find(' ', role + 2) != q - 1) return std::nullopt;  // "[id] role 'name'"
  const char quote = l[q];
  std::string out;
  for (size_t i = q + 1; i < l.size(); ++i) {
    if (l[i] == quote) return out;
    if (l[i] == '\\' && i + 1 < l.size()) {
      const char c = l[i + 1];
      if (c == quote || c == '\\') out += c;
      else if (c == 'n') out += '\n';
      else if (c == 't') out += '\t';
      else if (c == 'r') out += '\r';
      else out.append(l.substr(i, 2));
      ++i;
      continue;
    }
    out += l[i];
  }
  return std::nullopt;  // no closing quote
}

bool ascii_alnum(char c) { return std::isalnum(static_cast<unsigned char>(c)) && static_cast<unsigned char>(c) < 128; }

}  // namespace

size_t find_whole(std::string_view text, std::string_view part, size_t from) {
  if (part.empty()) return std::string_view::npos;
  for (size_t at = text.find(part, from); at != std::string_view::npos; at = text.find(part, at + 1)) {
    const size_t end = at + part.size();
    const bool alone_left = at == 0 || !ascii_alnum(text[at - 1]) || !ascii_alnum(part.front());
    const bool alone_right = end == text.size() || !ascii_alnum(text[end]) || !ascii_alnum(part.back());
    if (alone_left && alone_right) return at;
  }
  return std::string_view::npos;
}

std::string element_line(std::string_view observation, int64_t id) {
  std::string found;
  for_each_line(observation, [&](std::string_view l) {
    if (line_id(l) != id) return true;
    found = std::string(l);
    return false;
  });
  return found;
}

std::optional<std::string> element_text(std::string_view observation, int64_t id) {
  const std::string line = element_line(observation, id);
  if (line.empty()) return std::nullopt;
  return line_name(line);
}

int64_t element_showing(std::string_view observation, std::string_view text) {
  int64_t best = -1;
  size_t best_len = 0;
  for_each_line(observation, [&](std::string_view l) {
    const int64_t id = line_id(l);
    if (id < 0) return true;
    const std::optional<std::string> name = line_name(l);
    if (!name || find_whole(*name, text) == std::string::npos) return true;
    if (*name == text) {
      best = id;
      return false;
    }
    if (best < 0 || name->size() < best_len) best = id, best_len = name->size();
    return true;
  });
  return best;
}

}  // namespace kvarena
