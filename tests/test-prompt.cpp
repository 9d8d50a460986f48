// test-prompt.cpp: agent/prompt.h and prompt-examples.h: every action form of the grammar
// in the system prompt, the worked examples (whose replies parse and whose ids are in their
// observations), the prompt prefix and the step message.
#include <gtest/gtest.h>

#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "eval/action-parse.h"
#include "prompt-examples.h"
#include "prompt.h"

namespace kvarena {
namespace {

TEST(Prompt, SystemPromptHasEveryActionFormAndTheRules) {
  const std::string sys = system_prompt();
  std::istringstream in(action_grammar_help());
  std::string line;
  int forms = 0;
  while (std::getline(in, line)) {
    const std::string form = line.substr(0, line.find("   ("));
    EXPECT_NE(sys.find("```" + form + "```"), std::string::npos) << form;
    ++forms;
  }
  EXPECT_EQ(forms, 13);
  for (const char* s : {"Page Operation Actions:", "Tab Management Actions:", "URL Navigation Actions:",
                        "Completion Action:", "In summary, the next action I will perform is", "N/A",
                        "(1 or missing: press Enter after typing)"})
    EXPECT_NE(sys.find(s), std::string::npos) << s;
  EXPECT_EQ(sys.find("Other Actions"), std::string::npos);  // every verb has its VWA group
}

TEST(Prompt, WorkedExamplesParseAndComeFromTheThreeSites) {
  const auto& ex = worked_examples();
  ASSERT_EQ(ex.size(), 3u);
  std::vector<std::string> sites;
  for (const worked_example& e : ex) {
    SCOPED_TRACE(e.site);
    sites.push_back(e.site);
    action_parse_result r = parse_model_output(e.reply);
    ASSERT_TRUE(r.ok()) << r.error;
    EXPECT_NE(e.reply.find("Let's think step-by-step."), std::string::npos);
    EXPECT_NE(e.reply.find("In summary, the next action I will perform is ```"), std::string::npos);
    if (r.act.element_id >= 0) {  // the id it acts on is in its observation
      EXPECT_NE(e.observation.find("[" + std::to_string(r.act.element_id) + "]"), std::string::npos);
    }
    EXPECT_EQ(e.observation.rfind("Tab 0 (current): ", 0), 0u);
  }
  EXPECT_EQ(sites, (std::vector<std::string>{"shopping", "classifieds", "reddit"}));
  EXPECT_EQ(parse_model_output(ex[0].reply).act.answer, "$27.49");
}

TEST(Prompt, PrefixAndStepMessage) {
  const auto prefix = prompt_prefix(2);
  ASSERT_EQ(prefix.size(), 5u);
  EXPECT_EQ(prefix[0].role, "system");
  EXPECT_EQ(prefix[0].content, system_prompt());
  EXPECT_EQ(prefix[1].role, "user");
  EXPECT_NE(prefix[1].content.find(worked_examples()[0].objective), std::string::npos);
  EXPECT_EQ(prefix[2].role, "assistant");
  EXPECT_EQ(prefix[2].content, worked_examples()[0].reply);
  EXPECT_EQ(prompt_prefix(0).size(), 1u);
  EXPECT_EQ(prompt_prefix(3).size(), 7u);
  EXPECT_THROW(prompt_prefix(4), std::invalid_argument);
  EXPECT_THROW(prompt_prefix(-1), std::invalid_argument);
  EXPECT_EQ(step_message({"[1] RootWebArea 'x'", "http://h/p", "Find x", "None"}),
            "OBSERVATION:\n[1] RootWebArea 'x'\nURL: http://h/p\nOBJECTIVE: Find x\nPREVIOUS ACTION: None");
}

}  // namespace
}  // namespace kvarena
