// policy-flags.cpp: --policy/--policies, the option flags, per-item overrides and the
// effective-options JSON (policy-flags.h), all read off the policy registry.
#include "policy-flags.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>

#include "cli-commands.h"
#include "engine-error.h"
#include "kv/kv-budget.h"
#include "kv/kv-policy-registry.h"

namespace kvarena::cli {

namespace {

using json = nlohmann::ordered_json;

std::string join(const std::vector<std::string>& v, const char* sep = ", ") {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : sep) + x;
  return s;
}

std::vector<std::string> option_names(const kv_policy_desc& d) {
  std::vector<std::string> out;
  for (const kv_option& o : d.options) out.push_back(o.name);
  return out;
}

// One CLI flag: an option name and every policy that takes an option of that name.
struct flag_takers {
  std::string name;
  kv_option_type type = kv_option_type::integer;
  std::vector<std::pair<const kv_policy_desc*, const kv_option*>> takers;
};

// Every option name of the registry once, in order of first appearance.
std::vector<flag_takers> registry_flags() {
  std::vector<flag_takers> out;
  for (const kv_policy_desc* d : kv_policies())
    for (const kv_option& o : d->options) {
      auto it = std::find_if(out.begin(), out.end(), [&](const flag_takers& f) { return f.name == o.name; });
      if (it == out.end()) it = out.insert(out.end(), flag_takers{o.name, o.type, {}});
      it->takers.push_back({d, &o});
    }
  return out;
}

// A float as JSON with the digits it was given (0.6f -> 0.6, not 0.6000000238...).
double short_float(float x) {
  char s[32];
  std::snprintf(s, sizeof s, "%g", double(x));
  return std::strtod(s, nullptr);
}

// The default of an option as --help shows it.
std::string default_text(const kv_option& o) {
  if (o.automatic && !o.automatic_help.empty()) return o.automatic_help;
  return kv_num(o.default_value());
}

// Whether every policy taking the flag has the same fixed default (then CLI11 shows it:
// "--window INT=512"); else each policy's default goes into the help text.
bool uniform_default(const flag_takers& f) {
  if (f.type == kv_option_type::flag) return false;
  for (const auto& [d, o] : f.takers)
    if (o->automatic || o->placeholder() != f.takers[0].second->placeholder()) return false;
  return true;
}

// "window: recent tokens kept (>= 1); freekv: recent window W (>= 0)": the policies with
// the same help, range and default in one part.
std::string flag_help(const flag_takers& f) {
  const bool uniform = uniform_default(f);
  std::vector<std::pair<std::string, std::vector<std::string>>> parts;  // (text, policies)
  for (const auto& [d, o] : f.takers) {
    std::vector<std::string> notes;
    if (o->has_range()) notes.push_back(o->range_text());
    if (!uniform && f.type != kv_option_type::flag) notes.push_back("default " + default_text(*o));
    const std::string text = o->help + (notes.empty() ? "" : " (" + join(notes) + ")");
    auto it = std::find_if(parts.begin(), parts.end(), [&](const auto& p) { return p.first == text; });
    if (it == parts.end()) it = parts.insert(parts.end(), {text, {}});
    it->second.push_back(d->name);
  }
  std::vector<std::string> out;
  for (const auto& [text, names] : parts) out.push_back(join(names) + ": " + text);
  return join(out, "; ");
}

// A stand-in shape for checking options before the model is loaded (head size a multiple
// of 32, so only the real shape can refuse --kv-int8).
kv_policy_options with_shape(kv_policy_options o, int64_t n_layers, int64_t n_heads, int64_t n_kv_heads,
                             int64_t head_dim) {
  o.n_layers = n_layers, o.n_heads = n_heads, o.n_kv_heads = n_kv_heads, o.head_dim = head_dim;
  return o;
}

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  size_t b = 0;
  for (size_t e; (e = s.find(sep, b)) != std::string::npos; b = e + 1) out.push_back(s.substr(b, e - b));
  out.push_back(s.substr(b));
  return out;
}

bool flag_given(const policy_flags& f, const std::string& name) {
  if (!f.app) return false;
  const CLI::Option* o = f.app->get_option_no_throw("--" + name);
  return o && o->count() > 0;
}

