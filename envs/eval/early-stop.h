// early-stop.h: VWA's early-stop rules (specs/web-envs.md §3), checked before each model
// call. Feed every step's action (a parse failure is recorded as action_kind::none) and
// ask check(); when it says stop, the episode ends with the answer
// early_stop_answer(reason) and is still evaluated (evaluator.h).
// Rules, in VWA's order, with VWA's reason texts:
//   steps >= max_steps                          "Reach max steps 30"
//   the last `parse_failures` actions are none  "Failed to parse actions for 3 times"
//   the last `repeated_actions` actions are the same as the last one (not a type action)
//                                                "Same action for 5 times"
//   the last action is a type action and `repeated_actions` type actions anywhere in the
//   episode are the same as it (VWA compares type actions by element id only)
//                                                "Same typing action for 5 times"
// "Same" is same_action() (action-parse.h). A threshold <= 0 turns its rule off.
#pragma once
#include <string>
#include <vector>

#include "eval/action-parse.h"

namespace kvarena {

struct early_stop_config {
  int max_steps = 30;        // VWA --max_steps
  int parse_failures = 3;    // VWA --parsing_failure_th
  int repeated_actions = 5;  // VWA --repeating_action_failure_th (WA uses 3)
};

struct early_stop_decision {
  bool stop = false;
  std::string reason;  // "" when not stopping
};

class early_stop_rules {
 public:
  explicit early_stop_rules(early_stop_config cfg = {}) : cfg_(cfg) {}

  void record(const action& a) { actions_.push_back(a); }
  // A parse result: its action is kind none when parsing failed.
  void record(const action_parse_result& r) { actions_.push_back(r.act); }

  early_stop_decision check() const;

  int steps() const { return static_cast<int>(actions_.size()); }
  const early_stop_config& config() const { return cfg_; }
  void reset() { actions_.clear(); }

 private:
  early_stop_config cfg_;
  std::vector<action> actions_;  // one per step, in order
};

// "Early stop: <reason>", the answer an early-stopped episode is evaluated with.
std::string early_stop_answer(const std::string& reason);

}  // namespace kvarena
