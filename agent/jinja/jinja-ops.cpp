// jinja-ops.cpp: Python's operators on template values (jinja-builtins.h): arithmetic with
// int/float promotion and floor semantics, str and list concatenation and repetition,
// comparisons, `in`, iteration, slicing, and json.dumps for the tojson filter.
#include <algorithm>
#include <cmath>
#include <cstdio>

#include "jinja-builtins.h"

namespace kvarena::jinja {
namespace {

[[noreturn]] void type_error(const std::string& op, const value& a, const value& b) {
  if (a.is_undefined() || b.is_undefined())
    throw error("chat template uses an undefined value" + std::string(a.is_undefined() && !a.s.empty() ? " '" + a.s + "'" : b.is_undefined() && !b.s.empty() ? " '" + b.s + "'" : "") + " with '" + op + "'");
  throw error("chat template: unsupported operand types for " + op + ": '" + a.type_name() + "' and '" + b.type_name() + "'");
}

bool is_int(const value& v) { return v.k == value::kind::integer || v.k == value::kind::boolean; }
int64_t int_of(const value& v) { return v.k == value::kind::boolean ? v.b : v.i; }

int64_t floor_div(int64_t a, int64_t b) {
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}

// Python's `fmt % args` for %s, %d, %i, %r and %%.
std::string percent_format(const std::string& fmt, const value& args) {
  list a = args.is_list() && args.tuple ? *args.l : list{args};
  std::string out;
  size_t n = 0;
  for (size_t p = 0; p < fmt.size(); ++p) {
    if (fmt[p] != '%') { out += fmt[p]; continue; }
    if (++p >= fmt.size()) throw error("chat template: incomplete format");
    const char c = fmt[p];
    if (c == '%') { out += '%'; continue; }
    if (n >= a.size()) throw error("chat template: not enough arguments for format string");
    const value& v = a[n++];
    if (c == 's') out += v.to_str();
    else if (c == 'r') out += v.repr();
    else if (c == 'd' || c == 'i') out += std::to_string(v.k == value::kind::floating ? static_cast<int64_t>(v.f) : int_of(v));
    else throw error(std::string("chat template uses unsupported format '%") + c + "'");
  }
  return out;
}

int cmp_values(const value& a, const value& b, const std::string& op) {
  if (a.is_number() && b.is_number()) {
    const double x = a.as_double(), y = b.as_double();
    return x < y ? -1 : x > y ? 1 : 0;
  }
  if (a.is_string() && b.is_string()) return a.s < b.s ? -1 : a.s > b.s ? 1 : 0;
  if (a.is_list() && b.is_list()) {
    for (size_t j = 0; j < std::min(a.l->size(), b.l->size()); ++j) {
      if (equals((*a.l)[j], (*b.l)[j])) continue;
      return cmp_values((*a.l)[j], (*b.l)[j], op);
    }
    return a.l->size() < b.l->size() ? -1 : a.l->size() > b.l->size() ? 1 : 0;
  }
  throw error("chat template: '" + op + "' not supported between '" + a.type_name() + "' and '" + b.type_name() + "'");
}

void json_string(std::string& out, const std::string& s) {
  out += '"';
  for (unsigned char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
      default:
        if (c < 0x20 || c == 0x7f) {
          char b[8];
          std::snprintf(b, sizeof b, "\\u%04x", c);
          out += b;
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  out += '"';
}

void json_value(std::string& out, const value& v, int indent, int level, const std::string& item_sep,
                const std::string& key_sep, bool sort_keys) {
  auto newline = [&](int lvl) {
    if (indent < 0) return;
    out += '\n';
    out.append(static_cast<size_t>(indent * lvl), ' ');
  };
  switch (v.k) {
    case value::kind::none: out += "null"; return;
    case value::kind::boolean: out += v.b ? "true" : "false"; return;
    case value::kind::integer: out += std::to_string(v.i); return;
    case value::kind::floating:
      if (std::isnan(v.f)) out += "NaN";
      else if (std::isinf(v.f)) out += v.f > 0 ? "Infinity" : "-Infinity";
      else out += python_float(v.f);
      return;
    case value::kind::string: json_string(out, v.s); return;
    case value::kind::list:
      if (v.l->empty()) { out += "[]"; return; }
      out += '[';
      for (size_t j = 0; j < v.l->size(); ++j) {
        if (j) out += item_sep;
        newline(level + 1);
        json_value(out, (*v.l)[j], indent, level + 1, item_sep, key_sep, sort_keys);
      }
      newline(level);
      out += ']';
      return;
    case value::kind::dict: {
      if (v.d->items.empty()) { out += "{}"; return; }
      // json.dumps writes a key as a string: str as is, int and float as repr, true/false/null.
      std::vector<std::pair<std::string, const value*>> items;
      for (const auto& kv : v.d->items) {
        const value& k = kv.first;
        std::string key = k.is_string() ? k.s : k.k == value::kind::boolean ? (k.b ? "true" : "false")
                          : k.is_none() ? "null" : k.repr();
        items.emplace_back(std::move(key), &kv.second);
      }
      if (sort_keys) std::stable_sort(items.begin(), items.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
      out += '{';
      for (size_t j = 0; j < items.size(); ++j) {
        if (j) out += item_sep;
        newline(level + 1);
        json_string(out, items[j].first);
        out += key_sep;
        json_value(out, *items[j].second, indent, level + 1, item_sep, key_sep, sort_keys);
      }
      newline(level);
      out += '}';
      return;
    }
    default:
      throw error(std::string("chat template: tojson of a value of type '") + v.type_name() + "'" +
                  (v.is_undefined() && !v.s.empty() ? " ('" + v.s + "' is undefined)" : ""));
  }
}

}  // namespace

std::string to_json(const value& v, int indent, const std::string& item_sep, const std::string& key_sep,
                    bool sort_keys) {
  std::string out;
  json_value(out, v, indent, 0, item_sep, key_sep, sort_keys);
  return out;
}

value binary_op(const std::string& op, const value& a, const value& b) {
  if (op == "~") return value::str(a.to_str() + b.to_str());
  if (op == "+") {
    if (a.is_string() && b.is_string()) return value::str(a.s + b.s);
    if (a.is_list() && b.is_list()) {
      list r = *a.l;
      r.insert(r.end(), b.l->begin(), b.l->end());
      value out = value::make_list(std::move(r));
      out.tuple = a.tuple;
      return out;
    }
  }
  if (op == "*") {
    const value* seq = a.is_string() || a.is_list() ? &a : b.is_string() || b.is_list() ? &b : nullptr;
    const value* cnt = seq == &a ? &b : &a;
    if (seq && is_int(*cnt)) {
      const int64_t n = std::max<int64_t>(0, int_of(*cnt));
      if (seq->is_string()) {
        std::string r;
        for (int64_t j = 0; j < n; ++j) r += seq->s;
        return value::str(r);
      }
      list r;
      for (int64_t j = 0; j < n; ++j) r.insert(r.end(), seq->l->begin(), seq->l->end());
      return value::make_list(std::move(r));
    }
  }
  if (op == "%" && a.is_string()) return value::str(percent_format(a.s, b));
  if (!a.is_number() || !b.is_number()) type_error(op, a, b);
  if (is_int(a) && is_int(b) && op != "/") {
    const int64_t x = int_of(a), y = int_of(b);
    if (op == "+") return value::integer(x + y);
    if (op == "-") return value::integer(x - y);
    if (op == "*") return value::integer(x * y);
    if (op == "//" || op == "%") {
      if (y == 0) throw error("chat template: integer division or modulo by zero");
      return op == "//" ? value::integer(floor_div(x, y)) : value::integer(x - floor_div(x, y) * y);
    }
    if (op == "**") {
      if (y < 0) return value::floating(std::pow(static_cast<double>(x), static_cast<double>(y)));
      int64_t r = 1;
      for (int64_t j = 0; j < y; ++j) r *= x;
      return value::integer(r);
    }
  }
  const double x = a.as_double(), y = b.as_double();
  if (op == "+") return value::floating(x + y);
  if (op == "-") return value::floating(x - y);
  if (op == "*") return value::floating(x * y);
  if (op == "/" || op == "//" || op == "%") {
    if (y == 0) throw error("chat template: division by zero");
    if (op == "/") return value::floating(x / y);
    const double q = std::floor(x / y);
    return op == "//" ? value::floating(q) : value::floating(x - q * y);
  }
  if (op == "**") return value::floating(std::pow(x, y));
  type_error(op, a, b);
}

bool compare_op(const std::string& op, const value& a, const value& b) {
  if (op == "==") return equals(a, b);
  if (op == "!=") return !equals(a, b);
  if (op == "in") return contains(b, a);
  if (op == "not in") return !contains(b, a);
  const int c = cmp_values(a, b, op);
  if (op == "<") return c < 0;
  if (op == ">") return c > 0;
  if (op == "<=") return c <= 0;
  if (op == ">=") return c >= 0;
  throw error("chat template: unknown comparison '" + op + "'");
}

bool contains(const value& container, const value& item) {
  if (container.is_string()) {
    if (!item.is_string()) throw error("chat template: 'in <string>' requires a string on the left");
    return container.s.find(item.s) != std::string::npos;
  }
  if (container.is_list()) {
    for (const value& v : *container.l)
      if (equals(v, item)) return true;
    return false;
  }
  if (container.is_dict()) return container.d->find(item) != nullptr;
  if (container.is_undefined()) return false;  // jinja2's Undefined iterates as empty
  throw error(std::string("chat template: 'in' on a value of type '") + container.type_name() + "'");
}

list iterate(const value& v) {
  switch (v.k) {
    case value::kind::undefined: return {};
    case value::kind::list: return *v.l;
    case value::kind::dict: {
      list keys;
      for (const auto& kv : v.d->items) keys.push_back(kv.first);
      return keys;
    }
    case value::kind::string: {
      list chars;  // UTF-8 code points, as Python iterates a str
      for (size_t p = 0; p < v.s.size();) {
        size_t n = 1;
        const unsigned char c = static_cast<unsigned char>(v.s[p]);
        if (c >= 0xF0) n = 4; else if (c >= 0xE0) n = 3; else if (c >= 0xC0) n = 2;
        chars.push_back(value::str(v.s.substr(p, n)));
        p += n;
      }
      return chars;
    }
    default: throw error(std::string("chat template: a value of type '") + v.type_name() + "' is not iterable");
  }
}

value get_slice(const value& obj, const value& start, const value& stop, const value& step) {
  list items;
  if (obj.is_list()) items = *obj.l;
  else if (obj.is_string()) items = iterate(obj);
  else if (obj.is_undefined()) throw error("chat template slices an undefined value" + (obj.s.empty() ? std::string() : " '" + obj.s + "'"));
  else throw error(std::string("chat template: cannot slice a value of type '") + obj.type_name() + "'");
  const int64_t n = static_cast<int64_t>(items.size());
  const int64_t st = step.is_none() || step.is_undefined() ? 1 : step.i;
  if (st == 0) throw error("chat template: slice step cannot be zero");
  auto clamp = [&](const value& v, int64_t dflt) {
    if (v.is_none() || v.is_undefined()) return dflt;
    int64_t x = v.i;
    if (x < 0) x += n;
    if (st > 0) return std::clamp<int64_t>(x, 0, n);
    return std::clamp<int64_t>(x, -1, n - 1);
  };
  const int64_t b = clamp(start, st > 0 ? 0 : n - 1), e = clamp(stop, st > 0 ? n : -1);
  list r;
  for (int64_t j = b; st > 0 ? j < e : j > e; j += st) r.push_back(items[static_cast<size_t>(j)]);
  if (obj.is_string()) {
    std::string s;
    for (const value& c : r) s += c.s;
    return value::str(s);
  }
  value out = value::make_list(std::move(r));
  out.tuple = obj.tuple;
  return out;
}

}  // namespace kvarena::jinja
