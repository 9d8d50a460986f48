// jinja-filters.cpp: the filters of jinja2/filters.py that chat templates use
// (jinja-builtins.h), plus transformers' tojson (json.dumps with ensure_ascii=False, no HTML
// escaping, indent/separators/sort_keys). Adding one: a function and a line in the table.
#include <algorithm>
#include <cmath>
#include <functional>
#include <map>

#include "jinja-builtins.h"

namespace kvarena::jinja {
namespace {

using filter_fn = std::function<value(const value&, call_args&)>;
using K = value::kind;

std::string ascii_case(std::string s, bool upper) {
  for (char& c : s) c = static_cast<char>(upper ? ::toupper(static_cast<unsigned char>(c)) : ::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::string py_strip(const std::string& s, const value& chars) {
  call_args a;
  a.pos.push_back(chars);
  return get_attr(value::str(s), "strip").fn->operator()(a).s;
}

int64_t length_of(const value& v) {
  if (v.is_string()) {
    int64_t n = 0;
    for (unsigned char c : v.s) n += (c & 0xC0) != 0x80;
    return n;
  }
  if (v.is_list()) return static_cast<int64_t>(v.l->size());
  if (v.is_dict()) return static_cast<int64_t>(v.d->items.size());
  if (v.is_undefined()) return 0;
  throw error(std::string("chat template: length of a value of type '") + v.type_name() + "'");
}

// The value a sort/min/max/unique compares: attribute `attr` (dotted) and lower case.
value sort_key(const value& v, const value& attr, bool case_sensitive) {
  value k = v;
  if (attr.is_string()) {
    size_t p = 0;
    while (p <= attr.s.size()) {
      const size_t e = std::min(attr.s.find('.', p), attr.s.size());
      k = get_item(k, value::str(attr.s.substr(p, e - p)));
      p = e + 1;
    }
  }
  if (!case_sensitive && k.is_string()) k.s = ascii_case(k.s, false);
  return k;
}

value attr_path(const value& v, const std::string& path) { return sort_key(v, value::str(path), true); }

// select/reject (test by name, truthy without one) and selectattr/rejectattr.
value select_items(const value& seq, call_args& a, bool attr, bool keep_if) {
  size_t first_arg = 0;
  std::string attribute;
  if (attr) attribute = a.get(first_arg++, "attribute").to_str();
  const value test_name = a.get(first_arg, "test");
  call_args rest;
  for (size_t j = first_arg + 1; j < a.pos.size(); ++j) rest.pos.push_back(a.pos[j]);
  list out;
  if (!seq.truthy()) return value::make_list();  // jinja2: `if seq:` before iterating (None too)
  for (const value& item : iterate(seq)) {
    const value x = attr ? attr_path(item, attribute) : item;
    const bool ok = test_name.is_string() ? apply_test(test_name.s, x, rest) : x.truthy();
    if (ok == keep_if) out.push_back(item);
  }
  return value::make_list(std::move(out));
}

std::string html_escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&#34;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

// json.dumps(ensure_ascii=True): non-ASCII as \uXXXX (UTF-16 surrogate pairs above U+FFFF).
std::string ascii_json(const std::string& s) {
  std::string out;
  for (size_t p = 0; p < s.size();) {
    const unsigned char c = static_cast<unsigned char>(s[p]);
    if (c < 0x80) { out += s[p++]; continue; }
    const int n = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : 2;
    uint32_t cp = c & (n == 4 ? 0x07 : n == 3 ? 0x0F : 0x1F);
    for (int j = 1; j < n && p + j < s.size(); ++j) cp = (cp << 6) | (static_cast<unsigned char>(s[p + j]) & 0x3F);
    p += n;
    char b[16];
    if (cp >= 0x10000) {
      cp -= 0x10000;
      std::snprintf(b, sizeof b, "\\u%04x\\u%04x", 0xD800 + (cp >> 10), 0xDC00 + (cp & 0x3FF));
    } else {
      std::snprintf(b, sizeof b, "\\u%04x", cp);
    }
    out += b;
  }
  return out;
}

value f_tojson(const value& v, call_args& a) {
  const value ind = a.get(1, "indent", value::none());
  const value seps = a.get(2, "separators", value::none());
  const int indent = ind.k == K::integer ? static_cast<int>(ind.i) : -1;
  std::string item_sep = indent >= 0 ? "," : ", ", key_sep = ": ";
  if (seps.is_list() && seps.l->size() == 2) {
    item_sep = (*seps.l)[0].to_str();
    key_sep = (*seps.l)[1].to_str();
  }
  std::string out = to_json(v, indent, item_sep, key_sep, a.get(3, "sort_keys").truthy());
  if (a.get(0, "ensure_ascii").truthy()) out = ascii_json(out);
  return value::str(out);
}

value f_indent(const value& v, call_args& a) {
  const value w = a.get(0, "width", value::integer(4));
  const std::string ind = w.is_string() ? w.s : std::string(static_cast<size_t>(std::max<int64_t>(0, w.i)), ' ');
  const bool first = a.get(1, "first").truthy(), blank = a.get(2, "blank").truthy();
  std::string s = v.to_str() + "\n";
  std::vector<std::string> lines;
  for (size_t p = 0; p < s.size();) {
    const size_t e = s.find('\n', p);
    lines.push_back(s.substr(p, e - p));
    p = e + 1;
  }
  std::string rv;
  if (blank) {
    for (size_t j = 0; j < lines.size(); ++j) {
      if (j) { rv += '\n'; rv += ind; }
      rv += lines[j];
    }
  } else {
    rv = lines[0];
    for (size_t j = 1; j < lines.size(); ++j) {
      rv += '\n';
      if (!lines[j].empty()) rv += ind + lines[j];
    }
  }
  return value::str(first ? ind + rv : rv);
}

value f_int(const value& v, call_args& a) {
  const value dflt = a.get(0, "default", value::integer(0));
  if (v.k == K::integer) return v;
  if (v.k == K::boolean) return value::integer(v.b);
  if (v.k == K::floating) return value::integer(static_cast<int64_t>(v.f));
  if (v.is_string()) {
    try {
      size_t used = 0;
      const std::string s = py_strip(v.s, value());
      const long long x = std::stoll(s, &used, 10);
      if (used == s.size()) return value::integer(x);
      const double d = std::stod(s, &used);
      if (used == s.size()) return value::integer(static_cast<int64_t>(d));
    } catch (const std::exception&) {
    }
  }
  return dflt;
}

value f_float(const value& v, call_args& a) {
  const value dflt = a.get(0, "default", value::floating(0));
  if (v.is_number()) return value::floating(v.as_double());
  if (v.is_string()) {
    try {
      size_t used = 0;
      const std::string s = py_strip(v.s, value());
      const double d = std::stod(s, &used);
      if (used == s.size()) return value::floating(d);
    } catch (const std::exception&) {
    }
  }
  return dflt;
}

list sorted(const value& seq, call_args& a, size_t rev_pos, bool& reverse) {
  list items = iterate(seq);
  reverse = a.get(rev_pos, "reverse").truthy();
  const bool cs = a.get(rev_pos + 1, "case_sensitive").truthy();
  const value attr = a.get(rev_pos + 2, "attribute");
  std::stable_sort(items.begin(), items.end(), [&](const value& x, const value& y) {
    return compare_op("<", sort_key(x, attr, cs), sort_key(y, attr, cs));
  });
  if (reverse) std::reverse(items.begin(), items.end());
  return items;
}

value f_minmax(const value& seq, call_args& a, bool is_max) {
  const list items = iterate(seq);
  if (items.empty()) return value::undef("min/max of an empty sequence");
  const bool cs = a.get(0, "case_sensitive").truthy();
  const value attr = a.get(1, "attribute");
  value best = items[0];
  for (const value& x : items) {
    const bool better = compare_op(is_max ? ">" : "<", sort_key(x, attr, cs), sort_key(best, attr, cs));
    if (better) best = x;
  }
  return best;
}

const std::map<std::string, filter_fn>& filters() {
  static const std::map<std::string, filter_fn> t = [] {
    std::map<std::string, filter_fn> m;
    m["tojson"] = f_tojson;
    m["trim"] = [](const value& v, call_args& a) { return value::str(py_strip(v.to_str(), a.get(0, "chars"))); };
    m["length"] = [](const value& v, call_args&) { return value::integer(length_of(v)); };
    m["count"] = m["length"];
    m["string"] = [](const value& v, call_args&) { return v.is_string() ? v : value::str(v.to_str()); };
    m["default"] = [](const value& v, call_args& a) {
      const bool boolean = a.get(1, "boolean").truthy();
      if (v.is_undefined() || (boolean && !v.truthy())) return a.get(0, "default_value", value::str(""));
      return v;
    };
    m["d"] = m["default"];
    m["upper"] = [](const value& v, call_args&) { return value::str(ascii_case(v.to_str(), true)); };
    m["lower"] = [](const value& v, call_args&) { return value::str(ascii_case(v.to_str(), false)); };
    m["capitalize"] = [](const value& v, call_args&) {
      std::string s = ascii_case(v.to_str(), false);
      if (!s.empty()) s[0] = static_cast<char>(::toupper(static_cast<unsigned char>(s[0])));
      return value::str(s);
    };
    m["title"] = [](const value& v, call_args&) {
      std::string s = v.to_str();
      bool start = true;
      for (char& c : s) {
        const unsigned char u = static_cast<unsigned char>(c);
        c = static_cast<char>(start ? ::toupper(u) : ::tolower(u));
        start = !::isalnum(u);
      }
      return value::str(s);
    };
    m["safe"] = [](const value& v, call_args&) { value s = value::str(v.to_str()); s.safe = true; return s; };
    m["escape"] = [](const value& v, call_args&) { return v.safe ? v : value::str(html_escape(v.to_str())); };
    m["e"] = m["escape"];
    m["items"] = [](const value& v, call_args&) {
      if (v.is_undefined()) return value::make_list();
      if (!v.is_dict()) throw error(std::string("chat template: items of a value of type '") + v.type_name() + "'");
      call_args none;
      return get_attr(v, "items").fn->operator()(none);
    };
    m["list"] = [](const value& v, call_args&) { return value::make_list(iterate(v)); };
    m["join"] = [](const value& v, call_args& a) {
      const std::string sep = a.get(0, "d", value::str("")).to_str();
      const value attr = a.get(1, "attribute");
      std::string out;
      bool first = true;
      for (const value& x : iterate(v)) {
        out += (first ? "" : sep) + (attr.is_string() ? attr_path(x, attr.s) : x).to_str();
        first = false;
      }
      return value::str(out);
    };
    m["replace"] = [](const value& v, call_args& a) {
      call_args r;
      r.pos = {a.get(0, "old"), a.get(1, "new"), a.get(2, "count", value::integer(-1))};
      if (r.pos[2].is_none()) r.pos[2] = value::integer(-1);
      return get_attr(value::str(v.to_str()), "replace").fn->operator()(r);
    };
    m["first"] = [](const value& v, call_args&) { const list l = iterate(v); return l.empty() ? value::undef() : l.front(); };
    m["last"] = [](const value& v, call_args&) { const list l = iterate(v); return l.empty() ? value::undef() : l.back(); };
    m["reverse"] = [](const value& v, call_args&) {
      list l = iterate(v);
      std::reverse(l.begin(), l.end());
      if (!v.is_string()) return value::make_list(std::move(l));
      std::string s;
      for (const value& c : l) s += c.s;
      return value::str(s);
    };
    m["select"] = [](const value& v, call_args& a) { return select_items(v, a, false, true); };
    m["reject"] = [](const value& v, call_args& a) { return select_items(v, a, false, false); };
    m["selectattr"] = [](const value& v, call_args& a) { return select_items(v, a, true, true); };
    m["rejectattr"] = [](const value& v, call_args& a) { return select_items(v, a, true, false); };
    m["map"] = [](const value& v, call_args& a) {
      list out;
      if (!v.truthy()) return value::make_list();
      const value attr = a.get(static_cast<size_t>(-1), "attribute");
      if (attr.is_string()) {
        const value dflt = a.get(static_cast<size_t>(-1), "default");
        for (const value& x : iterate(v)) {
          value y = attr_path(x, attr.s);
          out.push_back(y.is_undefined() && !dflt.is_undefined() ? dflt : y);
        }
        return value::make_list(std::move(out));
      }
      const value name = a.get(0, "filter");
      if (!name.is_string()) throw error("chat template: map() needs a filter name or attribute=");
      call_args rest;
      for (size_t j = 1; j < a.pos.size(); ++j) rest.pos.push_back(a.pos[j]);
      rest.kw = a.kw;
      for (const value& x : iterate(v)) out.push_back(apply_filter(name.s, x, rest));
      return value::make_list(std::move(out));
    };
    m["dictsort"] = [](const value& v, call_args& a) {
      if (!v.is_dict()) throw error("chat template: dictsort of a value that is not a dict");
      const bool cs = a.get(0, "case_sensitive").truthy();
      const bool by_value = a.get(1, "by", value::str("key")).to_str() == "value";
      const bool rev = a.get(2, "reverse").truthy();
      call_args none;
      list items = *get_attr(v, "items").fn->operator()(none).l;
      std::stable_sort(items.begin(), items.end(), [&](const value& x, const value& y) {
        const size_t k = by_value ? 1 : 0;
        return compare_op("<", sort_key((*x.l)[k], value(), cs), sort_key((*y.l)[k], value(), cs));
      });
      if (rev) std::reverse(items.begin(), items.end());
      return value::make_list(std::move(items));
    };
    m["sort"] = [](const value& v, call_args& a) {
      bool rev = false;
      return value::make_list(sorted(v, a, 0, rev));
    };
    m["unique"] = [](const value& v, call_args& a) {
      const bool cs = a.get(0, "case_sensitive").truthy();
      const value attr = a.get(1, "attribute");
      list out, seen;
      for (const value& x : iterate(v)) {
        const value k = sort_key(x, attr, cs);
        bool dup = false;
        for (const value& s : seen) dup = dup || equals(s, k);
        if (dup) continue;
        seen.push_back(k);
        out.push_back(x);
      }
      return value::make_list(std::move(out));
    };
    m["min"] = [](const value& v, call_args& a) { return f_minmax(v, a, false); };
    m["max"] = [](const value& v, call_args& a) { return f_minmax(v, a, true); };
    m["sum"] = [](const value& v, call_args& a) {
      const value attr = a.get(0, "attribute");
      value total = a.get(1, "start", value::integer(0));
      for (const value& x : iterate(v)) total = binary_op("+", total, attr.is_string() ? attr_path(x, attr.s) : x);
      return total;
    };
    m["abs"] = [](const value& v, call_args&) {
      return v.k == K::floating ? value::floating(std::fabs(v.f)) : value::integer(std::llabs(v.k == K::boolean ? v.b : v.i));
    };
    m["int"] = f_int;
    m["float"] = f_float;
    m["indent"] = f_indent;
    m["wordcount"] = [](const value& v, call_args&) {
      int64_t n = 0;
      bool in = false;
      for (unsigned char c : v.to_str()) {
        const bool w = ::isalnum(c) || c == '_' || c >= 0x80;
        n += w && !in;
        in = w;
      }
      return value::integer(n);
    };
    return m;
  }();
  return t;
}

}  // namespace

bool has_filter(const std::string& name) { return filters().count(name) > 0; }

value apply_filter(const std::string& name, const value& subject, call_args& args) {
  auto it = filters().find(name);
  if (it == filters().end()) throw error("chat template uses unsupported filter '" + name + "'");
  return it->second(subject, args);
}

}  // namespace kvarena::jinja
