// test-agent-action.cpp: agent/agent-action.h: action extraction from typical replies, what
// the env receives for a bad one, the previous-action line, notes and answers by element.
#include <gtest/gtest.h>

#include <optional>
#include <string>

#include "agent-action.h"
#include "eval/action-parse.h"

namespace kvarena {
namespace {

TEST(AgentAction, TypicalReplies) {
  agent_action a = extract_agent_action(
      "Let's think step-by-step. The search box is [34]. In summary, the next action I will perform is "
      "```type [34] [red bike] [1]```");
  ASSERT_TRUE(a.ok()) << a.parsed.error;
  EXPECT_EQ(a.text, "type [34] [red bike] [1]");
  EXPECT_EQ(a.env_text, "type [34] [red bike] [1]");
  EXPECT_TRUE(parse_action(a.env_text).ok());

  a = extract_agent_action("I will click it.\n```\nclick [12]\n```\nThen more text ```stop [x]```");
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a.text, "click [12]");  // the first block wins

  a = extract_agent_action("In summary ```text\nscroll down\n```");  // a language tag, VWA's bare scroll
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a.text, "scroll [down]");

  a = extract_agent_action("Done. In summary, the next action I will perform is ```stop [N/A]```");
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a.parsed.act.kind, action_kind::stop);
  EXPECT_EQ(a.parsed.act.answer, "N/A");
}

TEST(AgentAction, FailuresFailOnTheServerToo) {
  // No block (a bare action must not act on the server), a bad verb, an unclosed block,
  // an empty block, a truncated reply.
  for (const char* reply : {"click [3]", "```Click [3]```", "In summary ```click [3]", "``````",
                            "Let's think step-by-step. The link", ""}) {
    SCOPED_TRACE(reply);
    agent_action a = extract_agent_action(reply);
    EXPECT_FALSE(a.ok());
    EXPECT_EQ(a.text, "none");
    EXPECT_EQ(a.parsed.act.kind, action_kind::none);
    EXPECT_FALSE(parse_action(a.env_text).ok()) << a.env_text;
  }
  EXPECT_NE(extract_agent_action("```Click [3]```").parsed.error.find("lowercase"), std::string::npos);
}

TEST(AgentAction, PreviousActionLine) {
  EXPECT_EQ(previous_action_text(nullptr, std::nullopt), "None");
  agent_action ok = extract_agent_action("```click [12]```");
  EXPECT_EQ(previous_action_text(&ok, std::nullopt), "click [12]");
  EXPECT_EQ(previous_action_text(&ok, std::string("no matching element [12]\nmore")),
            "click [12] (failed: no matching element [12])");
  agent_action bad = extract_agent_action("no backticks here");
  const std::string line = previous_action_text(&bad, std::string("ignored"));
  EXPECT_EQ(line.rfind("None (your previous reply was not in the correct format: no action found", 0), 0u) << line;
  EXPECT_EQ(line.find('\n'), std::string::npos);
}

TEST(AgentAction, ANoteLineBeforeTheBlockIsCarriedIntoThePreviousActionLine) {
  const agent_action a = extract_agent_action("NOTE: $23.99\n```tab_focus [1]```");
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a.text, "tab_focus [1]");
  EXPECT_EQ(a.note, "$23.99");
  EXPECT_EQ(previous_action_text(&a, std::nullopt), "tab_focus [1] (NOTE: $23.99)");
  EXPECT_EQ(previous_action_text(&a, std::string("no tab 1")), "tab_focus [1] (NOTE: $23.99) (failed: no tab 1)");
  // On the block's line, spaces trimmed; leading blank lines allowed.
  EXPECT_EQ(extract_agent_action("\n NOTE:   4.5 out of 5  ```click [3]```").note, "4.5 out of 5");
  // Only a reply that begins with it: VWA's reasoning is no note, nor a note later on.
  EXPECT_EQ(extract_agent_action("Let's think. NOTE: $1\n```click [3]```").note, "");
  EXPECT_EQ(extract_agent_action("```click [3]```\nNOTE: $1").note, "");
  EXPECT_EQ(extract_agent_action("NOTE:\n```click [3]```").note, "");
  // Long notes are cut to 200 bytes, never inside a UTF-8 character ("é" is 2 bytes).
  std::string accents;
  for (int i = 0; i < 120; ++i) accents += "\xC3\xA9";
  // "a" then the pairs: byte 200 is the second byte of a pair, so the cut is at 199.
  const std::string cut = extract_agent_action("NOTE: a" + accents + "\n```click [3]```").note;
  EXPECT_EQ(cut.size(), 199u);
  EXPECT_EQ(cut, "a" + accents.substr(0, 198));
  // A note with an unparsable block: the line is the parse failure's (the note is not shown).
  const agent_action bad = extract_agent_action("NOTE: $5\n```fly [3]```");
  EXPECT_EQ(bad.note, "$5");
  EXPECT_EQ(previous_action_text(&bad, std::nullopt).rfind("None (", 0), 0u);
}

