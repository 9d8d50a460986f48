// prompt.h: what the agent tells the model (specs/web-envs.md §5, VWA's chain-of-thought,
// id-based prompt): the system text (role, what an observation holds, the actions grouped
// as VWA groups them with their forms taken from action_grammar_help(), the rules, ending
// with "In summary, the next action I will perform is ```...```"), the worked examples as
// user/assistant turns, and the per-step user message
//   OBSERVATION:\n{obs}\nURL: {url}\nOBJECTIVE: {intent}\nPREVIOUS ACTION: {prev}
// Messages only: the chat format is chat-template.h's, the token budget obs-truncate.h's.
//
// Two styles: `vwa` (above; the default for other models) and `compact`, for the small
// models the project trains (scripts/train/): no system text, no worked examples, the
// reply is only the action block ("```click [12]```"), and the step message is
//   OBSERVATION:\n{obs}\nURL: {url}\nOBJECTIVE: {intent}\nPREVIOUS ACTIONS: {list}
// where {list} is every action so far, one per line ("None" at the first step); in the
// full history mode the earlier replies are in the sequence already, so it is only the
// last one, as in VWA. A model's GGUF names its style in `kvarena.prompt_style`.
//
// Notes (the compact style's memory in history mode last, where earlier pages are gone):
// a reply may begin with a note line, "NOTE: $23.99\n```tab_focus [1]```", written where a
// fact the objective asks to remember is on screen; the action's line in later steps'
// list carries it ("tab_focus [1] (NOTE: $23.99)", agent-action.h).
#pragma once
#include <string>
#include <string_view>
#include <vector>

#include "chat-template.h"

namespace kvarena {

enum class prompt_style { vwa, compact };
const char* prompt_style_name(prompt_style s);
// "vwa" or "compact"; std::invalid_argument naming the valid values otherwise.
prompt_style parse_prompt_style(std::string_view name);
// The GGUF key a trained model names its prompt style in.
inline constexpr const char* k_prompt_style_key = "kvarena.prompt_style";
// name "" or "auto": the style the model's GGUF names (vwa when it names none); else
// parse_prompt_style(name).
struct model;
prompt_style prompt_style_for_model(const model& m, std::string_view name = "auto");

std::string system_prompt();

struct step_view {
  std::string_view observation;      // already cut to the token budget
  std::string_view url;
  std::string_view objective;        // the task's intent
  std::string_view previous_action;  // "None" at the first step (previous_action_text())
};
std::string step_message(const step_view& s);

// The compact style's step message; previous_actions are already formatted (one per line,
// or "None").
std::string compact_step_message(const step_view& s);
// The compact reply for an action ("click [12]" -> "```click [12]```"); with a note
// ("$23.99") the note line first: "NOTE: $23.99\n```click [12]```"; with a note by element
// (note_element 84, the note then being that element's name) "NOTE [84]\n```click [12]```".
std::string compact_reply(std::string_view action, std::string_view note = {}, int64_t note_element = -1);

// The system message, then n_examples worked examples (0..3) as user/assistant pairs.
// std::invalid_argument when n_examples is out of range.
std::vector<chat_message> prompt_prefix(int n_examples);
// The prefix of a style: vwa -> prompt_prefix(n_examples); compact -> nothing.
std::vector<chat_message> prompt_prefix(prompt_style style, int n_examples);

}  // namespace kvarena
