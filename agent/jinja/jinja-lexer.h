// jinja-lexer.h: template text -> tokens, with Jinja2's whitespace rules. Text between tags
// is one `text` token; `{{ ... }}` and `{% ... %}` become begin/end tokens around the
// expression tokens (names, literals, operators). Comments `{# #}` are dropped.
//
// Whitespace, as jinja2.Environment(trim_blocks, lstrip_blocks, keep_trailing_newline=False)
// does it: "\r\n" and "\r" read as "\n"; one trailing newline of the template is dropped;
// `{%-`/`-%}` (also `{{-`, `-}}`, `{#-`, `-#}`) strip all whitespace on that side;
// trim_blocks drops the first newline after a block or comment tag; lstrip_blocks drops the
// spaces and tabs between a line's start and a block or comment tag (`{%+` keeps them).
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace kvarena::jinja {

enum class tok { text, var_begin, var_end, block_begin, block_end, name, string, integer, floating, op, eof };

struct token {
  tok t = tok::eof;
  std::string s;  // text, name, string (unescaped), op ("+", "==", "(", ...)
  int64_t i = 0;  // integer
  double f = 0;   // floating
  int line = 1;
};

// transformers' apply_chat_template sets both (jinja2's own default is both off), and
// llama.cpp's chat-template engine (common/jinja) defaults to both on as well.
struct lex_options {
  bool trim_blocks = true;
  bool lstrip_blocks = true;
};

// Throws jinja::error on an unterminated tag, string or comment, or an unknown character.
std::vector<token> lex(std::string_view source, const lex_options& o = {});

}  // namespace kvarena::jinja
