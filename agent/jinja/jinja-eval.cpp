// jinja-eval.cpp: see jinja-eval.h. A tree walk: exec() writes a statement list's output,
// eval() computes an expression; scopes are frames chained to their parent.
#include "jinja-eval.h"

#include <unordered_map>

#include "jinja-builtins.h"
#include "jinja-parser.h"

namespace kvarena::jinja {
namespace {

struct frame {
  std::unordered_map<std::string, value> vars;
  std::shared_ptr<frame> parent;
  explicit frame(std::shared_ptr<frame> p = nullptr) : parent(std::move(p)) {}
  const value* find(const std::string& name) const {
    for (const frame* f = this; f; f = f->parent.get()) {
      auto it = f->vars.find(name);
      if (it != f->vars.end()) return &it->second;
    }
    return nullptr;
  }
};
using frame_ptr = std::shared_ptr<frame>;

enum class flow { normal, break_, continue_ };

std::string with_line(const std::string& what, int line) {
  if (what.find("(template line ") != std::string::npos) return what;
  return what + " (template line " + std::to_string(line) + ")";
}

class evaluator {
 public:
  flow exec(const body& b, const frame_ptr& f, std::string& out) {
    for (const stmt_ptr& s : b) {
      flow r;
      try {
        r = exec_one(*s, f, out);
      } catch (const error& e) {
        throw error(with_line(e.what(), s->line));
      }
      if (r != flow::normal) return r;
    }
    return flow::normal;
  }

 private:
  flow exec_one(const stmt& s, const frame_ptr& f, std::string& out) {
    switch (s.k) {
      case stmt::kind::text: out += s.text; return flow::normal;
      case stmt::kind::output: out += eval(*s.e, f).to_str(); return flow::normal;
      case stmt::kind::if_:
        for (const auto& [cond, b] : s.branches)
          if (!cond || eval(*cond, f).truthy()) return exec(b, f, out);
        return flow::normal;
      case stmt::kind::for_: exec_for(s, f, out); return flow::normal;
      case stmt::kind::set: {
        value v = eval(*s.e, f);
        if (!s.attr.empty()) {
          const value* target = f->find(s.targets[0]);
          if (!target || !target->is_dict() || !target->ns)
            throw error("chat template: cannot set '" + s.targets[0] + "." + s.attr + "': '" + s.targets[0] +
                        "' is not a namespace()");
          target->d->set(s.attr, std::move(v));
        } else {
          assign(s.targets, v, *f);
        }
        return flow::normal;
      }
      case stmt::kind::set_block: {
        std::string text;
        exec(s.inner, f, text);
        value v = value::str(text);
        if (s.filter) v = eval_filter_chain(*s.filter, f, v);
        f->vars[s.targets[0]] = v;
        return flow::normal;
      }
      case stmt::kind::macro: f->vars[s.name] = make_macro(s, f); return flow::normal;
      case stmt::kind::filter_block: {
        std::string text;
        exec(s.inner, f, text);
        out += eval_filter_chain(*s.filter, f, value::str(text)).to_str();
        return flow::normal;
      }
      case stmt::kind::generation: return exec(s.inner, f, out);
      case stmt::kind::break_: return flow::break_;
      case stmt::kind::continue_: return flow::continue_;
    }
    return flow::normal;
  }

  static void assign(const std::vector<std::string>& targets, const value& v, frame& f) {
    if (targets.size() == 1) {
      f.vars[targets[0]] = v;
      return;
    }
    const list items = iterate(v);
    if (items.size() != targets.size())
      throw error("chat template: cannot unpack " + std::to_string(items.size()) + " values into " +
                  std::to_string(targets.size()) + " names");
    for (size_t j = 0; j < targets.size(); ++j) f.vars[targets[j]] = items[j];
  }

