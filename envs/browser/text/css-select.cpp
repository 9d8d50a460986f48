// css-select.cpp: parser (recursive descent over the selector text) and matcher (right to
// left, walking gumbo's parent pointers and sibling vectors) for the subset in css-select.h.
#include "css-select.h"

#include <cctype>

#include "common/text-encode.h"
#include "html-document.h"
#include "browser/common/str-util.h"

namespace kvarena {
namespace {

struct attr_test {
  std::string name;   // lowercase
  char op = 0;        // 0 (exists), '=', '~', '|', '^', '$', '*'
  std::string value;
  bool ignore_case = false;
};

enum class pseudo_kind {
  nth_child, nth_last_child, nth_of_type, nth_last_of_type, only_child, only_of_type, root,
  empty, negation,
};

struct pseudo_test {
  pseudo_test(pseudo_kind k, int a_ = 0, int b_ = 1) : kind(k), a(a_), b(b_) {}
  pseudo_kind kind;
  int a, b;  // an+b for the nth kinds (first-child is 0n+1)
  std::shared_ptr<css_selector_list> inner;  // :not(...)
};

struct compound_selector {
  std::string type;  // lowercase; "" matches any element
  std::vector<std::string> ids, classes;
  std::vector<attr_test> attrs;
  std::vector<pseudo_test> pseudos;
};

bool is_ident_start(char c) {
  return std::isalpha(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '\\' ||
         static_cast<unsigned char>(c) >= 0x80;
}
bool is_ident_char(char c) {
  return is_ident_start(c) || std::isdigit(static_cast<unsigned char>(c));
}

}  // namespace

struct css_complex_selector {
  std::vector<compound_selector> parts;  // left to right
  std::vector<char> combinators;         // combinators[i] joins parts[i] and parts[i + 1]
};

// ---- parsing ----

struct css_parser {
  std::string_view s;
  size_t pos = 0;
  std::string error;

  bool fail(const std::string& what) {
    if (error.empty())
      error = what + " at position " + std::to_string(pos) + " of selector '" + std::string(s) + "'";
    return false;
  }
  bool at_end() const { return pos >= s.size(); }
  char peek() const { return at_end() ? '\0' : s[pos]; }
  bool skip_spaces() {
    size_t start = pos;
    while (!at_end() && is_ascii_space(s[pos])) ++pos;
    return pos > start;
  }

  // An identifier with CSS escapes ("\31 23" or "\:" style).
  bool ident(std::string* out) {
    if (at_end() || !is_ident_start(peek())) return fail("expected a name");
    out->clear();
    while (!at_end() && is_ident_char(peek())) {
      if (peek() == '\\') {
        ++pos;
        if (at_end()) return fail("dangling escape");
        if (std::isxdigit(static_cast<unsigned char>(peek()))) {
          unsigned cp = 0;
          for (int i = 0; i < 6 && !at_end() && std::isxdigit(static_cast<unsigned char>(peek())); ++i)
            cp = cp * 16 + std::stoi(std::string(1, s[pos++]), nullptr, 16);
          if (!at_end() && is_ascii_space(peek())) ++pos;
          append_utf8(*out, cp > 0x10FFFF ? 0xFFFD : cp);
          continue;
        }
      }
      *out += s[pos++];
    }
    return true;
  }

  bool quoted(std::string* out) {
    char q = s[pos++];
    out->clear();
    while (!at_end() && peek() != q) {
      if (peek() == '\\' && pos + 1 < s.size()) ++pos;
      *out += s[pos++];
    }
    if (at_end()) return fail("unterminated string");
    ++pos;
    return true;
  }

  bool attribute(compound_selector* c) {
    ++pos;  // '['
    skip_spaces();
    attr_test t;
    if (!ident(&t.name)) return false;
    t.name = ascii_lower(t.name);
    skip_spaces();
    if (peek() == '|' && pos + 1 < s.size() && s[pos + 1] != '=')
      return fail("namespaced attributes are not supported");
    if (peek() != ']') {
      char c = peek();
      if (c == '=') {
        t.op = '=';
        ++pos;
      } else if ((c == '~' || c == '|' || c == '^' || c == '$' || c == '*') && pos + 1 < s.size() &&
                 s[pos + 1] == '=') {
        t.op = c;
        pos += 2;
      } else {
        return fail("expected '=', '~=', '|=', '^=', '$=', '*=' or ']'");
      }
      skip_spaces();
      if (peek() == '"' || peek() == '\'') {
        if (!quoted(&t.value)) return false;
      } else if (at_end() || !is_ident_start(peek()) || !ident(&t.value)) {
        return fail("expected an attribute value (a name or a quoted string)");
      }
      skip_spaces();
      if (peek() == 'i' || peek() == 'I' || peek() == 's' || peek() == 'S') {
        t.ignore_case = peek() == 'i' || peek() == 'I';
        ++pos;
        skip_spaces();
      }
    }
    if (peek() != ']') return fail("expected ']'");
    ++pos;
    c->attrs.push_back(std::move(t));
    return true;
  }

