// oracle-plan.cpp: the kvarena extension object, and element lookup in observations
// (see oracle-plan.h).
#include "oracle-plan.h"

#include <nlohmann/json.hpp>

#include "browser/common/ax-print.h"
#include "common/text-encode.h"
#include "eval/action-parse.h"

namespace kvarena::tasks {

using json = nlohmann::json;

namespace {

const char* const k_element_actions[] = {"click", "type", "hover", "clear"};
const char* const k_plain_actions[] = {"press",   "scroll",  "goto",      "go_back", "go_forward",
                                       "new_tab", "tab_focus", "close_tab", "stop"};

bool is_element_action(std::string_view a) {
  for (const char* n : k_element_actions)
    if (a == n) return true;
  return false;
}

bool is_known_action(std::string_view a) {
  if (is_element_action(a)) return true;
  for (const char* n : k_plain_actions)
    if (a == n) return true;
  return false;
}

json step_json(const plan_step& s) {
  json j;
  j["action"] = s.action;
  if (is_element_action(s.action)) {
    j["role"] = s.target.role;
    j["name"] = s.target.name;
    if (s.target.contains) j["match"] = "contains";
    if (s.target.nth != 0) j["nth"] = s.target.nth;
  }
  if (s.action == "type") {
    j["text"] = s.text;
    j["enter"] = s.enter;
  }
  if (s.action == "press") j["key"] = s.key;
  if (s.action == "scroll") j["direction"] = s.direction;
  if (s.action == "goto") j["url"] = s.url;
  if (s.action == "tab_focus") j["tab"] = s.tab;
  if (s.action == "stop") j["answer"] = s.answer;
  if (!s.expect.empty()) j["expect"] = s.expect;
  return j;
}

// Reads one step; false with *err naming the field.
bool read_step(const json& j, const std::string& where, plan_step* s, std::string* err) {
  auto fail = [&](const std::string& what) {
    *err = where + ": " + what;
    return false;
  };
  if (!j.is_object()) return fail("a step must be an object");
  auto str = [&](const char* key, std::string* out, bool required) {
    auto it = j.find(key);
    if (it == j.end()) return !required;
    if (!it->is_string()) return false;
    *out = it->get<std::string>();
    return true;
  };
  if (!str("action", &s->action, true)) return fail("\"action\" must be a string");
  if (!is_known_action(s->action)) return fail("unknown action '" + s->action + "'");
  if (is_element_action(s->action)) {
    if (!str("role", &s->target.role, true) || s->target.role.empty())
      return fail(s->action + " needs \"role\" (a string)");
    if (!str("name", &s->target.name, true)) return fail(s->action + " needs \"name\" (a string)");
    std::string match;
    if (!str("match", &match, false) || (!match.empty() && match != "contains" && match != "exact"))
      return fail("\"match\" must be \"exact\" or \"contains\"");
    s->target.contains = match == "contains";
    if (auto it = j.find("nth"); it != j.end()) {
      if (!it->is_number_integer() || it->get<int>() < 0) return fail("\"nth\" must be an integer >= 0");
      s->target.nth = it->get<int>();
    }
  }
  if (s->action == "type") {
    if (!str("text", &s->text, true)) return fail("type needs \"text\" (a string)");
    if (auto it = j.find("enter"); it != j.end()) {
      if (!it->is_boolean()) return fail("\"enter\" must be true or false");
      s->enter = it->get<bool>();
    }
  }
  if (s->action == "press" && (!str("key", &s->key, true) || s->key.empty())) return fail("press needs \"key\"");
  if (s->action == "scroll" && (!str("direction", &s->direction, true) || (s->direction != "up" && s->direction != "down")))
    return fail("scroll needs \"direction\": \"up\" or \"down\"");
  if (s->action == "goto" && (!str("url", &s->url, true) || s->url.empty())) return fail("goto needs \"url\"");
  if (s->action == "tab_focus") {
    auto it = j.find("tab");
    if (it == j.end() || !it->is_number_integer() || it->get<int>() < 0) return fail("tab_focus needs \"tab\" >= 0");
    s->tab = it->get<int>();
  }
  if (s->action == "stop" && !str("answer", &s->answer, true)) return fail("stop needs \"answer\" (a string)");
  if (auto it = j.find("expect"); it != j.end()) {
    if (!it->is_array()) return fail("\"expect\" must be a list of strings");
    for (const json& e : *it) {
      if (!e.is_string()) return fail("\"expect\" must be a list of strings");
      s->expect.push_back(e.get<std::string>());
    }
  }
  return true;
}

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// A Python repr string at s[i] (i at the opening quote); the unescaped text, i past the
// closing quote. nullopt when it is not one.
std::optional<std::string> read_repr(std::string_view s, size_t* i) {
  if (*i >= s.size() || (s[*i] != '\'' && s[*i] != '"')) return std::nullopt;
  char q = s[(*i)++];
  std::string out;
  while (*i < s.size()) {
    char c = s[(*i)++];
    if (c == q) return out;
    if (c != '\\' || *i >= s.size()) {
      out += c;
      continue;
    }
    char e = s[(*i)++];
    int digits = e == 'x' ? 2 : e == 'u' ? 4 : e == 'U' ? 8 : 0;
    if (digits) {
      unsigned cp = 0;
      for (int k = 0; k < digits && *i < s.size(); ++k) {
        int h = hex_value(s[*i]);
        if (h < 0) break;
        cp = cp * 16 + static_cast<unsigned>(h);
        ++*i;
      }
      if (e == 'x' && cp >= 0x80) out += static_cast<char>(cp);  // py_repr shows invalid bytes as \xhh
      else append_utf8(out, cp);
      continue;
    }
    switch (e) {
      case 'n': out += '\n'; break;
      case 'r': out += '\r'; break;
      case 't': out += '\t'; break;
      default: out += e;  // \\ \' \"
    }
  }
  return std::nullopt;
}

}  // namespace

std::string extension_to_json(const task_extension& ext) {
  json j = json::object();
  if (!ext.template_name.empty()) j["template"] = ext.template_name;
  json plan = json::array();
  for (const plan_step& s : ext.plan) plan.push_back(step_json(s));
  j["oracle"] = std::move(plan);
  if (!ext.memory.empty()) {
    json mem = json::array();
    for (const memory_fact& f : ext.memory)
      mem.push_back({{"fact", f.fact}, {"seen_step", f.seen_step}, {"used_step", f.used_step}});
    j["memory"] = std::move(mem);
  }
  return j.dump();
}

bool parse_extension(std::string_view json_text, task_extension* out, std::string* err) {
  *out = {};
  if (json_text.empty()) {
    *err = "kvarena: missing (every task needs the kvarena extension with an oracle plan)";
    return false;
  }
  json j = json::parse(json_text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) {
    *err = "kvarena: not a JSON object";
    return false;
  }
  if (auto it = j.find("template"); it != j.end()) {
    if (!it->is_string()) {
      *err = "kvarena.template: must be a string";
      return false;
    }
    out->template_name = it->get<std::string>();
  }
  auto plan = j.find("oracle");
  if (plan == j.end() || !plan->is_array() || plan->empty()) {
    *err = "kvarena.oracle: missing or empty (a list of plan steps ending with stop)";
    return false;
  }
  for (size_t i = 0; i < plan->size(); ++i) {
    plan_step s;
    if (!read_step((*plan)[i], "kvarena.oracle[" + std::to_string(i) + "]", &s, err)) return false;
    out->plan.push_back(std::move(s));
  }
  if (out->plan.back().action != "stop") {
    *err = "kvarena.oracle: the last step must be stop (with the answer, \"\" when none)";
    return false;
  }
  if (auto mem = j.find("memory"); mem != j.end()) {
    if (!mem->is_array()) {
      *err = "kvarena.memory: must be a list";
      return false;
    }
    for (size_t i = 0; i < mem->size(); ++i) {
      const json& m = (*mem)[i];
      std::string where = "kvarena.memory[" + std::to_string(i) + "]";
      if (!m.is_object() || !m.contains("fact") || !m["fact"].is_string() || !m.contains("seen_step") ||
          !m["seen_step"].is_number_integer() || !m.contains("used_step") || !m["used_step"].is_number_integer()) {
        *err = where + ": needs \"fact\" (string), \"seen_step\" and \"used_step\" (integers)";
        return false;
      }
      out->memory.push_back({m["fact"].get<std::string>(), m["seen_step"].get<int>(), m["used_step"].get<int>()});
    }
  }
  return true;
}

std::string step_action_text(const plan_step& s, int64_t id) {
  action a;
  const std::string& k = s.action;
  a.element_id = id;
  if (k == "click") a.kind = action_kind::click;
  else if (k == "hover") a.kind = action_kind::hover;
  else if (k == "clear") a.kind = action_kind::clear;
  else if (k == "type") {
    a.kind = action_kind::type;
    a.text = s.text;
    a.press_enter = s.enter;
  } else if (k == "press") {
    a.kind = action_kind::press;
    a.key = s.key;
  } else if (k == "scroll") {
    a.kind = action_kind::scroll;
    a.direction = s.direction == "up" ? scroll_direction::up : scroll_direction::down;
  } else if (k == "goto") {
    a.kind = action_kind::goto_url;
    a.url = s.url;
  } else if (k == "go_back") a.kind = action_kind::go_back;
  else if (k == "go_forward") a.kind = action_kind::go_forward;
  else if (k == "new_tab") a.kind = action_kind::new_tab;
  else if (k == "close_tab") a.kind = action_kind::close_tab;
  else if (k == "tab_focus") {
    a.kind = action_kind::tab_focus;
    a.tab = s.tab;
  } else if (k == "stop") {
    a.kind = action_kind::stop;
    a.answer = s.answer;
  }
  return to_string(a);
}

std::string describe_step(const plan_step& s) {
  if (!is_element_action(s.action)) return step_action_text(s, -1);
  std::string out = s.action + " [" + s.target.role + " " + py_repr(s.target.name);
  if (s.target.contains) out += " (contains)";
  if (s.target.nth) out += " #" + std::to_string(s.target.nth);
  out += "]";
  if (s.action == "type") out += " [" + s.text + "]";
  return out;
}

std::vector<observed_element> parse_observation(std::string_view text) {
  std::vector<observed_element> out;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(start, end - start);
    start = end + 1;
    size_t i = line.find_first_not_of('\t');
    if (i == std::string_view::npos || line[i] != '[') continue;
    size_t close = line.find(']', i);
    if (close == std::string_view::npos || close == i + 1) continue;
    int64_t id = 0;
    bool digits = true;
    for (size_t k = i + 1; k < close; ++k) {
      if (line[k] < '0' || line[k] > '9') digits = false;
      else id = id * 10 + (line[k] - '0');
    }
    if (!digits || close + 1 >= line.size() || line[close + 1] != ' ') continue;
    size_t role_end = line.find(' ', close + 2);
    if (role_end == std::string_view::npos) continue;
    observed_element e;
    e.id = id;
    e.role = std::string(line.substr(close + 2, role_end - close - 2));
    size_t q = role_end + 1;
    auto name = read_repr(line, &q);
    if (!name) continue;
    e.name = std::move(*name);
    out.push_back(std::move(e));
  }
  return out;
}

