// prompt.h: what the agent tells the model (specs/web-envs.md §5, VWA's chain-of-thought,
// id-based prompt): the system text (role, what an observation holds, the actions grouped
// as VWA groups them with their forms taken from action_grammar_help(), the rules, ending
// with "In summary, the next action I will perform is ```...```"), the worked examples as
// user/assistant turns, and the per-step user message
//   OBSERVATION:\n{obs}\nURL: {url}\nOBJECTIVE: {intent}\nPREVIOUS ACTION: {prev}
// Messages only: the chat format is chat-template.h's, the token budget obs-truncate.h's.
#pragma once
#include <string>
#include <string_view>
#include <vector>

#include "chat-template.h"

namespace kvarena {

std::string system_prompt();

struct step_view {
  std::string_view observation;      // already cut to the token budget
  std::string_view url;
  std::string_view objective;        // the task's intent
  std::string_view previous_action;  // "None" at the first step (previous_action_text())
};
std::string step_message(const step_view& s);

// The system message, then n_examples worked examples (0..3) as user/assistant pairs.
// std::invalid_argument when n_examples is out of range.
std::vector<chat_message> prompt_prefix(int n_examples);

}  // namespace kvarena