// The flags given set the item's policy's options of those names.
void apply_given_flags(kv_policy_spec& p, const kv_policy_desc& d, const policy_flags& f) {
  for (const kv_option& o : d.options) {
    if (!flag_given(f, o.name)) continue;
    const policy_flag_value& v = f.values.at(o.name);
    switch (o.type) {
      case kv_option_type::integer: o.set(p, double(v.integer)); break;
      case kv_option_type::real: o.set(p, double(v.real)); break;
      case kv_option_type::flag: o.set(p, v.flag ? 1.0 : 0.0); break;
    }
  }
}

kv_policy_spec parse_item(const std::string& text, const policy_flags& f) {
  const std::vector<std::string> parts = split(text, ':');
  kv_policy_spec p;
  p.text = text;
  p.name = parts[0];
  const kv_policy_desc& d = kv_policy_described(p.name);  // throws: unknown policy, lists the valid
  apply_given_flags(p, d, f);
  const std::vector<std::string> keys = option_names(d);
  const std::string where = "policy '" + text + "'";
  for (size_t i = 1; i < parts.size(); ++i) {
    const size_t eq = parts[i].find('=');
    if (eq == std::string::npos || eq == 0)
      throw engine_error(where + ": '" + parts[i] + "' is not key=value (e.g. " + p.name + ":" +
                         (keys.empty() ? std::string("...") : keys[0] + "=...") + ")");
    const std::string key = parts[i].substr(0, eq), value = parts[i].substr(eq + 1);
    const kv_option* o = d.option(key);
    if (!o)
      throw usage_error(where + ": unknown option '" + key + "' for " + p.name + " (valid: " +
                        (keys.empty() ? "none, " + p.name + " takes no options" : join(keys)) + ")");
    set_kv_option_text(p, *o, where, value);
  }
  return p;
}

bool takes(const std::string& policy, const std::string& key) {
  const kv_policy_desc* d = find_kv_policy(policy);
  return d && d->option(key);
}

// A flag given that no item's policy takes: usage_error naming the flag and the policies,
// e.g. "--kv-int8: policy 'window' has no such option (its options: window, sinks)".
void check_given_flags(const policy_flags& f, const std::vector<kv_policy_spec>& items) {
  for (const std::string& flag : given_policy_flags(f)) {
    const std::string key = flag.substr(2);
    std::vector<std::string> names;  // the listed policies, each once
    bool taken = false;
    for (const kv_policy_spec& p : items) {
      taken |= takes(p.name, key);
      if (std::find(names.begin(), names.end(), p.name) == names.end()) names.push_back(p.name);
    }
    if (taken) continue;
    std::vector<std::string> owners;  // the policies that do take it
    for (const kv_policy_desc* d : kv_policies())
      if (d->option(key)) owners.push_back(d->name);
    if (names.empty())
      throw usage_error(flag + ": no --policy given, and the plain cache has no such option (it is an option of " +
                        join(owners) + ")");
    if (names.size() == 1) {
      const std::vector<std::string> keys = option_names(kv_policy_described(names[0]));
      throw usage_error(flag + ": policy '" + names[0] + "' has no such option (its options: " +
                        (keys.empty() ? std::string("none") : join(keys)) + ")");
    }
    std::string listed;
    for (const std::string& n : names) listed += (listed.empty() ? "'" : ", '") + n + "'";
    throw usage_error(flag + ": none of the policies " + listed + " has such an option (it is an option of " +
                      join(owners) + ")");
  }
}

}  // namespace

std::vector<std::string> given_policy_flags(const policy_flags& f) {
  std::vector<std::string> out;
  if (!f.app) return out;
  // (An option name first registered after add_policy_flags has no flag: never given.)
  for (const flag_takers& flag : registry_flags())
    if (flag_given(f, flag.name)) out.push_back("--" + flag.name);
  return out;
}

