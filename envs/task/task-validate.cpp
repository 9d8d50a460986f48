// task-validate.cpp: the checks of a loaded task beyond JSON types, duplicate ids in a
// suite, and placeholder substitution (task.h).
#include <algorithm>
#include <cstdio>
#include <map>

#include "eval/eval-locator.h"
#include "eval/eval-text.h"
#include "task/task.h"

namespace kvarena {

const char* const k_eval_types[4] = {"string_match", "url_match", "program_html", "page_image_query"};
const char* const k_task_sites[7] = {"classifieds", "shopping", "reddit", "wikipedia",
                                     "gitlab", "shopping_admin", "map"};
const char* const k_url_notes[2] = {"EXACT", "GOLD in PRED"};

namespace {

// The placeholders a task may use (one per known site, and the homepage).
const char* const k_placeholders[] = {"__CLASSIFIEDS__", "__SHOPPING__", "__REDDIT__",
                                      "__WIKIPEDIA__", "__HOMEPAGE__", "__GITLAB__",
                                      "__SHOPPING_ADMIN__", "__MAP__"};

template <size_t N>
bool one_of(const std::string& s, const char* const (&names)[N]) {
  return std::any_of(std::begin(names), std::end(names), [&](const char* n) { return s == n; });
}

template <size_t N>
std::string list_names(const char* const (&names)[N]) {
  std::string out;
  for (const char* n : names) out += (out.empty() ? "" : ", ") + std::string(n);
  return out;
}

std::string trimmed(const std::string& s) {
  const char* ws = " \t\n\r";
  size_t b = s.find_first_not_of(ws);
  return b == std::string::npos ? "" : s.substr(b, s.find_last_not_of(ws) - b + 1);
}

std::string idx(const std::string& path, size_t i) { return path + "[" + std::to_string(i) + "]"; }

// Calls fn(string, path, is_raw_json) for every string of the task (Task is task or
// const task), so substitution and checks see exactly the same strings.
template <class Refs, class Fn>
void each_answer_string(Refs& r, const std::string& path, Fn& fn) {
  if (r.exact_match) fn(*r.exact_match, path + ".exact_match", false);
  auto list = [&](auto& opt, const char* key) {
    if (opt)
      for (size_t i = 0; i < opt->size(); ++i) fn((*opt)[i], idx(path + "." + key, i), false);
  };
  list(r.must_include, "must_include");
  list(r.must_exclude, "must_exclude");
  list(r.one_of, "one_of");
  list(r.required_values, "required_values");
  if (r.fuzzy_match) {
    if (r.fuzzy_match->is_list)
      for (size_t i = 0; i < r.fuzzy_match->items.size(); ++i)
        fn(r.fuzzy_match->items[i], idx(path + ".fuzzy_match", i), false);
    else
      fn(r.fuzzy_match->text, path + ".fuzzy_match", false);
  }
  for (auto& [k, v] : r.extra) fn(v, path + "." + k, true);
}

template <class Task, class Fn>
void each_string(Task& t, Fn fn) {
  for (size_t i = 0; i < t.sites.size(); ++i) fn(t.sites[i], idx("sites", i), false);
  if (t.storage_state) fn(*t.storage_state, "storage_state", false);
  fn(t.start_url, "start_url", false);
  fn(t.intent, "intent", false);
  if (t.intent_template) fn(*t.intent_template, "intent_template", false);
  if (!t.instantiation_dict.empty()) fn(t.instantiation_dict, "instantiation_dict", true);
  for (size_t i = 0; i < t.image.size(); ++i) fn(t.image[i], t.image_is_list ? idx("image", i) : "image", false);
  auto& e = t.eval;
  if (e.reference_answers) each_answer_string(*e.reference_answers, "eval.reference_answers", fn);
  if (e.reference_url) fn(*e.reference_url, "eval.reference_url", false);
  if (e.string_note) fn(*e.string_note, "eval.string_note", false);
  if (e.program_html) {
    for (size_t i = 0; i < e.program_html->size(); ++i) {
      auto& p = (*e.program_html)[i];
      const std::string path = idx("eval.program_html", i);
      fn(p.url, path + ".url", false);
      fn(p.locator, path + ".locator", false);
      each_answer_string(p.required_contents, path + ".required_contents", fn);
      if (p.prep_actions)
        for (size_t k = 0; k < p.prep_actions->size(); ++k)
          fn((*p.prep_actions)[k], idx(path + ".prep_actions", k), false);
      for (auto& [k, v] : p.extra) fn(v, path + "." + k, true);
    }
  }
  for (auto& [k, v] : e.extra) fn(v, "eval." + k, true);
  if (!t.kvarena.empty()) fn(t.kvarena, "kvarena", true);
  for (auto& [k, v] : t.extra) fn(v, k, true);
}

// `url` escaped for the inside of a JSON string (raw JSON fields).
std::string json_escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned char>(c));
      out += buf;
    } else {
      out += c;
    }
  }
  return out;
}

void replace_all(std::string& s, const std::string& from, const std::string& to) {
  for (size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size()))
    s.replace(at, from.size(), to);
}

