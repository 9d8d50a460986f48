// early-stop.cpp: see early-stop.h.
#include "eval/early-stop.h"

namespace kvarena {

early_stop_decision early_stop_rules::check() const {
  const int n = steps();
  if (cfg_.max_steps > 0 && n >= cfg_.max_steps)
    return {true, "Reach max steps " + std::to_string(cfg_.max_steps)};

  const int kp = cfg_.parse_failures;
  if (kp > 0 && n >= kp) {
    bool all_none = true;
    for (int i = n - kp; i < n; ++i) all_none = all_none && actions_[i].kind == action_kind::none;
    if (all_none) return {true, "Failed to parse actions for " + std::to_string(kp) + " times"};
  }

  const int kr = cfg_.repeated_actions;
  if (kr <= 0 || n == 0) return {};
  const action& last = actions_.back();
  if (last.kind != action_kind::type) {
    if (n < kr) return {};
    for (int i = n - kr; i < n; ++i)
      if (!same_action(actions_[i], last)) return {};
    return {true, "Same action for " + std::to_string(kr) + " times"};
  }
  int same = 0;
  for (const action& a : actions_) same += same_action(a, last) ? 1 : 0;
  if (same >= kr) return {true, "Same typing action for " + std::to_string(kr) + " times"};
  return {};
}

std::string early_stop_answer(const std::string& reason) { return "Early stop: " + reason; }

}  // namespace kvarena
