// judge-prompt.cpp: see judge-prompt.h.
#include "eval/judge-prompt.h"

namespace kvarena {

std::vector<judge_message> judge_messages(const judge_request& req) {
  std::string user;
  if (req.question == judge_question::fuzzy_match) {
    user = "You are grading a student's answer to a question against a reference answer. The student may word "
           "the answer differently; what matters is whether it means the same as the reference answer.\n"
           "question: " + req.intent + "\n"
           "reference answer: " + req.reference + "\n"
           "(wherever 'N/A' appears, it stands for 'not achievable')\n"
           "student answer: " + req.prediction + "\n"
           "Give your grade as one of: 'correct', 'incorrect', 'partially correct'. Write only the grade.";
  } else {
    user = "task: " + req.intent + "\n"
           "actual reason it cannot be done: " + req.reference + "\n"
           "reason reported: " + req.prediction + "\n"
           "The task above cannot be done, for the actual reason given. Someone tried it, did not complete it, "
           "and reported why. Compare the reported reason with the actual one: does it agree with it, even if "
           "only implicitly? Answer 'same' if it agrees and 'different' if it does not.";
  }
  return {{"system", "You are a careful and helpful assistant."}, {"user", user}};
}

}  // namespace kvarena
