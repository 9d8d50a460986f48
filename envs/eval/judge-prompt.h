// judge-prompt.h: the two questions VisualWebArena puts to its LLM judge (helper
// functions llm_fuzzy_match and llm_ua_match), in kvarena's own words, as chat messages.
// Every model-backed judge (judge-openai.h over HTTP, agent/judge-engine.h on the
// embedded engine) sends these, and its reply is read by judge_verdict() (eval-judge.h):
//   fuzzy_match:  is the prediction semantically the reference answer to the intent?
//                 reply "correct", "incorrect" or "partially correct" ("N/A" = not
//                 achievable)
//   unachievable: does the reported reason for failing agree with the actual reason the
//                 task cannot be done? reply "same" or "different"
#pragma once
#include <string>
#include <vector>

#include "eval/eval-judge.h"

namespace kvarena {

struct judge_message {
  std::string role;  // "system" or "user"
  std::string content;
};

std::vector<judge_message> judge_messages(const judge_request& req);

}  // namespace kvarena
