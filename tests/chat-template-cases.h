// chat-template-cases.h: the conversations every real chat template is rendered over in
// test-chat-template-llamacpp (by kvarena and by python3-jinja2): system + user with and
// without the generation prompt, user only, multi-turn with assistant replies, with and
// without a system message, a reply that carries reasoning (<think>), a lone user turn
// without the prompt. Contents carry what trips renderers: surrounding whitespace
// and newlines, quotes of both kinds, non-ASCII text.
#pragma once
#include <string>
#include <vector>

namespace kvarena::test {

struct chat_case {
  std::vector<std::pair<std::string, std::string>> messages;  // (role, content)
  bool add_generation_prompt = true;
};

inline std::vector<chat_case> chat_cases() {
  const std::string sys = "You are a helpful assistant.\nAnswer briefly.";
  const std::string u1 = "  Hello, \"world\"! What's 2+2?\n";
  const std::string a1 = "It's 4. \xE2\x9C\x93";  // U+2713
  const std::string u2 = "And 3*3 in <b>bold</b>?";
  const std::string a2 = "\n**9**\n";
  return {
      {{{"system", sys}, {"user", u1}}, true},
      {{{"system", sys}, {"user", u1}}, false},
      {{{"user", u1}}, true},
      {{{"system", sys}, {"user", u1}, {"assistant", a1}, {"user", u2}}, true},
      {{{"user", u1}, {"assistant", a1}, {"user", u2}, {"assistant", a2}}, false},
      {{{"user", u1}, {"assistant", a1}, {"user", u2}}, true},
      {{{"system", sys}, {"user", u1}, {"assistant", "<think>\nAdd them.\n</think>\n\n4"}, {"user", u2}}, true},
      {{{"user", "Hi"}}, false},
  };
}

}  // namespace kvarena::test
