// policy-flags.h: the KV-policy options on the command line, shared by `generate`
// (--policy P), `run` and the policy benchmarks (--policies LIST): a flag for every
// kv_policy_options field (--window, --sinks, --heavy, --recent, --tau, --n-high, --n-low,
// --protect, --ema-decay, --beta, --kv-int8, --int8-window, --budget, --page,
// --dense-layer0, --no-overlap) that sets the default of every listed policy that takes it,
// and per-policy overrides in the list: "window:window=2048,freekv:budget=2048:window=512"
// (keys are the flag names without dashes; kv-int8, dense-layer0 and no-overlap take 0/1).
// Which policy takes which option is one table (policy-flags.cpp, policy_keys()).
// Parsing validates early (a typo fails before the model loads): unknown policies and keys
// name the valid ones, and make_kv_policy's range checks run on a stand-in shape.
// An option a policy does not take is a usage_error (cli-commands.h: exit 2), never
// silently ignored: an override key the item's policy does not take ("window:kv-int8=1"),
// and a flag that NO listed policy takes ("--policy window --kv-int8"; "--policies
// window,h2o --page 64"; any policy flag with no --policy, the plain cache). A flag that
// some listed policies take applies to those only ("--policies window,confkv --kv-int8").
#pragma once
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "bench/bench-common.h"
#include "model.h"

namespace kvarena::cli {

struct policy_flags {
  std::string policies;  // --policy P (one item) or --policies LIST
  kv_policy_options kv;  // the flags: defaults for every item
  bool no_overlap = false;
  bool list = false;     // registered as --policies (benches)
  const CLI::App* app = nullptr;  // where the flags are registered: which ones were given
};

// Registers --policy (list = false; default "": the plain cache) or --policies (list =
// true; default "full,window,h2o,confkv,confkv-l,freekv") and the option flags on `sub`.
void add_policy_flags(CLI::App* sub, policy_flags& f, bool list);

// The items of f.policies with their effective options, in order; throws engine_error for
// an unknown policy, a bad value, or options make_kv_policy refuses, usage_error for an
// option a policy does not take (see the top). With --policy and an empty value: no items.
std::vector<kv_policy_spec> parse_policy_specs(const policy_flags& f);

// The policy flags given on the command line ("--kv-int8", ...), in policy_keys() order.
std::vector<std::string> given_policy_flags(const policy_flags& f);

// make_kv_policy's checks again with the model's real shape (e.g. --kv-int8 needs a head
// size that is a multiple of 32): call once the model is loaded, before any work.
void check_policy_specs(const std::vector<kv_policy_spec>& specs, const model_config& c);

// The effective values of the options that matter to the item's policy, defaults
// resolved (e.g. confkv tau 0.6, freekv tau 0.9 and sinks 512), keyed by the flag names
// without dashes: {"window": 512, "sinks": 0}.
nlohmann::ordered_json policy_options_json(const kv_policy_spec& p);

}  // namespace kvarena::cli
