// eval-judge.cpp: see eval-judge.h.
#include "eval/eval-judge.h"

#include <exception>

#include "eval/eval-text.h"

namespace kvarena {
namespace {

std::string ascii_lower(const std::string& s) {
  std::string out = s;
  for (char& c : out)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return out;
}

std::string snippet(const std::string& s) { return message_snippet(s, 200); }

}  // namespace

int judge_verdict(judge_question q, const std::string& reply) {
  const std::string r = ascii_lower(reply);
  auto has = [&](const char* w) { return r.find(w) != std::string::npos; };
  if (q == judge_question::fuzzy_match) {
    if (has("partially correct") || has("incorrect")) return 0;
    if (has("correct")) return 1;
    return -1;
  }
  if (has("different")) return 0;
  if (has("same")) return 1;
  return -1;
}

double run_judge(fuzzy_judge& judge, const judge_request& req, std::string* note) {
  std::string name;
  judge_result res;
  try {
    name = judge.name();
    res = judge.judge(req);
  } catch (const std::exception& e) {
    *note = "judge '" + name + "' failed: " + e.what() + " (scored 0)";
    return 0;
  } catch (...) {
    *note = "judge '" + name + "' failed with an unknown exception (scored 0)";
    return 0;
  }
  if (!res.error.empty()) {
    *note = "judge '" + name + "' could not answer: " + snippet(res.error) + " (scored 0)";
    return 0;
  }
  int v = judge_verdict(req.question, res.reply);
  if (v < 0) {
    *note = "judge '" + name + "' gave an unexpected reply '" + snippet(res.reply) + "' (expected " +
            (req.question == judge_question::fuzzy_match ? "correct / incorrect / partially correct"
                                                         : "same / different") +
            "; scored 0)";
    return 0;
  }
  return v;
}

std::string judge_normalise(const std::string& s) {
  std::string c = clean_answer(s), out;
  out.reserve(c.size());
  for (char ch : c) {
    unsigned char u = static_cast<unsigned char>(ch);
    bool keep = u >= 0x80 || (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
                (ch >= '0' && ch <= '9');
    if (keep) out += ch;
    else if (!out.empty() && out.back() != ' ') out += ' ';
  }
  while (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

judge_result deterministic_judge::judge(const judge_request& req) {
  const std::string ref = judge_normalise(req.reference);
  const std::string pred = judge_normalise(req.prediction);
  const bool match = !ref.empty() && (" " + pred + " ").find(" " + ref + " ") != std::string::npos;
  judge_result r;
  if (req.question == judge_question::fuzzy_match) r.reply = match ? "correct" : "incorrect";
  else r.reply = match ? "same" : "different";
  return r;
}

}  // namespace kvarena
