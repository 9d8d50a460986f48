// evaluator.cpp: see evaluator.h.
#include "eval/evaluator.h"

#include <exception>

#include "eval/eval-program-html.h"
#include "eval/eval-string-match.h"
#include "eval/eval-text.h"
#include "eval/eval-url-match.h"

namespace kvarena {

const char* eval_status_name(eval_status s) {
  return s == eval_status::unsupported ? "unsupported" : "scored";
}

eval_result evaluate_task(const task& t, const eval_inputs& in) {
  eval_result res;
  deterministic_judge fallback;
  judge_context jc;
  jc.judge = in.judge ? in.judge : &fallback;
  jc.intent = t.intent;
  jc.string_note = t.eval.string_note.value_or("");
  jc.notes = &res.notes;

  // The URL the episode ended on, before program_html navigates anywhere.
  std::string final_url;
  if (in.page) {
    try {
      final_url = in.page->current_url();
    } catch (...) {
      res.notes.push_back("could not read the page URL");
    }
  }

  for (const std::string& type : t.eval.eval_types) {
    evaluator_result ev;
    ev.type = type;
    try {
      if (type == "string_match") {
        if (!t.eval.reference_answers) ev.detail = "no reference_answers";
        else ev.score = score_reference_answers(*t.eval.reference_answers, in.answer, jc, &ev.detail);
      } else if (type == "url_match") {
        if (!in.page) ev.detail = "no page to evaluate (the session has no browser page)";
        else ev.score = score_url_match(t.eval, final_url, &ev.detail);
      } else if (type == "program_html") {
        static const std::vector<program_html_target> none;
        ev.score = score_program_html(t.eval.program_html ? *t.eval.program_html : none, in.page,
                                      in.helpers, jc, &ev.detail);
      } else if (type == "page_image_query") {
        ev.status = eval_status::unsupported;
        ev.detail = "page_image_query needs a VQA model, which kvarena does not have yet: "
                    "the task is reported unsupported, not scored";
      } else {
        ev.detail = "unknown eval type " + quote_for_detail(type) +
                    " (valid: string_match, url_match, program_html, page_image_query)";
      }
    } catch (const std::exception& e) {
      ev.score = 0;
      ev.detail = "internal error while evaluating: " + message_snippet(e.what(), 200);
    } catch (...) {
      ev.score = 0;
      ev.detail = "internal error while evaluating";
    }
    if (!(ev.score >= 0 && ev.score <= 1)) ev.score = 0;  // also NaN
    res.evaluators.push_back(std::move(ev));
  }

  res.score = res.evaluators.empty() ? 0 : 1;
  if (res.evaluators.empty()) res.notes.push_back("the task has no eval_types: scored 0");
  for (const evaluator_result& ev : res.evaluators) {
    res.score *= ev.score;
    if (ev.status == eval_status::unsupported) res.status = eval_status::unsupported;
  }
  if (res.status == eval_status::unsupported) res.score = 0;
  res.success = res.status == eval_status::scored && res.score == 1;
  if (jc.used) {
    try {
      res.judge = jc.judge->name();
    } catch (...) {
      res.judge = "unknown";
    }
  }
  return res;
}

}  // namespace kvarena
