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
  const std::vector<chat_message>& p = probe();
  try {
    const std::string asked = c->render(head(p, 2), true), plain = c->render(head(p, 2), false);
    if (starts_with(asked, plain)) c->generation_prompt = asked.substr(plain.size());
    const std::string before = asked + p[2].content, closed = c->render(head(p, 3), false);
    if (starts_with(closed, before)) c->reply_end = closed.substr(before.size());
    for (size_t r : {size_t{2}, size_t{4}}) {
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
  const std::string end = trim(c->reply_end);
  if (!end.empty()) c->stop.push_back(end);
  else if (!c->eos_token.empty()) c->stop.push_back(c->eos_token);
  return c;
}

}  // namespace kvarena
