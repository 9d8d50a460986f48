// action-parse.cpp: see action-parse.h for the grammar and where it differs from VWA.
#include "eval/action-parse.h"

#include <climits>

#include "eval/eval-text.h"

namespace kvarena {
namespace {

bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
  return s;
}

bool is_verb_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

struct verb_info {
  const char* name;
  action_kind kind;
  const char* form;     // the valid form
  const char* example;  // one example of it
};

constexpr verb_info k_verbs[] = {
    {"click", action_kind::click, "click [id]", "click [12]"},
    {"type", action_kind::type, "type [id] [text] [0|1]", "type [7] [blue bike] [1]"},
    {"hover", action_kind::hover, "hover [id]", "hover [12]"},
    {"press", action_kind::press, "press [key+comb]", "press [Control+a]"},
    {"scroll", action_kind::scroll, "scroll [up|down]", "scroll [down]"},
    {"new_tab", action_kind::new_tab, "new_tab", "new_tab"},
    {"tab_focus", action_kind::tab_focus, "tab_focus [n]", "tab_focus [0]"},
    {"close_tab", action_kind::close_tab, "close_tab", "close_tab"},
    {"goto", action_kind::goto_url, "goto [url]", "goto [http://127.0.0.1:7770/]"},
    {"go_back", action_kind::go_back, "go_back", "go_back"},
    {"go_forward", action_kind::go_forward, "go_forward", "go_forward"},
    {"stop", action_kind::stop, "stop [answer]", "stop [42]"},
    {"clear", action_kind::clear, "clear [id]", "clear [7]"},
};

const verb_info* find_verb(std::string_view name) {
  for (const auto& v : k_verbs)
    if (name == v.name) return &v;
  return nullptr;
}

const verb_info& verb_of(action_kind k) {
  for (const auto& v : k_verbs)
    if (v.kind == k) return v;
  return k_verbs[0];  // unreachable for valid kinds
}

// The input as it appears in a message (80 bytes, valid UTF-8, \n shown).
std::string snippet(std::string_view s) { return message_snippet(s, 80); }

std::string invalid(const verb_info& v, std::string_view raw, const std::string& what) {
  return "invalid " + std::string(v.name) + " action '" + snippet(raw) + "': " + what +
         ". Use " + v.form + ", e.g. " + v.example;
}

// "[ 123 ]" at the front of `rest` (after spaces): the number, and `rest` moves past ']'.
// Returns an error text, or "" on success.
std::string read_bracket_number(std::string_view& rest, int64_t max_value, int64_t& out) {
  rest = trim(rest);
  if (rest.empty() || rest.front() != '[') return "expected a number in brackets";
  size_t close = rest.find(']');
  if (close == std::string_view::npos) return "missing ']'";
  std::string_view inner = trim(rest.substr(1, close - 1));
  if (inner.empty()) return "the brackets are empty, expected a number";
  int64_t value = 0;
  for (char c : inner) {
    if (c < '0' || c > '9') return std::string("'") + snippet(inner) + "' is not a number";
    int d = c - '0';
    if (value > (max_value - d) / 10) return "the number " + snippet(inner) + " is too large";
    value = value * 10 + d;
  }
  out = value;
  rest.remove_prefix(close + 1);
  return "";
}

// Greedy bracket: from the first '[' (which must open `rest`, after spaces) to the last ']'.
std::optional<std::string_view> greedy_bracket(std::string_view rest) {
  rest = trim(rest);
  if (rest.empty() || rest.front() != '[') return std::nullopt;
  size_t close = rest.rfind(']');
  if (close == std::string_view::npos || close == 0) return std::nullopt;
  return rest.substr(1, close - 1);
}

action_parse_result fail(std::string_view raw, std::string error) {
  action_parse_result r;
  r.act.raw = std::string(raw);
  r.error = std::move(error);
  return r;
}

// `type` after its verb: [id] [text] [0|1]; the flag is the last bracket when it holds 0
// or 1 and some text comes before it, else the flag is missing (1).
std::string parse_type_args(std::string_view rest, action& a, std::string_view& free_text) {
  std::string err = read_bracket_number(rest, INT64_MAX, a.element_id);
  if (!err.empty()) return "the element id: " + err;
  std::string_view r = trim(rest);
  std::string_view text_part = r;
  a.press_enter = true;
  if (!r.empty() && r.back() == ']') {
    size_t open = r.rfind('[');
    if (open != std::string_view::npos) {
      std::string_view flag = trim(r.substr(open + 1, r.size() - open - 2));
      if (flag == "0" || flag == "1") {
        a.press_enter = flag == "1";
        text_part = trim(r.substr(0, open));
      }
    }
  }
  if (text_part.empty()) return "the text to type is missing";
  if (text_part.size() < 2 || text_part.front() != '[' || text_part.back() != ']')
    return "the text must be in brackets after the id";
  free_text = text_part.substr(1, text_part.size() - 2);
  a.text = std::string(free_text);
  if (a.text.empty()) return "the text is empty (to empty a field use clear [id])";
  return "";
}

// Parses the arguments of verb `v` from `rest` (the text after the verb) into `a`;
// `free_text` is set to the view of `rest` that holds the text of a type / answer of a stop.
std::string parse_args(const verb_info& v, std::string_view rest, action& a, std::string_view& free_text) {
  switch (v.kind) {
    case action_kind::click:
    case action_kind::hover:
    case action_kind::clear: {
      std::string err = read_bracket_number(rest, INT64_MAX, a.element_id);
      return err.empty() ? "" : "the element id: " + err;
    }
    case action_kind::type:
      return parse_type_args(rest, a, free_text);
    case action_kind::press: {
      auto inner = greedy_bracket(rest);
      if (!inner) return "the key combination must be in brackets";
      a.key = std::string(trim(*inner));
      return a.key.empty() ? "the key combination is empty" : "";
    }
    case action_kind::scroll: {
      std::string_view dir = trim(rest);
      if (!dir.empty() && dir.front() == '[') {
        size_t close = dir.find(']');
        dir = trim(dir.substr(1, close == std::string_view::npos ? std::string_view::npos
                                                                : close - 1));
      } else {
        size_t end = 0;
        while (end < dir.size() && !is_space(dir[end])) ++end;
        dir = dir.substr(0, end);
      }
      if (dir == "up") a.direction = scroll_direction::up;
      else if (dir == "down") a.direction = scroll_direction::down;
      else if (dir.empty()) return "the direction is missing";
      else return "the direction must be up or down, not '" + snippet(dir) + "'";
      return "";
    }
    case action_kind::tab_focus: {
      int64_t n = 0;
      std::string err = read_bracket_number(rest, INT_MAX, n);
      if (!err.empty()) return "the tab index: " + err;
      a.tab = static_cast<int>(n);
      return "";
    }
    case action_kind::goto_url: {
      auto inner = greedy_bracket(rest);
      if (!inner) return "the URL must be in brackets";
      a.url = std::string(trim(*inner));
      return a.url.empty() ? "the URL is empty" : "";
    }
    case action_kind::stop: {
      std::string_view r = trim(rest);
      if (r.empty()) return "";  // no answer: allowed
      if (r.front() == '[') {
        size_t close = r.rfind(']');  // an unclosed "stop [abc" answers "abc"
        free_text = close == std::string_view::npos ? r.substr(1) : r.substr(1, close - 1);
      } else {
        free_text = r;  // "stop N/A": lenient, VWA would answer ""
      }
      a.answer = std::string(free_text);
      return "";
    }
    case action_kind::new_tab:
    case action_kind::close_tab:
    case action_kind::go_back:
    case action_kind::go_forward:
    case action_kind::none:
      return "";
  }
  return "";
}

// Parses `s`, a view into `input`: the free text's range is given relative to `input`.
action_parse_result parse_trimmed(std::string_view s, std::string_view input) {
  if (s.empty())
    return fail(s, std::string("empty action. Valid actions:\n") + action_grammar_help());
  size_t verb_end = 0;
  while (verb_end < s.size() && is_verb_char(s[verb_end])) ++verb_end;
  // A verb ends at a space, '[' or the end; anything else glued to it is a bad verb.
  size_t word_end = verb_end;
  while (word_end < s.size() && !is_space(s[word_end]) && s[word_end] != '[') ++word_end;
  std::string_view word = s.substr(0, word_end);

  const verb_info* v = word_end == verb_end ? find_verb(word) : nullptr;
  if (!v) {
    std::string lower(word);
    for (char& c : lower)
      if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    if (const verb_info* lv = word_end == verb_end ? find_verb(lower) : nullptr)
      return fail(s, "actions are lowercase: write '" + std::string(lv->name) + "', not '" +
                         snippet(word) + "'. Use " + lv->form + ", e.g. " + lv->example);
    return fail(s, "unknown action '" + snippet(word) + "'. Valid actions:\n" +
                       action_grammar_help());
  }
  action_parse_result r;
  r.act.kind = v->kind;
  r.act.raw = std::string(s);
  std::string_view free_text;
  std::string err = parse_args(*v, s.substr(verb_end), r.act, free_text);
  if (!err.empty()) return fail(s, invalid(*v, s, err));
  if (!free_text.empty()) {
    r.free_text_begin = static_cast<size_t>(free_text.data() - input.data());
    r.free_text_end = r.free_text_begin + free_text.size();
  }
  return r;
}

}  // namespace

