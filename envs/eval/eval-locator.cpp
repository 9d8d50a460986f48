// eval-locator.cpp: see eval-locator.h.
#include "eval/eval-locator.h"

#include "eval/eval-text.h"

namespace kvarena {
namespace {

bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}
bool is_ident_start(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool is_ident(char c) { return is_ident_start(c) || (c >= '0' && c <= '9'); }

std::string_view trim(std::string_view s) {
  while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
  return s;
}

bool starts_with(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

void skip_spaces(std::string_view s, size_t& i) {
  while (i < s.size() && is_space(s[i])) ++i;
}

// A quoted literal at s[i] (quote char q = s[i]); backslash escapes undone (\n and \t as
// control characters, any other \c as c). Moves i past the closing quote.
bool read_quoted(std::string_view s, size_t& i, std::string* out) {
  char q = s[i++];
  out->clear();
  while (i < s.size()) {
    char c = s[i++];
    if (c == q) return true;
    if (c == '\\' && i < s.size()) {
      char e = s[i++];
      *out += e == 'n' ? '\n' : e == 't' ? '\t' : e;
    } else {
      if (q == '`' && c == '$' && i < s.size() && s[i] == '{') return false;  // template
      *out += c;
    }
  }
  return false;  // unterminated
}

bool property_from_name(std::string_view name, element_property* p) {
  static constexpr std::pair<std::string_view, element_property> k_props[] = {
      {"outerText", element_property::outer_text}, {"textContent", element_property::text_content},
      {"innerText", element_property::inner_text}, {"value", element_property::value}};
  for (const auto& [n, prop] : k_props)
    if (name == n) {
      *p = prop;
      return true;
    }
  return false;
}

// document.querySelector('S').prop or document.body.prop; false for any other JS.
bool parse_query_selector(std::string_view s, parsed_locator* out) {
  while (!s.empty() && (s.back() == ';' || is_space(s.back()))) s.remove_suffix(1);
  if (starts_with(s, "document.body.")) {
    if (!property_from_name(s.substr(14), &out->property)) return false;
    out->selector = "body";
    return true;
  }
  constexpr std::string_view head = "document.querySelector(";
  if (!starts_with(s, head)) return false;
  size_t i = head.size();
  skip_spaces(s, i);
  if (i >= s.size() || (s[i] != '\'' && s[i] != '"' && s[i] != '`')) return false;
  std::string selector;
  if (!read_quoted(s, i, &selector)) return false;
  skip_spaces(s, i);
  if (i >= s.size() || s[i] != ')') return false;
  ++i;
  skip_spaces(s, i);
  if (i >= s.size() || s[i] != '.') return false;
  ++i;
  if (!property_from_name(trim(s.substr(i)), &out->property)) return false;
  out->selector = std::move(selector);
  return true;
}

}  // namespace

const char* element_property_name(element_property p) {
  switch (p) {
    case element_property::outer_text: return "outerText";
    case element_property::text_content: return "textContent";
    case element_property::inner_text: return "innerText";
    case element_property::value: return "value";
  }
  return "outerText";
}

bool parse_func_call(std::string_view text, func_call* out, std::string* err) {
  std::string_view s = trim(text);
  auto fail = [&](const std::string& what) {
    *err = "func:" + message_snippet(s, 120) + ": " + what +
           " (expected name(arg, ...) with arguments 'text', \"text\", numbers or names "
           "such as __page__ and __last_url__)";
    return false;
  };
  size_t i = 0;
  if (s.empty() || !is_ident_start(s[0])) return fail("expected a helper name");
  while (i < s.size() && is_ident(s[i])) ++i;
  func_call call;
  call.name = std::string(s.substr(0, i));
  skip_spaces(s, i);
  if (i >= s.size() || s[i] != '(') return fail("expected '(' after the helper name");
  ++i;
  for (;;) {
    skip_spaces(s, i);
    if (i >= s.size()) return fail("missing ')'");
    if (s[i] == ')') {
      ++i;
      break;
    }
    std::string arg;
    char c = s[i];
    if (c == '\'' || c == '"') {
      if (!read_quoted(s, i, &arg)) return fail("unterminated string argument");
    } else if (is_ident(c) || c == '-' || c == '+' || c == '.') {
      size_t b = i;
      while (i < s.size() && (is_ident(s[i]) || s[i] == '.' || s[i] == '-' || s[i] == '+')) ++i;
      arg = std::string(s.substr(b, i - b));
    } else {
      return fail(std::string("unexpected '") + c + "' in the arguments");
    }
    call.args.push_back(std::move(arg));
    skip_spaces(s, i);
    if (i < s.size() && s[i] == ',') {
      ++i;
    } else if (i < s.size() && s[i] == ')') {
      ++i;
      break;
    } else {
      return fail("expected ',' or ')' after an argument");
    }
  }
  skip_spaces(s, i);
  if (i < s.size() && s[i] == ';') ++i;
  skip_spaces(s, i);
  if (i != s.size()) return fail("unexpected text after ')'");
  *out = std::move(call);
  return true;
}

parsed_locator parse_locator(std::string_view locator) {
  parsed_locator out;
  std::string_view s = trim(locator);
  if (s.empty()) {
    out.kind = locator_kind::whole_page;
  } else if (starts_with(s, "func:")) {
    std::string err;
    if (parse_func_call(s.substr(5), &out.call, &err)) out.kind = locator_kind::func_helper;
    else out.error = err;
  } else if (starts_with(s, "lambda:")) {
    out.kind = locator_kind::lambda_js;
  } else if (starts_with(s, "document.") || starts_with(s, "[...document.")) {
    out.kind = parse_query_selector(s, &out) ? locator_kind::query_selector : locator_kind::javascript;
  } else {
    out.error = "unknown locator " + quote_for_detail(s) +
                " (valid: \"\" for the whole page, document.querySelector('S').outerText / "
                ".textContent / .innerText / .value, other document.* JavaScript, lambda:..., "
                "func:helper(args))";
  }
  return out;
}

}  // namespace kvarena
