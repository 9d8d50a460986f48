// chat-template.h: the model's chat format, built in (no Jinja): ChatML (Qwen), Llama-3,
// Llama-2 and plain text. Picked by name or recognised from the GGUF's
// `tokenizer.chat_template` by its markers ("<|im_start|>", "<|start_header_id|>",
// "[INST]"); a model without one (or with an unknown one) gets plain text.
//
// Rendering is prefix-stable: a message's text depends only on it and the messages before
// it, and an assistant message is exactly generation_prompt() + content + the reply's end
// marker. So history mode "full" keeps one engine session for a whole episode: it renders
// only what follows the reply the model just generated (continue_after_reply) and the
// tokens already in the KV cache stay valid.
//
// BOS is not part of the text: the caller encodes the first chunk with add_bos (the
// tokenizer adds it where the vocabulary says so). Special markers are meant to be encoded
// with parse_special. Not here: what the messages say (prompt.h).
#pragma once
#include <string>
#include <string_view>
#include <vector>

namespace kvarena {

struct model;

enum class chat_format { plain, chatml, llama3, llama2 };

struct chat_message {
  std::string role;  // "system", "user" or "assistant"
  std::string content;
};

class chat_template {
 public:
  explicit chat_template(chat_format f = chat_format::plain) : format_(f) {}

  // "chatml" (also "qwen"), "llama3", "llama2", "plain". std::invalid_argument naming the
  // valid names otherwise.
  static chat_template by_name(std::string_view name);
  // From a Jinja chat template's text, by its markers; plain when none is recognised.
  static chat_template detect(std::string_view jinja);
  // name "" or "auto": detect() on the model's GGUF `tokenizer.chat_template` (plain when
  // the model has none, e.g. a llama2.c checkpoint); else by_name(name).
  static chat_template for_model(const model& m, std::string_view name = "auto");

  chat_format format() const { return format_; }
  const char* name() const;

  // Every message, then (add_generation_prompt) the assistant header the model continues.
  // Roles other than system/user/assistant throw std::invalid_argument.
  std::string render(const std::vector<chat_message>& msgs, bool add_generation_prompt) const;

  // msgs[reply] is an assistant reply generated right after render(msgs[0, reply), true):
  // the text that closes it, then msgs[reply+1 ..], then (add_generation_prompt) the
  // assistant header. So render(msgs[0, reply), true) + msgs[reply].content +
  // continue_after_reply(msgs, reply, true) == render(msgs, true) (Llama-2: when the
  // content starts with a space, as its replies do).
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
};

// The model's GGUF `tokenizer.chat_template`; "" when absent (or not a GGUF).
std::string gguf_chat_template(const model& m);

}  // namespace kvarena
