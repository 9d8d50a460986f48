// conversation.h: the text one episode feeds the model, step by step, in both history
// modes and both prompt styles (prompt.h). The agent loop and the training data
// (train-data.h) both build their sequences here, so a model is trained on exactly the
// text it is later prompted with.
//
//   last: every step is a new sequence: the style's prefix + this step's message, whole.
//   full: one sequence: step 1 as in last; each later step only what follows the reply
//         already in the sequence (the reply's end marker, the new message, the header).
//         Where the model's own chat template is not prefix-stable (it renders the history
//         before the reply differently once the reply is in it, e.g. trims it or drops past
//         reasoning), that step starts a new sequence with the whole rendering: the session
//         is reset and the history re-encoded, so the text is always the template's.
//
// Previous actions: the vwa style shows the last one ("PREVIOUS ACTION"); the compact
// style shows every action so far in last mode (its only memory) and the last one in
// full mode (the replies are in the sequence).
#pragma once
#include <string>
#include <vector>

#include "agent-loop.h"
#include "chat-template.h"
#include "prompt.h"

namespace kvarena {

struct prompt_text {
  std::string text;    // to encode with parse_special
  bool first = false;  // starts a sequence: encode with add_bos, the session is reset first
};

class agent_conversation {
 public:
  agent_conversation(chat_template chat, history_mode history, prompt_style style, int n_examples);

  // The prompt for a step. observation and url as the model sees them (url_view, cut to
  // the token budget); previous_action the line for the last action (previous_action_text).
  prompt_text next_prompt(const std::string& observation, const std::string& url, const std::string& objective,
                          const std::string& previous_action);
  // The model's reply to the prompt just built.
  void add_reply(const std::string& reply);
  // The prompt just built as chat messages, whole (system, examples, earlier turns in
  // full mode, this step's message): what a chat endpoint is sent (agent-model-openai.h).
  const std::vector<chat_message>& messages() const { return current_; }

  const chat_template& chat() const { return chat_; }
  history_mode history() const { return history_; }
  prompt_style style() const { return style_; }

 private:
  std::string message(const std::string& observation, const std::string& url, const std::string& objective,
                      const std::string& previous_action) const;

  chat_template chat_;
  history_mode history_;
  prompt_style style_;
  std::vector<chat_message> conv_;      // full: every message so far; last: the prefix
  size_t prefix_size_ = 0;              // system + examples
  bool started_ = false;                // full: the sequence holds a prompt
  int steps_ = 0;                       // prompts built
  std::vector<std::string> actions_;    // the previous-action lines so far (steps 2..)
  std::vector<chat_message> current_;   // the messages of the prompt just built
};

}  // namespace kvarena
