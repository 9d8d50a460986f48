// eval-judge.h: the pluggable judge behind fuzzy_match (specs/web-envs.md §2). A judge
// returns its raw reply; the evaluator reads the verdict out of it with one rule for
// every judge (judge_verdict()), so a model-backed judge (the embedded engine, added by
// agent/) and the deterministic one are scored the same way, and a reply that says
// neither yes nor no scores 0 with a note instead of crashing (VWA asserts).
//
// Two questions, as in VWA's llm_fuzzy_match / llm_ua_match:
//   fuzzy_match: is `prediction` a correct answer given `reference`? Reply "correct",
//                "incorrect" or "partially correct" (only "correct" scores 1).
//   unachievable: the task is infeasible for the reason `reference` (string_note); does
//                `prediction` report the same reason? Reply "same" or "different".
#pragma once
#include <string>

namespace kvarena {

enum class judge_question { fuzzy_match, unachievable };

struct judge_request {
  judge_question question = judge_question::fuzzy_match;
  std::string intent;      // the task's goal text
  std::string reference;   // one reference answer, or the infeasibility reason
  std::string prediction;  // the agent's answer (or a page's selected text)
};

struct judge_result {
  std::string reply;  // the judge's raw reply text
  std::string error;  // non-empty when the judge could not answer (then scored 0)
};

class fuzzy_judge {
 public:
  virtual ~fuzzy_judge() = default;
  virtual judge_result judge(const judge_request& req) = 0;
  // Recorded with each result ("deterministic", "engine:<model>", ...).
  virtual std::string name() = 0;
};

// The verdict in a reply: 1 or 0, or -1 when the reply is not one of the expected words.
//   fuzzy_match: contains "partially correct" or "incorrect" -> 0; else "correct" -> 1.
//   unachievable: contains "different" -> 0; else "same" -> 1.
// Case-insensitive (ASCII).
int judge_verdict(judge_question q, const std::string& reply);

// Scores one request with `judge`: 1 or 0. Never throws: an exception, an error, or an
// unexpected reply scores 0 and sets *note to what happened.
double run_judge(fuzzy_judge& judge, const judge_request& req, std::string* note);

// The default judge, no model: normalise both texts (clean_answer(), every character that
// is not an ASCII letter or digit, or a byte >= 0x80, becomes a space, spaces collapsed);
// the verdict is positive when the normalised reference is non-empty and occurs in the
// normalised prediction as a whole-word sequence ("blue bike" in "a blue bike, used"),
// so equal texts always match. Replies "correct"/"incorrect" or "same"/"different".
class deterministic_judge : public fuzzy_judge {
 public:
  judge_result judge(const judge_request& req) override;
  std::string name() override { return "deterministic"; }
};

// The normalisation the deterministic judge uses (exposed for tests).
std::string judge_normalise(const std::string& s);

}  // namespace kvarena