const char* action_kind_name(action_kind k) {
  return k == action_kind::none ? "none" : verb_of(k).name;
}

const char* action_grammar_help() {
  return "click [id]\n"
         "type [id] [text] [0|1]   (1 or missing: press Enter after typing)\n"
         "hover [id]\n"
         "press [key+comb]\n"
         "scroll [up|down]\n"
         "new_tab\n"
         "tab_focus [n]\n"
         "close_tab\n"
         "goto [url]\n"
         "go_back\n"
         "go_forward\n"
         "stop [answer]   (the answer may be empty; \"N/A\" when the task is impossible)\n"
         "clear [id]";
}

std::string to_string(const action& a) {
  std::string name = action_kind_name(a.kind);
  auto bracket = [](const std::string& s) { return " [" + s + "]"; };
  switch (a.kind) {
    case action_kind::click:
    case action_kind::hover:
    case action_kind::clear:
      return name + bracket(std::to_string(a.element_id));
    case action_kind::type:
      return name + bracket(std::to_string(a.element_id)) + bracket(a.text) +
             (a.press_enter ? " [1]" : " [0]");
    case action_kind::press: return name + bracket(a.key);
    case action_kind::scroll:
      return name + (a.direction == scroll_direction::up ? " [up]" : " [down]");
    case action_kind::tab_focus: return name + bracket(std::to_string(a.tab));
    case action_kind::goto_url: return name + bracket(a.url);
    case action_kind::stop: return name + bracket(a.answer);
    default: return name;
  }
}

