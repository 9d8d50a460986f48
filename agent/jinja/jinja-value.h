// jinja-value.h: the values a chat template computes with, as Python/Jinja2 sees them:
// undefined, none, bool, int, float, str, list (also tuples), dict (insertion-ordered;
// string and scalar keys), and callables (builtins, macros, bound methods). Lists and dicts are shared
// by reference, as in Python (a namespace() is a dict whose attributes can be set).
//
// to_str() is Python's str() (what `{{ x }}` prints: True, None, ['a', 1], {'k': 'v'});
// repr() is Python's repr(). Not here: operators (jinja-ops.h), filters and tests
// (jinja-filters.cpp), methods (jinja-methods.cpp).
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace kvarena::jinja {

// A template that cannot be rendered: a syntax error, an unsupported feature, a type error
// or the template's own raise_exception(). The message names what (and the line).
struct error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct value;
using list = std::vector<value>;
struct dict;
struct call_args;
using builtin = std::function<value(call_args&)>;

struct value {
  enum class kind { undefined, none, boolean, integer, floating, string, list, dict, function };
  kind k = kind::undefined;
  bool b = false;
  int64_t i = 0;
  double f = 0;
  std::string s;                   // string; undefined: the name that was missing
  std::shared_ptr<list> l;         // list
  std::shared_ptr<dict> d;         // dict
  std::shared_ptr<builtin> fn;     // function
  bool tuple = false;              // list written as a tuple: repr (1, 2)
  bool ns = false;                 // dict made by namespace(): attributes can be set
  bool safe = false;               // string marked safe (printing is the same: no autoescape)

  value() = default;
  static value undef(std::string name = "") { value v; v.s = std::move(name); return v; }
  static value none() { value v; v.k = kind::none; return v; }
  static value boolean(bool x) { value v; v.k = kind::boolean; v.b = x; return v; }
  static value integer(int64_t x) { value v; v.k = kind::integer; v.i = x; return v; }
  static value floating(double x) { value v; v.k = kind::floating; v.f = x; return v; }
  static value str(std::string x) { value v; v.k = kind::string; v.s = std::move(x); return v; }
  static value make_list(list x = {}) { value v; v.k = kind::list; v.l = std::make_shared<list>(std::move(x)); return v; }
  static value make_dict();
  static value function(builtin f) { value v; v.k = kind::function; v.fn = std::make_shared<builtin>(std::move(f)); return v; }

  bool is_undefined() const { return k == kind::undefined; }
  bool is_none() const { return k == kind::none; }
  bool is_string() const { return k == kind::string; }
  bool is_number() const { return k == kind::integer || k == kind::floating || k == kind::boolean; }
  bool is_list() const { return k == kind::list; }
  bool is_dict() const { return k == kind::dict; }

  bool truthy() const;
  double as_double() const;      // int, float, bool
  std::string to_str() const;    // Python str()
  std::string repr() const;      // Python repr()
  const char* type_name() const; // Python's type name, for messages: 'str', 'list', ...
};

// Insertion-ordered map (Python dict of a chat message, tool, namespace). Keys are
// strings, or the other scalars Python hashes (int, float, bool, None; 1 == 1.0 == True).
struct dict {
  std::vector<std::pair<value, value>> items;
  const value* find(const value& key) const;
  const value* find(const std::string& key) const;
  void set(const value& key, value v);
  void set(const std::string& key, value v);
};

inline value value::make_dict() { value v; v.k = kind::dict; v.d = std::make_shared<dict>(); return v; }

// Arguments of a call: positional then keyword (Python's f(a, b, key=c)).
struct call_args {
  std::vector<value> pos;
  std::vector<std::pair<std::string, value>> kw;
  // Argument `name` at position `index` or by keyword; `fallback` when absent.
  value get(size_t index, const std::string& name, value fallback = value()) const;
};

// Python's float repr (shortest round trip: 0.1, 1e+20, 1.0).
std::string python_float(double x);
// Python's str(x) == repr(x) for a string: quotes and escapes as Python picks them.
std::string python_str_repr(const std::string& s);
bool equals(const value& a, const value& b);  // Python ==

}  // namespace kvarena::jinja