void check_answers(const reference_answer_set& r, const std::string& path, bool in_program_html,
                   const std::string& origin, std::vector<std::string>& errors) {
  auto err = [&](const std::string& field, const std::string& what) {
    errors.push_back(origin + ": " + field + ": " + what);
  };
  const bool has_checked_key =
      in_program_html ? (r.exact_match || r.must_include || r.must_exclude || r.required_values || r.fuzzy_match)
                      : r.has_any_key();
  if (!has_checked_key)
    err(path, in_program_html
                  ? "none of exact_match, must_include, must_exclude, required_values, fuzzy_match"
                  : "no reference answer (give exact_match, must_include, fuzzy_match, "
                    "must_exclude, one_of or required_values)");
  auto non_empty = [&](const std::optional<std::vector<std::string>>& list, const char* key) {
    if (!list) return;
    if (list->empty()) err(path + "." + key, "empty list (remove the key or add items)");
    for (size_t i = 0; i < list->size(); ++i)
      for (const std::string& alt : split_on((*list)[i], " |OR| "))
        if (trimmed(alt).empty()) err(idx(path + "." + key, i), "empty reference (it would match any answer)");
  };
  non_empty(r.must_include, "must_include");
  non_empty(r.must_exclude, "must_exclude");
  non_empty(r.one_of, "one_of");
  non_empty(r.required_values, "required_values");
  if (r.required_values)
    for (size_t i = 0; i < r.required_values->size(); ++i)
      for (const std::string& alt : split_on((*r.required_values)[i], " |OR| "))
        if (!trimmed(alt).empty() && !parse_condition(alt))
          err(idx(path + ".required_values", i),
              quote_for_detail(alt) + " is not a condition like '< 700', '>= 3' or '== 0'");
  if (r.fuzzy_match) {
    const fuzzy_reference& f = *r.fuzzy_match;
    if (f.is_list && f.items.empty()) err(path + ".fuzzy_match", "empty list");
    if (!in_program_html && !f.is_list && f.text != "N/A")
      err(path + ".fuzzy_match", "a string must be \"N/A\" (the task is infeasible); give other references as a list");
    if (in_program_html && !f.is_list && trimmed(f.text).empty()) err(path + ".fuzzy_match", "empty reference");
  }
}

}  // namespace

std::vector<std::string> start_urls(const task& t) { return split_on(t.start_url, " |AND| "); }

