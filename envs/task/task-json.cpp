// task-json.cpp: task <-> VWA JSON, and loading suites from files and folders (task.h).
// The only file of the task model that includes nlohmann/json.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <set>

#include "common/json-nesting.h"
#include "eval/eval-text.h"
#include "task/task.h"

namespace kvarena {
namespace {

using json = nlohmann::json;
using ojson = nlohmann::ordered_json;
namespace fs = std::filesystem;

// Deeper task files are refused before nlohmann sees them (its dump and compare recurse).
constexpr int k_max_json_depth = 64;

// Line and column (1-based) of a byte offset, for parse error messages.
std::string line_col(std::string_view text, size_t byte) {
  size_t line = 1, col = 1;
  for (size_t i = 0; i < byte && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++line;
      col = 1;
    } else {
      ++col;
    }
  }
  return "line " + std::to_string(line) + ", column " + std::to_string(col);
}

// Reads one task object, collecting "ORIGIN: path: what" errors.
class task_reader {
 public:
  task_reader(const std::string& origin, std::vector<std::string>& errors, std::vector<std::string>& warnings)
      : origin_(origin), errors_(errors), warnings_(warnings) {}

  void warning(const std::string& path, const std::string& what) {
    warnings_.push_back(origin_ + ": " + (path.empty() ? "" : path + ": ") + what);
  }

  void error(const std::string& path, const std::string& what) {
    errors_.push_back(origin_ + ": " + (path.empty() ? "" : path + ": ") + what);
  }

  static std::string join(const std::string& path, const std::string& key) {
    return path.empty() ? key : path + "." + key;
  }

  // Present and not null.
  static const json* find(const json& obj, const char* key) {
    auto it = obj.find(key);
    if (it == obj.end() || it->is_null()) return nullptr;
    return &*it;
  }

  bool require(const json& obj, const char* key, const std::string& path) {
    if (obj.contains(key) && !obj.at(key).is_null()) return true;
    error(join(path, key), obj.contains(key) ? "required field is null" : "missing required field");
    return false;
  }

  // A string; numbers are accepted as their text where allow_number (VWA answers such
  // as exact_match sometimes are numbers).
  std::optional<std::string> str(const json& obj, const char* key, const std::string& path,
                                 bool allow_number = false) {
    const json* v = find(obj, key);
    if (!v) return std::nullopt;
    if (v->is_string()) return v->get<std::string>();
    if (allow_number && v->is_number()) return v->dump();
    error(join(path, key), std::string("expected a string, got ") + v->type_name());
    return std::nullopt;
  }

  std::optional<std::vector<std::string>> str_list(const json& obj, const char* key,
                                                   const std::string& path) {
    const json* v = find(obj, key);
    if (!v) return std::nullopt;
    const std::string p = join(path, key);
    if (!v->is_array()) {
      error(p, std::string("expected a list of strings, got ") + v->type_name());
      return std::nullopt;
    }
    std::vector<std::string> out;
    for (size_t i = 0; i < v->size(); ++i) {
      const json& e = (*v)[i];
      if (e.is_string()) out.push_back(e.get<std::string>());
      else if (e.is_number()) out.push_back(e.dump());  // ["11"] written as [11]
      else error(p + "[" + std::to_string(i) + "]", std::string("expected a string, got ") + e.type_name());
    }
    return out;
  }

  std::optional<int64_t> integer(const json& obj, const char* key, const std::string& path) {
    const json* v = find(obj, key);
    if (!v) return std::nullopt;
    if (v->is_number_integer() && !(v->is_number_unsigned() && v->get<uint64_t>() > INT64_MAX))
      return v->get<int64_t>();
    error(join(path, key), std::string("expected an integer, got ") +
                               (v->is_number() ? v->dump() : v->type_name()));
    return std::nullopt;
  }

  bool boolean(const json& obj, const char* key, const std::string& path, bool fallback) {
    const json* v = find(obj, key);
    if (!v) return fallback;
    if (v->is_boolean()) return v->get<bool>();
    error(join(path, key), std::string("expected true or false, got ") + v->type_name());
    return fallback;
  }

  // An object kept as compact JSON text; "" when absent or null.
  std::string raw_object(const json& obj, const char* key, const std::string& path) {
    const json* v = find(obj, key);
    if (!v) return "";
    if (!v->is_object()) {
      error(join(path, key), std::string("expected an object, got ") + v->type_name());
      return "";
    }
    return v->dump();
  }

