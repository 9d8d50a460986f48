// policy-flags.cpp: --policy/--policies, the option flags, per-item overrides and the
// effective-options JSON (policy-flags.h).
#include "policy-flags.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>

#include "cli-commands.h"
#include "engine-error.h"
#include "kv/kv-policy.h"

namespace kvarena::cli {

namespace {

using json = nlohmann::ordered_json;

const char* const kDefaultList = "full,window,h2o,confkv,confkv-l,freekv";

// The option keys each policy reads, in the order they are reported: the one table that
// --policies overrides, the flags-given check and policy_options_json read. What the policy
// code reads of kv_policy_options: window window/sinks (kv-policy-window.cpp), h2o
// heavy/recent, confkv and confkv-l tau .. int8/int8_window (kv-policy-confkv.cpp; the
// store's INT8 segment is theirs only, kv-runtime.cpp), freekv budget/sinks/window/page/tau/
// dense_layer0 and the runtime's overlap; full reads none. Every key is a flag "--KEY".
const std::vector<std::pair<std::string, std::vector<std::string>>>& policy_keys() {
  static const std::vector<std::pair<std::string, std::vector<std::string>>> k = {
      {"full", {}},
      {"window", {"window", "sinks"}},
      {"h2o", {"heavy", "recent"}},
      {"confkv", {"tau", "n-high", "n-low", "protect", "ema-decay", "beta", "kv-int8", "int8-window"}},
      {"confkv-l", {"tau", "n-high", "n-low", "protect", "ema-decay", "beta", "kv-int8", "int8-window"}},
      {"freekv", {"budget", "sinks", "window", "page", "tau", "dense-layer0", "no-overlap"}},
  };
  return k;
}

const std::vector<std::string>* keys_of(const std::string& policy) {
  for (const auto& [name, keys] : policy_keys())
    if (name == policy) return &keys;
  return nullptr;
}

std::string join(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : ", ") + x;
  return s;
}

// A float as JSON with the digits it was given (0.6f -> 0.6, not 0.6000000238...).
double short_float(float x) {
  char s[32];
  std::snprintf(s, sizeof s, "%g", double(x));
  return std::strtod(s, nullptr);
}

int64_t parse_int(const std::string& where, const std::string& key, const std::string& v) {
  int64_t x = 0;
  const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), x);
  if (ec != std::errc() || end != v.data() + v.size() || v.empty())
    throw engine_error(where + ": " + key + "=" + v + " is not an integer");
  return x;
}

float parse_float(const std::string& where, const std::string& key, const std::string& v) {
  char* end = nullptr;
  const float x = std::strtof(v.c_str(), &end);
  if (v.empty() || end != v.c_str() + v.size() || !std::isfinite(x))
    throw engine_error(where + ": " + key + "=" + v + " is not a number");
  return x;
}

bool parse_bool(const std::string& where, const std::string& key, const std::string& v) {
  if (v == "1") return true;
  if (v == "0") return false;
  throw engine_error(where + ": " + key + "=" + v + " must be 0 or 1");
}

