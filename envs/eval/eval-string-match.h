// eval-string-match.h: the string_match evaluator (every key of eval.reference_answers,
// scores multiplied) and the one-key check of a program_html target's required_contents,
// which share the per-key scorers (specs/web-envs.md §2).
//
// Keys: exact_match; must_include (each item, " |OR| " alternatives, single-token rule);
// must_exclude (each item must not be included, same token rule); one_of (any item a
// substring); required_values (a number from the answer, each item's " |OR| " conditions);
// fuzzy_match: a list -> every reference judged correct; "N/A" -> the answer must be
// "n/a", else the judge compares the reported and the actual (string_note) reasons of
// infeasibility; another string -> any of its " |OR| " alternatives judged correct.
// Where kvarena differs from VWA: the "N/A" score multiplies the other keys' scores
// (VWA overwrites them), and " |OR| " in a program_html fuzzy_match means any (VWA
// multiplies the alternatives).
#pragma once
#include <string>
#include <vector>

#include "eval/eval-judge.h"
#include "task/task.h"

namespace kvarena {

// What the fuzzy checks need. `used` is set once the judge is consulted.
struct judge_context {
  fuzzy_judge* judge = nullptr;  // never null when evaluating
  std::string intent;
  std::string string_note;
  std::vector<std::string>* notes = nullptr;  // judge failures are appended here
  bool used = false;
};

// Every present key of `refs` against `answer`; *detail says which checks failed.
double score_reference_answers(const reference_answer_set& refs, const std::string& answer,
                               judge_context& jc, std::string* detail);

// program_html: only the first present of exact_match, must_include, must_exclude,
// required_values, fuzzy_match is checked against the selected text. 0 with a detail
// when none is present.
double score_required_contents(const reference_answer_set& rc, const std::string& selected,
                               judge_context& jc, std::string* detail);

}  // namespace kvarena
