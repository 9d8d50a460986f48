// action-parse.h: the text grammar agents emit (specs/web-envs.md §3), parsed into a plain
// struct. Two entry points: parse_model_output() takes a model's whole reply and parses the
// first block between a pair of triple backticks (VWA's action splitter); parse_action()
// takes a bare action string ("click [12]"), as the env server receives it.
//
// Compatibility with VWA's create_id_based_action (browser_env/actions.py):
//   - verbs are case-sensitive, lowercase only, as in VWA ("Click [12]" fails, with a
//     message naming the lowercase verb);
//   - bracketed text is greedy: the text of `type` and the answer of `stop` run to the last
//     ']' before the flag / end, so text may contain ']' and '[' ("type [3] [a]b] [0]" types
//     "a]b");
//   - a missing `type` flag means 1 (press Enter after typing);
//   - text after a complete action is ignored ("click [12] to open it" clicks 12);
//   - `scroll down` without brackets is accepted, as VWA's regex does.
// Deliberately more lenient than VWA (each only turns a VWA parse failure into an action):
//   - newlines inside `type` text and `stop` answers are kept (VWA's regex stops at '\n');
//   - spaces inside brackets around numbers are allowed ("click [ 12 ]");
//   - `stop N/A` without brackets answers "N/A" (VWA answers "");
//   - a one-word language tag opening the block ("```text\nclick [12]\n```") is skipped.
// Not for executing actions (the browser does that) nor for early-stop rules (early-stop.h).
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace kvarena {

enum class action_kind {
  none,  // a parse failure recorded as a step (VWA's NONE action)
  click, type, hover, press, scroll, new_tab, tab_focus, close_tab,
  goto_url, go_back, go_forward, stop, clear,
};
enum class scroll_direction { up, down };

// The verb as agents write it: "click", "goto", ...; "none" for action_kind::none.
const char* action_kind_name(action_kind k);

struct action {
  action_kind kind = action_kind::none;
  int64_t element_id = -1;   // click, type, hover, clear: the [id] of the observation
  std::string text;          // type: the text, without the trailing Enter
  bool press_enter = false;  // type: flag [1] (also when the flag is missing)
  std::string key;           // press: key combination, e.g. "Enter", "Control+a"
  scroll_direction direction = scroll_direction::down;  // scroll
  int tab = -1;              // tab_focus: tab index
  std::string url;           // goto
  std::string answer;        // stop: the answer, possibly empty
  std::string raw;           // the action text that was parsed (inside the backticks)
};

// Canonical text of an action: "type [12] [hello] [1]", "scroll [down]", "none", ...;
// parse_action(to_string(a)) gives back `a` (raw aside).
std::string to_string(const action& a);

// VWA's action equivalence, used by the early-stop rules: same kind, and for click/hover/
// type/clear the same element id (VWA compares `type` actions by element id only), for
// press the key, scroll the direction, tab_focus the tab, goto the url, stop the answer.
bool same_action(const action& a, const action& b);

struct action_parse_result {
  action act;         // kind none when parsing failed; raw is the input either way
  std::string error;  // empty on success; else what is wrong and the valid form(s)
  // Where the action's free text (act.text of `type`, act.answer of `stop`) lies in the
  // string that was parsed: bytes [free_text_begin, free_text_end). Equal (empty) for
  // other actions, an empty answer and failures. Training marks these bytes (train-tokens).
  size_t free_text_begin = 0, free_text_end = 0;
  bool ok() const { return error.empty(); }
};

// A bare action string. If it holds a ```...``` block, that block is parsed.
action_parse_result parse_action(std::string_view text);

// A model's reply: the first block between a pair of ``` is the action; a reply without
// one is a parse failure ("put the action between triple backticks").
action_parse_result parse_model_output(std::string_view output);

// The contents of the first ```...``` block, trimmed; nullopt when there is no pair.
std::optional<std::string> extract_action_block(std::string_view output);

// Every valid form, one a line, for error messages and prompts.
const char* action_grammar_help();

}  // namespace kvarena
