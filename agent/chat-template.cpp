// chat-template.cpp: see chat-template.h. Each built-in format as llama.cpp's built-in
// templates write it (llama_chat_apply_template), without trimming contents (trimming would
// break prefix stability); a model's own template is chat-template-jinja.cpp's.
#include "chat-template.h"

#include <stdexcept>

#include "chat-template-jinja.h"

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

chat_template chat_template::from_jinja(std::string_view jinja, std::string bos_token, std::string eos_token) {
  chat_template t(chat_format::gguf);
  std::shared_ptr<jinja_chat> c = jinja_chat::load(jinja, std::move(bos_token), std::move(eos_token));
  t.jinja_ = c;
  // A label for results: the built-in whose rendering of the probe (with and without a
  // generation prompt) is byte-identical; the rendering stays the template's.
  const std::vector<chat_message>& p = jinja_chat::probe();
  std::string with_prompt, without;
  try {
    with_prompt = t.render(p, true);
    without = t.render(p, false);
  } catch (const std::invalid_argument&) {
    return t;  // refuses the system message: none of the built-ins
  }
  for (chat_format f : {chat_format::chatml, chat_format::llama3, chat_format::llama2}) {
    const chat_template b(f);
    if (b.render(p, true) == with_prompt && b.render(p, false) == without) {
      c->label = b.name();
      break;
    }
  }
  return t;
}

namespace {

std::string token_text(const gguf_file& f, const char* id_key) {
  const auto id = f.get_int(id_key);
  const std::vector<std::string>* tokens = f.get_string_array("tokenizer.ggml.tokens");
  if (!id || !tokens || *id < 0 || static_cast<size_t>(*id) >= tokens->size()) return "";
  return (*tokens)[static_cast<size_t>(*id)];
}

}  // namespace

chat_template chat_template::for_gguf(const gguf_file& f) {
  const std::string jinja = f.get_string("tokenizer.chat_template").value_or("");
  if (jinja.empty()) return chat_template(chat_format::plain);
  return from_jinja(jinja, token_text(f, "tokenizer.ggml.bos_token_id"), token_text(f, "tokenizer.ggml.eos_token_id"));
}

chat_template chat_template::for_model(const model& m, std::string_view name) {
  if (!name.empty() && name != "auto") return by_name(name);
  if (!m.gguf) return chat_template(chat_format::plain);
  return for_gguf(*m.gguf);
}

std::string gguf_chat_template(const model& m) {
  if (!m.gguf) return "";
  return m.gguf->get_string("tokenizer.chat_template").value_or("");
}

bool chat_template::prefix_stable() const { return !jinja_ || jinja_->prefix_stable; }

const char* chat_template::name() const {
  if (jinja_) return jinja_->label.c_str();
  switch (format_) {
    case chat_format::chatml: return "chatml";
    case chat_format::llama3: return "llama3";
    case chat_format::llama2: return "llama2";
    case chat_format::plain: return "plain";
    case chat_format::gguf: return "gguf";
  }
  return "plain";
}

std::string chat_template::generation_prompt() const {
  if (jinja_) return jinja_->generation_prompt;
  switch (format_) {
    case chat_format::chatml: return "<|im_start|>assistant\n";
    case chat_format::llama3: return "<|start_header_id|>assistant<|end_header_id|>\n\n";
    case chat_format::llama2: return "";  // the reply follows "[/INST]" directly, with its own leading space
    case chat_format::plain: return "ASSISTANT:\n";
    case chat_format::gguf: break;
  }
  return "";
}

std::string chat_template::reply_end() const {
  if (jinja_) return jinja_->reply_end;
  switch (format_) {
    case chat_format::chatml: return "<|im_end|>\n";
    case chat_format::llama3: return "<|eot_id|>";
    case chat_format::llama2: return " </s>";
    case chat_format::plain: return "\n\n";
    case chat_format::gguf: break;
  }
  return "";
}

std::vector<std::string> chat_template::stop_strings() const {
  if (jinja_) return jinja_->stop;
  switch (format_) {
    case chat_format::chatml: return {"<|im_end|>"};
    case chat_format::llama3: return {"<|eot_id|>"};
    case chat_format::llama2: return {"</s>", "[INST]"};
    case chat_format::plain: return {"\nUSER:", "\nOBSERVATION:"};
    case chat_format::gguf: break;
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
    case chat_format::gguf: break;  // jinja_ renders
  }
  return "";
}

std::string chat_template::render(const std::vector<chat_message>& msgs, bool add_generation_prompt) const {
  for (const chat_message& m : msgs) check_role(m.role);
  if (jinja_) return jinja_->render(msgs, add_generation_prompt);
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
  if (jinja_) {
    for (const chat_message& m : msgs) check_role(m.role);
    return jinja_->continue_after_reply(msgs, reply, add_generation_prompt);
  }
  std::string out = reply_end();
  for (size_t i = reply + 1; i < msgs.size(); ++i) out += render_message(msgs, i);
  if (add_generation_prompt) out += generation_prompt();
  return out;
}

}  // namespace kvarena
