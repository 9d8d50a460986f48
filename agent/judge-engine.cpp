// judge-engine.cpp: see judge-engine.h.
#include "judge-engine.h"

#include <exception>
#include <stdexcept>

#include "eval/judge-prompt.h"
#include "sampler.h"
#include "session.h"

namespace kvarena {

engine_judge::engine_judge(engine_judge_options opt) : opt_(std::move(opt)) {
  model_ = load_model(opt_.model_path);
  if (!model_->gguf)
    throw std::invalid_argument("--judge-model " + opt_.model_path + ": not a GGUF file with a vocabulary");
  tok_ = tokenizer::from_gguf(*model_->gguf);
  chat_ = chat_template::for_model(*model_, opt_.chat_template);
  session_options so;
  so.n_threads = opt_.threads;
  seq_ = make_sequence(opt_.backend, *model_, so);
}

engine_judge::~engine_judge() = default;

judge_result engine_judge::judge(const judge_request& req) {
  std::vector<chat_message> msgs;
  for (const judge_message& m : judge_messages(req)) msgs.push_back({m.role, m.content});
  const std::string text = chat_.render(msgs, /*add_generation_prompt=*/true);
  judge_result out;
  std::lock_guard lock(mu_);
  try {
    seq_->reset();
    std::vector<int32_t> prompt = tok_->encode(text, /*add_bos=*/true, /*parse_special=*/true);
    if (prompt.size() + static_cast<size_t>(opt_.max_tokens) > static_cast<size_t>(seq_->n_ctx())) {
      out.error = "the judge prompt (" + std::to_string(prompt.size()) + " tokens) does not fit the context of " +
                  opt_.model_path + " (" + std::to_string(seq_->n_ctx()) + ")";
      return out;
    }
    sampler_options sopt;  // temperature 0: greedy, as VWA asks its judge
    sampler smp(sopt);
    generate_options go;
    go.max_tokens = opt_.max_tokens;
    go.stop = chat_.stop_strings();
    out.reply = generate(*seq_, *tok_, prompt, go, smp).text;
  } catch (const std::exception& e) {
    out.error = std::string("the judge model failed: ") + e.what();
  }
  return out;
}

}  // namespace kvarena