  static raw_json_map extras(const json& obj, std::initializer_list<const char*> known) {
    raw_json_map out;
    for (auto it = obj.begin(); it != obj.end(); ++it) {
      bool is_known = false;
      for (const char* k : known) is_known = is_known || it.key() == k;
      if (!is_known) out[it.key()] = it->dump();
    }
    return out;
  }

  reference_answer_set answers(const json& obj, const std::string& path) {
    reference_answer_set r;
    r.exact_match = str(obj, "exact_match", path, /*allow_number=*/true);
    r.must_include = str_list(obj, "must_include", path);
    r.must_exclude = str_list(obj, "must_exclude", path);
    r.one_of = str_list(obj, "one_of", path);
    r.required_values = str_list(obj, "required_values", path);
    if (const json* v = find(obj, "fuzzy_match")) {
      fuzzy_reference f;
      if (v->is_string()) {
        f.is_list = false;
        f.text = v->get<std::string>();
        r.fuzzy_match = f;
      } else if (v->is_array()) {
        if (auto items = str_list(obj, "fuzzy_match", path)) {
          f.items = *items;
          r.fuzzy_match = f;
        }
      } else {
        error(join(path, "fuzzy_match"),
              std::string("expected a list of strings or \"N/A\", got ") + v->type_name());
      }
    }
    r.extra = extras(obj, {"exact_match", "must_include", "fuzzy_match", "must_exclude",
                           "one_of", "required_values"});
    return r;
  }

  std::optional<program_html_target> target(const json& obj, const std::string& path) {
    if (!obj.is_object()) {
      error(path, std::string("expected an object {url, locator, required_contents}, got ") +
                      obj.type_name());
      return std::nullopt;
    }
    program_html_target t;
    bool ok = true;
    for (const char* key : {"url", "locator", "required_contents"})
      if (!require(obj, key, path)) ok = false;
    t.url = str(obj, "url", path).value_or("");
    t.locator = str(obj, "locator", path).value_or("");
    if (const json* rc = find(obj, "required_contents")) {
      if (rc->is_object()) t.required_contents = answers(*rc, join(path, "required_contents"));
      else error(join(path, "required_contents"), std::string("expected an object, got ") + rc->type_name());
    }
    t.prep_actions = str_list(obj, "prep_actions", path);
    t.extra = extras(obj, {"url", "locator", "required_contents", "prep_actions"});
    if (!ok) return std::nullopt;
    return t;
  }

  void eval(const json& obj, task_eval& e) {
    const std::string path = "eval";
    if (!obj.is_object()) {
      error(path, std::string("expected an object, got ") + obj.type_name());
      return;
    }
    if (require(obj, "eval_types", path))
      e.eval_types = str_list(obj, "eval_types", path).value_or(std::vector<std::string>{});
    if (const json* ra = find(obj, "reference_answers")) {
      if (ra->is_object()) e.reference_answers = answers(*ra, join(path, "reference_answers"));
      else error(join(path, "reference_answers"),
                 std::string("expected an object or null, got ") + ra->type_name());
    }
    e.reference_url = str(obj, "reference_url", path);
    e.url_note = str(obj, "url_note", path);
    e.string_note = str(obj, "string_note", path);
    if (const json* ph = find(obj, "program_html")) {
      if (ph->is_array()) {
        std::vector<program_html_target> targets;
        for (size_t i = 0; i < ph->size(); ++i)
          if (auto t = target((*ph)[i], "eval.program_html[" + std::to_string(i) + "]"))
            targets.push_back(std::move(*t));
        e.program_html = std::move(targets);
      } else {
        error(join(path, "program_html"), std::string("expected a list, got ") + ph->type_name());
      }
    }
    e.extra = extras(obj, {"eval_types", "reference_answers", "reference_url", "url_note",
                           "program_html", "string_note"});
  }