bool same_action(const action& a, const action& b) {
  if (a.kind != b.kind) return false;
  switch (a.kind) {
    case action_kind::click:
    case action_kind::hover:
    case action_kind::type:
    case action_kind::clear: return a.element_id == b.element_id;
    case action_kind::press: return a.key == b.key;
    case action_kind::scroll: return a.direction == b.direction;
    case action_kind::tab_focus: return a.tab == b.tab;
    case action_kind::goto_url: return a.url == b.url;
    case action_kind::stop: return a.answer == b.answer;
    default: return true;
  }
}

namespace {

// extract_action_block's block as a view into `output` (so offsets into it stay known).
std::optional<std::string_view> action_block_view(std::string_view output) {
  size_t open = output.find("```");
  if (open == std::string_view::npos) return std::nullopt;
  size_t close = output.find("```", open + 3);
  if (close == std::string_view::npos) return std::nullopt;
  std::string_view block = output.substr(open + 3, close - open - 3);
  // Stray backticks of a longer fence (````click [1]````).
  while (!block.empty() && block.front() == '`') block.remove_prefix(1);
  while (!block.empty() && block.back() == '`') block.remove_suffix(1);
  block = trim(block);
  // A markdown language tag on its own first line: ```text\nclick [12]\n```.
  size_t nl = block.find('\n');
  if (nl != std::string_view::npos) {
    std::string_view first = trim(block.substr(0, nl));
    bool letters = !first.empty();
    for (char c : first) letters = letters && ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'));
    std::string_view after = trim(block.substr(nl + 1));
    if (letters && !find_verb(first) && !after.empty()) block = after;
  }
  return block;
}

}  // namespace

std::optional<std::string> extract_action_block(std::string_view output) {
  const auto block = action_block_view(output);
  if (!block) return std::nullopt;
  return std::string(*block);
}

action_parse_result parse_action(std::string_view text) {
  std::string_view s = trim(text);
  if (s.substr(0, 3) == "```") {
    if (auto block = action_block_view(s)) {
      action_parse_result r = parse_trimmed(*block, text);
      r.act.raw = std::string(*block);
      return r;
    }
  }
  return parse_trimmed(s, text);
}

action_parse_result parse_model_output(std::string_view output) {
  auto block = action_block_view(output);
  if (!block)
    return fail(output,
                "no action found: end the reply with the action between triple backticks, "
                "e.g. In summary, the next action I will perform is ```click [12]```");
  if (block->empty())
    return fail(output, std::string("empty action between the triple backticks. Valid actions:\n") +
                            action_grammar_help());
  action_parse_result r = parse_trimmed(*block, output);
  r.act.raw = std::string(*block);
  return r;
}

}  // namespace kvarena