  void exec_for(const stmt& s, const frame_ptr& f, std::string& out) {
    const value seq = eval(*s.e, f);
    list items = iterate(seq);
    if (s.cond) {
      list kept;
      for (const value& item : items) {
        auto probe = std::make_shared<frame>(f);
        assign(s.targets, item, *probe);
        if (eval(*s.cond, probe).truthy()) kept.push_back(item);
      }
      items = std::move(kept);
    }
    const int64_t n = static_cast<int64_t>(items.size());
    for (int64_t j = 0; j < n; ++j) {
      auto it = std::make_shared<frame>(f);
      assign(s.targets, items[static_cast<size_t>(j)], *it);
      value loop = value::make_dict();
      dict& d = *loop.d;
      d.set("index", value::integer(j + 1));
      d.set("index0", value::integer(j));
      d.set("revindex", value::integer(n - j));
      d.set("revindex0", value::integer(n - j - 1));
      d.set("first", value::boolean(j == 0));
      d.set("last", value::boolean(j == n - 1));
      d.set("length", value::integer(n));
      d.set("depth", value::integer(1));
      d.set("depth0", value::integer(0));
      if (j > 0) d.set("previtem", items[static_cast<size_t>(j - 1)]);
      if (j + 1 < n) d.set("nextitem", items[static_cast<size_t>(j + 1)]);
      d.set("cycle", value::function([j](call_args& a) {
        if (a.pos.empty()) throw error("chat template: loop.cycle() needs arguments");
        return a.pos[static_cast<size_t>(j) % a.pos.size()];
      }));
      it->vars["loop"] = loop;
      if (exec(s.inner, it, out) == flow::break_) break;
    }
    if (n == 0 && !s.else_body.empty()) exec(s.else_body, f, out);
  }

  value make_macro(const stmt& s, const frame_ptr& def) {
    const stmt* m = &s;
    return value::function([this, m, def](call_args& a) {
      auto f = std::make_shared<frame>(def);
      for (size_t j = 0; j < m->params.size(); ++j) {
        value v = a.get(j, m->params[j], value::undef(m->params[j]));
        if (v.is_undefined() && m->defaults[j]) v = eval(*m->defaults[j], f);
        f->vars[m->params[j]] = v;
      }
      list extra;
      for (size_t j = m->params.size(); j < a.pos.size(); ++j) extra.push_back(a.pos[j]);
      f->vars["varargs"] = value::make_list(std::move(extra));
      value kw = value::make_dict();
      for (const auto& [k, v] : a.kw) {
        bool is_param = false;
        for (const std::string& p : m->params) is_param = is_param || p == k;
        if (!is_param) kw.d->set(k, v);
      }
      f->vars["kwargs"] = kw;
      std::string text;
      exec(m->inner, f, text);
      value r = value::str(text);
      r.safe = true;
      return r;
    });
  }

  call_args eval_args(const expr& e, const frame_ptr& f, size_t first) {
    call_args a;
    for (size_t j = first; j < e.args.size(); ++j) a.pos.push_back(eval(*e.args[j], f));
    for (const auto& [k, v] : e.kwargs) a.kw.emplace_back(k, eval(*v, f));
    return a;
  }

  value eval_filter_chain(const expr& e, const frame_ptr& f, const value& subject) {
    const expr* inner = e.args[0].get();
    const value in = !inner ? subject : inner->k == expr::kind::filter ? eval_filter_chain(*inner, f, subject) : eval(*inner, f);
    call_args a = eval_args(e, f, 1);
    return apply_filter(e.name, in, a);
  }

