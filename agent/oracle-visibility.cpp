// oracle-visibility.cpp: see oracle-visibility.h.
#include "oracle-visibility.h"

#include <map>

#include "eval/action-parse.h"
#include "obs-truncate.h"

namespace kvarena {

bool page_shows_element(const std::string& page, int64_t id) {
  const std::string want = "[" + std::to_string(id) + "]";
  size_t line = 0;
  while (line < page.size()) {
    size_t begin = page.find_first_not_of("\t ", line);
    if (begin == std::string::npos) break;
    if (page.compare(begin, want.size(), want) == 0) return true;
    const size_t nl = page.find('\n', line);
    if (nl == std::string::npos) break;
    line = nl + 1;
  }
  return false;
}

std::vector<visibility_at_budget> oracle_visibility(const std::vector<oracle_step_record>& steps,
                                                    const tokenizer& tok, const std::vector<int64_t>& budgets) {
  std::vector<visibility_at_budget> out;
  for (int64_t budget : budgets) {
    visibility_at_budget v;
    v.budget = budget;
    std::map<size_t, bool> task_visible;  // task -> every element step so far visible
    for (const oracle_step_record& s : steps) {
      bool& all = task_visible.emplace(s.task, true).first->second;
      const action_parse_result p = parse_action(s.action);
      const action_kind k = p.act.kind;
      if (!p.ok() || p.act.element_id < 0 ||
          (k != action_kind::click && k != action_kind::type && k != action_kind::hover && k != action_kind::clear))
        continue;
      ++v.steps;
      const bool seen = page_shows_element(truncate_to_tokens(tok, s.observation, budget).text, p.act.element_id);
      v.steps_visible += seen;
      all = all && seen;
    }
    v.tasks = static_cast<int64_t>(task_visible.size());
    for (const auto& [task, all] : task_visible) v.tasks_all_visible += all;
    out.push_back(v);
  }
  return out;
}

}  // namespace kvarena
