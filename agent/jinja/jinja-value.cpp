// jinja-value.cpp: see jinja-value.h. Printing follows CPython's str()/repr() rules.
#include "jinja-value.h"

#include <charconv>
#include <cmath>
#include <cstdio>

namespace kvarena::jinja {

const value* dict::find(const value& key) const {
  for (const auto& kv : items)
    if (equals(kv.first, key)) return &kv.second;
  return nullptr;
}

const value* dict::find(const std::string& key) const {
  for (const auto& kv : items)
    if (kv.first.is_string() && kv.first.s == key) return &kv.second;
  return nullptr;
}

void dict::set(const value& key, value v) {
  for (auto& kv : items)
    if (equals(kv.first, key)) { kv.second = std::move(v); return; }
  items.emplace_back(key, std::move(v));
}

void dict::set(const std::string& key, value v) { set(value::str(key), std::move(v)); }

value call_args::get(size_t index, const std::string& name, value fallback) const {
  for (const auto& kv : kw)
    if (kv.first == name) return kv.second;
  if (index < pos.size()) return pos[index];
  return fallback;
}

bool value::truthy() const {
  switch (k) {
    case kind::undefined: case kind::none: return false;
    case kind::boolean: return b;
    case kind::integer: return i != 0;
    case kind::floating: return f != 0;
    case kind::string: return !s.empty();
    case kind::list: return !l->empty();
    case kind::dict: return !d->items.empty();
    case kind::function: return true;
  }
  return false;
}

double value::as_double() const {
  if (k == kind::floating) return f;
  if (k == kind::integer) return static_cast<double>(i);
  if (k == kind::boolean) return b ? 1 : 0;
  throw error(std::string("expected a number, got ") + type_name());
}

const char* value::type_name() const {
  switch (k) {
    case kind::undefined: return "undefined";
    case kind::none: return "NoneType";
    case kind::boolean: return "bool";
    case kind::integer: return "int";
    case kind::floating: return "float";
    case kind::string: return "str";
    case kind::list: return tuple ? "tuple" : "list";
    case kind::dict: return ns ? "Namespace" : "dict";
    case kind::function: return "function";
  }
  return "?";
}

std::string python_float(double x) {
  if (std::isnan(x)) return "nan";
  if (std::isinf(x)) return x > 0 ? "inf" : "-inf";
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof buf, x, std::chars_format::scientific);
  std::string sci(buf, r.ptr);  // [-]d[.ddd]e[+-]XX, shortest round trip
  std::string sign;
  if (sci[0] == '-') { sign = "-"; sci.erase(0, 1); }
  const size_t e = sci.find('e');
  const int exp = std::stoi(sci.substr(e + 1));
  std::string digits = sci.substr(0, e);
  if (digits.size() > 1) digits.erase(1, 1);  // drop the point
  if (exp < -4 || exp >= 16) {
    std::string m = digits.substr(0, 1);
    if (digits.size() > 1) m += "." + digits.substr(1);
    char eb[16];
    std::snprintf(eb, sizeof eb, "e%c%02d", exp < 0 ? '-' : '+', std::abs(exp));
    return sign + m + eb;
  }
  std::string out;
  if (exp < 0) {
    out = "0." + std::string(static_cast<size_t>(-exp - 1), '0') + digits;
  } else if (static_cast<size_t>(exp) + 1 >= digits.size()) {
    out = digits + std::string(static_cast<size_t>(exp) + 1 - digits.size(), '0') + ".0";
  } else {
    out = digits.substr(0, static_cast<size_t>(exp) + 1) + "." + digits.substr(static_cast<size_t>(exp) + 1);
  }
  return sign + out;
}

std::string python_str_repr(const std::string& s) {
  const bool has_single = s.find('\'') != std::string::npos;
  const bool has_double = s.find('"') != std::string::npos;
  const char q = (has_single && !has_double) ? '"' : '\'';
  std::string out(1, q);
  for (unsigned char c : s) {
    if (c == q || c == '\\') { out += '\\'; out += static_cast<char>(c); }
    else if (c == '\n') out += "\\n";
    else if (c == '\r') out += "\\r";
    else if (c == '\t') out += "\\t";
    else if (c < 0x20 || c == 0x7f) {
      char b[8];
      std::snprintf(b, sizeof b, "\\x%02x", c);
      out += b;
    } else out += static_cast<char>(c);  // UTF-8 passes through (printable in Python)
  }
  out += q;
  return out;
}

std::string value::to_str() const {
  switch (k) {
    case kind::undefined: return "";
    case kind::string: return s;
    default: return repr();
  }
}

std::string value::repr() const {
  switch (k) {
    case kind::undefined: return "";
    case kind::none: return "None";
    case kind::boolean: return b ? "True" : "False";
    case kind::integer: return std::to_string(i);
    case kind::floating: return python_float(f);
    case kind::string: return python_str_repr(s);
    case kind::list: {
      std::string out = tuple ? "(" : "[";
      for (size_t j = 0; j < l->size(); ++j) out += (j ? ", " : "") + (*l)[j].repr();
      if (tuple && l->size() == 1) out += ",";
      return out + (tuple ? ")" : "]");
    }
    case kind::dict: {
      std::string out = ns ? "<Namespace {" : "{";
      bool first = true;
      for (const auto& kv : d->items) {
        out += (first ? "" : ", ") + kv.first.repr() + ": " + kv.second.repr();
        first = false;
      }
      return out + (ns ? "}>" : "}");
    }
    case kind::function: return "<function>";
  }
  return "";
}

bool equals(const value& a, const value& b) {
  if (a.is_number() && b.is_number()) {
    if (a.k != value::kind::floating && b.k != value::kind::floating) {
      const int64_t x = a.k == value::kind::boolean ? a.b : a.i;
      const int64_t y = b.k == value::kind::boolean ? b.b : b.i;
      return x == y;
    }
    return a.as_double() == b.as_double();
  }
  if (a.k != b.k) return false;
  switch (a.k) {
    case value::kind::undefined: case value::kind::none: return true;
    case value::kind::string: return a.s == b.s;
    case value::kind::list:
      if (a.l->size() != b.l->size()) return false;
      for (size_t j = 0; j < a.l->size(); ++j)
        if (!equals((*a.l)[j], (*b.l)[j])) return false;
      return true;
    case value::kind::dict:
      if (a.d->items.size() != b.d->items.size()) return false;
      for (const auto& kv : a.d->items) {
        const value* o = b.d->find(kv.first);
        if (!o || !equals(kv.second, *o)) return false;
      }
      return true;
    case value::kind::function: return a.fn == b.fn;
    default: return false;
  }
}

}  // namespace kvarena::jinja
