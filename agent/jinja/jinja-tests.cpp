// jinja-tests.cpp: the `is` tests of jinja2/tests.py (jinja-builtins.h): defined, none,
// string, mapping, iterable, sequence, number, ..., with jinja2's answers for undefined
// values (iterable and a sequence, not a mapping).
#include <functional>
#include <map>

#include "jinja-builtins.h"

namespace kvarena::jinja {
namespace {

using test_fn = std::function<bool(const value&, call_args&)>;
using K = value::kind;

bool is_lower(const std::string& s, bool lower) {
  bool cased = false;
  for (unsigned char c : s) {
    if (lower ? ::isupper(c) : ::islower(c)) return false;
    cased = cased || ::isalpha(c);
  }
  return cased;
}

const std::map<std::string, test_fn>& tests() {
  static const std::map<std::string, test_fn> t = [] {
    std::map<std::string, test_fn> m;
    m["defined"] = [](const value& v, call_args&) { return !v.is_undefined(); };
    m["undefined"] = [](const value& v, call_args&) { return v.is_undefined(); };
    m["none"] = [](const value& v, call_args&) { return v.is_none(); };
    m["boolean"] = [](const value& v, call_args&) { return v.k == K::boolean; };
    m["true"] = [](const value& v, call_args&) { return v.k == K::boolean && v.b; };
    m["false"] = [](const value& v, call_args&) { return v.k == K::boolean && !v.b; };
    m["integer"] = [](const value& v, call_args&) { return v.k == K::integer; };
    m["float"] = [](const value& v, call_args&) { return v.k == K::floating; };
    m["number"] = [](const value& v, call_args&) { return v.is_number(); };
    m["string"] = [](const value& v, call_args&) { return v.is_string(); };
    m["mapping"] = [](const value& v, call_args&) { return v.is_dict(); };
    m["iterable"] = [](const value& v, call_args&) { return v.is_undefined() || v.is_string() || v.is_list() || v.is_dict(); };
    m["sequence"] = m["iterable"];
    m["callable"] = [](const value& v, call_args&) { return v.k == K::function; };
    m["sameas"] = [](const value& v, call_args& a) {
      const value o = a.get(0, "other");
      if (v.k != o.k) return false;
      if (v.is_none() || v.is_undefined()) return true;
      if (v.k == K::boolean) return v.b == o.b;
      if (v.is_list()) return v.l == o.l;
      if (v.is_dict()) return v.d == o.d;
      return equals(v, o);
    };
    m["in"] = [](const value& v, call_args& a) { return contains(a.get(0, "seq"), v); };
    auto cmp = [](const char* op) {
      return [op](const value& v, call_args& a) { return compare_op(op, v, a.get(0, "other")); };
    };
    for (const char* n : {"eq", "equalto", "=="}) m[n] = cmp("==");
    for (const char* n : {"ne", "!="}) m[n] = cmp("!=");
    for (const char* n : {"lt", "lessthan", "<"}) m[n] = cmp("<");
    for (const char* n : {"le", "<="}) m[n] = cmp("<=");
    for (const char* n : {"gt", "greaterthan", ">"}) m[n] = cmp(">");
    for (const char* n : {"ge", ">="}) m[n] = cmp(">=");
    m["odd"] = [](const value& v, call_args&) { return v.k == K::integer && (v.i % 2) != 0; };
    m["even"] = [](const value& v, call_args&) { return v.k == K::integer && (v.i % 2) == 0; };
    m["divisibleby"] = [](const value& v, call_args& a) {
      const value n = a.get(0, "num");
      return n.i != 0 && v.i % n.i == 0;
    };
    m["lower"] = [](const value& v, call_args&) { return is_lower(v.to_str(), true); };
    m["upper"] = [](const value& v, call_args&) { return is_lower(v.to_str(), false); };
    m["filter"] = [](const value& v, call_args&) { return v.is_string() && has_filter(v.s); };
    m["test"] = [](const value& v, call_args&) { return v.is_string() && has_test(v.s); };
    return m;
  }();
  return t;
}

}  // namespace

bool has_test(const std::string& name) { return tests().count(name) > 0; }

bool apply_test(const std::string& name, const value& subject, call_args& args) {
  auto it = tests().find(name);
  if (it == tests().end()) throw error("chat template uses unsupported test '" + name + "'");
  return it->second(subject, args);
}

}  // namespace kvarena::jinja