  void read(const json& j, task& t) {
    if (!j.is_object()) {
      error("", std::string("expected a task object, got ") + j.type_name());
      return;
    }
    for (const char* key : {"task_id", "sites", "start_url", "intent", "eval"}) require(j, key, "");
    t.task_id = integer(j, "task_id", "").value_or(0);
    t.sites = str_list(j, "sites", "").value_or(std::vector<std::string>{});
    t.require_login = boolean(j, "require_login", "", false);
    t.storage_state = str(j, "storage_state", "");
    t.start_url = str(j, "start_url", "").value_or("");
    t.intent = str(j, "intent", "").value_or("");
    t.intent_template = str(j, "intent_template", "");
    t.instantiation_dict = raw_object(j, "instantiation_dict", "");
    t.intent_template_id = integer(j, "intent_template_id", "");
    if (const json* img = find(j, "image")) {
      if (img->is_string()) {
        t.image = {img->get<std::string>()};
      } else if (img->is_array()) {
        t.image = str_list(j, "image", "").value_or(std::vector<std::string>{});
        t.image_is_list = true;
      } else {
        error("image", std::string("expected null, a path or a list of paths, got ") + img->type_name());
      }
    }
    t.require_reset = boolean(j, "require_reset", "", false);
    if (const json* vp = find(j, "viewport_size")) {
      if (!vp->is_object()) {
        error("viewport_size", std::string("expected {\"width\", \"height\"}, got ") + vp->type_name());
      } else {
        for (auto it = vp->begin(); it != vp->end(); ++it)
          if (it.key() != "width" && it.key() != "height")
            error("viewport_size", "unknown key '" + it.key() + "' (expected width, height)");
        // A missing side gets VisualWebArena's default (1280 x 720), with a warning.
        viewport v;
        const std::pair<const char*, int64_t> sides[] = {{"width", 1280}, {"height", 720}};
        for (const auto& [key, def] : sides)
          if (!find(*vp, key))
            warning("viewport_size." + std::string(key),
                    "missing: " + std::to_string(def) + " (VisualWebArena's default)");
        v.width = integer(*vp, "width", "viewport_size").value_or(1280);
        v.height = integer(*vp, "height", "viewport_size").value_or(720);
        t.viewport_size = v;
      }
    }
    if (const json* e = find(j, "eval")) eval(*e, t.eval);
    t.reasoning_difficulty = str(j, "reasoning_difficulty", "");
    t.visual_difficulty = str(j, "visual_difficulty", "");
    t.overall_difficulty = str(j, "overall_difficulty", "");
    t.kvarena = raw_object(j, "kvarena", "");
    t.extra = extras(j, {"task_id", "sites", "require_login", "storage_state", "start_url",
                         "intent", "intent_template", "instantiation_dict",
                         "intent_template_id", "image", "require_reset", "viewport_size",
                         "eval", "reasoning_difficulty", "visual_difficulty",
                         "overall_difficulty", "kvarena"});
  }

