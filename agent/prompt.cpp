// prompt.cpp: see prompt.h. The system text follows VWA's p_cot_id_actree_2s prompt; the
// action forms come from action_grammar_help() so the prompt and the parser never
// disagree on a form.
#include "prompt.h"

#include <sstream>
#include <stdexcept>

#include "eval/action-parse.h"
#include "gguf-reader.h"
#include "model.h"
#include "prompt-examples.h"

namespace kvarena {
namespace {

struct grammar_line {
  std::string verb;  // "click"
  std::string form;  // "click [id]"
  std::string note;  // text of the parenthesised note after the form, or ""
};

std::vector<grammar_line> grammar_lines() {
  std::vector<grammar_line> out;
  std::istringstream in(action_grammar_help());
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    grammar_line g;
    size_t note = line.find("   (");
    g.form = line.substr(0, note);
    if (note != std::string::npos) {
      g.note = line.substr(note + 4);
      if (!g.note.empty() && g.note.back() == ')') g.note.pop_back();
    }
    g.verb = g.form.substr(0, g.form.find_first_of(" ["));
    out.push_back(std::move(g));
  }
  return out;
}

struct verb_text {
  const char* verb;
  const char* group;
  const char* description;
};

constexpr verb_text k_verbs[] = {
    {"click", "Page Operation Actions", "This action clicks on an element with a specific id on the webpage."},
    {"type", "Page Operation Actions",
     "Use this to type the content into the field with id; the last bracket says whether to press "
     "\"Enter\" after typing."},
    {"hover", "Page Operation Actions", "Hover over an element with id."},
    {"press", "Page Operation Actions",
     "Simulates the pressing of a key combination on the keyboard (e.g., Control+v)."},
    {"scroll", "Page Operation Actions", "Scroll the page up or down."},
    {"clear", "Page Operation Actions", "Clear the content of the field with id."},
    {"new_tab", "Tab Management Actions", "Open a new, empty browser tab."},
    {"tab_focus", "Tab Management Actions", "Switch the browser's focus to a specific tab using its index."},
    {"close_tab", "Tab Management Actions", "Close the currently active tab."},
    {"goto", "URL Navigation Actions", "Navigate to a specific URL."},
    {"go_back", "URL Navigation Actions", "Navigate to the previously viewed page."},
    {"go_forward", "URL Navigation Actions",
     "Navigate to the next page (if a previous 'go_back' action was performed)."},
    {"stop", "Completion Action",
     "Issue this action when you believe the task is complete. If the objective is to find a "
     "text-based answer, provide the answer in the bracket."},
};
constexpr const char* k_groups[] = {"Page Operation Actions", "Tab Management Actions", "URL Navigation Actions",
                                    "Completion Action", "Other Actions"};

const verb_text* find_verb_text(const std::string& verb) {
  for (const verb_text& v : k_verbs)
    if (verb == v.verb) return &v;
  return nullptr;
}

std::string action_list() {
  const std::vector<grammar_line> lines = grammar_lines();
  std::string out;
  for (const char* group : k_groups) {
    std::string block;
    for (const grammar_line& g : lines) {
      const verb_text* v = find_verb_text(g.verb);
      if (std::string(v ? v->group : "Other Actions") != group) continue;
      block += "```" + g.form + "```: " + (v ? v->description : "");
      if (!g.note.empty()) block += " (" + g.note + ")";
      block += "\n";
    }
    if (!block.empty()) out += std::string("\n") + group + ":\n" + block;
  }
  return out;
}

}  // namespace

std::string system_prompt() {
  return "You are an autonomous intelligent agent tasked with navigating a web browser. You will be "
         "given web-based tasks. These tasks will be accomplished through the use of specific "
         "actions you can issue.\n"
         "\n"
         "Here's the information you'll have:\n"
         "The user's objective: This is the task you're trying to complete.\n"
         "The current web page's accessibility tree: This is a simplified representation of the "
         "webpage, providing key information. Each line is one element: its id in brackets, its "
         "role, its name and properties.\n"
         "The current web page's URL: This is the page you're currently navigating.\n"
         "The open tabs: These are the tabs you have open.\n"
         "The previous action: This is the action you just performed. It may be helpful to track "
         "your progress.\n"
         "\n"
         "The actions you can perform fall into several categories:\n" +
         action_list() +
         "\n"
         "To be successful, it is very important to follow the following rules:\n"
         "1. You should only issue an action that is valid given the current observation.\n"
         "2. You should only issue one action at a time.\n"
         "3. You should follow the examples to reason step by step and then issue the next action.\n"
         "4. Generate the action in the correct format. Start with a \"In summary, the next action I "
         "will perform is\" phrase, followed by action inside ``````. For example, \"In summary, the "
         "next action I will perform is ```click [1234]```\".\n"
         "5. Issue stop action when you think you have achieved the objective. Don't generate "
         "anything after stop.";
}

const char* prompt_style_name(prompt_style s) { return s == prompt_style::vwa ? "vwa" : "compact"; }

prompt_style parse_prompt_style(std::string_view name) {
  if (name == "vwa") return prompt_style::vwa;
  if (name == "compact") return prompt_style::compact;
  throw std::invalid_argument("prompt style '" + std::string(name) + "': use vwa or compact");
}

prompt_style prompt_style_for_model(const model& m, std::string_view name) {
  if (!name.empty() && name != "auto") return parse_prompt_style(name);
  if (!m.gguf) return prompt_style::vwa;
  const std::optional<std::string> s = m.gguf->get_string(k_prompt_style_key);
  return s ? parse_prompt_style(*s) : prompt_style::vwa;
}

namespace {
// OBSERVATION / URL / OBJECTIVE, then the previous-action line under `label`; a list
// (text starting with a newline) goes below the label, one line after it.
std::string message_with(const step_view& s, const char* label) {
  std::string out = "OBSERVATION:\n";
  out += s.observation;
  out += "\nURL: ";
  out += s.url;
  out += "\nOBJECTIVE: ";
  out += s.objective;
  out += "\n";
  out += label;
  if (s.previous_action.empty() || s.previous_action.front() != '\n') out += " ";
  out += s.previous_action;
  return out;
}
}  // namespace

std::string compact_step_message(const step_view& s) { return message_with(s, "PREVIOUS ACTIONS:"); }

std::string compact_reply(std::string_view action, std::string_view note, int64_t note_element) {
  std::string out;
  if (note_element >= 0) out = "NOTE [" + std::to_string(note_element) + "]\n";
  else if (!note.empty()) out = "NOTE: " + std::string(note) + "\n";
  return out + "```" + std::string(action) + "```";
}

std::string step_message(const step_view& s) { return message_with(s, "PREVIOUS ACTION:"); }

std::vector<chat_message> prompt_prefix(int n_examples) {
  const std::vector<worked_example>& ex = worked_examples();
  if (n_examples < 0 || n_examples > static_cast<int>(ex.size()))
    throw std::invalid_argument("n_examples " + std::to_string(n_examples) + ": use 0.." +
                                std::to_string(ex.size()));
  std::vector<chat_message> msgs{{"system", system_prompt()}};
  for (int i = 0; i < n_examples; ++i) {
    const worked_example& e = ex[static_cast<size_t>(i)];
    msgs.push_back({"user", step_message({e.observation, e.url, e.objective, e.previous_action})});
    msgs.push_back({"assistant", e.reply});
  }
  return msgs;
}

std::vector<chat_message> prompt_prefix(prompt_style style, int n_examples) {
  if (style == prompt_style::compact) return {};
  return prompt_prefix(n_examples);
}

}  // namespace kvarena
