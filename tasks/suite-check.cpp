// suite-check.cpp: see suite-check.h.
#include "suite-check.h"

#include <algorithm>
#include <cstdio>

#include "eval/eval-text.h"
#include "oracle-plan.h"

namespace kvarena::tasks {

const char* const k_local_sites[3] = {"classifieds", "shopping", "reddit"};

namespace {

std::string upper(std::string s) {
  for (char& c : s)
    if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
  return s;
}

bool has(const std::vector<std::string>& v, const std::string& s) { return std::find(v.begin(), v.end(), s) != v.end(); }

std::string join(const std::vector<std::string>& v, const char* sep) {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : sep) + s;
  return out;
}

// A UTF-8 safe prefix of at most `width` bytes, "..." when cut.
std::string cut(const std::string& s, size_t width) {
  if (s.size() <= width) return s;
  size_t n = width > 3 ? width - 3 : 0;
  while (n > 0 && (static_cast<unsigned char>(s[n]) & 0xC0) == 0x80) --n;
  return s.substr(0, n) + "...";
}

}  // namespace

std::vector<std::string> check_task_extension(const task& t, const std::string& origin, bool require_memory) {
  std::vector<std::string> errors;
  auto err = [&](const std::string& what) { errors.push_back(origin + ": " + what); };

  for (const std::string& s : t.sites)
    if (std::none_of(std::begin(k_local_sites), std::end(k_local_sites), [&](const char* k) { return s == k; }))
      err("sites: '" + s + "' is not a site of the local env (classifieds, shopping, reddit)");

  // Placeholders only of the task's own sites (and __HOMEPAGE__): the env logs in only there.
  std::vector<std::string> allowed = {"__HOMEPAGE__"};
  for (const std::string& s : t.sites) allowed.push_back("__" + upper(s) + "__");
  auto check_text = [&](const std::string& text, const std::string& where) {
    for (const std::string& p : find_placeholders(text))
      if (!has(allowed, p)) err(where + ": uses " + p + " but the task's sites are [" + join(t.sites, ", ") + "]");
  };
  check_text(t.start_url, "start_url");

  task_extension ext;
  std::string why;
  if (!parse_extension(t.kvarena, &ext, &why)) {
    err(why);
    return errors;
  }
  check_text(t.kvarena, "kvarena");
  const int n = static_cast<int>(ext.plan.size());
  if (require_memory && ext.memory.empty())
    err("kvarena.memory: a long-horizon task needs at least one memory fact (seen_step, used_step)");
  for (size_t i = 0; i < ext.memory.size(); ++i) {
    const memory_fact& f = ext.memory[i];
    std::string where = "kvarena.memory[" + std::to_string(i) + "]";
    if (f.fact.empty()) err(where + ": empty fact");
    if (f.seen_step < 0 || f.seen_step >= n || f.used_step < 0 || f.used_step >= n) {
      err(where + ": seen_step and used_step must be steps of the plan (0.." + std::to_string(n - 1) + ")");
      continue;
    }
    if (f.used_step - f.seen_step < k_min_memory_distance)
      err(where + ": used " + std::to_string(f.used_step - f.seen_step) + " steps after it is seen; a memory fact needs " +
          std::to_string(k_min_memory_distance) + " or more");
    if (!has(ext.plan[static_cast<size_t>(f.seen_step)].expect, f.fact))
      err(where + ": step " + std::to_string(f.seen_step) + " must list the fact " + quote_for_detail(f.fact) +
          " in its \"expect\", so the oracle proves it is on screen there");
  }
  return errors;
}

suite_check_result check_suite(const std::string& path, bool require_memory) {
  suite_check_result r;
  task_suite s = load_tasks(path);
  r.errors = s.errors;
  for (size_t i = 0; i < s.tasks.size(); ++i) {
    auto e = check_task_extension(s.tasks[i], s.origins[i], require_memory);
    r.errors.insert(r.errors.end(), e.begin(), e.end());
  }
  if (s.tasks.empty() && s.errors.empty()) r.errors.push_back(path + ": no tasks found");
  r.tasks = std::move(s.tasks);
  r.origins = std::move(s.origins);
  return r;
}

std::string suite_table(const std::vector<task>& tasks, size_t intent_width) {
  struct row {
    std::string id, sites, types, difficulty, intent;
  };
  std::vector<row> rows = {{"id", "sites", "eval", "difficulty", "intent"}};
  for (const task& t : tasks) {
    std::vector<std::string> types;
    for (const std::string& e : t.eval.eval_types) {
      std::string name = e;
      if (e == "string_match" && t.eval.reference_answers) {
        const auto& a = *t.eval.reference_answers;
        if (a.fuzzy_match && a.fuzzy_match->is_na()) name += "(N/A)";
        else if (a.exact_match) name += "(exact)";
        else if (a.fuzzy_match) name += "(fuzzy)";
        else if (a.required_values) name += "(values)";
        else if (a.must_include) name += "(include)";
      }
      types.push_back(name);
    }
    rows.push_back({std::to_string(t.task_id), join(t.sites, ","), join(types, ","),
                    t.overall_difficulty.value_or("-"), cut(t.intent, intent_width)});
  }
  size_t w[4] = {0, 0, 0, 0};
  for (const row& r : rows) {
    w[0] = std::max(w[0], r.id.size());
    w[1] = std::max(w[1], r.sites.size());
    w[2] = std::max(w[2], r.types.size());
    w[3] = std::max(w[3], r.difficulty.size());
  }
  std::string out;
  for (const row& r : rows) {
    auto pad = [](const std::string& s, size_t n) { return s + std::string(n > s.size() ? n - s.size() : 0, ' '); };
    out += pad(r.id, w[0]) + "  " + pad(r.sites, w[1]) + "  " + pad(r.types, w[2]) + "  " + pad(r.difficulty, w[3]) +
           "  " + r.intent + "\n";
  }
  return out;
}

}  // namespace kvarena::tasks