  // "an+b", "odd", "even", "3", "-n+2" up to the closing ')'.
  bool nth_argument(pseudo_test* p) {
    size_t close = s.find(')', pos);
    if (close == std::string_view::npos) return fail("expected ')'");
    std::string arg;
    for (char c : s.substr(pos, close - pos))
      if (!is_ascii_space(c)) arg += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    auto parse_int = [](const std::string& t, int* v) {
      if (t.empty()) return false;
      size_t i = (t[0] == '+' || t[0] == '-') ? 1 : 0;
      if (i == t.size()) return false;
      for (size_t j = i; j < t.size(); ++j)
        if (!std::isdigit(static_cast<unsigned char>(t[j]))) return false;
      if (t.size() > 9) return false;
      *v = std::stoi(t);
      return true;
    };
    if (arg == "odd") {
      p->a = 2, p->b = 1;
    } else if (arg == "even") {
      p->a = 2, p->b = 0;
    } else if (size_t n = arg.find('n'); n != std::string::npos) {
      std::string a = arg.substr(0, n), b = arg.substr(n + 1);
      if (a.empty() || a == "+") p->a = 1;
      else if (a == "-") p->a = -1;
      else if (!parse_int(a, &p->a)) return fail("bad an+b argument '" + arg + "'");
      if (b.empty()) p->b = 0;
      else if ((b[0] != '+' && b[0] != '-') || !parse_int(b, &p->b))
        return fail("bad an+b argument '" + arg + "'");
    } else {
      p->a = 0;
      if (!parse_int(arg, &p->b)) return fail("bad an+b argument '" + arg + "'");
    }
    pos = close + 1;
    return true;
  }

  bool pseudo(compound_selector* c) {
    ++pos;  // ':'
    if (peek() == ':') return fail("pseudo-elements (::) are not supported");
    std::string name;
    if (!ident(&name)) return false;
    name = ascii_lower(name);
    pseudo_test p(pseudo_kind::nth_child);
    bool takes_nth = false;
    if (name == "first-child") p = pseudo_test(pseudo_kind::nth_child, 0, 1);
    else if (name == "last-child") p = pseudo_test(pseudo_kind::nth_last_child, 0, 1);
    else if (name == "first-of-type") p = pseudo_test(pseudo_kind::nth_of_type, 0, 1);
    else if (name == "last-of-type") p = pseudo_test(pseudo_kind::nth_last_of_type, 0, 1);
    else if (name == "only-child") p = pseudo_test(pseudo_kind::only_child);
    else if (name == "only-of-type") p = pseudo_test(pseudo_kind::only_of_type);
    else if (name == "root") p = pseudo_test(pseudo_kind::root);
    else if (name == "empty") p = pseudo_test(pseudo_kind::empty);
    else if (name == "nth-child") p.kind = pseudo_kind::nth_child, takes_nth = true;
    else if (name == "nth-last-child") p.kind = pseudo_kind::nth_last_child, takes_nth = true;
    else if (name == "nth-of-type") p.kind = pseudo_kind::nth_of_type, takes_nth = true;
    else if (name == "nth-last-of-type") p.kind = pseudo_kind::nth_last_of_type, takes_nth = true;
    else if (name == "not") p.kind = pseudo_kind::negation;
    else return fail("unsupported pseudo-class ':" + name + "'");
    if (takes_nth || p.kind == pseudo_kind::negation) {
      if (peek() != '(') return fail("expected '(' after ':" + name + "'");
      ++pos;
      if (takes_nth) {
        if (!nth_argument(&p)) return false;
      } else {
        p.inner = std::make_shared<css_selector_list>();
        if (!list(p.inner.get(), true)) return false;
      }
    }
    c->pseudos.push_back(std::move(p));
    return true;
  }

  bool compound(compound_selector* c) {
    size_t start = pos;
    if (peek() == '*') {
      ++pos;
    } else if (!at_end() && is_ident_start(peek())) {
      if (!ident(&c->type)) return false;
      c->type = ascii_lower(c->type);
    }
    while (!at_end()) {
      char ch = peek();
      std::string name;
      if (ch == '#') {
        ++pos;
        if (!ident(&name)) return false;
        c->ids.push_back(name);
      } else if (ch == '.') {
        ++pos;
        if (!ident(&name)) return false;
        c->classes.push_back(name);
      } else if (ch == '[') {
        if (!attribute(c)) return false;
      } else if (ch == ':') {
        if (!pseudo(c)) return false;
      } else {
        break;
      }
    }
    if (pos == start) return fail("expected a selector");
    return true;
  }