TEST(AgentAction, ANoteByElementHoldsThatElementsNameOnThePageItAnswers) {
  const std::string page = "[1] RootWebArea 'Shop'\n\t[84] StaticText '$23.99'\n\t[86] StaticText ''";
  const agent_action a = extract_agent_action("NOTE [84]\n```tab_focus [1]```", page);
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a.note_element, 84);
  EXPECT_EQ(a.note, "$23.99");
  EXPECT_EQ(previous_action_text(&a, std::nullopt), "tab_focus [1] (NOTE: $23.99)");
  EXPECT_EQ(extract_agent_action(" NOTE [84]  ```click [3]```", page).note, "$23.99");
  // An id the page lacks, or an element with no text: no note, and the line says why.
  const agent_action missing = extract_agent_action("NOTE [85]\n```click [3]```", page);
  EXPECT_EQ(missing.note, "");
  EXPECT_EQ(previous_action_text(&missing, std::nullopt), "click [3] (NOTE [85] failed: no element [85] on the page)");
  const agent_action empty = extract_agent_action("NOTE [86]\n```click [3]```", page);
  EXPECT_EQ(previous_action_text(&empty, std::nullopt), "click [3] (NOTE [86] failed: element [86] has no text)");
  // Not the element form: junk after the id, no id, or no page to read it from.
  EXPECT_EQ(extract_agent_action("NOTE [84] and more\n```click [3]```", page).note_element, -1);
  EXPECT_EQ(extract_agent_action("NOTE []\n```click [3]```", page).note_element, -1);
  EXPECT_EQ(extract_agent_action("NOTE [84]\n```click [3]```").note, "");
}

TEST(AgentAction, AnAnswerByElementIsThatElementsNameAndTheEnvGetsTheName) {
  const std::string page = "[1] RootWebArea 'Shop'\n\t[84] StaticText '$31.99'\n\t[86] StaticText ''\n"
                           "\t[90] link 'It\\'s new'";
  agent_action a = extract_agent_action("```stop [[84]]```", page);
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a.answer_element, 84);
  EXPECT_EQ(a.parsed.act.answer, "$31.99");
  EXPECT_EQ(a.env_text, "stop [$31.99]");  // what the env parses is the resolved answer
  EXPECT_EQ(a.text, "stop [$31.99]");
  EXPECT_EQ(a.answer_error, "");
  EXPECT_EQ(extract_agent_action("```stop [[90]]```", page).parsed.act.answer, "It's new");  // repr quoting undone
  // An id the page lacks or an element with no text: the answer stays "[85]", and why is said.
  a = extract_agent_action("```stop [[85]]```", page);
  EXPECT_EQ(a.parsed.act.answer, "[85]");
  EXPECT_EQ(a.answer_error, "no element [85] on the page");
  EXPECT_EQ(extract_agent_action("```stop [[86]]```", page).answer_error, "element [86] has no text");
  // Not the element form: a plain answer, more than an id, or not a stop.
  EXPECT_EQ(extract_agent_action("```stop [84]```", page).parsed.act.answer, "84");
  EXPECT_EQ(extract_agent_action("```stop [[84] and [86]]```", page).answer_element, -1);
  EXPECT_EQ(extract_agent_action("```type [84] [[86]] [0]```", page).answer_element, -1);
}

TEST(AgentAction, ActionByElementPointsAtTheElementNamedExactlyTheAnswer) {
  const std::string page = "[1] RootWebArea 'Shop'\n\t[80] StaticText 'Price: $31.99'\n\t[84] StaticText '$31.99'\n"
                           "\t[85] StaticText '$31.99'\n\t[88] link '9'\n\t[90] StaticText 'Rating: 3.7 out of 5'";
  EXPECT_EQ(action_by_element("stop [$31.99]", page), "stop [[84]]");  // exact name, first such
  // A name merely containing the answer, a bare number (a count is worked out), another
  // action, or no page: the action as it is.
  EXPECT_EQ(action_by_element("stop [3.7]", page), "stop [3.7]");
  EXPECT_EQ(action_by_element("stop [9]", page), "stop [9]");
  EXPECT_EQ(action_by_element("stop [Price]", page), "stop [Price]");
  EXPECT_EQ(action_by_element("click [84]", page), "click [84]");
  EXPECT_EQ(action_by_element("stop [$31.99]", ""), "stop [$31.99]");
  // The pointer resolves back to the answer on the same page.
  EXPECT_EQ(extract_agent_action("```" + action_by_element("stop [$31.99]", page) + "```", page).parsed.act.answer,
            "$31.99");
}

}  // namespace
}  // namespace kvarena