void add_policy_flags(CLI::App* sub, policy_flags& f, bool list) {
  f.list = list;
  f.app = sub;
  const char* g = "KV policy";
  const std::vector<std::string> names = kv_policy_names();
  if (list) {
    f.policies = join(names, ",");
    sub->add_option("--policies", f.policies,
                    "Policies to run, comma-separated, each with optional overrides: "
                    "window:window=2048,freekv:budget=2048:window=512")
        ->capture_default_str()->group(g);
  } else {
    sub->add_option("--policy", f.policies,
                    "KV-cache policy: " + join(names, "|") +
                        ", with optional overrides (freekv:budget=2048:window=512); default: the plain F32 cache")
        ->group(g);
  }
  sub->add_option("--kv-budget", f.kv_budget,
                  "Equal-memory comparison: every policy's size options spent from one budget per layer and KV "
                  "head, tokens (512t) or logical bytes of the cache (8MiB); a list sweeps (256t,512t,1024t); "
                  "full stays the reference")
      ->group(g);
  for (const flag_takers& flag : registry_flags()) {
    policy_flag_value& v = f.values[flag.name];
    const std::string name = "--" + flag.name, help = flag_help(flag);
    const kv_option& first = *flag.takers[0].second;
    CLI::Option* o = nullptr;
    switch (flag.type) {
      case kv_option_type::integer:
        v.integer = int64_t(first.placeholder());
        o = sub->add_option(name, v.integer, help);
        break;
      case kv_option_type::real:
        v.real = float(first.placeholder());
        o = sub->add_option(name, v.real, help);
        break;
      case kv_option_type::flag:
        o = sub->add_flag(name, v.flag, help);
        break;
    }
    if (uniform_default(flag)) o->capture_default_str();
    o->group(g);
  }
}

std::vector<kv_policy_spec> parse_policy_specs(const policy_flags& f) {
  std::vector<kv_policy_spec> out;
  if (f.policies.empty()) {
    if (f.list)
      throw engine_error("--policies: give at least one policy (e.g. " + join(kv_policy_names(), ",") + ")");
    check_given_flags(f, out);
    return out;
  }
  if (!f.list && f.policies.find(',') != std::string::npos)
    throw engine_error("--policy: one policy only (got '" + f.policies + "'); overrides are separated by ':'");
  for (const std::string& item : split(f.policies, ',')) {
    if (item.empty()) throw engine_error("--policies '" + f.policies + "': an empty item (doubled or trailing comma?)");
    out.push_back(parse_item(item, f));
  }
  check_given_flags(f, out);
  // make_kv_policy's range checks on a stand-in shape: a typo fails before the model loads.
  for (const kv_policy_spec& p : out) make_kv_policy(p.name, with_shape(p.options, 2, 4, 2, 128));
  return out;
}

std::vector<kv_policy_spec> apply_kv_budget_flag(const policy_flags& f, const std::vector<kv_policy_spec>& specs,
                                                 const model_config& c, int64_t seq_len) {
  if (f.kv_budget.empty()) return specs;
  const std::vector<kv_budget> budgets = parse_kv_budgets(f.kv_budget);
  const kv_policy_options shape = with_shape({}, c.n_layers, c.n_heads, c.n_kv_heads, c.head_dim);
  std::vector<kv_policy_spec> out;
  for (const kv_policy_spec& p : specs) {
    const kv_policy_desc& d = kv_policy_described(p.name);
    if (!d.spend_budget) {
      out.push_back(p);
      continue;
    }
    for (const kv_budget& b : budgets) {
      kv_policy_spec q = apply_kv_budget(p, b, shape, seq_len);
      const kv_policy_spec before = resolve_kv_spec(p);
      for (const kv_option& o : d.options)
        if (flag_given(f, o.name) && o.get(before) != o.get(q))
          throw usage_error("--" + o.name + ": --kv-budget sets " + p.name + "'s " + o.name +
                            " (drop one of them)");
      q.text = p.text + "@" + b.text;
      out.push_back(std::move(q));
    }
  }
  return out;
}

void check_policy_specs(const std::vector<kv_policy_spec>& specs, const model_config& c) {
  for (const kv_policy_spec& p : specs)
    make_kv_policy(p.name, with_shape(p.options, c.n_layers, c.n_heads, c.n_kv_heads, c.head_dim));
}

json policy_options_json(const kv_policy_spec& p) {
  json j = json::object();
  for (const kv_option_value& v : kv_effective_options(p)) {
    switch (v.type) {
      case kv_option_type::integer: j[v.key] = int64_t(v.value); break;
      case kv_option_type::real: j[v.key] = short_float(float(v.value)); break;
      case kv_option_type::flag: j[v.key] = v.value != 0 ? 1 : 0; break;
    }
  }
  return j;
}

}  // namespace kvarena::cli
