// policy-flags.h: the KV-policy options on the command line, shared by `generate`
// (--policy P) and the policy benchmarks (--policies LIST): a flag for every
// kv_policy_options field (--window, --sinks, --heavy, --recent, --tau, --n-high, --n-low,
// --protect, --ema-decay, --beta, --kv-int8, --int8-window, --budget, --page,
// --dense-layer0, --no-overlap) that applies to every policy, and per-policy overrides in
// the list: "window:window=2048,freekv:budget=2048:window=512" (keys are the flag names
// without dashes; kv-int8, dense-layer0 and no-overlap take 0/1).
// Parsing validates early (a typo fails before the model loads): unknown policies and keys
// name the valid ones, and make_kv_policy's range checks run on a stand-in shape.
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
};

// Registers --policy (list = false; default "": the plain cache) or --policies (list =
// true; default "full,window,h2o,confkv,confkv-l,freekv") and the option flags on `sub`.
void add_policy_flags(CLI::App* sub, policy_flags& f, bool list);

// The items of f.policies with their effective options, in order; throws engine_error for
// an unknown policy or key, a bad value, or options make_kv_policy refuses. With --policy
// and an empty value: no items.
std::vector<kv_policy_spec> parse_policy_specs(const policy_flags& f);

// make_kv_policy's checks again with the model's real shape (e.g. --kv-int8 needs a head
// size that is a multiple of 32): call once the model is loaded, before any work.
void check_policy_specs(const std::vector<kv_policy_spec>& specs, const model_config& c);

// The effective values of the options that matter to the item's policy, defaults
// resolved (e.g. confkv tau 0.6, freekv tau 0.9 and sinks 512), keyed by the flag names
// without dashes: {"window": 512, "sinks": 0}.
nlohmann::ordered_json policy_options_json(const kv_policy_spec& p);

}  // namespace kvarena::cli
