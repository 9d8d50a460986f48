// jinja-builtins.h: what a template can call besides its own macros, each as
// transformers' apply_chat_template provides it (jinja2's ImmutableSandboxedEnvironment plus
// its tojson, raise_exception and strftime_now):
//   filters and tests (jinja-filters.cpp, jinja-tests.cpp): `x | name(args)`, `x is name`;
//   attribute and item access with Python's methods of str, dict and list
//   (jinja-methods.cpp): `s.strip()`, `d.get(k)`, `m['role']`, `m.role`;
//   operators (jinja-ops.cpp): + - * / // % ** ~, comparisons, `in`, slicing;
//   globals (jinja-globals.cpp): range, namespace, dict, raise_exception, strftime_now.
// Methods that modify a list or dict (append, pop, update, ...) are refused, as the
// immutable sandbox refuses them. Adding a filter: one function and one line in its table.
#pragma once
#include <string>

#include "jinja-value.h"

namespace kvarena::jinja {

bool has_filter(const std::string& name);
value apply_filter(const std::string& name, const value& subject, call_args& args);
bool has_test(const std::string& name);
bool apply_test(const std::string& name, const value& subject, call_args& args);

// jinja2's environment.getattr (obj.name: Python attribute first, then item) and getitem
// (obj[key]: item first, then attribute). Missing: undefined.
value get_attr(const value& obj, const std::string& name);
value get_item(const value& obj, const value& key);
value get_slice(const value& obj, const value& start, const value& stop, const value& step);

value binary_op(const std::string& op, const value& a, const value& b);
bool compare_op(const std::string& op, const value& a, const value& b);
bool contains(const value& container, const value& item);  // Python `item in container`
// The items a for loop visits: list items, dict keys, string characters; undefined: none.
list iterate(const value& v);
// json.dumps(v, ensure_ascii=False, indent=indent (<0: None), separators, sort_keys).
std::string to_json(const value& v, int indent, const std::string& item_sep, const std::string& key_sep,
                    bool sort_keys);

// range, namespace, dict, raise_exception, strftime_now, cycler, joiner.
value global_function(const std::string& name);

}  // namespace kvarena::jinja
