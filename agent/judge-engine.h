// judge-engine.h: the fuzzy judge behind `--judge-model FILE.gguf`: any GGUF instruct
// model on the embedded engine, asked VWA's questions (envs/eval/judge-prompt.h) in the
// model's chat format, greedy, and its reply read by the one rule every judge shares
// (judge_verdict, eval-judge.h). One model and one sequence, used by one evaluation at a
// time (a mutex): evaluations are short next to episodes. Not here: the questions.
#pragma once
#include <memory>
#include <mutex>
#include <string>

#include "chat-template.h"
#include "eval/eval-judge.h"
#include "model.h"
#include "sequence.h"
#include "tokenizer.h"

namespace kvarena {

struct engine_judge_options {
  std::string model_path;            // a GGUF file with a vocabulary
  std::string chat_template = "auto";  // chat_template::for_model's name
  std::string backend = "cpu";
  int threads = 1;
  int64_t max_tokens = 32;  // the verdict is one or two words; a longer reply is cut
};

class engine_judge : public fuzzy_judge {
 public:
  // Loads the model (engine_error / std::runtime_error naming the file when it cannot).
  explicit engine_judge(engine_judge_options opt);
  ~engine_judge() override;
  judge_result judge(const judge_request& req) override;
  std::string name() override { return "engine:" + opt_.model_path; }

 private:
  engine_judge_options opt_;
  std::unique_ptr<model> model_;
  std::unique_ptr<tokenizer> tok_;
  chat_template chat_;
  std::unique_ptr<sequence> seq_;
  std::mutex mu_;
};

}  // namespace kvarena
