// chat-template.cpp: see chat-template.h. Each format as llama.cpp's built-in templates
// write it (llama_chat_apply_template), without trimming contents (trimming would break
// prefix stability).
#include "chat-template.h"

#include <stdexcept>

#include "gguf-reader.h"
#include "model.h"

namespace kvarena {
namespace {

void check_role(const std::string& role) {
  if (role != "system" && role != "user" && role != "assistant")
    throw std::invalid_argument("chat message role '" + role + "': use system, user or assistant");
}

}  // namespace

chat_template chat_template::by_name(std::string_view name) {
  if (name == "chatml" || name == "qwen") return chat_template(chat_format::chatml);
  if (name == "llama3") return chat_template(chat_format::llama3);
  if (name == "llama2") return chat_template(chat_format::llama2);
  if (name == "plain") return chat_template(chat_format::plain);
  throw std::invalid_argument("unknown chat template '" + std::string(name) +
                              "': use auto (from the model), chatml, llama3, llama2 or plain");
}

chat_template chat_template::detect(std::string_view jinja) {
  if (jinja.find("<|im_start|>") != std::string_view::npos) return chat_template(chat_format::chatml);
  if (jinja.find("<|start_header_id|>") != std::string_view::npos) return chat_template(chat_format::llama3);
  if (jinja.find("[INST]") != std::string_view::npos) return chat_template(chat_format::llama2);
  return chat_template(chat_format::plain);
}

chat_template chat_template::for_model(const model& m, std::string_view name) {
  if (name.empty() || name == "auto") return detect(gguf_chat_template(m));
  return by_name(name);
}

std::string gguf_chat_template(const model& m) {
  if (!m.gguf) return "";
  return m.gguf->get_string("tokenizer.chat_template").value_or("");
}

const char* chat_template::name() const {
  switch (format_) {
    case chat_format::chatml: return "chatml";
    case chat_format::llama3: return "llama3";
    case chat_format::llama2: return "llama2";
    case chat_format::plain: return "plain";
  }
  return "plain";
}

std::string chat_template::generation_prompt() const {
  switch (format_) {
    case chat_format::chatml: return "<|im_start|>assistant\n";
    case chat_format::llama3: return "<|start_header_id|>assistant<|end_header_id|>\n\n";
    case chat_format::llama2: return "";  // the reply follows "[/INST]" directly, with its own leading space
    case chat_format::plain: return "ASSISTANT:\n";
  }
  return "";
}

std::string chat_template::reply_end() const {
  switch (format_) {
    case chat_format::chatml: return "<|im_end|>\n";
    case chat_format::llama3: return "<|eot_id|>";
    case chat_format::llama2: return " </s>";
    case chat_format::plain: return "\n\n";
  }
  return "";
}

std::vector<std::string> chat_template::stop_strings() const {
  switch (format_) {
    case chat_format::chatml: return {"<|im_end|>"};
    case chat_format::llama3: return {"<|eot_id|>"};
    case chat_format::llama2: return {"</s>", "[INST]"};
    case chat_format::plain: return {"\nUSER:", "\nOBSERVATION:"};
  }
  return {};
}

std::string chat_template::render_message(const std::vector<chat_message>& msgs, size_t i) const {
  const chat_message& m = msgs[i];
  check_role(m.role);
  if (m.role == "assistant") {
    std::string content = m.content;
    if (format_ == chat_format::llama2 && (content.empty() || content.front() != ' ')) content = " " + content;
    return generation_prompt() + content + reply_end();
  }
  switch (format_) {
    case chat_format::chatml:
      return "<|im_start|>" + m.role + "\n" + m.content + "<|im_end|>\n";
    case chat_format::llama3:
      return "<|start_header_id|>" + m.role + "<|end_header_id|>\n\n" + m.content + "<|eot_id|>";
    case chat_format::llama2: {
      // The system prompt sits inside the first [INST]; a user turn after a reply opens a
      // new sequence "<s>[INST]" (the first BOS comes from the tokenizer).
      if (m.role == "system") return "[INST] <<SYS>>\n" + m.content + "\n<</SYS>>\n\n";
      const bool after_system = i > 0 && msgs[i - 1].role == "system";
      const std::string open = after_system ? "" : (i == 0 ? "[INST] " : "<s>[INST] ");
      return open + m.content + " [/INST]";
    }
    case chat_format::plain:
      if (m.role == "system") return m.content + "\n\n";
      return "USER:\n" + m.content + "\n\n";
  }
  return "";
}

std::string chat_template::render(const std::vector<chat_message>& msgs, bool add_generation_prompt) const {
  std::string out;
  for (size_t i = 0; i < msgs.size(); ++i) out += render_message(msgs, i);
  if (add_generation_prompt) out += generation_prompt();
  return out;
}

std::string chat_template::continue_after_reply(const std::vector<chat_message>& msgs, size_t reply,
                                                bool add_generation_prompt) const {
  if (reply >= msgs.size() || msgs[reply].role != "assistant")
    throw std::invalid_argument("continue_after_reply: message " + std::to_string(reply) +
                                " is not an assistant reply");
  std::string out = reply_end();
  for (size_t i = reply + 1; i < msgs.size(); ++i) out += render_message(msgs, i);
  if (add_generation_prompt) out += generation_prompt();
  return out;
}

}  // namespace kvarena
