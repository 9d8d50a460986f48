// evaluator.h: scores one finished episode of a task (specs/web-envs.md §2): one score per
// entry of eval.eval_types, multiplied. Runs once after the episode, on the final page and
// the last answer, also after an early stop (answer early_stop_answer(reason), early-stop.h).
//   string_match     eval-string-match.h
//   url_match        eval-url-match.h, on the URL the episode ended on (read before any
//                    program_html navigation, whatever the order of eval_types)
//   program_html     eval-program-html.h
//   page_image_query eval-image.h: eval_fuzzy_image_match by SSIM; eval_vqa through a VQA
//                    endpoint, else status unsupported, score 0, success false: never
//                    silently scored.
// Never throws: whatever goes wrong scores that evaluator 0 with the reason in its detail.
#pragma once
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "eval/eval-judge.h"
#include "eval/page-probe.h"
#include "task/task.h"

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

// page_image_query's scorer: eval-image.h's page_image_scorer (SSIM on decoded images, the
// VQA endpoint), set by the env session. It comes in from outside so that the evaluator core
// needs no HTTP or image library (the fuzz targets build it alone). Returns the score; sets
// *unsupported when the query cannot be scored here.
using image_query_scorer =
    std::function<double(const task_eval& e, page_probe* page, bool* unsupported, std::string* detail)>;

struct eval_inputs {
  std::string answer;                  // the stop answer, or early_stop_answer(reason)
  page_probe* page = nullptr;          // the final page; null: url_match/program_html score 0
  fuzzy_judge* judge = nullptr;        // null: deterministic_judge (see require_llm_judge)
  // VisualWebArena's and WebArena's tasks: fuzzy_match is asked of an LLM judge there, so
  // without `judge` an evaluator that needs one is `unsupported` ("needs --judge-url or
  // --judge-model"), never scored by the deterministic judge; except a string_match whose
  // score no verdict could change (the answer N/A to the reference N/A, exact match first
  // as in VWA; another key already failed), which is scored without asking. kvarena's own
  // suites (tasks with the kvarena extension) are written for the deterministic judge and
  // leave it false.
  bool require_llm_judge = false;
  image_query_scorer images;  // page_image_query; null: unsupported
  const eval_helper_registry* helpers = nullptr;  // func: helpers of the sites
  std::map<std::string, std::string> sites;       // site name -> base URL, for the helpers
};

eval_result evaluate_task(const task& t, const eval_inputs& in);

// Whether scoring the task asks the fuzzy judge: a fuzzy_match key in reference_answers
// (string_match), or as the checked key of a program_html target's required_contents.
bool uses_fuzzy_judge(const task& t, bool* in_string_match = nullptr, bool* in_program_html = nullptr);

// The reason an evaluator is unsupported without a judge (also the validate verdict's).
inline constexpr const char* k_needs_judge =
    "fuzzy_match needs an LLM judge, as VisualWebArena scores it: give --judge-url URL (an OpenAI-compatible "
    "endpoint) or --judge-model FILE.gguf";

}  // namespace kvarena