  bool complex(css_complex_selector* cx) {
    cx->parts.emplace_back();
    if (!compound(&cx->parts.back())) return false;
    while (true) {
      bool spaced = skip_spaces();
      char ch = peek();
      char comb;
      if (ch == '>' || ch == '+' || ch == '~') {
        comb = ch;
        ++pos;
        skip_spaces();
      } else if (spaced && (is_ident_start(ch) || ch == '*' || ch == '#' || ch == '.' ||
                            ch == '[' || ch == ':')) {
        comb = ' ';
      } else {
        return true;
      }
      cx->combinators.push_back(comb);
      cx->parts.emplace_back();
      if (!compound(&cx->parts.back())) return false;
    }
  }

  // A comma list; inside :not(...) it ends at ')'.
  bool list(css_selector_list* out, bool nested) {
    while (true) {
      skip_spaces();
      auto cx = std::make_shared<css_complex_selector>();
      if (!complex(cx.get())) return false;
      out->alternatives_.push_back(std::move(cx));
      skip_spaces();
      if (peek() == ',') {
        ++pos;
        continue;
      }
      if (nested) {
        if (peek() != ')') return fail("expected ')'");
        ++pos;
        return true;
      }
      if (!at_end()) return fail(std::string("unexpected '") + peek() + "'");
      return true;
    }
  }
};

std::optional<css_selector_list> css_selector_list::parse(std::string_view text, std::string* error) {
  css_parser p{text, 0, {}};
  css_selector_list out;
  out.text_ = std::string(text);
  if (text.find_first_not_of(" \t\r\n\f") == std::string_view::npos) {
    if (error) *error = "empty selector";
    return std::nullopt;
  }
  if (!p.list(&out, false)) {
    if (error) *error = p.error;
    return std::nullopt;
  }
  return out;
}

// ---- matching ----

namespace {

bool class_list_contains(const char* list, const std::string& cls) {
  if (!list) return false;
  std::string_view v(list);
  size_t i = 0;
  while (i < v.size()) {
    while (i < v.size() && is_ascii_space(v[i])) ++i;
    size_t j = i;
    while (j < v.size() && !is_ascii_space(v[j])) ++j;
    if (j > i && v.substr(i, j - i) == cls) return true;
    i = j;
  }
  return false;
}

bool attr_matches(const GumboNode* n, const attr_test& t) {
  const char* raw = attr(n, t.name.c_str());
  if (!raw) return false;
  if (t.op == 0) return true;
  std::string v = t.ignore_case ? ascii_lower(raw) : std::string(raw);
  std::string want = t.ignore_case ? ascii_lower(t.value) : t.value;
  switch (t.op) {
    case '=': return v == want;
    case '~': return !want.empty() && want.find_first_of(" \t\n\r\f") == std::string::npos &&
                     class_list_contains(v.c_str(), want);
    case '|': return v == want || v.rfind(want + "-", 0) == 0;
    case '^': return !want.empty() && v.rfind(want, 0) == 0;
    case '$': return !want.empty() && v.size() >= want.size() &&
                     v.compare(v.size() - want.size(), want.size(), want) == 0;
    case '*': return !want.empty() && v.find(want) != std::string::npos;
  }
  return false;
}

// 1-based position among element siblings (optionally of the same tag), from the start or end.
int sibling_position(const GumboNode* n, bool same_type, bool from_end) {
  const GumboVector* kids = child_vector(n->parent);
  if (!kids) return 1;
  std::string type = same_type ? tag_name(n) : "";
  int pos = 0;
  for (unsigned k = 0; k < kids->length; ++k) {
    unsigned i = from_end ? kids->length - 1 - k : k;
    auto* s = static_cast<const GumboNode*>(kids->data[i]);
    if (!is_element(s) || (same_type && tag_name(s) != type)) continue;
    ++pos;
    if (s == n) return pos;
  }
  return pos;
}

bool nth_matches(int a, int b, int index) {
  if (a == 0) return index == b;
  int diff = index - b;
  return diff % a == 0 && diff / a >= 0;
}

bool pseudo_matches(const GumboNode* n, const pseudo_test& p) {
  switch (p.kind) {
    case pseudo_kind::nth_child: return nth_matches(p.a, p.b, sibling_position(n, false, false));
    case pseudo_kind::nth_last_child: return nth_matches(p.a, p.b, sibling_position(n, false, true));
    case pseudo_kind::nth_of_type: return nth_matches(p.a, p.b, sibling_position(n, true, false));
    case pseudo_kind::nth_last_of_type: return nth_matches(p.a, p.b, sibling_position(n, true, true));
    case pseudo_kind::only_child:
      return sibling_position(n, false, false) == 1 && sibling_position(n, false, true) == 1;
    case pseudo_kind::only_of_type:
      return sibling_position(n, true, false) == 1 && sibling_position(n, true, true) == 1;
    case pseudo_kind::root: return !is_element(n->parent);
    case pseudo_kind::empty: {
      const GumboVector* kids = child_vector(n);
      for (unsigned i = 0; kids && i < kids->length; ++i) {
        auto* k = static_cast<const GumboNode*>(kids->data[i]);
        if (is_element(k) || (is_text(k) && k->v.text.text[0] != '\0')) return false;
      }
      return true;
    }
    case pseudo_kind::negation: return !p.inner->matches(n);
  }
  return false;
}

bool compound_matches(const GumboNode* n, const compound_selector& c) {
  if (!is_element(n)) return false;
  if (!c.type.empty() && tag_name(n) != c.type) return false;
  for (const auto& id : c.ids)
    if (attr_or(n, "id") != id) return false;
  for (const auto& cls : c.classes)
    if (!class_list_contains(attr(n, "class"), cls)) return false;
  for (const auto& t : c.attrs)
    if (!attr_matches(n, t)) return false;
  for (const auto& p : c.pseudos)
    if (!pseudo_matches(n, p)) return false;
  return true;
}

const GumboNode* previous_element_sibling(const GumboNode* n) {
  const GumboVector* kids = child_vector(n->parent);
  if (!kids) return nullptr;
  for (size_t i = n->index_within_parent; i-- > 0;) {
    auto* s = static_cast<const GumboNode*>(kids->data[i]);
    if (is_element(s)) return s;
  }
  return nullptr;
}

// Does parts[0..idx] match with parts[idx] at n?
bool complex_matches(const css_complex_selector& cx, size_t idx, const GumboNode* n) {
  if (!compound_matches(n, cx.parts[idx])) return false;
  if (idx == 0) return true;
  switch (cx.combinators[idx - 1]) {
    case '>': {
      const GumboNode* p = parent_element(n);
      return p && complex_matches(cx, idx - 1, p);
    }
    case ' ':
      for (const GumboNode* p = parent_element(n); p; p = parent_element(p))
        if (complex_matches(cx, idx - 1, p)) return true;
      return false;
    case '+': {
      const GumboNode* s = previous_element_sibling(n);
      return s && complex_matches(cx, idx - 1, s);
    }
    case '~':
      for (const GumboNode* s = previous_element_sibling(n); s; s = previous_element_sibling(s))
        if (complex_matches(cx, idx - 1, s)) return true;
      return false;
  }
  return false;
}

// Preorder over the descendants of scope; stops when visit returns true.
template <typename F>
void for_each_descendant_element(const GumboNode* scope, F visit) {
  std::vector<const GumboNode*> stack;
  auto push_children = [&](const GumboNode* n) {
    if (n->type == GUMBO_NODE_TEMPLATE) return;  // template contents are not in the DOM tree
    if (const GumboVector* kids = child_vector(n))
      for (unsigned i = kids->length; i-- > 0;) {
        auto* k = static_cast<const GumboNode*>(kids->data[i]);
        if (is_element(k)) stack.push_back(k);
      }
  };
  push_children(scope);
  while (!stack.empty()) {
    const GumboNode* n = stack.back();
    stack.pop_back();
    if (visit(n)) return;
    push_children(n);
  }
}

}  // namespace

bool css_selector_list::matches(const GumboNode* element) const {
  if (!is_element(element)) return false;
  for (const auto& cx : alternatives_)
    if (complex_matches(*cx, cx->parts.size() - 1, element)) return true;
  return false;
}

const GumboNode* query_selector(const GumboNode* scope, const css_selector_list& selector) {
  const GumboNode* found = nullptr;
  if (!scope) return nullptr;
  for_each_descendant_element(scope, [&](const GumboNode* n) {
    if (selector.matches(n)) found = n;
    return found != nullptr;
  });
  return found;
}

std::vector<const GumboNode*> query_selector_all(const GumboNode* scope,
                                                 const css_selector_list& selector) {
  std::vector<const GumboNode*> out;
  if (!scope) return out;
  for_each_descendant_element(scope, [&](const GumboNode* n) {
    if (selector.matches(n)) out.push_back(n);
    return false;
  });
  return out;
}

}  // namespace kvarena
