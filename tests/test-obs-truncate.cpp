// test-obs-truncate.cpp: agent/obs-truncate.h: observation truncation with a real tokenizer
// (a random model's SentencePiece vocab): within budget, whole lines, marked; and the
// observation budget a run uses (flag, then the model's key, then 1024).
#include <gtest/gtest.h>

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>

#include "agent-model-fixture.h"
#include "obs-truncate.h"

namespace kvarena {
namespace {

std::string numbered_lines(int n) {
  std::string s;
  for (int i = 0; i < n; ++i)
    s += "\t[" + std::to_string(i + 2) + "] link 'Item number " + std::to_string(i) + "'\n";
  return s;
}

TEST_F(AgentModel, TruncatesObservationToTokenBudgetAtLineBoundary) {
  const std::string text = "Tab 0 (current): Page\n\n[1] RootWebArea 'Page' focused: True\n" + numbered_lines(200);
  const int64_t all = static_cast<int64_t>(tok_->encode(text, false).size());
  ASSERT_GT(all, 400);

  truncated_observation t = truncate_to_tokens(*tok_, text, 200);
  EXPECT_TRUE(t.truncated);
  EXPECT_EQ(t.n_tokens_in, all);
  EXPECT_LE(t.n_tokens, 200);
  EXPECT_GT(t.n_tokens, 150);  // not much less than the budget
  const std::string marker = "\n" + truncation_marker(200);
  ASSERT_GT(t.text.size(), marker.size());
  ASSERT_EQ(t.text.substr(t.text.size() - marker.size()), marker);
  const std::string kept = t.text.substr(0, t.text.size() - marker.size());
  EXPECT_EQ(text.rfind(kept, 0), 0u);        // a prefix of the input
  EXPECT_EQ(text[kept.size()], '\n');        // ending at a line end
  EXPECT_EQ(static_cast<int64_t>(tok_->encode(kept, false).size()), t.n_tokens);

  for (int64_t budget : {all, all + 10, int64_t(0), int64_t(-1)}) {
    truncated_observation u = truncate_to_tokens(*tok_, text, budget);
    EXPECT_FALSE(u.truncated);
    EXPECT_EQ(u.text, text);
  }
  // One long line of multi-byte characters: cut inside it, at a character boundary.
  std::string line;
  for (int i = 0; i < 300; ++i) line += "\xC3\xA9t\xC3\xA9 ";
  truncated_observation v = truncate_to_tokens(*tok_, line, 50);
  EXPECT_TRUE(v.truncated);
  EXPECT_LE(v.n_tokens, 50);
  const std::string head = v.text.substr(0, v.text.find('\n'));
  EXPECT_FALSE(head.empty());
  EXPECT_EQ(line.rfind(head, 0), 0u);
  EXPECT_NE(static_cast<unsigned char>(line[head.size()]) & 0xC0, 0x80);
}

// The observation budget: --max-obs-tokens when given, else the number the model's GGUF names
// (a trained model's pages were cut to it), else 1024.
TEST(ObservationBudget, FlagThenTheModelsKeyThen1024) {
  const model named = model_with("named.gguf", [](gguf_writer& w) { w.set_u32("kvarena.max_obs_tokens", 2048); });
  const model unnamed = model_with("unnamed.gguf", [](gguf_writer&) {});
  const model zero = model_with("zero.gguf", [](gguf_writer& w) { w.set_u32("kvarena.max_obs_tokens", 0); });
  EXPECT_EQ(max_obs_tokens_for_model(named, std::nullopt), 2048);
  EXPECT_EQ(max_obs_tokens_for_model(unnamed, std::nullopt), 1024);
  EXPECT_EQ(max_obs_tokens_for_model(model{}, std::nullopt), 1024);  // no GGUF (a llama2.c file)
  EXPECT_EQ(max_obs_tokens_for_model(named, 300), 300);              // the flag wins
  EXPECT_EQ(max_obs_tokens_for_model(named, 0), 0);                  // 0: no limit
  EXPECT_THROW(max_obs_tokens_for_model(named, -1), std::invalid_argument);
  try {
    max_obs_tokens_for_model(zero, std::nullopt);
    ADD_FAILURE() << "a model naming budget 0 was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("kvarena.max_obs_tokens is 0"), std::string::npos) << e.what();
  }
  EXPECT_EQ(max_obs_tokens_for_model(zero, 512), 512);  // the flag overrides a bad key
}

}  // namespace
}  // namespace kvarena