// Sets option `key` of spec from text (the key is known to be one of the policy's).
void set_key(kv_policy_spec& p, const std::string& where, const std::string& key, const std::string& v) {
  kv_policy_options& o = p.options;
  if (key == "window") o.window = parse_int(where, key, v);
  else if (key == "sinks") o.sinks = parse_int(where, key, v);
  else if (key == "heavy") o.heavy = parse_int(where, key, v);
  else if (key == "recent") o.recent = parse_int(where, key, v);
  else if (key == "tau") o.tau = parse_float(where, key, v);
  else if (key == "n-high") o.n_high = parse_int(where, key, v);
  else if (key == "n-low") o.n_low = parse_int(where, key, v);
  else if (key == "protect") o.protect = parse_int(where, key, v);
  else if (key == "ema-decay") o.ema_decay = parse_float(where, key, v);
  else if (key == "beta") o.beta = parse_float(where, key, v);
  else if (key == "kv-int8") o.int8 = parse_bool(where, key, v);
  else if (key == "int8-window") o.int8_window = parse_int(where, key, v);
  else if (key == "budget") o.budget = parse_int(where, key, v);
  else if (key == "page") o.page = parse_int(where, key, v);
  else if (key == "dense-layer0") o.dense_layer0 = parse_bool(where, key, v);
  else if (key == "no-overlap") p.overlap = !parse_bool(where, key, v);
  else KV_ASSERT(false && "a key in policy_keys() without a setter");
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

kv_policy_spec parse_item(const std::string& text, const policy_flags& f) {
  const std::vector<std::string> parts = split(text, ':');
  kv_policy_spec p;
  p.text = text;
  p.name = parts[0];
  p.options = f.kv;
  p.overlap = !f.no_overlap;
  const std::vector<std::string>* keys = keys_of(p.name);
  if (!keys) make_kv_policy(p.name, with_shape(p.options, 1, 1, 1, 128));  // throws: unknown policy, lists the valid
  KV_ASSERT(keys != nullptr);
  const std::string where = "policy '" + text + "'";
  for (size_t i = 1; i < parts.size(); ++i) {
    const size_t eq = parts[i].find('=');
    if (eq == std::string::npos || eq == 0)
      throw engine_error(where + ": '" + parts[i] + "' is not key=value (e.g. " + p.name + ":" +
                         (keys->empty() ? std::string("...") : (*keys)[0] + "=...") + ")");
    const std::string key = parts[i].substr(0, eq), value = parts[i].substr(eq + 1);
    bool known = false;
    for (const auto& k : *keys) known |= k == key;
    if (!known)
      throw usage_error(where + ": unknown option '" + key + "' for " + p.name + " (valid: " +
                        (keys->empty() ? std::string("none, full takes no options") : join(*keys)) + ")");
    set_key(p, where, key, value);
  }
  return p;
}

bool takes(const std::string& policy, const std::string& key) {
  const std::vector<std::string>* keys = keys_of(policy);
  return keys && std::find(keys->begin(), keys->end(), key) != keys->end();
}

// Every key of the table once, in table order.
std::vector<std::string> all_keys() {
  std::vector<std::string> out;
  for (const auto& [name, keys] : policy_keys())
    for (const std::string& k : keys)
      if (std::find(out.begin(), out.end(), k) == out.end()) out.push_back(k);
  return out;
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
    for (const auto& [name, keys] : policy_keys())
      if (takes(name, key)) owners.push_back(name);
    if (names.empty())
      throw usage_error(flag + ": no --policy given, and the plain cache has no such option (it is an option of " +
                        join(owners) + ")");
    if (names.size() == 1) {
      const std::vector<std::string>& keys = *keys_of(names[0]);
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
  for (const std::string& k : all_keys()) {
    const CLI::Option* o = f.app->get_option_no_throw("--" + k);
    KV_ASSERT(o != nullptr && "a key in policy_keys() without its flag in add_policy_flags");
    if (o->count() > 0) out.push_back("--" + k);
  }
  return out;
}

void add_policy_flags(CLI::App* sub, policy_flags& f, bool list) {
  f.list = list;
  f.app = sub;
  const char* g = "KV policy";
  if (list) {
    f.policies = kDefaultList;
    sub->add_option("--policies", f.policies,
                    "Policies to run, comma-separated, each with optional overrides: "
                    "window:window=2048,freekv:budget=2048:window=512")
        ->capture_default_str()->group(g);
  } else {
    sub->add_option("--policy", f.policies,
                    "KV-cache policy: full|window|h2o|confkv|confkv-l|freekv, with optional overrides "
                    "(freekv:budget=2048:window=512); default: the plain F32 cache")
        ->group(g);
  }
  kv_policy_options& o = f.kv;
  sub->add_option("--window", o.window, "window: recent tokens kept; freekv: recent window W")
      ->capture_default_str()->group(g);
  sub->add_option("--sinks", o.sinks, "Attention-sink tokens kept (default: window 0, freekv 512)")->group(g);
  sub->add_option("--heavy", o.heavy, "h2o: heavy-hitter tokens (0 with --recent 0: 10% of the sequence)")
      ->capture_default_str()->group(g);
  sub->add_option("--recent", o.recent, "h2o: recent tokens (0 with --heavy 0: 10% of the sequence)")
      ->capture_default_str()->group(g);
  sub->add_option("--tau", o.tau, "confkv: confidence threshold (default 0.6); freekv: correction cosine (default 0.9)")
      ->group(g);
  sub->add_option("--n-high", o.n_high, "confkv: budget when confident (tokens per layer)")
      ->capture_default_str()->group(g);
  sub->add_option("--n-low", o.n_low, "confkv: budget when unsure (tokens per layer)")->capture_default_str()->group(g);
  sub->add_option("--protect", o.protect, "confkv: protected recent tokens")->capture_default_str()->group(g);
  sub->add_option("--ema-decay", o.ema_decay, "confkv: decay of the attention-mass EMA")
      ->capture_default_str()->group(g);
  sub->add_option("--beta", o.beta, "confkv: weight of recency in the rank")->capture_default_str()->group(g);
  sub->add_flag("--kv-int8", o.int8, "confkv: older tokens in INT8, the --int8-window newest FP16")->group(g);
  sub->add_option("--int8-window", o.int8_window, "confkv --kv-int8: newest tokens kept FP16")
      ->capture_default_str()->group(g);
  sub->add_option("--budget", o.budget, "freekv: device tokens per layer")->capture_default_str()->group(g);
  sub->add_option("--page", o.page, "freekv: tokens per page")->capture_default_str()->group(g);
  sub->add_flag("--dense-layer0", o.dense_layer0, "freekv: layer 0 keeps its whole cache on the device")->group(g);
  sub->add_flag("--no-overlap", f.no_overlap, "freekv: recall pages synchronously (no speculative overlap)")
      ->group(g);
}

std::vector<kv_policy_spec> parse_policy_specs(const policy_flags& f) {
  std::vector<kv_policy_spec> out;
  if (f.policies.empty()) {
    if (f.list) throw engine_error("--policies: give at least one policy (e.g. " + std::string(kDefaultList) + ")");
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

void check_policy_specs(const std::vector<kv_policy_spec>& specs, const model_config& c) {
  for (const kv_policy_spec& p : specs)
    make_kv_policy(p.name, with_shape(p.options, c.n_layers, c.n_heads, c.n_kv_heads, c.head_dim));
}

json policy_options_json(const kv_policy_spec& p) {
  json j = json::object();
  const std::vector<std::string>* keys = keys_of(p.name);
  if (!keys) return j;
  const kv_policy_options& o = p.options;
  for (const std::string& k : *keys) {
    if (k == "window") j[k] = o.window;
    else if (k == "sinks") j[k] = o.sinks >= 0 ? o.sinks : (p.name == "freekv" ? 512 : 0);
    else if (k == "heavy") j[k] = o.heavy;
    else if (k == "recent") j[k] = o.recent;
    else if (k == "tau") j[k] = short_float(o.tau != -2.f ? o.tau : (p.name == "freekv" ? 0.9f : 0.6f));
    else if (k == "n-high") j[k] = o.n_high;
    else if (k == "n-low") j[k] = o.n_low;
    else if (k == "protect") j[k] = o.protect;
    else if (k == "ema-decay") j[k] = short_float(o.ema_decay);
    else if (k == "beta") j[k] = short_float(o.beta);
    else if (k == "kv-int8") j[k] = o.int8 ? 1 : 0;
    else if (k == "int8-window") { if (o.int8) j[k] = o.int8_window; }
    else if (k == "budget") j[k] = o.budget;
    else if (k == "page") j[k] = o.page;
    else if (k == "dense-layer0") j[k] = o.dense_layer0 ? 1 : 0;
    else if (k == "no-overlap") j[k] = p.overlap ? 0 : 1;
  }
  // h2o without sizes keeps 10% of the sequence as heavy hitters and 10% as recent.
  if (p.name == "h2o" && o.heavy == 0 && o.recent == 0) j["heavy_recent_fraction"] = 0.1;
  return j;
}

}  // namespace kvarena::cli
