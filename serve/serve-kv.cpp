// serve-kv.cpp: a request's "kv" object -> kv_policy_spec (serve-kv.h), read off the policy
// registry like the CLI's policy flags.
#include "serve-kv.h"

#include <algorithm>
#include <cmath>

#include "engine-error.h"
#include "kv/kv-budget.h"
#include "serve-error.h"

namespace kvarena::serve {
namespace {

std::string join(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : ", ") + x;
  return s;
}

kv_policy_options with_shape(kv_policy_options o, const model_config& c) {
  o.n_layers = c.n_layers, o.n_heads = c.n_heads, o.n_kv_heads = c.n_kv_heads, o.head_dim = c.head_dim;
  return o;
}

std::string dashed(std::string k) {
  std::replace(k.begin(), k.end(), '_', '-');
  return k;
}

[[noreturn]] void bad(const std::string& param, const std::string& what) { throw serve_error(400, param + ": " + what, param); }

void set_option(kv_policy_spec& p, const kv_option& o, const kv_field& f) {
  const std::string param = "kv." + f.key;
  double v = 0;
  if (const double* d = std::get_if<double>(&f.value)) {
    v = *d;
  } else if (const bool* b = std::get_if<bool>(&f.value)) {
    if (o.type != kv_option_type::flag) bad(param, "must be a number (got a boolean)");
    v = *b ? 1 : 0;
  } else {
    bad(param, o.type == kv_option_type::flag ? "must be true or false (got a string)" : "must be a number (got a string)");
  }
  switch (o.type) {
    case kv_option_type::integer:
      if (!f.integral || std::fabs(v) > 9.0e15) bad(param, "must be an integer (got " + kv_num(v) + ")");
      break;
    case kv_option_type::real: break;
    case kv_option_type::flag:
      if (v != 0 && v != 1) bad(param, "must be true or false (got " + kv_num(v) + ")");
      break;
  }
  o.set(p, v);
}

}  // namespace

kv_policy_spec kv_spec_for_request(const std::vector<kv_field>& fields, bool given, const kv_policy_spec& server_default,
                                   const model_config& c, int64_t seq_len) {
  if (!given) return server_default;
  kv_policy_spec p;
  const kv_field* policy = nullptr;
  for (const kv_field& f : fields)
    if (f.key == "policy") policy = &f;
  if (policy) {
    const std::string* name = std::get_if<std::string>(&policy->value);
    if (!name) bad("kv.policy", "must be a string: " + join(kv_policy_names()) + " or none");
    if (*name != "none" && *name != "" && !find_kv_policy(*name))
      bad("kv.policy", "unknown policy '" + *name + "' (valid: " + join(kv_policy_names()) + ", none)");
    p.name = *name == "none" ? "" : *name;
  } else {
    p = server_default;
  }
  const kv_policy_desc* d = p.name.empty() ? nullptr : &kv_policy_described(p.name);
  std::vector<std::string> unknown;
  std::string budget;
  for (const kv_field& f : fields) {
    if (&f == policy) continue;
    const std::string key = dashed(f.key);
    if ((key == "budget" || key == "kv-budget") && std::holds_alternative<std::string>(f.value)) {
      budget = std::get<std::string>(f.value);
      continue;
    }
    const kv_option* o = d ? d->option(key) : nullptr;
    if (!o) {
      unknown.push_back(f.key);
      continue;
    }
    set_option(p, *o, f);
  }
  if (!unknown.empty()) {
    std::string names;
    for (const auto& u : unknown) names += (names.empty() ? "'" : ", '") + u + "'";
    std::vector<std::string> valid;
    if (d)
      for (const kv_option& o : d->options) valid.push_back(o.name);
    const std::string what =
        !d ? (policy ? std::string("the plain cache (policy none) takes no options")
                     : std::string("this server's default is the plain cache, which takes no options: give kv.policy"))
           : "policy '" + p.name + "' takes no such option" + (unknown.size() > 1 ? "s" : "") +
                 " (its options: " + (valid.empty() ? "none" : join(valid)) + ", and budget as \"512t\" or \"8MiB\")";
    throw serve_error(400, "kv: unknown option" + std::string(unknown.size() > 1 ? "s " : " ") + names + ": " + what,
                      "kv." + unknown[0]);
  }
  if (!budget.empty()) {
    if (!d) bad("kv.budget", "the plain cache takes no budget: give kv.policy");
    try {
      p = apply_kv_budget(p, parse_kv_budget(budget), with_shape({}, c), seq_len);
    } catch (const engine_error& e) {
      bad("kv.budget", e.what());
    }
  }
  if (d) {
    try {
      make_kv_policy(p.name, with_shape(p.options, c));
    } catch (const engine_error& e) {
      throw serve_error(400, std::string("kv: ") + e.what(), "kv");
    }
  }
  p.text = kv_spec_label(p);
  return p;
}

std::string kv_spec_label(const kv_policy_spec& s) {
  if (s.name.empty()) return "none";
  std::string out = s.name;
  for (const kv_option_value& v : kv_effective_options(s)) out += ":" + v.key + "=" + kv_num(v.value);
  return out;
}

void check_kv_spec(const kv_policy_spec& s, const model_config& c) {
  if (!s.name.empty()) make_kv_policy(s.name, with_shape(s.options, c));
}

}  // namespace kvarena::serve
