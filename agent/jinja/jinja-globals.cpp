// jinja-globals.cpp: the functions a template can call by name (jinja-builtins.h):
// jinja2's range, namespace, dict, and transformers' raise_exception (an error carrying the
// template's message) and strftime_now (local time, as datetime.now().strftime).
#include <ctime>

#include "jinja-builtins.h"

namespace kvarena::jinja {

value global_function(const std::string& name) {
  if (name == "range")
    return value::function([](call_args& a) {
      int64_t start = 0, stop = 0, step = 1;
      if (a.pos.size() == 1) stop = a.pos[0].i;
      else if (a.pos.size() >= 2) { start = a.pos[0].i; stop = a.pos[1].i; }
      if (a.pos.size() >= 3) step = a.pos[2].i;
      if (step == 0) throw error("chat template: range() step cannot be zero");
      list out;
      for (int64_t x = start; step > 0 ? x < stop : x > stop; x += step) {
        out.push_back(value::integer(x));
        if (out.size() > 1000000) throw error("chat template: range() too long");
      }
      return value::make_list(std::move(out));
    });
  if (name == "namespace" || name == "dict")
    return value::function([name](call_args& a) {
      value d = value::make_dict();
      d.ns = name == "namespace";
      for (const value& p : a.pos) {
        if (!p.is_dict()) throw error("chat template: " + name + "() takes a dict or keyword arguments");
        for (const auto& kv : p.d->items) d.d->set(kv.first, kv.second);
      }
      for (const auto& kv : a.kw) d.d->set(kv.first, kv.second);
      return d;
    });
  if (name == "raise_exception")
    return value::function([](call_args& a) -> value {
      throw error("chat template raised an error: " + a.get(0, "message").to_str());
    });
  if (name == "strftime_now")
    return value::function([](call_args& a) {
      const std::time_t now = std::time(nullptr);
      std::tm tm{};
      localtime_r(&now, &tm);
      char buf[256];
      const size_t n = std::strftime(buf, sizeof buf, a.get(0, "format").to_str().c_str(), &tm);
      return value::str(std::string(buf, n));
    });
  return value::undef(name);
}

}  // namespace kvarena::jinja
