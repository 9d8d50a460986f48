// agent-action.cpp: see agent-action.h.
#include "agent-action.h"

#include <algorithm>

#include "page-element.h"

namespace kvarena {
namespace {

// The longest prefix of s of at most max_bytes that does not split a UTF-8 character.
std::string utf8_prefix(std::string_view s, size_t max_bytes) {
  if (s.size() <= max_bytes) return std::string(s);
  size_t cut = max_bytes;
  while (cut > 0 && (static_cast<unsigned char>(s[cut]) & 0xC0) == 0x80) --cut;
  return std::string(s.substr(0, cut));
}

// Messages quoted into the next prompt stay short: the grammar is in the system prompt.
std::string first_line(const std::string& s, size_t max_bytes = 300) {
  const std::string line = s.substr(0, s.find('\n'));
  return line.size() > max_bytes ? utf8_prefix(line, max_bytes) + "..." : line;
}

// "[84]" -> 84 (at most 12 digits); -1 for anything else.
int64_t bracketed_id(std::string_view s) {
  if (s.size() < 3 || s.size() > 14 || s.front() != '[' || s.back() != ']') return -1;
  int64_t id = 0;
  for (size_t i = 1; i + 1 < s.size(); ++i) {
    if (s[i] < '0' || s[i] > '9') return -1;
    id = id * 10 + (s[i] - '0');
  }
  return id;
}

// "NOTE [84]" at the start of `line` (after "NOTE"): 84; -1 when the line is not that form
// (spaces may follow; nothing else may).
int64_t element_note_id(std::string_view line) {
  const size_t close = line.find(']');
  if (line.substr(0, 1) != " " || close == std::string_view::npos) return -1;
  const int64_t id = bracketed_id(line.substr(1, close));
  const size_t after = line.find_first_not_of(" \t\r", close + 1);
  return after == std::string_view::npos || line.substr(after, 3) == "```" ? id : -1;
}

// The name of element [id] on `page`, or nullopt with *why set: what a note or an answer by
// element holds, or why it holds nothing.
std::optional<std::string> element_name_or_why(std::string_view page, int64_t id, std::string* why) {
  std::optional<std::string> name = element_text(page, id);
  if (name && !name->empty()) return name;
  *why = element_line(page, id).empty() ? "no element [" + std::to_string(id) + "] on the page"
                                        : "element [" + std::to_string(id) + "] has no text";
  return std::nullopt;
}

// extract_agent_action's note (agent-action.h).
void read_note(std::string_view reply, std::string_view page, agent_action* a) {
  const size_t start = reply.find_first_not_of(" \t\r\n");
  if (start == std::string_view::npos || reply.substr(start, 4) != "NOTE") return;
  const size_t nl = reply.find('\n', start);  // the first line, after "NOTE"
  const std::string_view line = reply.substr(start + 4, nl == std::string_view::npos ? nl : nl - (start + 4));
  if (const int64_t id = element_note_id(line); id >= 0) {
    a->note_element = id;
    if (const std::optional<std::string> name = element_name_or_why(page, id, &a->note_error))
      a->note = utf8_prefix(*name, k_max_note_bytes);
    return;
  }
  if (reply.substr(start + 4, 1) != ":") return;
  std::string_view rest = reply.substr(start + 5);
  rest = rest.substr(0, std::min(rest.find('\n'), rest.find("```")));
  const size_t b = rest.find_first_not_of(" \t\r"), e = rest.find_last_not_of(" \t\r");
  if (b == std::string_view::npos) return;
  a->note = utf8_prefix(rest.substr(b, e - b + 1), k_max_note_bytes);
}

// extract_agent_action's answer by element (agent-action.h).
void resolve_answer(std::string_view page, agent_action* a) {
  action& act = a->parsed.act;
  const int64_t id = act.kind == action_kind::stop ? bracketed_id(act.answer) : -1;
  if (id < 0) return;
  a->answer_element = id;
  const std::optional<std::string> name = element_name_or_why(page, id, &a->answer_error);
  if (!name) return;
  act.answer = *name;
  act.raw = to_string(act);
}

bool bare_number(std::string_view s) {
  return !s.empty() && s.find_first_not_of("0123456789.,- ") == std::string_view::npos;
}

}  // namespace

std::string action_by_element(std::string_view action, std::string_view page) {
  const action_parse_result r = parse_action(action);
  if (!r.ok() || r.act.kind != action_kind::stop || r.act.answer.empty() || bare_number(r.act.answer))
    return std::string(action);
  const int64_t id = element_showing(page, r.act.answer);
  if (id < 0 || element_text(page, id) != r.act.answer) return std::string(action);
  return "stop [[" + std::to_string(id) + "]]";
}

agent_action extract_agent_action(std::string_view model_output, std::string_view page) {
  agent_action a;
  read_note(model_output, page, &a);
  a.parsed = parse_model_output(model_output);
  if (a.parsed.ok()) {
    resolve_answer(page, &a);
    // The block's text: the server's parse_action gives back the same action.
    a.env_text = a.parsed.act.raw;
    a.text = to_string(a.parsed.act);
    return a;
  }
  // A text the server fails to parse too: the same bad block, or an empty one when the
  // reply had none (a bare "click [3]" outside backticks must not act on the server).
  std::optional<std::string> block = extract_action_block(model_output);
  a.env_text = "```" + block.value_or("") + "```";
  a.text = "none";
  return a;
}

std::string previous_action_text(const agent_action* previous, const std::optional<std::string>& env_error) {
  if (!previous) return "None";
  if (!previous->ok())
    return "None (your previous reply was not in the correct format: " + first_line(previous->parsed.error) + ")";
  std::string out = previous->text;
  if (!previous->note.empty()) out += " (NOTE: " + previous->note + ")";
  if (!previous->note_error.empty())
    out += " (NOTE [" + std::to_string(previous->note_element) + "] failed: " + previous->note_error + ")";
  if (env_error) out += " (failed: " + first_line(*env_error) + ")";
  return out;
}

}  // namespace kvarena
