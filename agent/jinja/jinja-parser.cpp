// jinja-parser.cpp: see jinja-parser.h. Recursive descent, one function per precedence
// level, as jinja2/parser.py.
#include "jinja-parser.h"

#include <set>

#include "jinja-builtins.h"

namespace kvarena::jinja {
namespace {

class parser {
 public:
  explicit parser(std::vector<token> t) : t_(std::move(t)) {}

  body parse_template() {
    std::string stop;
    body b = parse_body({}, stop);
    return b;
  }

 private:
  const token& cur() const { return t_[p_]; }
  const token& peek(size_t n = 1) const { return t_[std::min(p_ + n, t_.size() - 1)]; }
  bool is_op(const char* op) const { return cur().t == tok::op && cur().s == op; }
  bool is_name(const char* n) const { return cur().t == tok::name && cur().s == n; }
  token next() { return t_[p_ < t_.size() - 1 ? p_++ : p_]; }

  [[noreturn]] void fail(const std::string& what) const {
    throw error("chat template line " + std::to_string(cur().line) + ": " + what);
  }
  void expect_op(const char* op) {
    if (!is_op(op)) fail(std::string("expected '") + op + "'" + found());
    next();
  }
  std::string expect_name() {
    if (cur().t != tok::name) fail("expected a name" + found());
    return next().s;
  }
  void expect_block_end() {
    if (cur().t != tok::block_end) fail("expected '%}'" + found());
    next();
  }
  std::string found() const {
    switch (cur().t) {
      case tok::eof: return ", found the end of the template";
      case tok::block_end: return ", found '%}'";
      case tok::var_end: return ", found '}}'";
      default: return ", found '" + cur().s + "'";
    }
  }

  // Statements until a block tag whose keyword is in `ends` (consumed up to the keyword;
  // its name returned in `stop`). At top level (ends empty) until the end of input.
  body parse_body(const std::set<std::string>& ends, std::string& stop) {
    body out;
    while (true) {
      const token& tk = cur();
      if (tk.t == tok::eof) {
        if (!ends.empty()) {
          std::string end = *ends.begin();
          for (const std::string& e : ends)
            if (e.rfind("end", 0) == 0) end = e;
          fail("missing {% " + end + " %}");
        }
        return out;
      }
      if (tk.t == tok::text) {
        auto s = std::make_unique<stmt>();
        s->k = stmt::kind::text;
        s->text = tk.s;
        s->line = tk.line;
        out.push_back(std::move(s));
        next();
      } else if (tk.t == tok::var_begin) {
        next();
        auto s = std::make_unique<stmt>();
        s->k = stmt::kind::output;
        s->line = tk.line;
        s->e = parse_tuple_or_expr();
        if (cur().t != tok::var_end) fail("expected '}}'" + found());
        next();
        out.push_back(std::move(s));
      } else if (tk.t == tok::block_begin) {
        next();
        const std::string kw = cur().t == tok::name ? cur().s : "";
        if (ends.count(kw)) {
          next();
          stop = kw;
          return out;
        }
        out.push_back(parse_statement());
      } else {
        fail("unexpected token" + found());
      }
    }
  }

