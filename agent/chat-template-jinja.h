// chat-template-jinja.h: a model's own Jinja chat template behind chat_template (format
// gguf): rendering with the context transformers' apply_chat_template gives (messages,
// add_generation_prompt, bos_token, eos_token, tools=None, documents=None), and what the
// agent needs derived from renderings of probe conversations: the generation prompt, the
// text that closes a reply, the stop string, and whether the rendering is prefix-stable.
// Not here: the built-in formats and the choice between them (chat-template.h).
#pragma once
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "chat-template.h"
#include "jinja-eval.h"

namespace kvarena {

struct jinja_chat {
  std::shared_ptr<const jinja::template_> tmpl;
  std::string bos_token, eos_token;
  std::string generation_prompt;  // render(.., user, true) minus render(.., user, false)
  std::string reply_end;          // what follows a reply's content when it ends the history
  std::vector<std::string> stop;  // reply_end's first word (else eos_token)
  bool prefix_stable = true;      // on the probe conversations
  std::string label = "gguf";     // chat_template::name()

  // Parses and probes; std::invalid_argument naming what is unsupported or why the probe
  // conversation (system, user, assistant, user, ...; without the system message where the
  // template refuses one) does not render.
  static std::shared_ptr<jinja_chat> load(std::string_view text, std::string bos_token, std::string eos_token);

  // The probe: system, then three user turns with two assistant replies between them.
  static const std::vector<chat_message>& probe();

  // The template's text for msgs, without a leading bos_token. jinja::error as
  // std::invalid_argument.
  std::string render(const std::vector<chat_message>& msgs, bool add_generation_prompt) const;
  // render(msgs) after render(msgs[0, reply), true) + msgs[reply].content; not_prefix_stable
  // when that is not its prefix.
  std::string continue_after_reply(const std::vector<chat_message>& msgs, size_t reply, bool add_generation_prompt) const;
};

}  // namespace kvarena
