// eval-string-match.cpp: see eval-string-match.h.
#include "eval/eval-string-match.h"

#include <cstdio>

#include "eval/eval-text.h"

namespace kvarena {
namespace {

// Each scorer returns 0 or 1 and appends "key: what" to *detail.
void add(std::string* detail, const std::string& text) {
  if (!detail->empty()) *detail += "; ";
  *detail += text;
}

double score_exact(const std::string& ref, const std::string& pred, std::string* detail) {
  bool ok = text_exact_match(ref, pred);
  add(detail, ok ? "exact_match: equal"
                 : "exact_match: " + quote_for_detail(clean_answer(pred)) + " != " +
                       quote_for_detail(clean_answer(ref)));
  return ok ? 1 : 0;
}

double score_must_include(const std::vector<std::string>& items, const std::string& pred,
                          std::string* detail) {
  std::string missing;
  for (const std::string& item : items)
    if (!text_must_include_any(item, pred)) missing += (missing.empty() ? "" : ", ") + quote_for_detail(item);
  add(detail, missing.empty() ? "must_include: all " + std::to_string(items.size()) + " found"
                              : "must_include: missing " + missing);
  return missing.empty() ? 1 : 0;
}

double score_must_exclude(const std::vector<std::string>& items, const std::string& pred,
                          std::string* detail) {
  std::string present;
  for (const std::string& item : items)
    if (text_must_include(item, pred)) present += (present.empty() ? "" : ", ") + quote_for_detail(item);
  add(detail, present.empty() ? "must_exclude: none present" : "must_exclude: present " + present);
  return present.empty() ? 1 : 0;
}

double score_one_of(const std::vector<std::string>& items, const std::string& pred,
                    std::string* detail) {
  bool ok = text_one_of(items, pred);
  add(detail, ok ? "one_of: found" : "one_of: none of " + std::to_string(items.size()) + " found");
  return ok ? 1 : 0;
}

double score_required_values(const std::vector<std::string>& items, const std::string& pred,
                             std::string* detail) {
  auto x = parse_first_number(pred);
  if (!x) {
    add(detail, "required_values: no number in " + quote_for_detail(pred));
    return 0;
  }
  std::string failed;
  for (const std::string& item : items) {
    std::string bad;
    if (conditions_hold_any(item, *x, &bad)) continue;
    if (!bad.empty()) {
      add(detail, "required_values: " + quote_for_detail(bad) +
                      " is not a condition like '< 700', '>= 3' or '== 0'");
      return 0;
    }
    failed += (failed.empty() ? "" : ", ") + quote_for_detail(item);
  }
  char num[64];
  std::snprintf(num, sizeof num, "%.10g", *x);
  add(detail, failed.empty() ? std::string("required_values: ") + num + " satisfies all"
                             : std::string("required_values: ") + num + " fails " + failed);
  return failed.empty() ? 1 : 0;
}

double judge_one(judge_context& jc, judge_question q, const std::string& reference,
                 const std::string& pred) {
  jc.used = true;
  judge_request req{q, jc.intent, reference, pred};
  std::string note;
  double s = run_judge(*jc.judge, req, &note);
  if (!note.empty() && jc.notes) jc.notes->push_back(note);
  return s;
}

double score_fuzzy(const fuzzy_reference& f, const std::string& pred, judge_context& jc,
                   std::string* detail) {
  if (f.is_na()) {
    if (text_exact_match("N/A", pred)) {
      add(detail, "fuzzy_match: answered N/A");
      return 1;
    }
    double s = judge_one(jc, judge_question::unachievable, jc.string_note, pred);
    add(detail, s == 1 ? "fuzzy_match: judge found the same infeasibility reason"
                       : "fuzzy_match: not N/A, and the judge found a different reason than " +
                             quote_for_detail(jc.string_note));
    return s;
  }
  if (f.is_list) {
    std::string wrong;
    for (const std::string& ref : f.items)
      if (judge_one(jc, judge_question::fuzzy_match, ref, pred) != 1)
        wrong += (wrong.empty() ? "" : ", ") + quote_for_detail(ref);
    add(detail, wrong.empty() ? "fuzzy_match: judged correct" : "fuzzy_match: judged incorrect for " + wrong);
    return wrong.empty() ? 1 : 0;
  }
  for (const std::string& alt : split_on(f.text, " |OR| ")) {
    if (judge_one(jc, judge_question::fuzzy_match, alt, pred) == 1) {
      add(detail, "fuzzy_match: judged correct for " + quote_for_detail(alt));
      return 1;
    }
  }
  add(detail, "fuzzy_match: judged incorrect for " + quote_for_detail(f.text));
  return 0;
}

}  // namespace

double score_reference_answers(const reference_answer_set& refs, const std::string& answer,
                               judge_context& jc, std::string* detail) {
  if (!refs.has_any_key()) {
    add(detail, "no reference answers to compare with");
    return 0;
  }
  double score = 1;
  if (refs.exact_match) score *= score_exact(*refs.exact_match, answer, detail);
  if (refs.must_include) score *= score_must_include(*refs.must_include, answer, detail);
  if (refs.must_exclude) score *= score_must_exclude(*refs.must_exclude, answer, detail);
  if (refs.one_of) score *= score_one_of(*refs.one_of, answer, detail);
  if (refs.required_values) score *= score_required_values(*refs.required_values, answer, detail);
  if (refs.fuzzy_match) score *= score_fuzzy(*refs.fuzzy_match, answer, jc, detail);
  return score;
}

double score_required_contents(const reference_answer_set& rc, const std::string& selected,
                               judge_context& jc, std::string* detail) {
  if (rc.exact_match) return score_exact(*rc.exact_match, selected, detail);
  if (rc.must_include) return score_must_include(*rc.must_include, selected, detail);
  if (rc.must_exclude) return score_must_exclude(*rc.must_exclude, selected, detail);
  if (rc.required_values) return score_required_values(*rc.required_values, selected, detail);
  if (rc.fuzzy_match) return score_fuzzy(*rc.fuzzy_match, selected, jc, detail);
  add(detail, "required_contents has none of exact_match, must_include, must_exclude, "
              "required_values, fuzzy_match");
  return 0;
}

}  // namespace kvarena