  value eval(const expr& e, const frame_ptr& f) {
    switch (e.k) {
      case expr::kind::literal: return e.lit;
      case expr::kind::name: {
        if (const value* v = f->find(e.name)) return *v;
        value g = global_function(e.name);
        return g.is_undefined() ? value::undef(e.name) : g;
      }
      case expr::kind::list: {
        list items;
        for (const expr_ptr& x : e.args) items.push_back(eval(*x, f));
        value v = value::make_list(std::move(items));
        v.tuple = e.is_tuple;
        return v;
      }
      case expr::kind::dict: {
        value d = value::make_dict();
        for (size_t j = 0; j + 1 < e.args.size(); j += 2) {
          const value k = eval(*e.args[j], f);
          if (k.is_list() || k.is_dict() || k.is_undefined() || k.k == value::kind::function)
            throw error(std::string("chat template: a dict key of type '") + k.type_name() + "' (unhashable)");
          d.d->set(k, eval(*e.args[j + 1], f));
        }
        return d;
      }
      case expr::kind::getattr: return get_attr(eval(*e.args[0], f), e.name);
      case expr::kind::getitem: return get_item(eval(*e.args[0], f), eval(*e.args[1], f));
      case expr::kind::slice: {
        auto part = [&](size_t j) { return e.args[j] ? eval(*e.args[j], f) : value::none(); };
        return get_slice(eval(*e.args[0], f), part(1), part(2), part(3));
      }
      case expr::kind::call: {
        value callee;
        if (e.args[0]->k == expr::kind::getattr) {
          const value obj = eval(*e.args[0]->args[0], f);
          callee = get_attr(obj, e.args[0]->name);
          if (callee.is_undefined())
            throw error("chat template calls unsupported method '" + e.args[0]->name + "' of a value of type '" +
                        obj.type_name() + "'");
        } else {
          callee = eval(*e.args[0], f);
        }
        if (callee.k != value::kind::function) {
          const std::string what = e.args[0]->k == expr::kind::name ? "'" + e.args[0]->name + "'" : "a value";
          if (callee.is_undefined()) throw error("chat template calls unsupported or undefined function " + what);
          throw error("chat template calls " + what + " of type '" + callee.type_name() + "', which is not callable");
        }
        call_args a = eval_args(e, f, 1);
        return (*callee.fn)(a);
      }
      case expr::kind::filter: return eval_filter_chain(e, f, value());
      case expr::kind::test: {
        const value subject = eval(*e.args[0], f);
        call_args a = eval_args(e, f, 1);
        return value::boolean(apply_test(e.name, subject, a) != e.negated);
      }
      case expr::kind::unary: {
        const value v = eval(*e.args[0], f);
        if (e.name == "not") return value::boolean(!v.truthy());
        if (v.k == value::kind::floating) return value::floating(e.name == "-" ? -v.f : v.f);
        if (!v.is_number()) throw error(std::string("chat template: unary ") + e.name + " of a value of type '" + v.type_name() + "'");
        const int64_t x = v.k == value::kind::boolean ? v.b : v.i;
        return value::integer(e.name == "-" ? -x : x);
      }
      case expr::kind::binary: {
        value a = eval(*e.args[0], f);
        if (e.name == "and") return a.truthy() ? eval(*e.args[1], f) : a;
        if (e.name == "or") return a.truthy() ? a : eval(*e.args[1], f);
        return binary_op(e.name, a, eval(*e.args[1], f));
      }
      case expr::kind::compare: {
        value left = eval(*e.args[0], f);
        for (size_t j = 0; j < e.ops.size(); ++j) {
          value right = eval(*e.args[j + 1], f);
          if (!compare_op(e.ops[j], left, right)) return value::boolean(false);
          left = std::move(right);
        }
        return value::boolean(true);
      }
      case expr::kind::cond:
        if (eval(*e.args[1], f).truthy()) return eval(*e.args[0], f);
        return e.args[2] ? eval(*e.args[2], f) : value::undef();
    }
    return value::undef();
  }
};

}  // namespace

template_::template_(std::string_view source, const lex_options& o)
    : body_(std::make_shared<body>(parse(source, o))) {}

std::string template_::render(const std::map<std::string, value>& context) const {
  auto root = std::make_shared<frame>();
  for (const auto& [k, v] : context) root->vars[k] = v;
  auto top = std::make_shared<frame>(root);
  std::string out;
  evaluator ev;
  ev.exec(*body_, top, out);
  return out;
}

}  // namespace kvarena::jinja