  stmt_ptr parse_statement() {
    const int line = cur().line;
    const std::string kw = expect_name();
    auto s = std::make_unique<stmt>();
    s->line = line;
    std::string stop;
    if (kw == "if") {
      s->k = stmt::kind::if_;
      expr_ptr c = parse_expression();
      expect_block_end();
      while (true) {
        body b = parse_body({"elif", "else", "endif"}, stop);
        s->branches.emplace_back(std::move(c), std::move(b));
        if (stop == "endif") break;
        if (stop == "elif") {
          c = parse_expression();
          expect_block_end();
        } else {
          expect_block_end();
          s->branches.emplace_back(nullptr, parse_body({"endif"}, stop));
          break;
        }
      }
    } else if (kw == "for") {
      s->k = stmt::kind::for_;
      s->targets.push_back(expect_name());
      while (is_op(",")) {
        next();
        s->targets.push_back(expect_name());
      }
      if (!is_name("in")) fail("expected 'in'" + found());
      next();
      s->e = parse_expression(false);
      if (is_name("if")) {
        next();
        s->cond = parse_expression();
      }
      if (is_name("recursive")) fail("chat template uses unsupported recursive for loop");
      expect_block_end();
      s->inner = parse_body({"else", "endfor"}, stop);
      if (stop == "else") {
        expect_block_end();
        s->else_body = parse_body({"endfor"}, stop);
      }
    } else if (kw == "set") {
      s->targets.push_back(expect_name());
      if (is_op(".")) {
        next();
        s->attr = expect_name();
      }
      while (is_op(",")) {
        next();
        s->targets.push_back(expect_name());
      }
      if (is_op("=")) {
        next();
        s->k = stmt::kind::set;
        s->e = parse_tuple_or_expr();
      } else {
        if (s->targets.size() != 1 || !s->attr.empty()) fail("a block set takes one name");
        s->k = stmt::kind::set_block;
        if (is_op("|")) s->filter = parse_filters(nullptr);
        expect_block_end();
        s->inner = parse_body({"endset"}, stop);
      }
    } else if (kw == "macro") {
      s->k = stmt::kind::macro;
      s->name = expect_name();
      expect_op("(");
      while (!is_op(")")) {
        s->params.push_back(expect_name());
        if (is_op("=")) {
          next();
          s->defaults.push_back(parse_expression());
        } else {
          s->defaults.push_back(nullptr);
        }
        if (!is_op(",")) break;
        next();
      }
      expect_op(")");
      expect_block_end();
      s->inner = parse_body({"endmacro"}, stop);
    } else if (kw == "filter") {
      s->k = stmt::kind::filter_block;
      s->filter = parse_filters(nullptr, true);
      expect_block_end();
      s->inner = parse_body({"endfilter"}, stop);
    } else if (kw == "generation") {
      s->k = stmt::kind::generation;
      expect_block_end();
      s->inner = parse_body({"endgeneration"}, stop);
    } else if (kw == "break" || kw == "continue") {
      s->k = kw == "break" ? stmt::kind::break_ : stmt::kind::continue_;
    } else {
      fail("chat template uses unsupported statement '" + kw + "'");
    }
    expect_block_end();  // after the statement, or after its end keyword
    return s;
  }

  expr_ptr node(expr::kind k, int line) {
    auto e = std::make_unique<expr>();
    e->k = k;
    e->line = line;
    return e;
  }

  // `a, b` without parentheses (as in `{{ a, b }}` or `set x = a, b`) is a tuple.
  expr_ptr parse_tuple_or_expr() {
    const int line = cur().line;
    expr_ptr first = parse_expression();
    if (!is_op(",")) return first;
    auto t = node(expr::kind::list, line);
    t->is_tuple = true;
    t->args.push_back(std::move(first));
    while (is_op(",")) {
      next();
      if (cur().t == tok::block_end || cur().t == tok::var_end) break;
      t->args.push_back(parse_expression());
    }
    return t;
  }

  expr_ptr parse_expression(bool with_condexpr = true) {
    const int line = cur().line;
    expr_ptr e = parse_or();
    if (!with_condexpr) return e;
    while (is_name("if")) {
      next();
      auto c = node(expr::kind::cond, line);
      c->args.push_back(std::move(e));
      c->args.push_back(parse_or());
      if (is_name("else")) {
        next();
        c->args.push_back(parse_expression());
      } else {
        c->args.push_back(nullptr);
      }
      e = std::move(c);
    }
    return e;
  }

  expr_ptr binary(const std::string& op, expr_ptr a, expr_ptr b, int line) {
    auto e = node(expr::kind::binary, line);
    e->name = op;
    e->args.push_back(std::move(a));
    e->args.push_back(std::move(b));
    return e;
  }

  expr_ptr parse_or() {
    expr_ptr e = parse_and();
    while (is_name("or")) {
      const int line = next().line;
      e = binary("or", std::move(e), parse_and(), line);
    }
    return e;
  }
  expr_ptr parse_and() {
    expr_ptr e = parse_not();
    while (is_name("and")) {
      const int line = next().line;
      e = binary("and", std::move(e), parse_not(), line);
    }
    return e;
  }
  expr_ptr parse_not() {
    if (is_name("not")) {
      auto e = node(expr::kind::unary, next().line);
      e->name = "not";
      e->args.push_back(parse_not());
      return e;
    }
    return parse_compare();
  }
  expr_ptr parse_compare() {
    const int line = cur().line;
    expr_ptr first = parse_math1();
    std::unique_ptr<expr> cmp;
    while (true) {
      std::string op;
      if (cur().t == tok::op && (cur().s == "==" || cur().s == "!=" || cur().s == "<" || cur().s == ">" ||
                                 cur().s == "<=" || cur().s == ">=")) {
        op = next().s;
      } else if (is_name("in")) {
        next();
        op = "in";
      } else if (is_name("not") && peek().t == tok::name && peek().s == "in") {
        next();
        next();
        op = "not in";
      } else {
        break;
      }
      if (!cmp) {
        cmp = node(expr::kind::compare, line);
        cmp->args.push_back(std::move(first));
      }
      cmp->ops.push_back(op);
      cmp->args.push_back(parse_math1());
    }
    return cmp ? std::move(cmp) : std::move(first);
  }
  expr_ptr parse_math1() {
    expr_ptr e = parse_concat();
    while (is_op("+") || is_op("-")) {
      const token op = next();
      e = binary(op.s, std::move(e), parse_concat(), op.line);
    }
    return e;
  }
  expr_ptr parse_concat() {
    expr_ptr e = parse_math2();
    while (is_op("~")) {
      const int line = next().line;
      e = binary("~", std::move(e), parse_math2(), line);
    }
    return e;
  }
  expr_ptr parse_math2() {
    expr_ptr e = parse_pow();
    while (is_op("*") || is_op("/") || is_op("//") || is_op("%")) {
      const token op = next();
      e = binary(op.s, std::move(e), parse_pow(), op.line);
    }
    return e;
  }
  expr_ptr parse_pow() {
    expr_ptr e = parse_unary();
    while (is_op("**")) {
      const int line = next().line;
      e = binary("**", std::move(e), parse_unary(), line);
    }
    return e;
  }
  expr_ptr parse_unary(bool with_filter = true) {
    expr_ptr e;
    if (is_op("-") || is_op("+")) {
      const token op = next();
      e = node(expr::kind::unary, op.line);
      e->name = op.s;
      e->args.push_back(parse_unary(false));
    } else {
      e = parse_primary();
    }
    e = parse_postfix(std::move(e));
    if (with_filter) e = parse_filter_expr(std::move(e));
    return e;
  }

