// kv-policy-registry.h: the one table of KV-cache policies. Per policy: its name, its
// options (the CLI name, type, default, valid range, help, and how an automatic default is
// derived), whether it keeps older tokens in INT8, which option is its confidence
// threshold, and its factory. Everything that lists policies or option names reads it:
// make_kv_policy (kv-policy.h), the CLI's policy flags, --policies parsing and the options
// JSON (cli/policy-flags.cpp), the report's policy order (results/results-report.cpp), the
// benches (bench/bench-common.cpp) and the runtime's INT8 switch (kv-runtime.cpp).
//
// The built-in policies: the list in kv-policy-registry.cpp, one {name, &describe_<policy>}
// line each, every describe function in its policy's file (kv-policy-<policy>.cpp), next to
// the class it builds. A test (or anything else) adds one at run time with
// register_kv_policy. How to add a policy: README.md in this folder.
//
// Placeholders: a field of kv_policy_options whose built-in default means "automatic"
// (tau = -2, sinks = -1) is resolved per policy by resolve_kv_options, and only there.
#pragma once
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "kv-policy.h"

namespace kvarena {

// One policy to run as the user chose it: "freekv:budget=2048:window=512" -> name "freekv"
// and its options (the shape fields stay 0: the session fills them in from the model).
struct kv_policy_spec {
  std::string text;            // as the user wrote it (labels in logs)
  std::string name;            // a registered policy; "" = no policy (the plain cache: full over F32)
  kv_policy_options options;
  bool overlap = true;         // freekv: speculative recall overlapped with compute
};

// What an option holds: int64_t, float, or a bool given as 0/1.
enum class kv_option_type { integer, real, flag };

// One option of one policy. Values pass through get/set as double (exact for all three types).
struct kv_option {
  std::string name;  // as on the CLI without dashes (n-high): flag --NAME, --policies key, JSON key
  kv_option_type type = kv_option_type::integer;
  std::string help;  // one line, without the policy's name
  // Valid range, checked by make_kv_policy after the policy's own check: min <= v <= max
  // (v < max with max_open). Message: "<name> must be >= 1 token (got 0)", "tau must be in
  // [0,1] (got 1.5)" (the name with '_' for '-'; unit singular when the bound is 1).
  double min = -std::numeric_limits<double>::infinity();
  double max = std::numeric_limits<double>::infinity();
  bool max_open = false;
  std::string unit;  // "tokens", or "" for a plain number
  // Automatic default: while the option still holds its built-in default (the placeholder,
  // e.g. tau's -2), resolve_kv_options replaces it by automatic(options): the other options
  // as given and the model shape. Empty: the built-in default is the value.
  std::function<double(const kv_policy_options&)> automatic;
  std::string automatic_help;  // how it is derived, for --help; "" = its value with no model shape
  // A flag option this one means nothing without ("kv-int8"): while that is 0 this one is
  // neither range-checked nor reported.
  std::string only_with;
  std::function<double(const kv_policy_spec&)> get;
  std::function<void(kv_policy_spec&, double)> set;

  // Builders, chained on the option as it is written in a describe function.
  kv_option& at_least(double lo, std::string unit_ = "");
  kv_option& in(double lo, double hi, bool hi_open = false);
  kv_option& automatic_default(std::function<double(const kv_policy_options&)> fn, std::string how = "");
  kv_option& needs(std::string flag_option);