 private:
  const std::string& origin_;
  std::vector<std::string>& errors_;
  std::vector<std::string>& warnings_;
};

// ---- writing ----

// Raw JSON text back to a value; text that does not parse (a struct filled by hand) is
// written as a JSON string rather than lost or thrown.
ojson raw_value(const std::string& text) {
  ojson v = ojson::parse(text, nullptr, /*allow_exceptions=*/false);
  if (v.is_discarded()) return ojson(text);
  return v;
}

void put_extras(ojson& out, const raw_json_map& extra) {
  for (const auto& [k, v] : extra)
    if (!out.contains(k)) out[k] = raw_value(v);
}

ojson answers_json(const reference_answer_set& r) {
  ojson o = ojson::object();
  if (r.exact_match) o["exact_match"] = *r.exact_match;
  if (r.must_include) o["must_include"] = *r.must_include;
  if (r.fuzzy_match) {
    if (r.fuzzy_match->is_list) o["fuzzy_match"] = r.fuzzy_match->items;
    else o["fuzzy_match"] = r.fuzzy_match->text;
  }
  if (r.must_exclude) o["must_exclude"] = *r.must_exclude;
  if (r.one_of) o["one_of"] = *r.one_of;
  if (r.required_values) o["required_values"] = *r.required_values;
  put_extras(o, r.extra);
  return o;
}

ojson task_json(const task& t) {
  ojson o = ojson::object();
  o["sites"] = t.sites;
  o["task_id"] = t.task_id;
  o["require_login"] = t.require_login;
  if (t.storage_state) o["storage_state"] = *t.storage_state;
  o["start_url"] = t.start_url;
  if (t.intent_template) o["intent_template"] = *t.intent_template;
  o["intent"] = t.intent;
  if (t.image_is_list) o["image"] = t.image;
  else if (!t.image.empty()) o["image"] = t.image.front();
  if (!t.instantiation_dict.empty()) o["instantiation_dict"] = raw_value(t.instantiation_dict);
  o["require_reset"] = t.require_reset;
  if (t.viewport_size)
    o["viewport_size"] = ojson{{"width", t.viewport_size->width}, {"height", t.viewport_size->height}};

  const task_eval& e = t.eval;
  ojson ev = ojson::object();
  ev["eval_types"] = e.eval_types;
  ev["reference_answers"] = e.reference_answers ? answers_json(*e.reference_answers) : ojson(nullptr);
  if (e.reference_url) ev["reference_url"] = *e.reference_url;
  if (e.program_html) {
    ojson targets = ojson::array();
    for (const program_html_target& p : *e.program_html) {
      ojson tj = ojson::object();
      tj["url"] = p.url;
      tj["locator"] = p.locator;
      tj["required_contents"] = answers_json(p.required_contents);
      if (p.prep_actions) tj["prep_actions"] = *p.prep_actions;
      put_extras(tj, p.extra);
      targets.push_back(std::move(tj));
    }
    ev["program_html"] = std::move(targets);
  }
  if (e.url_note) ev["url_note"] = *e.url_note;
  if (e.string_note) ev["string_note"] = *e.string_note;
  put_extras(ev, e.extra);
  o["eval"] = std::move(ev);

  if (t.reasoning_difficulty) o["reasoning_difficulty"] = *t.reasoning_difficulty;
  if (t.visual_difficulty) o["visual_difficulty"] = *t.visual_difficulty;
  if (t.overall_difficulty) o["overall_difficulty"] = *t.overall_difficulty;
  if (t.intent_template_id) o["intent_template_id"] = *t.intent_template_id;
  if (!t.kvarena.empty()) o["kvarena"] = raw_value(t.kvarena);
  put_extras(o, t.extra);
  return o;
}

std::string dump(const ojson& j, int indent) {
  // Replace invalid UTF-8 instead of throwing: a task read from a file is valid UTF-8
  // (the parser checks), but a struct filled by hand may not be.
  return j.dump(indent < 0 ? -1 : indent, ' ', false, ojson::error_handler_t::replace);
}

// Parses text into tasks; *was_array tells whether the top level was an array.
task_suite parse_impl(std::string_view text, const std::string& origin, bool* was_array) {
  task_suite suite;
  *was_array = false;
  size_t deep_at = 0;
  if (!json_nesting_within(text, k_max_json_depth, &deep_at)) {
    suite.errors.push_back(origin + ": JSON nested deeper than " +
                           std::to_string(k_max_json_depth) + " levels at " +
                           line_col(text, deep_at));
    return suite;
  }
  json root;
  try {
    root = json::parse(text.begin(), text.end());
  } catch (const json::exception& e) {
    // nlohmann's message: "[json.exception.parse_error.101] parse error at line 1, ...: ..."
    // (out_of_range.406 for a number too large for a double has no position).
    std::string what = e.what();
    size_t colon = what.find("] ");
    std::string where;
    if (const auto* pe = dynamic_cast<const json::parse_error*>(&e))
      where = " (" + line_col(text, pe->byte > 0 ? pe->byte - 1 : 0) + ")";
    suite.errors.push_back(origin + ": invalid JSON" + where + ": " +
                           message_snippet(colon == std::string::npos ? what : what.substr(colon + 2), 300));
    return suite;
  }
  auto one = [&](const json& j, const std::string& where) {
    std::vector<std::string> errors, warnings;
    task t;
    try {
      task_reader(where, errors, warnings).read(j, t);
    } catch (const std::exception& e) {  // a reader bug, never a user error: say so
      errors.push_back(where + ": internal error while reading the task (please report): " + e.what());
    }
    if (errors.empty()) errors = validate_task(t, where);
    if (errors.empty()) {
      const std::vector<std::string> w = task_warnings(t, where);
      warnings.insert(warnings.end(), w.begin(), w.end());
      suite.tasks.push_back(std::move(t));
      suite.origins.push_back(where);
      suite.warnings.insert(suite.warnings.end(), warnings.begin(), warnings.end());
    }
    suite.errors.insert(suite.errors.end(), errors.begin(), errors.end());
  };
  if (root.is_array()) {
    *was_array = true;
    for (size_t i = 0; i < root.size(); ++i) one(root[i], origin + "[" + std::to_string(i) + "]");
  } else {
    one(root, origin);
  }
  return suite;
}

bool all_digits(const std::string& s) {
  return !s.empty() && s.size() < 19 &&
         std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

void append(task_suite& into, task_suite&& from) {
  for (size_t i = 0; i < from.tasks.size(); ++i) {
    into.tasks.push_back(std::move(from.tasks[i]));
    into.origins.push_back(std::move(from.origins[i]));
  }
  into.errors.insert(into.errors.end(), from.errors.begin(), from.errors.end());
  into.warnings.insert(into.warnings.end(), from.warnings.begin(), from.warnings.end());
}

bool read_whole_file(const fs::path& p, std::string& out) {
  std::ifstream f(p, std::ios::binary);
  if (!f) return false;
  out.assign(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
  return !f.bad();
}

// One file of a folder or a single file: parses, and checks <n>.json holds task_id n.
void load_file(const fs::path& p, task_suite& suite) {
  std::string text;
  if (!read_whole_file(p, text)) {
    suite.errors.push_back(p.string() + ": cannot read the file");
    return;
  }
  bool was_array = false;
  task_suite part = parse_impl(text, p.string(), &was_array);
  std::string stem = p.stem().string();
  if (!was_array && all_digits(stem) && part.tasks.size() == 1 &&
      part.tasks[0].task_id != std::stoll(stem)) {
    part.errors.push_back(p.string() + ": task_id: is " + std::to_string(part.tasks[0].task_id) +
                          " but the file is named " + p.filename().string() +
                          " (rename the file or fix the id)");
    part.tasks.clear();
    part.origins.clear();
  }
  append(suite, std::move(part));
}

}  // namespace

task_suite parse_tasks(std::string_view json_text, const std::string& origin) {
  bool was_array = false;
  task_suite suite = parse_impl(json_text, origin, &was_array);
  auto dup = check_duplicate_ids(suite.tasks, suite.origins);
  suite.errors.insert(suite.errors.end(), dup.begin(), dup.end());
  return suite;
}

task_suite load_tasks(const std::string& path) {
  task_suite suite;
  std::error_code ec;
  fs::path root(path);
  if (fs::is_directory(root, ec)) {
    std::vector<fs::path> files;
    for (const auto& entry : fs::directory_iterator(root, ec)) {
      std::string name = entry.path().filename().string();
      if (name.empty() || name[0] == '.' || entry.path().extension() != ".json") continue;
      if (entry.is_regular_file(ec)) files.push_back(entry.path());
    }
    if (ec) {
      suite.errors.push_back(path + ": cannot list the folder: " + ec.message());
      return suite;
    }
    // Numeric ids in numeric order first, then the other names alphabetically.
    std::sort(files.begin(), files.end(), [](const fs::path& a, const fs::path& b) {
      std::string sa = a.stem().string(), sb = b.stem().string();
      bool na = all_digits(sa), nb = all_digits(sb);
      if (na != nb) return na;
      if (na) return std::stoll(sa) != std::stoll(sb) ? std::stoll(sa) < std::stoll(sb) : sa < sb;
      return a.filename() < b.filename();
    });
    if (files.empty()) {
      suite.errors.push_back(path + ": no *.json task files in the folder");
      return suite;
    }
    for (const fs::path& f : files) load_file(f, suite);
  } else if (fs::exists(root, ec)) {
    load_file(root, suite);
  } else {
    suite.errors.push_back(path + ": no such file or folder");
    return suite;
  }
  auto dup = check_duplicate_ids(suite.tasks, suite.origins);
  suite.errors.insert(suite.errors.end(), dup.begin(), dup.end());
  return suite;
}

std::string task_to_json(const task& t, int indent) { return dump(task_json(t), indent); }

std::string tasks_to_json(const std::vector<task>& tasks, int indent) {
  ojson arr = ojson::array();
  for (const task& t : tasks) arr.push_back(task_json(t));
  return dump(arr, indent);
}

bool write_task_file(const std::string& path, const task& t, std::string* err) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  if (!f) {
    if (err) *err = path + ": cannot open for writing";
    return false;
  }
  f << task_to_json(t) << '\n';
  f.close();
  if (!f) {
    if (err) *err = path + ": write failed";
    return false;
  }
  return true;
}

}  // namespace kvarena