  expr_ptr parse_primary() {
    const token tk = cur();
    if (tk.t == tok::name) {
      next();
      if (tk.s == "true" || tk.s == "True") { auto e = node(expr::kind::literal, tk.line); e->lit = value::boolean(true); return e; }
      if (tk.s == "false" || tk.s == "False") { auto e = node(expr::kind::literal, tk.line); e->lit = value::boolean(false); return e; }
      if (tk.s == "none" || tk.s == "None") { auto e = node(expr::kind::literal, tk.line); e->lit = value::none(); return e; }
      auto e = node(expr::kind::name, tk.line);
      e->name = tk.s;
      return e;
    }
    if (tk.t == tok::string) {
      std::string s;
      while (cur().t == tok::string) s += next().s;  // adjacent literals join
      auto e = node(expr::kind::literal, tk.line);
      e->lit = value::str(s);
      return e;
    }
    if (tk.t == tok::integer || tk.t == tok::floating) {
      next();
      auto e = node(expr::kind::literal, tk.line);
      e->lit = tk.t == tok::integer ? value::integer(tk.i) : value::floating(tk.f);
      return e;
    }
    if (is_op("(")) {
      next();
      if (is_op(")")) {
        next();
        auto e = node(expr::kind::list, tk.line);
        e->is_tuple = true;
        return e;
      }
      expr_ptr first = parse_expression();
      if (is_op(")")) {
        next();
        return first;
      }
      auto e = node(expr::kind::list, tk.line);
      e->is_tuple = true;
      e->args.push_back(std::move(first));
      while (is_op(",")) {
        next();
        if (is_op(")")) break;
        e->args.push_back(parse_expression());
      }
      expect_op(")");
      return e;
    }
    if (is_op("[")) {
      next();
      auto e = node(expr::kind::list, tk.line);
      while (!is_op("]")) {
        e->args.push_back(parse_expression());
        if (!is_op(",")) break;
        next();
      }
      expect_op("]");
      return e;
    }
    if (is_op("{")) {
      next();
      auto e = node(expr::kind::dict, tk.line);
      while (!is_op("}")) {
        e->args.push_back(parse_expression());
        expect_op(":");
        e->args.push_back(parse_expression());
        if (!is_op(",")) break;
        next();
      }
      expect_op("}");
      return e;
    }
    fail("unexpected token" + found());
  }

  void parse_call_args(expr& call) {
    expect_op("(");
    while (!is_op(")")) {
      if (is_op("*") || is_op("**")) fail("chat template uses unsupported *args/**kwargs in a call");
      if (cur().t == tok::name && peek().t == tok::op && peek().s == "=") {
        std::string key = next().s;
        next();
        call.kwargs.emplace_back(key, parse_expression());
      } else {
        call.args.push_back(parse_expression());
      }
      if (!is_op(",")) break;
      next();
    }
    expect_op(")");
  }

