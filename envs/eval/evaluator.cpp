// evaluator.cpp: see evaluator.h.
#include "eval/evaluator.h"

#include <exception>
#include <optional>

#include "eval/eval-program-html.h"
#include "eval/eval-string-match.h"
#include "eval/eval-text.h"
#include "eval/eval-url-match.h"

namespace kvarena {

const char* eval_status_name(eval_status s) {
  return s == eval_status::unsupported ? "unsupported" : "scored";
}

namespace {

// A judge that always gives one verdict: string_match scored with both tells whether the
// answer of a real judge could change the score at all.
class constant_judge final : public fuzzy_judge {
 public:
  explicit constant_judge(bool yes) : yes_(yes) {}
  judge_result judge(const judge_request& req) override {
    if (req.question == judge_question::unachievable) return {yes_ ? "same" : "different", ""};
    return {yes_ ? "correct" : "incorrect", ""};
  }
  std::string name() override { return yes_ ? "always-yes" : "always-no"; }

 private:
  bool yes_;
};

// string_match without a judge: the score when no judge's verdict could change it (the
// answer is N/A for an N/A reference, as VWA's exact match first; or another key already
// failed), else nullopt. Scores are monotone in the verdicts, so the two constant judges
// bound every judge.
std::optional<double> string_match_without_judge(const task& t, const std::string& answer, std::string* detail) {
  auto score_with = [&](bool yes, std::string* d) {
    constant_judge judge(yes);
    judge_context jc;
    jc.judge = &judge;
    jc.intent = t.intent;
    jc.string_note = t.eval.string_note.value_or("");
    return score_reference_answers(*t.eval.reference_answers, answer, jc, d);
  };
  std::string yes_detail, no_detail;
  const double hi = score_with(true, &yes_detail), lo = score_with(false, &no_detail);
  if (hi != lo) return std::nullopt;
  *detail = no_detail;
  return lo;
}

}  // namespace

bool uses_fuzzy_judge(const task& t, bool* in_string_match, bool* in_program_html) {
  const bool sm = t.eval.reference_answers && t.eval.reference_answers->fuzzy_match;
  bool ph = false;
  if (t.eval.program_html)
    for (const program_html_target& tg : *t.eval.program_html) {
      const reference_answer_set& rc = tg.required_contents;
      if (rc.fuzzy_match && !rc.exact_match && !rc.must_include && !rc.must_exclude && !rc.required_values) ph = true;
    }
  if (in_string_match) *in_string_match = sm;
  if (in_program_html) *in_program_html = ph;
  return sm || ph;
}

eval_result evaluate_task(const task& t, const eval_inputs& in) {
  eval_result res;
  bool fuzzy_sm = false, fuzzy_ph = false;
  const bool no_judge = in.require_llm_judge && !in.judge && uses_fuzzy_judge(t, &fuzzy_sm, &fuzzy_ph);
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
      std::optional<double> deterministic;
      if (no_judge && type == "string_match" && fuzzy_sm && t.eval.reference_answers)
        deterministic = string_match_without_judge(t, in.answer, &ev.detail);
      if (deterministic) {
        ev.score = *deterministic;  // no verdict could change it: scored, no judge asked
      } else if (no_judge && ((type == "string_match" && fuzzy_sm) || (type == "program_html" && fuzzy_ph))) {
        ev.status = eval_status::unsupported;
        ev.detail = k_needs_judge;
      } else if (type == "string_match") {
        if (!t.eval.reference_answers) ev.detail = "no reference_answers";
        else ev.score = score_reference_answers(*t.eval.reference_answers, in.answer, jc, &ev.detail);
      } else if (type == "url_match") {
        if (!in.page) ev.detail = "no page to evaluate (the session has no browser page)";
        else ev.score = score_url_match(t.eval, final_url, &ev.detail);
      } else if (type == "program_html") {
        static const std::vector<program_html_target> none;
        ev.score = score_program_html(t.eval.program_html ? *t.eval.program_html : none, in.page,
                                      in.helpers, jc, &ev.detail, in.sites);
      } else if (type == "page_image_query") {
        bool unsupported = !in.images;
        if (in.images) ev.score = in.images(t.eval, in.page, &unsupported, &ev.detail);
        else
          ev.detail = "unsupported here: page_image_query needs the image evaluator (SSIM, --vqa-url), which the "
                      "env server runs";
        if (unsupported) ev.status = eval_status::unsupported;
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
