// test-oracle-visibility.cpp: oracle_visibility on pages written by hand, cut with a byte-level
// vocabulary (256 byte tokens, no merges: one token per byte), so every cut is counted here
// by hand; and `kvarena tasks oracle --visible-at` end to end on the committed suite.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "oracle-visibility.h"
#include "test-util.h"
#include "tokenizer-train.h"
#include "tokenizer.h"

namespace kvarena {
namespace {

std::string byte_vocabulary_file() {
  bpe_train_options o;
  o.vocab_size = 256;
  o.special_tokens.clear();
  const std::string path = (test::temp_dir("bytes") / "bytes.gguf").string();
  write_bpe_gguf(train_bpe({"abc"}, o), path);
  return path;
}
std::unique_ptr<tokenizer> byte_tokenizer() { return tokenizer::from_file(byte_vocabulary_file()); }

// Three lines, 48 bytes (48 tokens); newlines at bytes 12, 28 and 47.
const std::string k_page =
    "[1] link 'A'\n"           // bytes 0-12
    "\t[2] button 'B'\n"       // bytes 13-28
    "\t\t[30] textbox 'C'\n";  // bytes 29-47

TEST(OracleVisibility, ByteVocabularyIsOneTokenPerByte) {
  auto tok = byte_tokenizer();
  EXPECT_EQ(tok->encode(k_page, false).size(), k_page.size());
  EXPECT_EQ(k_page.size(), 48u);
}

TEST(OracleVisibility, PageShowsAnElementOnlyAtALineStart) {
  EXPECT_TRUE(page_shows_element(k_page, 1));
  EXPECT_TRUE(page_shows_element(k_page, 2));    // after a tab
  EXPECT_TRUE(page_shows_element(k_page, 30));   // after two tabs
  EXPECT_FALSE(page_shows_element(k_page, 3));   // "[30]" is not "[3]"
  EXPECT_FALSE(page_shows_element("[5] link 'see [6]'\n", 6));  // inside a name
  EXPECT_FALSE(page_shows_element("", 1));
}

TEST(OracleVisibility, CountsStepsAndTasksPerBudget) {
  auto tok = byte_tokenizer();
  // Task 0: clicks [1] then types into [30]; task 1: hovers [2], scrolls, stops; task 2: only
  // goto/stop (no element: never invisible); task 3: a click on an id the page lacks.
  const std::vector<oracle_step_record> steps = {
      {0, k_page, "click [1]"},          {0, k_page, "type [30] [hi] [1]"},
      {1, k_page, "hover [2]"},          {1, k_page, "scroll [down]"},
      {1, k_page, "stop [done]"},        {2, k_page, "goto [http://localhost/]"},
      {2, k_page, "stop []"},            {3, k_page, "click [9]"},
  };
  // What each budget keeps (the first N bytes, back to the last newline inside them):
  //   12: no newline inside, so the 12 bytes "[1] link 'A'" (cut at a character);
  //   13: the newline at byte 12 -> line 1;   29, 47: the newline at 28 -> lines 1-2;
  //   48 (the whole page) and 0 (no limit): all three lines.
  const std::vector<int64_t> budgets = {12, 13, 29, 47, 48, 0};
  const std::vector<visibility_at_budget> got = oracle_visibility(steps, *tok, budgets);
  ASSERT_EQ(got.size(), budgets.size());
  // Element steps: click [1], type [30], hover [2], click [9] = 4; tasks 0-3 = 4.
  const int64_t want_steps_visible[] = {1, 1, 2, 2, 3, 3};
  const int64_t want_tasks_visible[] = {1, 1, 2, 2, 3, 3};  // task 2 always; task 3 never
  for (size_t i = 0; i < got.size(); ++i) {
    SCOPED_TRACE("budget " + std::to_string(budgets[i]));
    EXPECT_EQ(got[i].budget, budgets[i]);
    EXPECT_EQ(got[i].steps, 4);
    EXPECT_EQ(got[i].tasks, 4);
    EXPECT_EQ(got[i].steps_visible, want_steps_visible[i]);
    EXPECT_EQ(got[i].tasks_all_visible, want_tasks_visible[i]);
  }
}

// The command: two tasks of the committed suite; with no limit every acted-on element is
// shown; at 64 bytes (the tab line and the page's first lines) some are not; the JSON line
// names the vocabulary's file. A missing --model stops before any task runs.
TEST(OracleVisibility, TasksOracleVisibleAtPrintsTheCounts) {
  const std::string vocab = byte_vocabulary_file();
  const std::string out = (test::temp_dir("cli") / "out.json").string();
  const std::string cmd = std::string(KVARENA_BIN) + " tasks oracle --suite " + KVARENA_SOURCE_DIR +
                          "/tasks/vwa-local --task 1 --task 4 -j 2 --visible-at 0,64 --model " + vocab;
  ASSERT_EQ(std::system((cmd + " >" + out + " 2>/dev/null").c_str()), 0);
  const std::string text = test::read_file(out);
  const size_t nl = text.find('\n');
  ASSERT_NE(nl, std::string::npos) << text;
  const nlohmann::json summary = nlohmann::json::parse(text.substr(0, nl));
  EXPECT_EQ(summary["solved"], 2);
  const nlohmann::json j = nlohmann::json::parse(text.substr(nl + 1));
  ASSERT_EQ(j["visible_at"].size(), 2u) << text;
  const nlohmann::json& all = j["visible_at"][0];
  const nlohmann::json& cut = j["visible_at"][1];
  EXPECT_EQ(all["budget"], 0);
  EXPECT_EQ(all["tasks"], 2);
  EXPECT_GE(all["steps"].get<int64_t>(), 2);  // task 4 types into the search box at least
  EXPECT_EQ(all["steps_visible"], all["steps"]);
  EXPECT_EQ(all["tasks_all_visible"], 2);
  EXPECT_EQ(cut["budget"], 64);
  EXPECT_EQ(cut["steps"], all["steps"]);
  EXPECT_LT(cut["steps_visible"].get<int64_t>(), all["steps"].get<int64_t>());
  EXPECT_EQ(j["model"], vocab);
  const int bad = std::system((cmd + "-missing >/dev/null 2>&1").c_str());
  EXPECT_NE(bad, 0);
  // --model without --visible-at would be ignored: refused, with the reason.
  const std::string err = (test::temp_dir("cli") / "err.txt").string();
  const std::string no_budget = std::string(KVARENA_BIN) + " tasks oracle --suite " + KVARENA_SOURCE_DIR +
                                "/tasks/vwa-local --task 1 --model " + vocab;
  EXPECT_NE(std::system((no_budget + " >/dev/null 2>" + err).c_str()), 0);
  EXPECT_NE(test::read_file(err).find("give --visible-at too"), std::string::npos) << test::read_file(err);
}

}  // namespace
}  // namespace kvarena
