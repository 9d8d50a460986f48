// eval-program-html.h: the program_html evaluator (specs/web-envs.md §2). For each target
// in order: open its page ("last" = stay on the current page; "func:helper(...)" computes
// the URL, `__last_url__` in its arguments replaced by the current URL; else navigate to
// the url), run its prep_actions (failures noted, not fatal), evaluate its locator
// (eval-locator.h; a locator that throws or that the backend cannot run gives ""), then
// check ONE key of required_contents (eval-string-match.h). Scores multiply.
// Scored 0 (with the reason in the detail) where VWA would crash or see None: no page,
// a page that does not open, an unknown or failing func: helper (None), an invalid
// locator, a lambda: locator that fails.
#pragma once
#include <map>
#include <string>
#include <vector>

#include "eval/eval-string-match.h"
#include "eval/page-probe.h"
#include "task/task.h"

namespace kvarena {

// `page` null: scored 0. `helpers` null: every func: helper is unknown. `sites`: the
// episode's site map, passed to the helpers (eval_helper_call).
double score_program_html(const std::vector<program_html_target>& targets, page_probe* page,
                          const eval_helper_registry* helpers, judge_context& jc,
                          std::string* detail, const std::map<std::string, std::string>& sites = {});

}  // namespace kvarena