  expr_ptr parse_postfix(expr_ptr e) {
    while (true) {
      const int line = cur().line;
      if (is_op(".")) {
        next();
        if (cur().t == tok::integer) {
          auto g = node(expr::kind::getitem, line);
          g->args.push_back(std::move(e));
          auto idx = node(expr::kind::literal, line);
          idx->lit = value::integer(next().i);
          g->args.push_back(std::move(idx));
          e = std::move(g);
        } else {
          auto g = node(expr::kind::getattr, line);
          g->name = expect_name();
          g->args.push_back(std::move(e));
          e = std::move(g);
        }
      } else if (is_op("[")) {
        next();
        expr_ptr parts[3];
        bool is_slice = false;
        for (int k = 0; k < 3; ++k) {
          if (!is_op(":") && !is_op("]")) parts[k] = parse_expression();
          if (k < 2 && is_op(":")) {
            next();
            is_slice = true;
          } else {
            break;
          }
        }
        expect_op("]");
        auto g = node(is_slice ? expr::kind::slice : expr::kind::getitem, line);
        g->args.push_back(std::move(e));
        if (is_slice) {
          for (auto& p : parts) g->args.push_back(std::move(p));
        } else {
          if (!parts[0]) fail("empty subscript");
          g->args.push_back(std::move(parts[0]));
        }
        e = std::move(g);
      } else if (is_op("(")) {
        auto c = node(expr::kind::call, line);
        c->args.push_back(std::move(e));
        parse_call_args(*c);
        e = std::move(c);
      } else {
        return e;
      }
    }
  }

  // `| name(args)` chains; with `subject` null it starts the chain of a filter block.
  expr_ptr parse_filters(expr_ptr subject, bool first_without_pipe = false) {
    bool first = first_without_pipe;
    while (first || is_op("|")) {
      if (!first) next();
      first = false;
      auto f = node(expr::kind::filter, cur().line);
      f->name = expect_name();
      while (is_op(".")) {
        next();
        f->name += '.';
        f->name += expect_name();
      }
      f->args.push_back(std::move(subject));
      if (is_op("(")) parse_call_args(*f);
      subject = std::move(f);
    }
    return subject;
  }

  expr_ptr parse_filter_expr(expr_ptr e) {
    while (true) {
      if (is_op("|")) {
        e = parse_filters(std::move(e));
      } else if (is_name("is")) {
        auto t = node(expr::kind::test, next().line);
        if (is_name("not")) {
          next();
          t->negated = true;
        }
        t->name = expect_name();
        t->args.push_back(std::move(e));
        if (is_op("(")) {
          parse_call_args(*t);
        } else if ((cur().t == tok::name || cur().t == tok::string || cur().t == tok::integer ||
                    cur().t == tok::floating || is_op("(") || is_op("[") || is_op("{")) &&
                   !is_name("else") && !is_name("or") && !is_name("and")) {
          if (is_name("is")) fail("tests cannot be chained with 'is'");
          t->args.push_back(parse_postfix(parse_primary()));
        }
        e = std::move(t);
      } else if (is_op("(")) {
        auto c = node(expr::kind::call, cur().line);
        c->args.push_back(std::move(e));
        parse_call_args(*c);
        e = std::move(c);
      } else {
        return e;
      }
    }
  }

  std::vector<token> t_;
  size_t p_ = 0;
};

// jinja2 checks filter and test names when it compiles, except inside an `if` (its test
// and branches) or a conditional expression, where an unknown name fails only if reached;
// a for, macro or block-set body is checked again (jinja2's soft frames).
void check_names(const expr* e, bool soft) {
  if (!e) return;
  if (e->k == expr::kind::cond) soft = true;
  if (!soft && e->k == expr::kind::filter && !has_filter(e->name))
    throw error("chat template line " + std::to_string(e->line) + ": chat template uses unsupported filter '" + e->name + "'");
  if (!soft && e->k == expr::kind::test && !has_test(e->name))
    throw error("chat template line " + std::to_string(e->line) + ": chat template uses unsupported test '" + e->name + "'");
  for (const expr_ptr& a : e->args) check_names(a.get(), soft);
  for (const auto& kv : e->kwargs) check_names(kv.second.get(), soft);
}

void check_names(const body& b, bool soft) {
  for (const stmt_ptr& s : b) {
    const bool in_if = soft || s->k == stmt::kind::if_;
    check_names(s->e.get(), soft);
    check_names(s->filter.get(), soft);
    check_names(s->cond.get(), false);
    for (const auto& [c, br] : s->branches) {
      check_names(c.get(), in_if);
      check_names(br, in_if);
    }
    for (const expr_ptr& d : s->defaults) check_names(d.get(), false);
    const bool inner_soft = s->k == stmt::kind::generation && soft;
    check_names(s->inner, inner_soft);
    check_names(s->else_body, false);
  }
}

}  // namespace

body parse(std::string_view source, const lex_options& o) {
  body b = parser(lex(source, o)).parse_template();
  check_names(b, false);
  return b;
}

}  // namespace kvarena::jinja
