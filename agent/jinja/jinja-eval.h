// jinja-eval.h: a parsed chat template and its rendering. A template is parsed once
// (syntax and unsupported features fail here, in the constructor) and rendered with a
// context of named values (messages, add_generation_prompt, bos_token, ...).
//
// Scoping as jinja2: a for loop's body is a new scope on each iteration (a `set` inside
// does not outlive it: templates use namespace() for that); a macro's body is a new scope
// that sees the scope it was defined in; `if` opens none.
#pragma once
#include <map>
#include <string>
#include <string_view>

#include "jinja-ast.h"
#include "jinja-lexer.h"

namespace kvarena::jinja {

class template_ {
 public:
  explicit template_(std::string_view source, const lex_options& o = {});
  // Throws jinja::error: an unsupported feature met while rendering, a type error, the
  // template's raise_exception.
  std::string render(const std::map<std::string, value>& context) const;

 private:
  std::shared_ptr<body> body_;
};

}  // namespace kvarena::jinja