  double placeholder() const;  // the built-in default: get() of a default kv_policy_spec
  // The default as --help shows it: the built-in default, or automatic() without a model shape.
  double default_value() const;
  bool has_range() const;
  std::string range_text() const;  // ">= 1", "in [0,1]", "in [0,1)"; "" without a range
};

// Options over a field of kv_policy_options (its default is the field's default).
kv_option int_option(std::string name, int64_t kv_policy_options::*field, std::string help);
kv_option real_option(std::string name, float kv_policy_options::*field, std::string help);
kv_option flag_option(std::string name, bool kv_policy_options::*field, std::string help);
// An option kv_policy_options has no field for: kept in its `extra` map under the name
// (resolve_kv_options writes the default there, so a policy reads o.extra.at(name)).
kv_option extra_option(std::string name, kv_option_type type, double def, std::string help);
// An option kept elsewhere in the spec (freekv's no-overlap: spec.overlap).
kv_option spec_option(std::string name, kv_option_type type, std::function<double(const kv_policy_spec&)> get,
                      std::function<void(kv_policy_spec&, double)> set, std::string help);

struct kv_policy_desc {
  std::string name;     // filled in by the registry from the list line
  std::string summary;  // one line: what it keeps
  std::vector<kv_option> options;  // in the order they are reported
  bool int8 = false;    // may keep older tokens INT8 (kv_policy_options::int8): the store's INT8 segment
  std::string confidence_option;  // the option holding the confidence threshold its budget gates on; "" none
  // Rules between options (and messages naming several), run before the range checks on
  // resolved options: throw with kv_policy_error. May be empty.
  std::function<void(const std::string& name, const kv_policy_options&)> check;
  // Extra entries of the options JSON (h2o: heavy_recent_fraction); values are numbers.
  std::function<std::vector<std::pair<std::string, double>>(const kv_policy_options&)> report;
  // How the policy spends a budget of `tokens` per layer and KV head at its loosest (its
  // logical peak, kv-budget.h), on sequences of up to seq_len tokens: sets its size
  // options in o (resolved options in, shape filled in). Throws engine_error when `tokens`
  // is too small for the policy. Empty: the policy takes no budget (full, the reference).
  std::function<void(kv_policy_options& o, int64_t tokens, int64_t seq_len)> spend_budget;
  // Builds the policy from resolved, validated options (shape filled in).
  std::function<std::unique_ptr<kv_policy>(const kv_policy_options&)> make;

  const kv_option* option(const std::string& name) const;  // nullptr when it takes no such option
};

using kv_policy_describe_fn = kv_policy_desc (*)();

// Adds a policy after those registered so far (the built-ins first). Throws engine_error
// for a name already taken, a describe without make, or an option whose type differs from
// another policy's option of the same name (they share one CLI flag). Call it before the
// policy is used (e.g. before the CLI builds its flags); registration is not thread-safe.
void register_kv_policy(const std::string& name, kv_policy_describe_fn describe);

// Every policy, in registration order (the built-ins: full, window, h2o, confkv,
// confkv-l, freekv). The pointers stay valid for the life of the program.
std::vector<const kv_policy_desc*> kv_policies();
std::vector<std::string> kv_policy_names();
const kv_policy_desc* find_kv_policy(const std::string& name);  // nullptr when unknown
// Throws engine_error "unknown policy 'NAME' (valid: full, window, ...)" when unknown.
const kv_policy_desc& kv_policy_described(const std::string& name);
bool kv_policy_supports_int8(const std::string& name);  // false for "" and unknown names

// THE placeholder resolution: every option of the policy that still holds its placeholder
// gets its automatic value (confkv tau 0.6, freekv tau 0.9 and sinks 512, window sinks 0),
// and every extra option its value. Unknown policy: throws (as kv_policy_described).
kv_policy_options resolve_kv_options(const std::string& policy, kv_policy_options o);
kv_policy_spec resolve_kv_spec(kv_policy_spec p);

// One entry of the effective options: an option (resolved; skipped while its only_with flag
// is 0) or one of the policy's extra report entries (type real).
struct kv_option_value {
  std::string key;
  kv_option_type type = kv_option_type::real;
  double value = 0;
};
// The effective values of the options that matter to p's policy, in the registry's order.
std::vector<kv_option_value> kv_effective_options(const kv_policy_spec& p);

// Sets option `opt` of p from text: integers, finite numbers, 0/1 for flags. Throws
// engine_error "WHERE: KEY=TEXT is not an integer" (/ "is not a number" / "must be 0 or 1").
void set_kv_option_text(kv_policy_spec& p, const kv_option& opt, const std::string& where, const std::string& text);

// The error of a bad option: engine_error "kv policy 'POLICY': WHAT".
[[noreturn]] void kv_policy_error(const std::string& policy, const std::string& what);
std::string kv_num(double x);  // %g, as option values appear in messages

}  // namespace kvarena