bool observation_shows(std::string_view observation, const std::string& text) {
  if (observation.find(text) != std::string_view::npos) return true;
  for (const observed_element& e : parse_observation(observation))
    if (e.name.find(text) != std::string::npos) return true;
  return false;
}

std::optional<int64_t> find_element(const std::vector<observed_element>& elements, const element_ref& ref,
                                    std::string* why) {
  int seen = 0;
  for (const observed_element& e : elements) {
    if (e.role != ref.role) continue;
    bool hit = ref.contains ? e.name.find(ref.name) != std::string::npos : e.name == ref.name;
    if (hit && seen++ == ref.nth) return e.id;
  }
  if (why) {
    std::string same_role;
    int listed = 0;
    for (const observed_element& e : elements) {
      if (e.role != ref.role) continue;
      if (listed++ < 12) same_role += (same_role.empty() ? "" : ", ") + py_repr(e.name);
    }
    if (listed > 12) same_role += ", ... (" + std::to_string(listed) + " in all)";
    *why = "no " + ref.role + " " + py_repr(ref.name) + (ref.contains ? " (substring)" : "") +
           (ref.nth ? " #" + std::to_string(ref.nth) + " (" + std::to_string(seen) + " match)" : "") +
           " in the observation; " + ref.role + "s there: " + (same_role.empty() ? "none" : same_role);
  }
  return std::nullopt;
}

}  // namespace kvarena::tasks
