// policy-flags.h: the KV-policy options on the command line, shared by `generate`
// (--policy P), `run` and the policy benchmarks (--policies LIST). Everything here is built
// from the policy registry (engine/kv/kv-policy-registry.h): a flag for every option name
// there (--window, --sinks, --heavy, --recent, --tau, --n-high, ... --no-overlap), typed
// and documented from it, that sets that option of every listed policy that takes it; and
// per-policy overrides in the list: "window:window=2048,freekv:budget=2048:window=512"
// (keys are the flag names without dashes; flag options such as kv-int8 take 0/1).
// Parsing validates early (a typo fails before the model loads): unknown policies and keys
// name the valid ones, and make_kv_policy's range checks run on a stand-in shape.
// An option a policy does not take is a usage_error (cli-commands.h: exit 2), never
// silently ignored: an override key the item's policy does not take ("window:kv-int8=1"),
// and a flag that NO listed policy takes ("--policy window --kv-int8"; "--policies
// window,h2o --page 64"; any policy flag with no --policy, the plain cache). A flag that
// some listed policies take applies to those only ("--policies window,confkv --kv-int8").
// A policy registered before add_policy_flags (register_kv_policy) gets its flags too.
#pragma once
#include <map>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "bench/bench-common.h"
#include "model.h"

namespace kvarena::cli {

// What CLI11 parses one option flag into (the member of the option's type).
struct policy_flag_value {
  int64_t integer = 0;
  float real = 0.f;
  bool flag = false;
};

struct policy_flags {
  std::string policies;  // --policy P (one item) or --policies LIST
  // The option flags, one per option name in the registry (std::map: CLI11 holds pointers
  // into it); a flag given sets that option of every listed policy that takes it.
  std::map<std::string, policy_flag_value> values;
  std::string kv_budget;  // --kv-budget LIST: "512t", "8MiB", "256t,512t,1024t" (kv/kv-budget.h)
  bool list = false;     // registered as --policies (benches)
  const CLI::App* app = nullptr;  // where the flags are registered: which ones were given
};

// Registers --policy (list = false; default "": the plain cache) or --policies (list =
// true; default: every registered policy) and the option flags on `sub`.
void add_policy_flags(CLI::App* sub, policy_flags& f, bool list);

// The items of f.policies with their effective options, in order; throws engine_error for
// an unknown policy, a bad value, or options make_kv_policy refuses, usage_error for an
// option a policy does not take (see the top). With --policy and an empty value: no items.
std::vector<kv_policy_spec> parse_policy_specs(const policy_flags& f);

// With --kv-budget: every item once per budget, its size options spent from it for
// sequences of up to seq_len tokens (kv/kv-budget.h), labelled "TEXT@BUDGET"
// ("window@512t"); `full` once, as given (the reference). Without it: specs unchanged.
// A size flag given together with the budget that the budget would overwrite
// ("--window 300 --kv-budget 512t") is a usage_error. Call once the model is loaded.
std::vector<kv_policy_spec> apply_kv_budget_flag(const policy_flags& f, const std::vector<kv_policy_spec>& specs,
                                                 const model_config& c, int64_t seq_len);

// The policy flags given on the command line ("--kv-int8", ...), in the registry's order.
std::vector<std::string> given_policy_flags(const policy_flags& f);

// make_kv_policy's checks again with the model's real shape (e.g. --kv-int8 needs a head
// size that is a multiple of 32): call once the model is loaded, before any work.
void check_policy_specs(const std::vector<kv_policy_spec>& specs, const model_config& c);

// The effective values of the options that matter to the item's policy, automatic
// defaults resolved (kv_effective_options: e.g. confkv tau 0.6, freekv tau 0.9 and sinks
// 512), keyed by the flag names without dashes: {"window": 512, "sinks": 0}. Integers and
// flags (0/1) as JSON integers, reals with the digits they were given (0.6, not 0.6000000238).
nlohmann::ordered_json policy_options_json(const kv_policy_spec& p);

}  // namespace kvarena::cli
