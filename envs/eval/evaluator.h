// evaluator.h: scores one finished episode of a task (specs/web-envs.md §2): one score per
// entry of eval.eval_types, multiplied. Runs once after the episode, on the final page and
// the last answer, also after an early stop (answer early_stop_answer(reason), early-stop.h).
//   string_match     eval-string-match.h
//   url_match        eval-url-match.h, on the URL the episode ended on (read before any
//                    program_html navigation, whatever the order of eval_types)
//   program_html     eval-program-html.h
//   page_image_query not supported (needs a VQA model): the evaluator and the result get
//                    status unsupported, score 0, success false: never silently scored.
// Never throws: whatever goes wrong scores that evaluator 0 with the reason in its detail.
#pragma once
#include <string>
#include <vector>

#include "eval/eval-judge.h"
#include "eval/page-probe.h"
#include "eval/task.h"

namespace kvarena {

enum class eval_status { scored, unsupported };
const char* eval_status_name(eval_status s);  // "scored", "unsupported"

struct evaluator_result {
  std::string type;    // the eval type: "string_match", ...
  double score = 0;    // in [0, 1]
  std::string detail;  // what was compared, and why it failed
  eval_status status = eval_status::scored;
};

struct eval_result {
  double score = 0;      // product of the evaluators' scores
  bool success = false;  // score == 1 and every evaluator scored
  eval_status status = eval_status::scored;  // unsupported if any evaluator is
  std::vector<evaluator_result> evaluators;  // one per eval type, in order
  std::string judge;                // name of the fuzzy judge when it was consulted, else ""
  std::vector<std::string> notes;   // judge failures, prep action failures, ...
};

struct eval_inputs {
  std::string answer;                  // the stop answer, or early_stop_answer(reason)
  page_probe* page = nullptr;          // the final page; null: url_match/program_html score 0
  fuzzy_judge* judge = nullptr;        // null: deterministic_judge
  const eval_helper_registry* helpers = nullptr;  // func: helpers of the sites
};

eval_result evaluate_task(const task& t, const eval_inputs& in);

}  // namespace kvarena
