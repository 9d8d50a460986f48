// chat-template-jinja.cpp: see chat-template-jinja.h.
#include "chat-template-jinja.h"

#include <stdexcept>

namespace kvarena {
namespace {

bool starts_with(const std::string& s, const std::string& prefix) {
  return s.size() >= prefix.size() && s.compare(0, prefix.size(), prefix) == 0;
}

std::string trim(const std::string& s) {
  const char* ws = " \t\r\n";
  const size_t b = s.find_first_not_of(ws);
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(ws) - b + 1);
}

std::vector<chat_message> head(const std::vector<chat_message>& msgs, size_t n) {
  return {msgs.begin(), msgs.begin() + static_cast<std::ptrdiff_t>(n)};
}

}  // namespace

const std::vector<chat_message>& jinja_chat::probe() {
  static const std::vector<chat_message> p = {
      {"system", "You are a web agent."}, {"user", "Observation one."}, {"assistant", "Action one."},
      {"user", "Observation two."},       {"assistant", "Action two."}, {"user", "Observation three."}};
  return p;
}

std::string jinja_chat::render(const std::vector<chat_message>& msgs, bool add_generation_prompt) const {
  using jinja::value;
  jinja::list list;
  for (const chat_message& m : msgs) {
    value d = value::make_dict();
    d.d->set("role", value::str(m.role));
    d.d->set("content", value::str(m.content));
    list.push_back(d);
  }
  std::string out;
  try {
    out = tmpl->render({{"messages", value::make_list(std::move(list))},
                        {"add_generation_prompt", value::boolean(add_generation_prompt)},
                        {"bos_token", value::str(bos_token)},
                        {"eos_token", value::str(eos_token)},
                        {"tools", value::none()},
                        {"documents", value::none()}});
  } catch (const jinja::error& e) {
    throw std::invalid_argument(std::string("the model's chat template cannot render this conversation: ") + e.what());
  }
  if (!bos_token.empty() && starts_with(out, bos_token)) out.erase(0, bos_token.size());
  return out;
}

std::string jinja_chat::continue_after_reply(const std::vector<chat_message>& msgs, size_t reply,
                                             bool add_generation_prompt) const {
  const std::string before = render(head(msgs, reply), true) + msgs[reply].content;
  const std::string whole = render(msgs, add_generation_prompt);
  if (!starts_with(whole, before))
    throw not_prefix_stable("the model's chat template renders the history before reply " + std::to_string(reply) +
                            " differently once the reply is in it (not prefix-stable)");
  return whole.substr(before.size());
}

std::shared_ptr<jinja_chat> jinja_chat::load(std::string_view text, std::string bos_token, std::string eos_token) {
  auto c = std::make_shared<jinja_chat>();
  try {
    c->tmpl = std::make_shared<const jinja::template_>(text);
  } catch (const jinja::error& e) {
    throw std::invalid_argument(std::string("the model's chat template is not supported: ") + e.what() +
                                " (--chat-template chatml, llama3, llama2 or plain renders a built-in format instead)");
  }
  c->bos_token = std::move(bos_token);
  c->eos_token = std::move(eos_token);
  // With a system message, else (a template that refuses one, as Gemma's do: prompts with
  // a system message then fail when rendered, naming the template's reason) without.
  std::vector<chat_message> p = probe();
  try {
    c->render(p, true);
  } catch (const std::invalid_argument&) {
    p.erase(p.begin());
  }
  const size_t reply = p[0].role == "system" ? 2 : 1;  // the first assistant message; p alternates after it
  try {
    const std::string asked = c->render(head(p, reply), true), plain = c->render(head(p, reply), false);
    if (starts_with(asked, plain)) c->generation_prompt = asked.substr(plain.size());
    // After the reply's content where it ends the history (a reasoning template may put
    // an empty <think></think> before it).
    const std::string closed = c->render(head(p, reply + 1), false);
    const size_t at = closed.rfind(p[reply].content);
    if (at != std::string::npos) c->reply_end = closed.substr(at + p[reply].content.size());
    for (size_t r = reply; r + 1 < p.size(); r += 2) {
      try {
        c->continue_after_reply(head(p, r + 2), r, true);
      } catch (const not_prefix_stable&) {
        c->prefix_stable = false;
      }
    }
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(std::string(e.what()) +
                                " (--chat-template chatml, llama3, llama2 or plain renders a built-in format instead)");
  }
  // The end-of-turn marker: the reply end's first word ("<|im_end|>", "<|eot_id|>", ...).
  std::string end = trim(c->reply_end);
  end = end.substr(0, end.find_first_of(" \t\r\n"));
  if (!end.empty()) c->stop.push_back(end);
  else if (!c->eos_token.empty()) c->stop.push_back(c->eos_token);
  return c;
}

}  // namespace kvarena
