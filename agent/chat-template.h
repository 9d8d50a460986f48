// chat-template.h: the model's chat format. For a model that carries a Jinja
// `tokenizer.chat_template` in its GGUF, that template itself, rendered by agent/jinja as
// transformers' apply_chat_template renders it (format gguf); a template the renderer
// cannot render is an error naming what is missing (never a guess). Built in (no Jinja):
// ChatML (Qwen), Llama-3, Llama-2 and plain text, picked by name (`--chat-template NAME`
// overrides the model's template); a model without a template gets plain text.
//
// Full history keeps one engine session for a whole episode: it renders only what follows
// the reply the model just generated (continue_after_reply) and the tokens already in the
// KV cache stay valid. That needs a prefix-stable rendering: render(msgs[0, reply), true) +
// the reply + the continuation == render(msgs, true). The built-in formats are prefix-stable
// by construction. For a model's template the continuation is the difference of two
// renderings, used where the first is a prefix of the second; where it is not (a template
// that trims or rewrites earlier replies, e.g. drops reasoning from past turns)
// continue_after_reply throws not_prefix_stable and the conversation starts a new sequence
// with the whole rendering (conversation.h). prefix_stable() says whether the template kept
// the prefix on probe conversations when it was loaded.
//
// BOS is not part of the text: the caller encodes the first chunk with add_bos (the
// tokenizer adds it where the vocabulary says so); a template's leading bos_token is removed,
// as llama.cpp does. Special markers are meant to be encoded with parse_special. Not here:
// what the messages say (prompt.h).
#pragma once
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace kvarena {

struct model;
class gguf_file;

enum class chat_format { plain, chatml, llama3, llama2, gguf };

struct chat_message {
  std::string role;  // "system", "user" or "assistant"
  std::string content;
};

// continue_after_reply on a template whose rendering of the history changed before the reply.
struct not_prefix_stable : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct jinja_chat;  // chat-template-jinja.h

class chat_template {
 public:
  explicit chat_template(chat_format f = chat_format::plain) : format_(f) {}

  // "chatml" (also "qwen"), "llama3", "llama2", "plain". std::invalid_argument naming the
  // valid names otherwise.
  static chat_template by_name(std::string_view name);
  // A Jinja chat template (format gguf), with the text of the tokenizer's bos and eos tokens.
  // std::invalid_argument naming what the renderer does not support, or why the template
  // renders no conversation (its own raise_exception, ...).
  static chat_template from_jinja(std::string_view jinja, std::string bos_token = "", std::string eos_token = "");
  // name "" or "auto": from_jinja() on the model's GGUF `tokenizer.chat_template` (plain
  // when the model has none, e.g. a llama2.c checkpoint); else by_name(name).
  static chat_template for_model(const model& m, std::string_view name = "auto");
  // The same from a GGUF's metadata alone (`kvarena model check`, no weights read).
  static chat_template for_gguf(const gguf_file& f);

  chat_format format() const { return format_; }
  // The built-in format's name; for a model's template, the built-in whose rendering of the
  // probe conversations it matches byte for byte ("chatml", "llama3", "llama2"), else "gguf".
  const char* name() const;
  // Built in: true. A model's template: whether it kept the prefix on the probe conversations.
  bool prefix_stable() const;

  // Every message, then (add_generation_prompt) the assistant header the model continues.
  // Roles other than system/user/assistant throw std::invalid_argument.
  std::string render(const std::vector<chat_message>& msgs, bool add_generation_prompt) const;

  // msgs[reply] is an assistant reply generated right after render(msgs[0, reply), true):
  // the text that closes it, then msgs[reply+1 ..], then (add_generation_prompt) the
  // assistant header. So render(msgs[0, reply), true) + msgs[reply].content +
  // continue_after_reply(msgs, reply, true) == render(msgs, true) (Llama-2: when the
  // content starts with a space, as its replies do). A model's template: not_prefix_stable
  // when its rendering does not start with that prefix.
  std::string continue_after_reply(const std::vector<chat_message>& msgs, size_t reply,
                                   bool add_generation_prompt) const;

  // The assistant header a reply follows ("<|im_start|>assistant\n", ...).
  std::string generation_prompt() const;
  // Text that ends a turn when the model writes it as plain text (end-of-turn tokens that
  // are control tokens already end generation at EOS).
  std::vector<std::string> stop_strings() const;
  // The text that closes a reply in the sequence ("<|im_end|>\n", ...): the first part of
  // continue_after_reply().
  std::string reply_end() const;

 private:
  std::string render_message(const std::vector<chat_message>& msgs, size_t i) const;
  chat_format format_;
  std::shared_ptr<const jinja_chat> jinja_;  // format gguf
};

// The model's GGUF `tokenizer.chat_template`; "" when absent (or not a GGUF).
std::string gguf_chat_template(const model& m);

}  // namespace kvarena
