// test-chat-template: a model's own Jinja chat template behind chat_template (format gguf):
// what the agent derives from it (generation prompt, reply end, stop string, prefix
// stability, a label), BOS left to the tokenizer, full history's new sequence where a
// template is not prefix-stable, errors that name what is unsupported, and the shipped model
// (models/kvarena-agent.gguf): its template renders byte-identical to the built-in ChatML
// kvarena used before (hand-written, llama.cpp's llm_chat_apply_template layout) on every
// conversation and full-history continuation.
#include <gtest/gtest.h>

#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "chat-template-cases.h"
#include "chat-template.h"
#include "conversation.h"
#include "gguf-writer.h"
#include "model.h"
#include "test-util.h"
#include "tokenizer-train.h"

namespace kvarena {
namespace {

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "(no error)";
}

bool has(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

// The conversations of chat-template-cases.h, and the full-history steps of an episode.
std::vector<std::pair<std::vector<chat_message>, bool>> conversations() {
  std::vector<std::pair<std::vector<chat_message>, bool>> out;
  for (const test::chat_case& c : test::chat_cases()) {
    std::vector<chat_message> m;
    for (const auto& [role, content] : c.messages) m.push_back({role, content});
    out.emplace_back(m, c.add_generation_prompt);
  }
  return out;
}

// The same text and the same incremental full-history sequence.
void expect_same_as(const chat_template& ours, const chat_template& builtin) {
  for (const auto& [msgs, gen] : conversations()) EXPECT_EQ(ours.render(msgs, gen), builtin.render(msgs, gen));
  std::vector<chat_message> msgs = {{"system", "S"}, {"user", "obs 1"}};
  std::string a = ours.render(msgs, true), b = builtin.render(msgs, true);
  for (int step = 2; step <= 4; ++step) {
    const std::string reply = " think\n```click [" + std::to_string(step) + "]``` \n";
    msgs.push_back({"assistant", reply});
    msgs.push_back({"user", "obs " + std::to_string(step)});
    a += reply + ours.continue_after_reply(msgs, msgs.size() - 2, true);
    b += reply + builtin.continue_after_reply(msgs, msgs.size() - 2, true);
    EXPECT_EQ(a, b);
  }
  EXPECT_EQ(ours.generation_prompt(), builtin.generation_prompt());
  EXPECT_EQ(ours.reply_end(), builtin.reply_end());
  EXPECT_EQ(ours.stop_strings(), builtin.stop_strings());
}

TEST(ChatTemplateJinja, AChatMLTemplateRendersAsTheBuiltInChatML) {
  const chat_template t = chat_template::from_jinja(bpe_chatml_template(), "", "<|endoftext|>");
  EXPECT_EQ(t.format(), chat_format::gguf);
  EXPECT_STREQ(t.name(), "chatml");
  EXPECT_TRUE(t.prefix_stable());
  EXPECT_EQ(t.render({{"system", "S"}, {"user", "U"}}, true),
            "<|im_start|>system\nS<|im_end|>\n<|im_start|>user\nU<|im_end|>\n<|im_start|>assistant\n");
  EXPECT_EQ(t.generation_prompt(), "<|im_start|>assistant\n");
  EXPECT_EQ(t.reply_end(), "<|im_end|>\n");
  EXPECT_EQ(t.stop_strings(), std::vector<std::string>{"<|im_end|>"});
  expect_same_as(t, chat_template::by_name("chatml"));
}

TEST(ChatTemplateJinja, ShippedModelRendersByteIdenticalToTheBuiltInChatML) {
  const std::string path = std::string(KVARENA_SOURCE_DIR) + "/models/kvarena-agent.gguf";
  if (!std::filesystem::exists(path)) GTEST_SKIP() << path << " is not there";
  const auto m = load_model(path);
  const chat_template t = chat_template::for_model(*m);
  EXPECT_EQ(t.format(), chat_format::gguf);  // its own template, rendered
  EXPECT_STREQ(t.name(), "chatml");          // results keep the name they had
  EXPECT_TRUE(t.prefix_stable());
  expect_same_as(t, chat_template::by_name("chatml"));
  EXPECT_EQ(chat_template::for_model(*m, "llama3").format(), chat_format::llama3);  // the flag overrides
}

const char* k_tagged =
    "{{ bos_token }}{% for m in messages %}<{{ m.role }}>{{ m.content }}</{{ m.role }}>\n{% endfor %}"
    "{% if add_generation_prompt %}<assistant>{% endif %}";

TEST(ChatTemplateJinja, DerivesPromptReplyEndStopAndLeavesBosToTheTokenizer) {
  const chat_template t = chat_template::from_jinja(k_tagged, "<s>", "</s>");
  EXPECT_STREQ(t.name(), "gguf");
  EXPECT_EQ(t.render({{"user", "hi"}}, true), "<user>hi</user>\n<assistant>");  // no leading "<s>"
  EXPECT_EQ(t.render({{"user", "hi"}}, false), "<user>hi</user>\n");
  EXPECT_EQ(t.generation_prompt(), "<assistant>");
  EXPECT_EQ(t.reply_end(), "</assistant>\n");
  EXPECT_EQ(t.stop_strings(), std::vector<std::string>{"</assistant>"});
  EXPECT_TRUE(t.prefix_stable());
  const std::vector<chat_message> msgs = {{"user", "a"}, {"assistant", "b"}, {"user", "c"}};
  EXPECT_EQ(t.continue_after_reply(msgs, 1, true), "</assistant>\n<user>c</user>\n<assistant>");
  // Without a bos_token the text is the template's whole output.
  EXPECT_EQ(chat_template::from_jinja("{{ bos_token }}x{{ messages|length }}").render({{"user", "u"}}, true), "x1");
}

TEST(ChatTemplateJinja, ATemplateThatRewritesTheHistoryStartsANewSequenceInFullHistory) {
  // Drops the reasoning of past replies (as Qwen3's and DeepSeek-R1's templates do).
  const char* drops =
      "{% for m in messages %}{% set c = m.content %}"
      "{% if m.role == 'assistant' and not loop.last %}{% set c = c.split('</think>')[-1] %}{% endif %}"
      "<{{ m.role }}>{{ c }}</{{ m.role }}>{% endfor %}{% if add_generation_prompt %}<assistant>{% endif %}";
  const chat_template t = chat_template::from_jinja(drops);
  EXPECT_TRUE(t.prefix_stable());  // the probe's replies carry no reasoning
  const std::vector<chat_message> msgs = {{"user", "a"}, {"assistant", "<think>x</think>b"}, {"user", "c"}};
  EXPECT_THROW(t.continue_after_reply(msgs, 1, true), not_prefix_stable);

  agent_conversation conv(t, history_mode::full, prompt_style::compact, 0);
  const prompt_text p1 = conv.next_prompt("obs 1", "http://a/", "goal", "None");
  EXPECT_TRUE(p1.first);
  conv.add_reply("<think>x</think>```stop [done]```");
  const prompt_text p2 = conv.next_prompt("obs 2", "http://a/", "goal", "stop");
  EXPECT_TRUE(p2.first) << "a new sequence";
  EXPECT_TRUE(has(p2.text, "<assistant>```stop [done]```</assistant>")) << p2.text;
  EXPECT_EQ(p2.text.rfind("<user>", 0), 0u) << "the whole rendering";

  // A template that shows only the last two messages fails the probe.
  EXPECT_FALSE(chat_template::from_jinja("{% for m in messages[-2:] %}{{ m.content }}{% endfor %}").prefix_stable());
  // A reasoning template opens <think> in the generation prompt, which the history does
  // not show: not prefix-stable; its end-of-turn marker is still found after the reply.
  const chat_template thinking = chat_template::from_jinja(
      "{% for m in messages %}<|im_start|>{{ m.role }}\n{% if m.role == 'assistant' %}<think>\n\n</think>\n\n{% endif %}"
      "{{ m.content }}<|im_end|>\n{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n<think>\n{% endif %}");
  EXPECT_FALSE(thinking.prefix_stable());
  EXPECT_EQ(thinking.reply_end(), "<|im_end|>\n");
  EXPECT_EQ(thinking.stop_strings(), std::vector<std::string>{"<|im_end|>"});
  // A stable one continues the sequence.
  agent_conversation stable(chat_template::from_jinja(k_tagged), history_mode::full, prompt_style::compact, 0);
  stable.next_prompt("obs 1", "http://a/", "goal", "None");
  stable.add_reply("```stop [done]```");
  const prompt_text s2 = stable.next_prompt("obs 2", "http://a/", "goal", "stop");
  EXPECT_FALSE(s2.first);
  EXPECT_EQ(s2.text.rfind("</assistant>\n<user>", 0), 0u) << s2.text;
}

TEST(ChatTemplateJinja, ATemplateItCannotRenderIsAnErrorNamingWhatIsMissing) {
  std::string e = error_of([] { chat_template::from_jinja("{{ messages | xyz }}"); });
  EXPECT_TRUE(has(e, "chat template uses unsupported filter 'xyz'")) << e;
  EXPECT_TRUE(has(e, "--chat-template")) << e;
  e = error_of([] { chat_template::from_jinja("{% include 'other.jinja' %}"); });
  EXPECT_TRUE(has(e, "unsupported statement 'include'")) << e;
  e = error_of([] { chat_template::from_jinja("{% for m in messages %}{{ m.content is xyz }}{% endfor %}"); });
  EXPECT_TRUE(has(e, "unsupported test 'xyz'")) << e;
  e = error_of([] { chat_template::from_jinja("{{ messages[0].content.casefold() }}"); });
  EXPECT_TRUE(has(e, "unsupported method 'casefold'")) << e;
  // Its own refusal (Gemma's templates refuse a system message): it loads (the probe goes
  // without one), renders user turns, and a system message is the named error.
  const chat_template gemma_like = chat_template::from_jinja(
      "{% if messages[0].role == 'system' %}{{ raise_exception('System role not supported') }}{% endif %}"
      "{% for m in messages %}<start_of_turn>{{ m.role }}\n{{ m.content }}<end_of_turn>\n{% endfor %}"
      "{% if add_generation_prompt %}<start_of_turn>model\n{% endif %}");
  EXPECT_EQ(gemma_like.render({{"user", "u"}}, true), "<start_of_turn>user\nu<end_of_turn>\n<start_of_turn>model\n");
  EXPECT_EQ(gemma_like.stop_strings(), std::vector<std::string>{"<end_of_turn>"});
  e = error_of([&] { gemma_like.render({{"system", "s"}, {"user", "u"}}, true); });
  EXPECT_TRUE(has(e, "chat template raised an error: System role not supported")) << e;
  e = error_of([] { chat_template::from_jinja("{{ raise_exception('never renders') }}"); });
  EXPECT_TRUE(has(e, "never renders")) << e;
  e = error_of([] { chat_template::from_jinja("{% for m in messages %}"); });
  EXPECT_TRUE(has(e, "endfor")) << e;
}

// `kvarena model check` renders the file's template (metadata only, no weights).
std::pair<int, std::string> model_check_with_template(const std::string& tmpl) {
  const std::string path = (test::temp_dir("chat") / "t.gguf").string();
  gguf_writer w;
  w.set_string("general.architecture", "llama");
  w.set_string("tokenizer.chat_template", tmpl);
  w.set_string_array("tokenizer.ggml.tokens", {"<s>", "</s>", "a"});
  w.set_u32("tokenizer.ggml.bos_token_id", 0);
  w.set_u32("tokenizer.ggml.eos_token_id", 1);
  w.write(path);
  FILE* p = popen((std::string(KVARENA_BIN) + " model check '" + path + "' 2>&1").c_str(), "r");
  std::string out;
  char buf[4096];
  size_t n;
  while (p && (n = std::fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  const int st = p ? pclose(p) : -1;
  return {WIFEXITED(st) ? WEXITSTATUS(st) : -1, out};
}

TEST(ChatTemplateJinja, ModelCheckRendersTheFilesTemplate) {
  auto [rc, out] = model_check_with_template(bpe_chatml_template());
  EXPECT_TRUE(has(out, "chat template: present (")) << out;
  EXPECT_TRUE(has(out, "bytes), rendered from the file, as the built-in chatml\n")) << out;
  EXPECT_FALSE(has(out, "not supported: the model's chat template")) << out;
  std::tie(rc, out) = model_check_with_template("{% for m in messages %}{{ m.content | xyz }}{% endfor %}");
  EXPECT_EQ(rc, 1) << out;
  EXPECT_TRUE(has(out, "not renderable\n")) << out;
  EXPECT_TRUE(has(out, "not supported: the model's chat template is not supported: chat template line 1: chat "
                       "template uses unsupported filter 'xyz'")) << out;
}

}  // namespace
}  // namespace kvarena
