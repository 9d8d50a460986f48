// test-chat-template-builtin.cpp: agent/chat-template.h's built-in formats: the exact text of
// each, prefix stability (what full mode relies on), their names, and the plain format of a
// random model (no template in its GGUF).
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "agent-model-fixture.h"
#include "chat-template.h"

namespace kvarena {
namespace {

const std::vector<chat_message> k_conv = {
    {"system", "SYS"}, {"user", "U1"}, {"assistant", " A1"}, {"user", "U2"}};

TEST(ChatTemplate, RendersEachFormat) {
  EXPECT_EQ(chat_template::by_name("chatml").render(k_conv, true),
            "<|im_start|>system\nSYS<|im_end|>\n<|im_start|>user\nU1<|im_end|>\n"
            "<|im_start|>assistant\n A1<|im_end|>\n<|im_start|>user\nU2<|im_end|>\n"
            "<|im_start|>assistant\n");
  EXPECT_EQ(chat_template::by_name("llama3").render(k_conv, true),
            "<|start_header_id|>system<|end_header_id|>\n\nSYS<|eot_id|>"
            "<|start_header_id|>user<|end_header_id|>\n\nU1<|eot_id|>"
            "<|start_header_id|>assistant<|end_header_id|>\n\n A1<|eot_id|>"
            "<|start_header_id|>user<|end_header_id|>\n\nU2<|eot_id|>"
            "<|start_header_id|>assistant<|end_header_id|>\n\n");
  EXPECT_EQ(chat_template::by_name("llama2").render(k_conv, true),
            "[INST] <<SYS>>\nSYS\n<</SYS>>\n\nU1 [/INST] A1 </s><s>[INST] U2 [/INST]");
  EXPECT_EQ(chat_template::by_name("plain").render(k_conv, true),
            "SYS\n\nUSER:\nU1\n\nASSISTANT:\n A1\n\nUSER:\nU2\n\nASSISTANT:\n");
  // Without a generation prompt, and Llama-2 without a system message.
  EXPECT_EQ(chat_template::by_name("chatml").render({{"user", "hi"}}, false), "<|im_start|>user\nhi<|im_end|>\n");
  EXPECT_EQ(chat_template::by_name("llama2").render({{"user", "hi"}, {"assistant", "yo"}, {"user", "x"}}, true),
            "[INST] hi [/INST] yo </s><s>[INST] x [/INST]");
  EXPECT_THROW(chat_template::by_name("chatml").render({{"tool", "x"}}, true), std::invalid_argument);
}

TEST(ChatTemplate, PrefixStableForFullHistory) {
  for (const char* name : {"chatml", "llama3", "llama2", "plain"}) {
    SCOPED_TRACE(name);
    const chat_template ct = chat_template::by_name(name);
    std::vector<chat_message> msgs = {{"system", "S"}, {"user", "obs 1"}};
    std::string incremental = ct.render(msgs, true);
    for (int step = 2; step <= 4; ++step) {
      const std::string reply = " reasoning ```click [" + std::to_string(step) + "]```";
      incremental += reply;  // what the model generated, already in the cache
      msgs.push_back({"assistant", reply});
      msgs.push_back({"user", "obs " + std::to_string(step)});
      incremental += ct.continue_after_reply(msgs, msgs.size() - 2, true);
      EXPECT_EQ(incremental, ct.render(msgs, true));
    }
    EXPECT_THROW(ct.continue_after_reply(msgs, msgs.size() - 1, true), std::invalid_argument);
  }
}

// A model's own template: test-chat-template.cpp.
TEST(ChatTemplate, BuiltInFormatsByName) {
  EXPECT_EQ(chat_template::by_name("qwen").format(), chat_format::chatml);
  for (const char* n : {"chatml", "llama3", "llama2", "plain"}) EXPECT_STREQ(chat_template::by_name(n).name(), n);
  try {
    chat_template::by_name("mistral");
    FAIL() << "no throw";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("chatml, llama3, llama2 or plain"), std::string::npos) << e.what();
  }
  EXPECT_EQ(chat_template::by_name("chatml").stop_strings(), std::vector<std::string>{"<|im_end|>"});
}

TEST_F(AgentModel, ChatTemplateOfARandomModelIsPlain) {
  EXPECT_EQ(gguf_chat_template(*model_), "");
  EXPECT_EQ(chat_template::for_model(*model_).format(), chat_format::plain);
  EXPECT_EQ(chat_template::for_model(*model_, "llama3").format(), chat_format::llama3);
}

}  // namespace
}  // namespace kvarena
