// task.h: one task of a suite in VWA's JSON format (specs/web-envs.md §1) as plain structs,
// and the functions that load, validate, write and instantiate them.
//
// Loading accepts a file holding one task object, a `*.raw.json`-style file holding an
// array of them, or a folder of `<id>.json` files. Every problem is collected (not only
// the first) as "ORIGIN: field.path: what is wrong", ORIGIN being the file, or
// "file[3]" for the 4th task of an array. Fields this loader does not know are kept as raw
// JSON text in `extra` maps at each level, so writing a task back preserves them (VWA's
// "comments", "geolocation", WA's extra eval keys, future fields of other loaders).
// Optional fields absent on input stay absent when written back (`null` and absent mean
// the same); require_login, require_reset and eval.reference_answers are always written,
// as VWA's files have them.
//
// Not here: evaluating a task (evaluator.h). nlohmann/json stays inside task-json.cpp.
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kvarena {

// Unknown keys of one JSON object: key -> the value as compact JSON text.
using raw_json_map = std::map<std::string, std::string>;

// "fuzzy_match": a list of references (each judged), or one string: "N/A" in
// reference_answers (the task is infeasible), alternatives joined by " |OR| " in a
// program_html target's required_contents.
struct fuzzy_reference {
  bool is_list = true;
  std::vector<std::string> items;  // the list form
  std::string text;                // the string form
  bool is_na() const { return !is_list && text == "N/A"; }
  bool operator==(const fuzzy_reference&) const = default;
};

// eval.reference_answers, and also a program_html target's required_contents (where only
// the first present key of exact_match, must_include, must_exclude, required_values,
// fuzzy_match counts).
struct reference_answer_set {
  std::optional<std::string> exact_match;
  std::optional<std::vector<std::string>> must_include;   // items may hold " |OR| "
  std::optional<fuzzy_reference> fuzzy_match;
  std::optional<std::vector<std::string>> must_exclude;
  std::optional<std::vector<std::string>> one_of;
  std::optional<std::vector<std::string>> required_values;  // "< 700", ">= 3 |OR| == 0"
  raw_json_map extra;
  bool has_any_key() const {
    return exact_match || must_include || fuzzy_match || must_exclude || one_of ||
           required_values;
  }
  bool operator==(const reference_answer_set&) const = default;
};

struct program_html_target {
  std::string url;      // "last", "func:helper(args)", or a URL (placeholders allowed)
  std::string locator;  // "" (whole page), JS (document.querySelector(...)...), "func:..."
  reference_answer_set required_contents;
  std::optional<std::vector<std::string>> prep_actions;  // JS run before the locator
  raw_json_map extra;
  bool operator==(const program_html_target&) const = default;
};

struct task_eval {
  std::vector<std::string> eval_types;  // string_match, url_match, program_html, page_image_query
  std::optional<reference_answer_set> reference_answers;  // null for url/program tasks
  std::optional<std::string> reference_url;               // alternatives joined by " |OR| "
  std::optional<std::string> url_note;                    // "EXACT" (default) or "GOLD in PRED"
  std::optional<std::vector<program_html_target>> program_html;
  std::optional<std::string> string_note;  // why an infeasible task is infeasible
  raw_json_map extra;                      // e.g. page_image_query, reference_answer_raw_annotation
  bool operator==(const task_eval&) const = default;
};

struct viewport {
  int64_t width = 0;
  int64_t height = 0;
  bool operator==(const viewport&) const = default;
};

struct task {
  int64_t task_id = 0;
  std::vector<std::string> sites;
  bool require_login = false;
  std::optional<std::string> storage_state;  // null: not logged in from a saved state
  std::string start_url;                     // several tabs joined by " |AND| "
  std::string intent;
  std::optional<std::string> intent_template;
  std::string instantiation_dict;  // raw JSON text of the object; "" when absent
  std::optional<int64_t> intent_template_id;
  std::vector<std::string> image;  // input images; null/absent: none
  bool image_is_list = false;      // written back as a list (else one string, or null)
  bool require_reset = false;
  std::optional<viewport> viewport_size;
  task_eval eval;
  std::optional<std::string> reasoning_difficulty;  // easy | medium | hard
  std::optional<std::string> visual_difficulty;
  std::optional<std::string> overall_difficulty;
  std::string kvarena;  // raw JSON text of the "kvarena" extension object; "" when absent
  raw_json_map extra;
  bool operator==(const task&) const = default;
};

// The known names, for validation and messages.
extern const char* const k_eval_types[4];      // string_match url_match program_html page_image_query
extern const char* const k_task_sites[7];      // classifieds shopping reddit wikipedia + WA's
extern const char* const k_url_notes[2];       // "EXACT" "GOLD in PRED"

// The tabs a task starts with: start_url split on " |AND| ".
std::vector<std::string> start_urls(const task& t);

struct task_suite {
  std::vector<task> tasks;           // the tasks that loaded without error, in order
  std::vector<std::string> origins;  // per task: "dir/12.json" or "file.raw.json[3]"
  std::vector<std::string> errors;   // every problem, "ORIGIN: field: what is wrong"
  // What VisualWebArena tolerates and kvarena accepts too, "ORIGIN: field: what": a default
  // filled in (viewport_size without a height: 720, as VWA), a field no VWA script reads
  // holding an unknown value (difficulty "mediun"). The task loads.
  std::vector<std::string> warnings;
  bool ok() const { return errors.empty(); }
};

// A file (one task object, or an array of them) or a folder of *.json files (sorted by
// numeric id). Validates every task (validate_task) and the suite (duplicate task_id; a
// file named <n>.json must hold task_id n).
task_suite load_tasks(const std::string& path);

// JSON text holding one task object or an array of them; `origin` names it in messages.
task_suite parse_tasks(std::string_view json_text, const std::string& origin);

// The task as VWA-format JSON (known fields in VWA's order, then unknown ones).
// indent < 0: one line.
std::string task_to_json(const task& t, int indent = 2);
// Several tasks as one JSON array (the *.raw.json form).
std::string tasks_to_json(const std::vector<task>& tasks, int indent = 2);
// Writes task_to_json to `path`; false with *err set when the file cannot be written.
bool write_task_file(const std::string& path, const task& t, std::string* err);

// Checks beyond JSON types: required fields present and non-empty, known eval types,
// sites, url_note, difficulty, the references each eval type needs, required_values
// conditions that parse, placeholders that are known. Messages "ORIGIN: field: what".
std::vector<std::string> validate_task(const task& t, const std::string& origin);
// The warnings of a loaded task (task_suite::warnings): difficulty values outside easy,
// medium, hard (no VisualWebArena script reads them).
std::vector<std::string> task_warnings(const task& t, const std::string& origin);

// Duplicate task_id across a suite; one message per duplicate naming both origins.
std::vector<std::string> check_duplicate_ids(const std::vector<task>& tasks,
                                             const std::vector<std::string>& origins);

// Site name ("shopping") -> base URL ("http://127.0.0.1:7770"). A placeholder is
// "__" + upper(name) + "__": __CLASSIFIEDS__, __SHOPPING__, __REDDIT__, __WIKIPEDIA__,
// __HOMEPAGE__ (and WA's __GITLAB__, __SHOPPING_ADMIN__, __MAP__ the same way).
using site_urls = std::map<std::string, std::string>;

// Replaces every known placeholder in every string of the task (intent, URLs, answers,
// locators, prep actions, raw extras, the kvarena object) with its site's URL, one
// trailing '/' of the URL dropped so "__SHOPPING__/cart" never gets "//". Returns the
// placeholders (__NAME__ of upper-case letters, digits and '_') that remain because the
// map has no URL for them: empty means fully instantiated.
std::vector<std::string> substitute_placeholders(task& t, const site_urls& sites);

// The upper-case placeholders in a text, in order of first appearance.
std::vector<std::string> find_placeholders(std::string_view text);

}  // namespace kvarena
