// jinja-parser.h: tokens -> statement tree, with Jinja2's grammar and operator precedence
// (conditional < or < and < not < comparison < + - < ~ < * / // % < ** < unary - + <
// postfix . [] () < | filter, is test). Statements: if/elif/else, for (with `if` filter and
// else), set (names, tuples, ns.attr, block set), macro, filter block, generation, break,
// continue. Anything else (include, extends, call, raw, recursive loops, an unknown filter
// or test) is an error naming it, raised here, before anything renders.
#pragma once
#include <string_view>

#include "jinja-ast.h"
#include "jinja-lexer.h"

namespace kvarena::jinja {

body parse(std::string_view source, const lex_options& o = {});

}  // namespace kvarena::jinja
