// agent-action.h: from a model's reply to the step the env receives, and back to the
// "PREVIOUS ACTION" line of the next prompt (specs/web-envs.md §3). The grammar itself is
// envs/eval/action-parse.h's; this file decides what text goes to the env so the server
// parses exactly what the agent parsed (a reply the agent could not parse is a parse
// failure on the server too, recorded as a NONE step that counts towards the early-stop
// rules), and how failures are told to the model.
#pragma once
#include <cstdint>
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
  int64_t note_element = -1;   // "NOTE [84]": the element whose name the note holds, else -1
  std::string note_error;      // why a "NOTE [84]" holds nothing (no such element on the page)
  int64_t answer_element = -1; // "stop [[84]]": the element whose name is the answer, else -1
  std::string answer_error;    // why a "stop [[84]]" answer holds nothing (it stays "[84]")
  bool ok() const { return parsed.ok(); }
};

// The first ```...``` block of the reply, parsed; and its note, from a first line (after
// spaces) of one of two forms:
//   NOTE: <text>   the rest of the line before any ``` , trimmed;
//   NOTE [84]      the name of element 84 on `page` (the observation the reply answers), so a
//                  fact on screen is noted by picking its element, as actions do; with no
//                  such element (or no page) the note is empty and note_error says why.
// Either is cut to k_max_note_bytes at a UTF-8 boundary.
// An answer by element: `stop [[84]]` answers with the name of element 84 on `page` (a value
// on screen is answered by picking its element, as notes are; the env receives
// "stop [$31.99]"); with no such element or name the answer stays "[84]" and answer_error
// says why.
agent_action extract_agent_action(std::string_view model_output, std::string_view page = {});
inline constexpr size_t k_max_note_bytes = 200;

// The action as the project's model writes it (train-data's replies): "stop [<answer>]" as
// "stop [[84]]" when the answer is not a bare number (a count is worked out, not read off)
// and element [84], the first such on `page`, is named exactly the answer; any other action
// as it is.
std::string action_by_element(std::string_view action, std::string_view page);

// The PREVIOUS ACTION line for the next step: "None" before the first action; the action
// ("click [12]"); with " (NOTE: <note>)" when its reply had one (" (NOTE [84] failed:
// <why>)" when an element note found nothing); with " (failed: <env
// error>)" when the env refused it; for a parse failure, "None (your previous reply was
// not in the correct format: <error>)".
std::string previous_action_text(const agent_action* previous, const std::optional<std::string>& env_error);

}  // namespace kvarena
