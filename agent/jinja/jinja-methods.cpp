// jinja-methods.cpp: attribute and item access (jinja-builtins.h) and the Python methods a
// chat template calls on str, dict and list values: s.strip(), s.split(','), d.get(k),
// d.items(), ... Methods that modify a dict or list are refused, as transformers'
// ImmutableSandboxedEnvironment refuses them.
#include <algorithm>
#include <set>

#include "jinja-builtins.h"

namespace kvarena::jinja {
namespace {

const char* k_py_space = " \t\n\r\f\v\x1c\x1d\x1e\x1f";

std::string strip_chars(const std::string& s, const value& chars, bool left, bool right) {
  const std::string set = chars.is_string() ? chars.s : std::string(k_py_space);
  size_t b = 0, e = s.size();
  if (left) while (b < e && set.find(s[b]) != std::string::npos) ++b;
  if (right) while (e > b && set.find(s[e - 1]) != std::string::npos) --e;
  return s.substr(b, e - b);
}

value split(const std::string& s, const value& sep, const value& maxsplit_v) {
  const int64_t maxsplit = maxsplit_v.k == value::kind::integer ? maxsplit_v.i : -1;
  list out;
  if (!sep.is_string()) {  // runs of whitespace, no empty parts
    const std::string ws(k_py_space);
    size_t p = 0;
    int64_t n = 0;
    while (true) {
      while (p < s.size() && ws.find(s[p]) != std::string::npos) ++p;
      if (p >= s.size()) break;
      if (maxsplit >= 0 && n == maxsplit) {
        size_t e = s.size();
        while (e > p && ws.find(s[e - 1]) != std::string::npos) --e;
        out.push_back(value::str(s.substr(p, e - p)));
        break;
      }
      size_t e = p;
      while (e < s.size() && ws.find(s[e]) == std::string::npos) ++e;
      out.push_back(value::str(s.substr(p, e - p)));
      ++n;
      p = e;
    }
    return value::make_list(std::move(out));
  }
  if (sep.s.empty()) throw error("chat template: split() with an empty separator");
  size_t p = 0;
  int64_t n = 0;
  while (true) {
    const size_t f = (maxsplit >= 0 && n >= maxsplit) ? std::string::npos : s.find(sep.s, p);
    if (f == std::string::npos) {
      out.push_back(value::str(s.substr(p)));
      break;
    }
    out.push_back(value::str(s.substr(p, f - p)));
    p = f + sep.s.size();
    ++n;
  }
  return value::make_list(std::move(out));
}

bool affix(const std::string& s, const value& what, bool prefix) {
  list cands = what.is_list() ? *what.l : list{what};
  for (const value& c : cands) {
    if (!c.is_string()) throw error("chat template: startswith/endswith takes a string");
    if (c.s.size() > s.size()) continue;
    if (prefix ? s.compare(0, c.s.size(), c.s) == 0 : s.compare(s.size() - c.s.size(), c.s.size(), c.s) == 0)
      return true;
  }
  return false;
}

std::string replace_all(const std::string& s, const std::string& from, const std::string& to, int64_t count) {
  std::string out;
  size_t p = 0;
  int64_t n = 0;
  if (from.empty()) {  // Python inserts `to` between characters and at both ends
    for (size_t j = 0; j <= s.size(); ++j) {
      if (count < 0 || n < count) { out += to; ++n; }
      if (j < s.size()) out += s[j];
    }
    return out;
  }
  while (count < 0 || n < count) {
    const size_t f = s.find(from, p);
    if (f == std::string::npos) break;
    out += s.substr(p, f - p) + to;
    p = f + from.size();
    ++n;
  }
  return out + s.substr(p);
}

std::string format_braces(const std::string& fmt, const call_args& a) {
  std::string out;
  size_t auto_idx = 0;
  for (size_t p = 0; p < fmt.size(); ++p) {
    const char c = fmt[p];
    if (c == '{' && p + 1 < fmt.size() && fmt[p + 1] == '{') { out += '{'; ++p; continue; }
    if (c == '}' && p + 1 < fmt.size() && fmt[p + 1] == '}') { out += '}'; ++p; continue; }
    if (c != '{') { out += c; continue; }
    const size_t e = fmt.find('}', p);
    if (e == std::string::npos) throw error("chat template: unterminated '{' in format()");
    const std::string field = fmt.substr(p + 1, e - p - 1);
    if (field.find_first_of(":!.[") != std::string::npos)
      throw error("chat template uses unsupported format() field '{" + field + "}'");
    value v;
    if (field.empty()) v = a.get(auto_idx++, "\x01");
    else if (std::all_of(field.begin(), field.end(), ::isdigit)) v = a.get(std::stoul(field), "\x01");
    else v = a.get(static_cast<size_t>(-1), field);
    if (v.is_undefined()) throw error("chat template: format() has no argument for '{" + field + "}'");
    out += v.to_str();
    p = e;
  }
  return out;
}

value method(const value& obj, const std::string& name, std::function<value(const value&, call_args&)> f) {
  (void)name;
  return value::function([obj, f](call_args& a) { return f(obj, a); });
}

value refused(const value& obj, const std::string& name) {
  const std::string type = obj.type_name();
  return value::function([type, name](call_args&) -> value {
    throw error("chat template calls " + type + "." + name +
                "(), which modifies a value: refused, as transformers' sandboxed renderer refuses it");
  });
}

value string_method(const value& obj, const std::string& n) {
  using A = call_args;
  if (n == "strip") return method(obj, n, [](const value& o, A& a) { return value::str(strip_chars(o.s, a.get(0, "chars"), true, true)); });
  if (n == "lstrip") return method(obj, n, [](const value& o, A& a) { return value::str(strip_chars(o.s, a.get(0, "chars"), true, false)); });
  if (n == "rstrip") return method(obj, n, [](const value& o, A& a) { return value::str(strip_chars(o.s, a.get(0, "chars"), false, true)); });
  if (n == "split") return method(obj, n, [](const value& o, A& a) { return split(o.s, a.get(0, "sep"), a.get(1, "maxsplit")); });
  if (n == "startswith") return method(obj, n, [](const value& o, A& a) { return value::boolean(affix(o.s, a.get(0, "prefix"), true)); });
  if (n == "endswith") return method(obj, n, [](const value& o, A& a) { return value::boolean(affix(o.s, a.get(0, "suffix"), false)); });
  if (n == "replace")
    return method(obj, n, [](const value& o, A& a) {
      const value c = a.get(2, "count", value::integer(-1));
      return value::str(replace_all(o.s, a.get(0, "old").to_str(), a.get(1, "new").to_str(), c.i));
    });
  if (n == "upper" || n == "lower")
    return method(obj, n, [n](const value& o, A&) {
      std::string s = o.s;
      for (char& c : s) c = static_cast<char>(n == "upper" ? ::toupper(static_cast<unsigned char>(c)) : ::tolower(static_cast<unsigned char>(c)));
      return value::str(s);
    });
  if (n == "format") return method(obj, n, [](const value& o, A& a) { return value::str(format_braces(o.s, a)); });
  if (n == "find" || n == "count")
    return method(obj, n, [n](const value& o, A& a) {
      const std::string sub = a.get(0, "sub").to_str();
      if (n == "find") {
        const size_t f = o.s.find(sub);
        return value::integer(f == std::string::npos ? -1 : static_cast<int64_t>(f));
      }
      int64_t c = 0;
      for (size_t p = o.s.find(sub); p != std::string::npos && !sub.empty(); p = o.s.find(sub, p + sub.size())) ++c;
      return value::integer(c);
    });
  if (n == "join")
    return method(obj, n, [](const value& o, A& a) {
      std::string out;
      bool first = true;
      for (const value& v : iterate(a.get(0, "iterable"))) {
        out += (first ? "" : o.s) + v.to_str();
        first = false;
      }
      return value::str(out);
    });
  if (n == "splitlines")
    return method(obj, n, [](const value& o, A&) {
      list out;
      size_t p = 0;
      while (p < o.s.size()) {
        const size_t e = o.s.find('\n', p);
        if (e == std::string::npos) { out.push_back(value::str(o.s.substr(p))); break; }
        out.push_back(value::str(o.s.substr(p, e - p)));
        p = e + 1;
      }
      return value::make_list(std::move(out));
    });
  return value::undef(n);
}

value dict_method(const value& obj, const std::string& n) {
  using A = call_args;
  if (n == "get")
    return method(obj, n, [](const value& o, A& a) {
      const value k = a.get(0, "key");
      const value* v = o.d->find(k);
      return v ? *v : a.get(1, "default", value::none());
    });
  if (n == "items" || n == "keys" || n == "values")
    return method(obj, n, [n](const value& o, A&) {
      list out;
      for (const auto& kv : o.d->items) {
        if (n == "keys") out.push_back(kv.first);
        else if (n == "values") out.push_back(kv.second);
        else {
          value t = value::make_list({kv.first, kv.second});
          t.tuple = true;
          out.push_back(t);
        }
      }
      return value::make_list(std::move(out));
    });
  static const std::set<std::string> mutating = {"pop", "popitem", "update", "setdefault", "clear"};
  if (mutating.count(n)) return refused(obj, n);
  if (n == "copy") return method(obj, n, [](const value& o, A&) { value c = value::make_dict(); *c.d = *o.d; return c; });
  return value::undef(n);
}

value list_method(const value& obj, const std::string& n) {
  static const std::set<std::string> mutating = {"append", "extend", "insert", "pop", "remove", "reverse", "sort", "clear"};
  if (mutating.count(n)) return refused(obj, n);
  if (n == "index" || n == "count")
    return method(obj, n, [n](const value& o, call_args& a) {
      const value x = a.get(0, "x");
      int64_t c = 0;
      for (size_t j = 0; j < o.l->size(); ++j) {
        if (!equals((*o.l)[j], x)) continue;
        if (n == "index") return value::integer(static_cast<int64_t>(j));
        ++c;
      }
      if (n == "index") throw error("chat template: list.index(x): x not in list");
      return value::integer(c);
    });
  return value::undef(n);
}

value python_attr(const value& obj, const std::string& name) {
  if (obj.is_string()) return string_method(obj, name);
  if (obj.is_dict() && !obj.ns) return dict_method(obj, name);
  if (obj.is_list()) return list_method(obj, name);
  return value::undef(name);
}

}  // namespace

value get_attr(const value& obj, const std::string& name) {
  if (obj.is_undefined())
    throw error("chat template: '" + (obj.s.empty() ? std::string("value") : obj.s) + "' is undefined (reading ." + name + ")");
  value a = python_attr(obj, name);
  if (!a.is_undefined()) return a;
  if (obj.is_dict()) {
    if (const value* v = obj.d->find(name)) return *v;
  }
  return value::undef(name);
}

value get_item(const value& obj, const value& key) {
  if (obj.is_undefined())
    throw error("chat template: '" + (obj.s.empty() ? std::string("value") : obj.s) + "' is undefined (reading [" + key.repr() + "])");
  if (obj.is_dict()) {
    if (const value* v = obj.d->find(key)) return *v;
  }
  if ((obj.is_list() || obj.is_string()) && (key.k == value::kind::integer || key.k == value::kind::boolean)) {
    const list items = obj.is_list() ? *obj.l : iterate(obj);
    int64_t i = key.k == value::kind::boolean ? key.b : key.i;
    if (i < 0) i += static_cast<int64_t>(items.size());
    if (i >= 0 && i < static_cast<int64_t>(items.size())) return items[static_cast<size_t>(i)];
    return value::undef();
  }
  if (key.is_string()) return python_attr(obj, key.s);
  return value::undef();
}

}  // namespace kvarena::jinja
