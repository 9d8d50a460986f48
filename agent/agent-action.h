// agent-action.h: from a model's reply to the step the env receives, and back to the
// "PREVIOUS ACTION" line of the next prompt (specs/web-envs.md §3). The grammar itself is
// envs/eval/action-parse.h's; this file decides what text goes to the env so the server
// parses exactly what the agent parsed (a reply the agent could not parse is a parse
// failure on the server too, recorded as a NONE step that counts towards the early-stop
// rules), and how failures are told to the model.
#pragma once
#include <optional>
#include <string>
#include <string_view>

#include "eval/action-parse.h"

namespace kvarena {

struct agent_action {
  action_parse_result parsed;  // act.kind none when the reply had no valid action
  std::string env_text;        // the action text for env_client::step
  std::string text;            // the action for records: canonical "click [12]" or "none"
  std::string note;            // the reply's note ("NOTE: ..." before the block), "" when none
  bool ok() const { return parsed.ok(); }
};

// The first ```...``` block of the reply, parsed; and its note: when the reply begins
// (after spaces) with "NOTE:", the rest of that line before any ``` , trimmed, at most
// k_max_note_bytes (cut at a UTF-8 boundary).
agent_action extract_agent_action(std::string_view model_output);
inline constexpr size_t k_max_note_bytes = 200;

// The PREVIOUS ACTION line for the next step: "None" before the first action; the action
// ("click [12]"); with " (NOTE: <note>)" when its reply had one; with " (failed: <env
// error>)" when the env refused it; for a parse failure, "None (your previous reply was
// not in the correct format: <error>)".
std::string previous_action_text(const agent_action* previous, const std::optional<std::string>& env_error);

}  // namespace kvarena
