// conversation.cpp: see conversation.h.
#include "conversation.h"

namespace kvarena {

agent_conversation::agent_conversation(chat_template chat, history_mode history, prompt_style style, int n_examples)
    : chat_(chat), history_(history), style_(style), conv_(prompt_prefix(style, n_examples)), prefix_size_(conv_.size()) {}

std::string agent_conversation::message(const std::string& observation, const std::string& url,
                                        const std::string& objective, const std::string& previous_action) const {
  if (style_ == prompt_style::vwa) return step_message({observation, url, objective, previous_action});
  std::string prev = previous_action;
  if (history_ == history_mode::last && !actions_.empty()) {
    prev.clear();
    for (const std::string& a : actions_) prev += "\n" + a;
  }
  return compact_step_message({observation, url, objective, prev});
}

prompt_text agent_conversation::next_prompt(const std::string& observation, const std::string& url,
                                            const std::string& objective, const std::string& previous_action) {
  if (steps_++ > 0) actions_.push_back(previous_action);
  const std::string msg = message(observation, url, objective, previous_action);
  if (history_ == history_mode::last) {
    std::vector<chat_message> msgs(conv_.begin(), conv_.begin() + static_cast<ptrdiff_t>(prefix_size_));
    msgs.push_back({"user", msg});
    current_ = msgs;
    return {chat_.render(msgs, true), true};
  }
  conv_.push_back({"user", msg});
  current_ = conv_;
  if (!started_) {
    started_ = true;
    return {chat_.render(conv_, true), true};
  }
  // conv_ ends with [..., assistant reply (in the sequence), new user message].
  try {
    return {chat_.continue_after_reply(conv_, conv_.size() - 2, true), false};
  } catch (const not_prefix_stable&) {
    return {chat_.render(conv_, true), true};  // the template rewrote the history: start over
  }
}

void agent_conversation::add_reply(const std::string& reply) {
  if (history_ == history_mode::full) conv_.push_back({"assistant", reply});
}

}  // namespace kvarena