std::vector<std::string> find_placeholders(std::string_view text) {
  std::vector<std::string> out;
  for (size_t i = 0; i + 4 < text.size(); ++i) {
    if (text[i] != '_' || text[i + 1] != '_' || !(text[i + 2] >= 'A' && text[i + 2] <= 'Z')) continue;
    size_t j = i + 2;
    while (j < text.size()) {
      char c = text[j];
      bool word = (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
      if (!word) break;
      if (c == '_' && j + 1 < text.size() && text[j + 1] == '_') break;  // the closing "__"
      ++j;
    }
    if (j + 1 < text.size() && text[j] == '_' && text[j + 1] == '_') {
      std::string p(text.substr(i, j + 2 - i));
      if (std::find(out.begin(), out.end(), p) == out.end()) out.push_back(p);
      i = j + 1;
    }
  }
  return out;
}

std::vector<std::string> substitute_placeholders(task& t, const site_urls& sites) {
  std::vector<std::pair<std::string, std::string>> subs;  // placeholder -> URL
  for (const auto& [name, url] : sites) {
    std::string p = name;
    if (p.size() < 4 || p.rfind("__", 0) != 0) {
      for (char& c : p)
        if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
      p = "__" + p + "__";
    }
    std::string u = url;
    if (!u.empty() && u.back() == '/') u.pop_back();
    subs.emplace_back(p, u);
  }
  std::vector<std::string> left;
  each_string(t, [&](std::string& s, const std::string&, bool raw_json) {
    if (s.find("__") == std::string::npos) return;
    for (const auto& [p, u] : subs) replace_all(s, p, raw_json ? json_escape(u) : u);
    for (const std::string& p : find_placeholders(s))
      if (std::find(left.begin(), left.end(), p) == left.end()) left.push_back(p);
  });
  return left;
}

std::vector<std::string> task_warnings(const task& t, const std::string& origin) {
  std::vector<std::string> out;
  const std::pair<const char*, const std::optional<std::string>*> difficulties[] = {
      {"reasoning_difficulty", &t.reasoning_difficulty},
      {"visual_difficulty", &t.visual_difficulty},
      {"overall_difficulty", &t.overall_difficulty}};
  for (const auto& [name, value] : difficulties)
    if (*value && *value != "easy" && *value != "medium" && *value != "hard")
      out.push_back(origin + ": " + name + ": unknown difficulty " + quote_for_detail(**value) +
                    " (easy, medium, hard; kept as given: no evaluator reads it)");
  return out;
}

std::vector<std::string> validate_task(const task& t, const std::string& origin) {
  std::vector<std::string> errors;
  auto err = [&](const std::string& field, const std::string& what) {
    errors.push_back(origin + ": " + field + ": " + what);
  };

  if (t.task_id < 0) err("task_id", "must be >= 0, is " + std::to_string(t.task_id));
  if (t.sites.empty()) err("sites", "empty (list the sites the task uses, e.g. [\"shopping\"])");
  for (size_t i = 0; i < t.sites.size(); ++i)
    if (!one_of(t.sites[i], k_task_sites))
      err(idx("sites", i), "unknown site " + quote_for_detail(t.sites[i]) + " (valid: " + list_names(k_task_sites) + ")");
  if (trimmed(t.start_url).empty()) err("start_url", "empty");
  else
    for (const std::string& tab : start_urls(t))
      if (trimmed(tab).empty()) err("start_url", "an empty tab URL in " + quote_for_detail(t.start_url, 200) + " (tabs are joined by \" |AND| \")");
  if (trimmed(t.intent).empty()) err("intent", "empty");
  if (t.viewport_size && (t.viewport_size->width <= 0 || t.viewport_size->height <= 0))
    err("viewport_size", "width and height must be > 0");

  const task_eval& e = t.eval;
  if (e.eval_types.empty()) err("eval.eval_types", "empty (valid: " + list_names(k_eval_types) + ")");
  for (size_t i = 0; i < e.eval_types.size(); ++i) {
    const std::string& type = e.eval_types[i];
    if (!one_of(type, k_eval_types))
      err(idx("eval.eval_types", i), "unknown type " + quote_for_detail(type) + " (valid: " + list_names(k_eval_types) + ")");
    else if (std::find(e.eval_types.begin(), e.eval_types.begin() + static_cast<long>(i), type) !=
             e.eval_types.begin() + static_cast<long>(i))
      err(idx("eval.eval_types", i), quote_for_detail(type) + " is listed twice");
  }
  auto uses = [&](const char* type) {
    return std::find(e.eval_types.begin(), e.eval_types.end(), type) != e.eval_types.end();
  };

  if (e.reference_answers) check_answers(*e.reference_answers, "eval.reference_answers", false, origin, errors);
  if (uses("string_match") && !e.reference_answers)
    err("eval.reference_answers", "string_match needs reference answers (it is null or missing)");
  if (e.reference_answers && e.reference_answers->fuzzy_match && e.reference_answers->fuzzy_match->is_na() &&
      !e.string_note)
    err("eval.string_note", "fuzzy_match \"N/A\" needs the reason the task is infeasible in string_note");

  if (e.url_note && !one_of(*e.url_note, k_url_notes))
    err("eval.url_note", "unknown rule " + quote_for_detail(*e.url_note) + " (valid: " + list_names(k_url_notes) + ")");
  if (uses("url_match")) {
    if (!e.reference_url || trimmed(*e.reference_url).empty())
      err("eval.reference_url", "url_match needs a reference URL");
    else
      for (const std::string& alt : split_on(*e.reference_url, " |OR| "))
        if (trimmed(alt).empty())
          err("eval.reference_url", "an empty alternative in " + quote_for_detail(*e.reference_url, 200));
  }

  if (uses("program_html") && (!e.program_html || e.program_html->empty()))
    err("eval.program_html", "program_html needs at least one target {url, locator, required_contents}");
  if (e.program_html) {
    for (size_t i = 0; i < e.program_html->size(); ++i) {
      const program_html_target& p = (*e.program_html)[i];
      const std::string path = idx("eval.program_html", i);
      std::string url = trimmed(p.url);
      if (url.empty()) err(path + ".url", "empty (use \"last\" for the page the episode ended on)");
      if (url.rfind("func:", 0) == 0) {
        func_call call;
        std::string why;
        if (!parse_func_call(url.substr(5), &call, &why)) err(path + ".url", why);
      }
      parsed_locator loc = parse_locator(p.locator);
      if (loc.kind == locator_kind::invalid) err(path + ".locator", loc.error);
      check_answers(p.required_contents, path + ".required_contents", true, origin, errors);
    }
  }

  each_string(t, [&](const std::string& s, const std::string& path, bool) {
    if (s.find("__") == std::string::npos) return;
    for (const std::string& p : find_placeholders(s))
      if (!one_of(p, k_placeholders))
        err(path, "unknown placeholder " + p + " (valid: " + list_names(k_placeholders) + ")");
  });
  return errors;
}

std::vector<std::string> check_duplicate_ids(const std::vector<task>& tasks,
                                             const std::vector<std::string>& origins) {
  std::vector<std::string> errors;
  std::map<int64_t, size_t> first;
  for (size_t i = 0; i < tasks.size(); ++i) {
    auto [it, inserted] = first.emplace(tasks[i].task_id, i);
    if (inserted) continue;
    auto origin = [&](size_t k) { return k < origins.size() ? origins[k] : "task #" + std::to_string(k); };
    errors.push_back(origin(i) + ": task_id: " + std::to_string(tasks[i].task_id) +
                     " is already used by " + origin(it->second) + " (task ids must be unique in a suite)");
  }
  return errors;
}

}  // namespace kvarena
