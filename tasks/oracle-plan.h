// oracle-plan.h: the kvarena extension object of a task ("kvarena": {...} in its JSON)
// and what the scripted oracle needs to follow it.
//
// The extension holds:
//   "template"  the generator template that made the task ("classifieds.post_listing")
//   "oracle"    the plan: a list of steps, e.g.
//                 {"action": "goto", "url": "__CLASSIFIEDS__/post"}
//                 {"action": "click", "role": "link", "name": "Cars"}
//                 {"action": "type", "role": "textbox", "name": "Title (required)",
//                  "text": "Red bike", "enter": false}
//                 {"action": "stop", "answer": "$12.00"}
//               Elements are referred to by role and accessible name (exact; "match":
//               "contains" for a substring; "nth": k for the k-th of several, 0-based), never
//               by id: ids come from the observation at run time. A step's "expect" lists
//               texts the observation must hold after it (so a plan notices a page that
//               drifted, and a long-horizon task proves where its fact was seen).
//   "memory"    long-horizon tasks: the facts the answer depends on, each with the step
//               after which it is on screen and the step that uses it:
//               [{"fact": "$96.49", "seen_step": 2, "used_step": 11}] (steps 0-based).
// Other keys are kept as they are by the loader and ignored here.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kvarena::tasks {

// An element of the observation by role and accessible name.
struct element_ref {
  std::string role;       // "link", "button", "textbox", "combobox", "searchbox", ...
  std::string name;       // the accessible name as printed (unescaped)
  bool contains = false;  // name is a substring of the element's name
  int nth = 0;            // the nth (0-based) matching element of the page
  bool operator==(const element_ref&) const = default;
};

struct plan_step {
  // click type hover clear press scroll goto go_back go_forward new_tab tab_focus
  // close_tab stop
  std::string action;
  element_ref target;            // click, type, hover, clear
  std::string text;              // type
  bool enter = false;            // type: press Enter after
  std::string key;               // press
  std::string direction;         // scroll: up | down
  std::string url;               // goto (placeholders allowed)
  int tab = 0;                   // tab_focus
  std::string answer;            // stop
  std::vector<std::string> expect;  // texts the observation must hold after the step
  bool operator==(const plan_step&) const = default;
};

struct memory_fact {
  std::string fact;
  int seen_step = 0;  // after this step the fact is in the observation
  int used_step = 0;  // the step that needs it (the stop for an answer)
  bool operator==(const memory_fact&) const = default;
};

struct task_extension {
  std::string template_name;
  std::vector<plan_step> plan;
  std::vector<memory_fact> memory;
  bool operator==(const task_extension&) const = default;
};

// The extension as JSON text (keys sorted, so a load-and-write round trip keeps it).
std::string extension_to_json(const task_extension& ext);
// From a task's raw "kvarena" text. false with *err (what and where) when it is missing,
// not an object, or a step is malformed (unknown action, missing field).
bool parse_extension(std::string_view json_text, task_extension* out, std::string* err);

// The action text a step sends once its element is resolved to `id` (-1: no element).
std::string step_action_text(const plan_step& s, int64_t id);
// "click [link 'Cars']": a step for messages.
std::string describe_step(const plan_step& s);

// One element line of an observation: "\t[12] link 'Cars' focused: True".
struct observed_element {
  int64_t id = 0;
  std::string role;
  std::string name;
};
// Every "[id] role 'name'" line of an observation text (names unescaped from Python repr).
std::vector<observed_element> parse_observation(std::string_view text);
// Whether the observation shows `text`: in its raw text, or inside one element's name as
// the page has it. Names are printed as Python's repr (VWA's format), so a name holding
// both quote kinds shows its single quotes escaped ('5\'6" to 6\'0"'): a text with a
// quote is found by its unescaped name, not verbatim.
bool observation_shows(std::string_view observation, const std::string& text);
// The id of the element `ref` names; nullopt (with *why naming the candidates) when absent.
std::optional<int64_t> find_element(const std::vector<observed_element>& elements, const element_ref& ref,
                                    std::string* why);

}  // namespace kvarena::tasks
