// jinja-ast.h: the parsed template: expression and statement nodes (jinja-parser.h builds
// them, jinja-eval.h runs them). A node owns its children; a template owns its body.
#pragma once
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "jinja-value.h"

namespace kvarena::jinja {

struct expr;
using expr_ptr = std::unique_ptr<expr>;

struct expr {
  enum class kind {
    literal,   // lit
    name,      // name
    list,      // args: items (tuple: is_tuple)
    dict,      // args: key0, value0, key1, value1, ...
    getattr,   // args[0].name
    getitem,   // args[0][args[1]]
    slice,     // args[0][args[1]:args[2]:args[3]] (each of 1..3 may be null)
    call,      // args[0](args[1..], kwargs)
    filter,    // args[0] | name(args[1..], kwargs); args[0] null in a filter block
    test,      // args[0] is [not] name(args[1..], kwargs)
    unary,     // name "not", "-", "+": args[0]
    binary,    // args[0] name args[1]: + - * / // % ** ~ and or in "not in"
    compare,   // args[0] ops[0] args[1] ops[1] args[2] ... (chained, as Python)
    cond,      // args[0] if args[1] else args[2] (args[2] may be null)
  };
  kind k = kind::literal;
  int line = 0;
  value lit;
  std::string name;
  bool negated = false;  // test: "is not"
  bool is_tuple = false;
  std::vector<expr_ptr> args;
  std::vector<std::pair<std::string, expr_ptr>> kwargs;
  std::vector<std::string> ops;
};

struct stmt;
using stmt_ptr = std::unique_ptr<stmt>;
using body = std::vector<stmt_ptr>;

struct stmt {
  enum class kind {
    text,          // text
    output,        // {{ e }}
    if_,           // branches: (cond, body) ..., cond null for else
    for_,          // for targets in e [if cond]: body [else: else_body]
    set,           // set targets = e; set targets[0].attr = e (attr non-empty)
    set_block,     // set targets[0] [| filter] %} body {% endset
    macro,         // macro name(params = defaults) body
    filter_block,  // filter f %} body {% endfilter
    generation,    // generation %} body {% endgeneration (transformers' AssistantTracker)
    break_,
    continue_,
  };
  kind k = kind::text;
  int line = 0;
  std::string text;
  expr_ptr e;
  expr_ptr cond;
  expr_ptr filter;  // a filter chain whose innermost subject is null
  std::vector<std::string> targets;
  std::string attr;
  std::string name;
  std::vector<std::string> params;
  std::vector<expr_ptr> defaults;  // params.size() entries, null where none
  std::vector<std::pair<expr_ptr, body>> branches;
  body inner;
  body else_body;
};

}  // namespace kvarena::jinja
