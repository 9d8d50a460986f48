// kv-policy-registry.cpp: the list of built-in policies, registration, make_kv_policy and
// the option machinery: automatic defaults, range checks, values from text, effective
// values (kv-policy-registry.h).
#include "kv-policy-registry.h"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <deque>

#include "engine-error.h"

namespace kvarena {

// The built-in policies, in report order: one line each in the list below; each describe
// function is in its policy's file (kv-policy-<policy>.cpp).
kv_policy_desc describe_full(), describe_window(), describe_h2o(), describe_confkv(), describe_confkv_l(),
    describe_freekv();

namespace {

struct kv_policy_entry {
  const char* name;
  kv_policy_describe_fn describe;
};

const kv_policy_entry k_builtin_policies[] = {
    {"full", &describe_full},
    {"window", &describe_window},
    {"h2o", &describe_h2o},
    {"confkv", &describe_confkv},
    {"confkv-l", &describe_confkv_l},
    {"freekv", &describe_freekv},
};

// The option's name as messages spell it: "ema_decay", "int8_window".
std::string message_name(const std::string& option) {
  std::string s = option;
  for (char& c : s)
    if (c == '-') c = '_';
  return s;
}

std::string join(const std::vector<std::string>& v) {
  std::string s;
  for (const std::string& x : v) s += (s.empty() ? "" : ", ") + x;
  return s;
}

[[noreturn]] void bad_registration(const std::string& name, const std::string& what) {
  throw engine_error("register_kv_policy '" + name + "': " + what);
}

// Checks d (named `name`) against the policies in t and appends it. Deque: the addresses
// of the descriptions already handed out stay valid.
void add_policy(std::deque<kv_policy_desc>& t, const std::string& name, kv_policy_describe_fn describe) {
  if (name.empty() || name.find_first_of(",:= ") != std::string::npos)
    bad_registration(name, "a policy name must be non-empty without ',', ':', '=' or spaces");
  for (const kv_policy_desc& other : t)
    if (other.name == name) bad_registration(name, "the name is taken");
  kv_policy_desc d = describe();
  d.name = name;
  if (!d.make) bad_registration(name, "the description has no factory (make)");
  for (size_t i = 0; i < d.options.size(); ++i) {
    const kv_option& o = d.options[i];
    if (o.name.empty() || o.name.find_first_of(",:= ") != std::string::npos || o.name[0] == '-')
      bad_registration(name, "option '" + o.name + "': names are flag names without dashes (no ',', ':', '=')");
    if (!o.get || !o.set) bad_registration(name, "option '" + o.name + "' has no get/set");
    for (size_t j = 0; j < i; ++j)
      if (d.options[j].name == o.name) bad_registration(name, "option '" + o.name + "' listed twice");
    if (!o.only_with.empty()) {
      const kv_option* w = d.option(o.only_with);
      if (!w || w->type != kv_option_type::flag)
        bad_registration(name, "option '" + o.name + "': only_with '" + o.only_with +
                                   "' is not a flag option of the policy");
    }
    for (const kv_policy_desc& other : t)
      if (const kv_option* same = other.option(o.name); same && same->type != o.type)
        bad_registration(name, "option '" + o.name + "' has another type than " + other.name +
                                   "'s (policies share the flag --" + o.name + ")");
  }
  if (!d.confidence_option.empty() && !d.option(d.confidence_option))
    bad_registration(name, "confidence_option '" + d.confidence_option + "' is not one of its options");
  t.push_back(std::move(d));
}

std::deque<kv_policy_desc>& table() {
  static std::deque<kv_policy_desc> t = [] {
    std::deque<kv_policy_desc> d;
    for (const kv_policy_entry& e : k_builtin_policies) add_policy(d, e.name, e.describe);
    return d;
  }();
  return t;
}

// Whether the option is switched off by its only_with flag in r.
bool dormant(const kv_policy_desc& d, const kv_option& o, const kv_policy_spec& r) {
  if (o.only_with.empty()) return false;
  const kv_option* w = d.option(o.only_with);
  return w && w->get(r) == 0;
}

void check_range(const std::string& policy, const kv_option& o, double v) {
  const bool low = !(v >= o.min);
  const bool high = o.max_open ? !(v < o.max) : !(v <= o.max);
  if (!low && !high) return;
  std::string what = message_name(o.name) + " must be ";
  const bool has_min = std::isfinite(o.min), has_max = std::isfinite(o.max);
  if (has_min && has_max) {
    what += "in [" + kv_num(o.min) + "," + kv_num(o.max) + (o.max_open ? ")" : "]");
  } else {
    const double bound = has_min ? o.min : o.max;
    what += std::string(has_min ? ">= " : (o.max_open ? "< " : "<= ")) + kv_num(bound);
    if (!o.unit.empty()) {
      std::string unit = o.unit;
      if (bound == 1 && unit.size() > 1 && unit.back() == 's') unit.pop_back();  // "1 token"
      what += " " + unit;
    }
  }
  kv_policy_error(policy, what + " (got " + kv_num(v) + ")");
}

}  // namespace

// --- kv_option ---

kv_option& kv_option::at_least(double lo, std::string unit_) {
  min = lo;
  unit = std::move(unit_);
  return *this;
}

kv_option& kv_option::in(double lo, double hi, bool hi_open) {
  min = lo, max = hi, max_open = hi_open;
  return *this;
}

kv_option& kv_option::automatic_default(std::function<double(const kv_policy_options&)> fn, std::string how) {
  automatic = std::move(fn);
  automatic_help = std::move(how);
  return *this;
}

kv_option& kv_option::needs(std::string flag_option) {
  only_with = std::move(flag_option);
  return *this;
}

double kv_option::placeholder() const { return get(kv_policy_spec{}); }

double kv_option::default_value() const { return automatic ? automatic(kv_policy_options{}) : placeholder(); }

bool kv_option::has_range() const { return std::isfinite(min) || std::isfinite(max); }

std::string kv_option::range_text() const {
  const bool has_min = std::isfinite(min), has_max = std::isfinite(max);
  if (has_min && has_max) return "in [" + kv_num(min) + "," + kv_num(max) + (max_open ? ")" : "]");
  if (has_min) return ">= " + kv_num(min);
  if (has_max) return (max_open ? "< " : "<= ") + kv_num(max);
  return "";
}

kv_option int_option(std::string name, int64_t kv_policy_options::*field, std::string help) {
  return spec_option(
      std::move(name), kv_option_type::integer, [field](const kv_policy_spec& p) { return double(p.options.*field); },
      [field](kv_policy_spec& p, double v) { p.options.*field = int64_t(v); }, std::move(help));
}

kv_option real_option(std::string name, float kv_policy_options::*field, std::string help) {
  return spec_option(
      std::move(name), kv_option_type::real, [field](const kv_policy_spec& p) { return double(p.options.*field); },
      [field](kv_policy_spec& p, double v) { p.options.*field = float(v); }, std::move(help));
}

kv_option flag_option(std::string name, bool kv_policy_options::*field, std::string help) {
  return spec_option(
      std::move(name), kv_option_type::flag, [field](const kv_policy_spec& p) { return p.options.*field ? 1.0 : 0.0; },
      [field](kv_policy_spec& p, double v) { p.options.*field = v != 0; }, std::move(help));
}

kv_option extra_option(std::string name, kv_option_type type, double def, std::string help) {
  auto get = [name, def](const kv_policy_spec& p) {
    const auto it = p.options.extra.find(name);
    return it == p.options.extra.end() ? def : it->second;
  };
  auto set = [name, type](kv_policy_spec& p, double v) {
    p.options.extra[name] = type == kv_option_type::integer ? std::trunc(v)
                            : type == kv_option_type::flag  ? (v != 0 ? 1.0 : 0.0)
                                                            : double(float(v));
  };
  return spec_option(std::move(name), type, get, set, std::move(help));
}

kv_option spec_option(std::string name, kv_option_type type, std::function<double(const kv_policy_spec&)> get,
                      std::function<void(kv_policy_spec&, double)> set, std::string help) {
  kv_option o;
  o.name = std::move(name);
  o.type = type;
  o.help = std::move(help);
  o.get = std::move(get);
  o.set = std::move(set);
  return o;
}

const kv_option* kv_policy_desc::option(const std::string& key) const {
  for (const kv_option& o : options)
    if (o.name == key) return &o;
  return nullptr;
}

// --- the table ---

void register_kv_policy(const std::string& name, kv_policy_describe_fn describe) {
  add_policy(table(), name, describe);
}

std::vector<const kv_policy_desc*> kv_policies() {
  std::vector<const kv_policy_desc*> out;
  for (const kv_policy_desc& d : table()) out.push_back(&d);
  return out;
}

std::vector<std::string> kv_policy_names() {
  std::vector<std::string> out;
  for (const kv_policy_desc& d : table()) out.push_back(d.name);
  return out;
}

const kv_policy_desc* find_kv_policy(const std::string& name) {
  for (const kv_policy_desc& d : table())
    if (d.name == name) return &d;
  return nullptr;
}

const kv_policy_desc& kv_policy_described(const std::string& name) {
  if (const kv_policy_desc* d = find_kv_policy(name)) return *d;
  throw engine_error("unknown policy '" + name + "' (valid: " + join(kv_policy_names()) + ")");
}

bool kv_policy_supports_int8(const std::string& name) {
  const kv_policy_desc* d = find_kv_policy(name);
  return d && d->int8;
}

// --- options ---

kv_policy_spec resolve_kv_spec(kv_policy_spec p) {
  const kv_policy_desc& d = kv_policy_described(p.name);
  for (const kv_option& o : d.options) {
    double v = o.get(p);
    if (o.automatic && v == o.placeholder()) v = o.automatic(p.options);
    o.set(p, v);  // also writes the default of an extra option
  }
  return p;
}

kv_policy_options resolve_kv_options(const std::string& policy, kv_policy_options o) {
  kv_policy_spec p;
  p.name = policy;
  p.options = std::move(o);
  return resolve_kv_spec(std::move(p)).options;
}

std::vector<kv_option_value> kv_effective_options(const kv_policy_spec& p) {
  std::vector<kv_option_value> out;
  const kv_policy_desc* d = find_kv_policy(p.name);
  if (!d) return out;
  const kv_policy_spec r = resolve_kv_spec(p);
  for (const kv_option& o : d->options)
    if (!dormant(*d, o, r)) out.push_back({o.name, o.type, o.get(r)});
  if (d->report)
    for (const auto& [key, value] : d->report(r.options)) out.push_back({key, kv_option_type::real, value});
  return out;
}

void set_kv_option_text(kv_policy_spec& p, const kv_option& opt, const std::string& where, const std::string& v) {
  const std::string& key = opt.name;
  switch (opt.type) {
    case kv_option_type::integer: {
      int64_t x = 0;
      const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), x);
      if (ec != std::errc() || end != v.data() + v.size() || v.empty())
        throw engine_error(where + ": " + key + "=" + v + " is not an integer");
      opt.set(p, double(x));
      return;
    }
    case kv_option_type::real: {
      char* end = nullptr;
      const float x = std::strtof(v.c_str(), &end);
      if (v.empty() || end != v.c_str() + v.size() || !std::isfinite(x))
        throw engine_error(where + ": " + key + "=" + v + " is not a number");
      opt.set(p, double(x));
      return;
    }
    case kv_option_type::flag:
      if (v != "0" && v != "1") throw engine_error(where + ": " + key + "=" + v + " must be 0 or 1");
      opt.set(p, v == "1" ? 1.0 : 0.0);
      return;
  }
}

void kv_policy_error(const std::string& policy, const std::string& what) {
  throw engine_error("kv policy '" + policy + "': " + what);
}

std::string kv_num(double x) {
  char s[32];
  std::snprintf(s, sizeof s, "%g", x);
  return s;
}

std::unique_ptr<kv_policy> make_kv_policy(const std::string& name, const kv_policy_options& o) {
  const kv_policy_desc& d = kv_policy_described(name);
  if (o.n_layers <= 0 || o.n_heads <= 0 || o.n_kv_heads <= 0 || o.head_dim <= 0 || o.n_heads % o.n_kv_heads != 0)
    kv_policy_error(name, "model shape missing or inconsistent (n_layers, n_heads, n_kv_heads, head_dim must be > 0, "
                          "n_heads a multiple of n_kv_heads)");
  kv_policy_spec r;
  r.name = name;
  r.options = o;
  r = resolve_kv_spec(std::move(r));
  if (d.check) d.check(name, r.options);
  for (const kv_option& opt : d.options)
    if (!dormant(d, opt, r)) check_range(name, opt, opt.get(r));
  return d.make(r.options);
}

}  // namespace kvarena
