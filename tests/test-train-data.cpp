// test-train-data.cpp: the agent model's training data (datagen/train-data.h): trajectories
// rendered in the compact style by the agent's conversation code, with the replies and
// their end markers as targets; NIAH and key-value documents; the token files.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <set>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <regex>

#include "conversation.h"
#include "page-element.h"
#include "generator/generate.h"
#include "oracle-plan.h"
#include "gguf-reader.h"
#include "gguf-writer.h"
#include "tokenizer.h"
#include "train-data.h"
#include "train-data-on-seed.h"
#include "train-tokens.h"

namespace kvarena {
namespace {

trajectory two_steps() {
  trajectory t;
  t.intent = "Open Cars.";
  t.steps.push_back({"[1] link 'Cars'", "http://localhost/", "click [1]"});
  t.steps.push_back({"[2] heading 'Cars'", "http://localhost/cars", "stop [done]"});
  return t;
}

std::string joined(const train_sequence& q, bool targets) {
  std::string out;
  for (const train_segment& s : q.segments)
    if (s.target == targets) out += s.text + "|";
  return out;
}

TEST(TrainData, FullModeIsOneSequenceWithRepliesAndEndMarkersAsTargets) {
  const std::vector<train_sequence> seqs = render_trajectory(two_steps(), history_mode::full, nullptr, 0);
  ASSERT_EQ(seqs.size(), 1u);
  // Written out by hand: ChatML, compact message, the reply only the action block.
  EXPECT_EQ(joined(seqs[0], false),
            "<|im_start|>user\nOBSERVATION:\n[1] link 'Cars'\nURL: http://localhost/\nOBJECTIVE: Open Cars.\n"
            "PREVIOUS ACTIONS: None<|im_end|>\n<|im_start|>assistant\n|"
            "\n<|im_start|>user\nOBSERVATION:\n[2] heading 'Cars'\nURL: http://localhost/cars\nOBJECTIVE: Open Cars.\n"
            "PREVIOUS ACTIONS: click [1]<|im_end|>\n<|im_start|>assistant\n|");
  EXPECT_EQ(joined(seqs[0], true), "```click [1]```|<|im_end|>|```stop [done]```|<|im_end|>|");
}

TEST(TrainData, FullModeTextIsWhatTheChatTemplateRendersForTheWholeEpisode) {
  const std::vector<train_sequence> seqs = render_trajectory(two_steps(), history_mode::full, nullptr, 0);
  std::string all;
  for (const train_segment& s : seqs[0].segments) all += s.text;
  const chat_template chat(chat_format::chatml);
  std::vector<chat_message> msgs = {
      {"user", "OBSERVATION:\n[1] link 'Cars'\nURL: http://localhost/\nOBJECTIVE: Open Cars.\nPREVIOUS ACTIONS: None"},
      {"assistant", "```click [1]```"},
      {"user", "OBSERVATION:\n[2] heading 'Cars'\nURL: http://localhost/cars\nOBJECTIVE: Open Cars.\n"
               "PREVIOUS ACTIONS: click [1]"},
      {"assistant", "```stop [done]```"}};
  // The sequence ends at the last reply's end marker (the newline after it is never generated).
  EXPECT_EQ(all + "\n", chat.render(msgs, false));
}

TEST(TrainData, LastModeIsASequencePerStepListingEveryPreviousAction) {
  trajectory t = two_steps();
  t.steps.insert(t.steps.begin() + 1, {"[1] link 'Cars'", "http://localhost/", "scroll [down]"});
  const std::vector<train_sequence> seqs = render_trajectory(t, history_mode::last, nullptr, 0);
  ASSERT_EQ(seqs.size(), 3u);
  EXPECT_EQ(joined(seqs[0], true), "```click [1]```|<|im_end|>|");
  EXPECT_NE(joined(seqs[2], false).find("PREVIOUS ACTIONS:\nclick [1]\nscroll [down]<|im_end|>"), std::string::npos)
      << joined(seqs[2], false);
  EXPECT_EQ(joined(seqs[2], true), "```stop [done]```|<|im_end|>|");
}

TEST(TrainData, ANoteIsItsRepliesFirstLineAndFollowsItsActionInLaterLists) {
  trajectory t = two_steps();
  t.steps[0].note = "$5.00";
  const std::vector<train_sequence> seqs = render_trajectory(t, history_mode::last, nullptr, 0);
  ASSERT_EQ(seqs.size(), 2u);
  EXPECT_EQ(joined(seqs[0], true), "NOTE: $5.00\n```click [1]```|<|im_end|>|");
  EXPECT_NE(joined(seqs[1], false).find("PREVIOUS ACTIONS:\nclick [1] (NOTE: $5.00)<|im_end|>"), std::string::npos)
      << joined(seqs[1], false);
  // In full history the reply with its note is in the sequence; the list is the last action's line.
  const std::vector<train_sequence> full = render_trajectory(t, history_mode::full, nullptr, 0);
  ASSERT_EQ(full.size(), 1u);
  EXPECT_EQ(joined(full[0], true), "NOTE: $5.00\n```click [1]```|<|im_end|>|```stop [done]```|<|im_end|>|");
  EXPECT_NE(joined(full[0], false).find("PREVIOUS ACTIONS: click [1] (NOTE: $5.00)<|im_end|>"), std::string::npos);
}

TEST(TrainData, ANoteByElementNamesItsIdAndLaterListsCarryTheElementsName) {
  trajectory t = two_steps();
  t.steps[0].observation = "[1] link 'Cars'\n\t[7] StaticText 'Rating: 2.4 out of 5'";
  t.steps[0].note = "Rating: 2.4 out of 5";
  t.steps[0].note_element = 7;
  std::vector<train_sequence> seqs = render_trajectory(t, history_mode::last, nullptr, 0);
  ASSERT_EQ(seqs.size(), 2u);
  EXPECT_EQ(joined(seqs[0], true), "NOTE [7]\n```click [1]```|<|im_end|>|");
  EXPECT_NE(joined(seqs[1], false).find("PREVIOUS ACTIONS:\nclick [1] (NOTE: Rating: 2.4 out of 5)<|im_end|>"),
            std::string::npos)
      << joined(seqs[1], false);
  // An element the shown page lacks (cut off by the observation budget) is noted as text.
  t.steps[0].observation = "[1] link 'Cars'";
  seqs = render_trajectory(t, history_mode::last, nullptr, 0);
  EXPECT_EQ(joined(seqs[0], true), "NOTE: Rating: 2.4 out of 5\n```click [1]```|<|im_end|>|");
  EXPECT_NE(joined(seqs[1], false).find("click [1] (NOTE: Rating: 2.4 out of 5)<|im_end|>"), std::string::npos);
}

TEST(TrainData, AStopAnswerThePageShowsAsAnElementsNameIsAnsweredByThatElement) {
  trajectory t = two_steps();
  t.steps[1] = {"[2] heading 'Cars'\n\t[84] StaticText '$5,100.00'", "http://localhost/cars", "stop [$5,100.00]"};
  std::vector<train_sequence> seqs = render_trajectory(t, history_mode::last, nullptr, 0);
  ASSERT_EQ(seqs.size(), 2u);
  EXPECT_EQ(joined(seqs[1], true), "```stop [[84]]```|<|im_end|>|");
  // An answer no element is named exactly stays text.
  t.steps[1].action = "stop [$5,100]";
  seqs = render_trajectory(t, history_mode::last, nullptr, 0);
  EXPECT_EQ(joined(seqs[1], true), "```stop [$5,100]```|<|im_end|>|");
}

// A page in the text browser's format (names quoted as Python's repr quotes them).
const char* k_shop_page =
    "Tab 0 (current): Shop\n"
    "\n"
    "[1] RootWebArea 'Shop' focused: True\n"
    "\t[69] heading \"It's okay\"\n"
    "\t\t[70] link 'Say \\'hi\\' \\\\ bye'\n"
    "\t[84] StaticText '$12.40'\n"
    "\t[86] StaticText 'Rating: 2.4 out of 5 (7 reviews)'\n"
    "\t[88] StaticText '2.4 stars'\n"
    "\t[90] StaticText '$23.99'\n"
    "\t[92] button ''\n"
    "\t[114] StaticText '$23.99'";

TEST(PageElement, AnElementsNameIsItsQuotedTextUnescaped) {
  EXPECT_EQ(element_line(k_shop_page, 86), "[86] StaticText 'Rating: 2.4 out of 5 (7 reviews)'");
  EXPECT_EQ(element_line(k_shop_page, 8), "");  // "[84]" is not "[8]"
  EXPECT_EQ(element_text(k_shop_page, 69).value(), "It's okay");
  EXPECT_EQ(element_text(k_shop_page, 70).value(), "Say 'hi' \\ bye");
  EXPECT_EQ(element_text(k_shop_page, 92).value(), "");
  EXPECT_FALSE(element_text(k_shop_page, 93).has_value());
}

TEST(PageElement, TheElementShowingAFactIsAnExactNameFirstThenTheShortestWholeMatch) {
  EXPECT_EQ(element_showing(k_shop_page, "$23.99"), 90);  // the first exact name
  EXPECT_EQ(element_showing(k_shop_page, "2.4"), 88);     // "2.4 stars" is shorter; not "$12.40"
  EXPECT_EQ(element_showing(k_shop_page, "Rating: 2.4"), 86);
  EXPECT_EQ(element_showing(k_shop_page, "12.4"), -1);    // "$12.40" holds it only joined to a digit
  EXPECT_EQ(element_showing(k_shop_page, "$12.40"), 84);
  EXPECT_EQ(element_showing(k_shop_page, "okay"), 69);
  EXPECT_EQ(element_showing(k_shop_page, "missing"), -1);
}

// On one real site seed (the oracle's trajectories through write_train_data, no tokenizer:
// the text goes to corpus.txt): every long-horizon task whose kvarena.memory has a fact seen
// before its plan's last step gets a reply that begins with that fact's note, on a step
// whose observation shows the fact; the note then follows the action in later lists; no
// other suite's task writes one.
TEST(TrainData, LongHorizonTrajectoriesNoteTheirFactsWhereTheyAreOnScreen) {
  const train_data_options o = one_seed_options(250, "notes");
  write_train_data(o);
  const std::string corpus = file_text(o.out_dir + "/corpus.txt");
  std::filesystem::remove_all(o.out_dir);
  ASSERT_FALSE(corpus.empty());

  // intent -> facts its plan notes (seen before the last step), from the generator's tasks.
  std::map<std::string, std::set<std::string>> want;
  const tasks::generated_suites g = tasks::generate_suites(250);
  for (const auto& [suite, ts] : g.suites)
    for (const task& tk : ts) {
      tasks::task_extension ext;
      std::string err;
      ASSERT_TRUE(tasks::parse_extension(tk.kvarena, &ext, &err)) << err;
      for (const tasks::memory_fact& f : ext.memory) {
        EXPECT_EQ(suite, "long-horizon");
        if (f.seen_step + 1 < static_cast<int>(ext.plan.size())) want[tk.intent].insert(f.fact);
      }
    }
  ASSERT_GE(want.size(), 20u);

  // Every reply that starts with a note: by element ("NOTE [84]"), the element's line read
  // from the prompt before it (its OBSERVATION), by hand.
  const std::string reply_start = "<|im_start|>assistant\nNOTE [";
  ASSERT_EQ(corpus.find("<|im_start|>assistant\nNOTE: "), std::string::npos);  // every fact is on an element
  std::map<std::string, std::set<std::string>> got;
  size_t n_replies = 0;
  for (size_t at = corpus.find(reply_start); at != std::string::npos; at = corpus.find(reply_start, at + 1)) {
    ++n_replies;
    const size_t from = at + reply_start.size();
    const std::string id = corpus.substr(from, corpus.find(']', from) - from);
    EXPECT_EQ(corpus.substr(from + id.size(), 5), "]\n```") << id;
    const size_t obs = corpus.rfind("OBSERVATION:\n", at), obj = corpus.find("\nOBJECTIVE: ", obs);
    ASSERT_NE(obs, std::string::npos);
    const std::string intent = corpus.substr(obj + 12, corpus.find('\n', obj + 12) - obj - 12);
    const std::string page = corpus.substr(obs, obj - obs);
    const size_t line_at = page.find("\t[" + id + "] ");
    ASSERT_NE(line_at, std::string::npos) << "the note's element [" << id << "] of " << intent << " is not on its page";
    const std::string line = page.substr(line_at + 1, page.find('\n', line_at + 1) - line_at - 1);
    // "[84] StaticText '$23.99'": the name is between the quotes ending the line.
    const size_t q = line.find('\'');
    ASSERT_TRUE(q != std::string::npos && line.back() == '\'') << line;
    const std::string name = line.substr(q + 1, line.size() - q - 2);
    for (const std::string& fact : want[intent])
      if (name.find(fact) != std::string::npos) got[intent].insert(fact);
    // A later step of the same episode lists the element's name.
    EXPECT_NE(corpus.find("(NOTE: " + name + ")", from), std::string::npos) << name;
  }
  EXPECT_EQ(got, want);
  EXPECT_GE(n_replies, want.size());  // agent-last and agent-full each, crops where the step has an element
}

TEST(TrainData, ConversationGivesTheAgentTheSameTextAsTheTrainingData) {
  // The agent loop's side: the prompts agent_conversation builds, then the replies.
  agent_conversation conv(chat_template(chat_format::chatml), history_mode::full, prompt_style::compact, 0);
  std::string agent_text = conv.next_prompt("[1] link 'Cars'", "http://localhost/", "Open Cars.", "None").text;
  agent_text += "```click [1]```";
  conv.add_reply("```click [1]```");
  const prompt_text second = conv.next_prompt("[2] heading 'Cars'", "http://localhost/cars", "Open Cars.", "click [1]");
  EXPECT_FALSE(second.first);
  agent_text += second.text + "```stop [done]```";
  const std::vector<train_sequence> seqs = render_trajectory(two_steps(), history_mode::full, nullptr, 0);
  std::string data_text;
  for (const train_segment& s : seqs[0].segments) data_text += s.text;
  EXPECT_EQ(data_text, agent_text + "<|im_end|>");
}

// An observation in the text browser's format, and its crops written out by hand.
const char* k_page =
    "Tab 0 (current): Shop\n"
    "\n"
    "[1] RootWebArea 'Shop' focused: True\n"
    "\t[12] link 'One Stop Market'\n"
    "\t[55] search ''\n"
    "\t\t[58] searchbox 'Search' required: False\n"
    "\t\t[59] button 'Search'\n"
    "\t[158] link 'Next'";

TEST(TrainData, CropKeepsTheHeaderAndTheLinesAroundTheElement) {
  EXPECT_EQ(crop_observation(k_page, 58, 1, 1).value(),
            "Tab 0 (current): Shop\n\n\t[55] search ''\n\t\t[58] searchbox 'Search' required: False\n"
            "\t\t[59] button 'Search'\n");
  // Clipped at the body's first line and at the end (no newline added after the last line).
  EXPECT_EQ(crop_observation(k_page, 12, 5, 0).value(),
            "Tab 0 (current): Shop\n\n[1] RootWebArea 'Shop' focused: True\n\t[12] link 'One Stop Market'\n");
  EXPECT_EQ(crop_observation(k_page, 158, 0, 4).value(), "Tab 0 (current): Shop\n\n\t[158] link 'Next'");
  // [5] is a prefix of nothing here: "[58]" is not "[5]"; an absent id gives nothing.
  EXPECT_FALSE(crop_observation(k_page, 5, 3, 3).has_value());
  EXPECT_FALSE(crop_observation(k_page, 8, 3, 3).has_value());
}

TEST(TrainData, CroppedStepsAreTheElementStepsWithTheirOwnReplies) {
  trajectory t;
  t.intent = "Search for kettles.";
  t.steps.push_back({k_page, "http://localhost/", "type [58] [kettle] [1]"});
  t.steps.push_back({k_page, "http://localhost/?q=kettle", "scroll [down]"});
  t.steps.push_back({k_page, "http://localhost/?q=kettle", "click [158]"});
  t.steps.push_back({k_page, "http://localhost/?q=kettle&p=2", "stop [done]"});
  const std::vector<train_sequence> seqs = render_cropped_steps(t, 7, nullptr, 0);
  ASSERT_EQ(seqs.size(), 2u);  // the scroll and the stop name no element
  EXPECT_EQ(joined(seqs[0], true), "```type [58] [kettle] [1]```|<|im_end|>|");
  EXPECT_EQ(joined(seqs[1], true), "```click [158]```|<|im_end|>|");
  // The second keeps the previous actions of the whole trajectory, as agent-last does.
  EXPECT_NE(joined(seqs[1], false).find("PREVIOUS ACTIONS:\ntype [58] [kettle] [1]\nscroll [down]"), std::string::npos)
      << joined(seqs[1], false);
  EXPECT_NE(joined(seqs[1], false).find("[158] link 'Next'"), std::string::npos);
  EXPECT_EQ(render_cropped_steps(t, 7, nullptr, 0).size(), 2u);
}

TEST(TrainData, NiahDocumentsHideTheAnswerOnceAndAreDeterministic) {
  const train_dataset a = niah_documents(5, 20, 300);
  const train_dataset b = niah_documents(5, 20, 300);
  ASSERT_EQ(a.sequences.size(), 20u);
  for (size_t i = 0; i < a.sequences.size(); ++i) {
    const train_sequence& q = a.sequences[i];
    ASSERT_EQ(q.segments.size(), 2u);
    EXPECT_EQ(q.segments[0].text, b.sequences[i].segments[0].text);
    std::smatch m;
    const std::string answer = q.segments[1].text;
    ASSERT_TRUE(std::regex_match(answer, m, std::regex(" ([0-9]{5})\\."))) << answer;
    const std::string& doc = q.segments[0].text;
    EXPECT_EQ(doc.find(m[1].str()), doc.rfind(m[1].str())) << "the code appears once";
    EXPECT_NE(doc.find(m[1].str()), std::string::npos);
    EXPECT_TRUE(q.segments[1].target && !q.segments[0].target);
  }
  EXPECT_NE(niah_documents(6, 1, 300).sequences[0].segments[0].text, a.sequences[0].segments[0].text);
}

TEST(TrainData, KvDocumentsAnswerWithTheQueriedKeysValue) {
  const train_dataset d = kv_documents(3, 30, 40);
  for (const train_sequence& q : d.sequences) {
    const std::string& doc = q.segments[0].text;
    std::smatch m;
    ASSERT_TRUE(std::regex_search(doc, m, std::regex("value of key ([0-9]{5})\\? The value is$")));
    const std::string line = "key " + m[1].str() + ": value" + q.segments[1].text.substr(0, 6) + "\n";
    EXPECT_NE(doc.find(line), std::string::npos) << line;
  }
}

// With several needles a document alternates question and answer segments; each answer is
// the code of the needle that its question names, every needle's code is different, and the
// first question and answer are those of the one-needle document of the same index.
TEST(TrainData, MultiNeedleNiahAsksForEachNeedleByItsPhrasing) {
  const std::map<std::string, std::string> needle_of_question = {
      {"\n\nWhat is the secret code? The secret code is", "The secret code is "},
      {"\n\nWhat is the pass key? The pass key is", "The pass key is "},
      {"\n\nWhich number was to be remembered? The number is", "Remember this number: "},
  };
  const train_dataset one = niah_documents(5, 40, 300);
  const train_dataset many = niah_documents(5, 40, 300, 3);
  ASSERT_EQ(many.sequences.size(), 40u);
  std::set<size_t> counts;
  for (size_t i = 0; i < many.sequences.size(); ++i) {
    const std::vector<train_segment>& seg = many.sequences[i].segments;
    ASSERT_EQ(seg.size() % 2, 0u);
    counts.insert(seg.size() / 2);
    EXPECT_EQ(seg[1].text, one.sequences[i].segments[1].text) << "first answer as with one needle";
    const std::string& first = seg[0].text;
    std::set<std::string> codes;
    for (size_t j = 0; j < seg.size(); j += 2) {
      EXPECT_FALSE(seg[j].target);
      EXPECT_TRUE(seg[j + 1].target);
      std::string question;
      for (const auto& [q, needle] : needle_of_question) {
        if (seg[j].text.size() >= q.size() && seg[j].text.compare(seg[j].text.size() - q.size(), q.size(), q) == 0)
          question = q;
      }
      ASSERT_FALSE(question.empty()) << seg[j].text.substr(seg[j].text.size() > 80 ? seg[j].text.size() - 80 : 0);
      std::smatch m;
      ASSERT_TRUE(std::regex_match(seg[j + 1].text, m, std::regex(" ([0-9]{5})\\."))) << seg[j + 1].text;
      EXPECT_TRUE(codes.insert(m[1].str()).second) << "codes differ within a document";
      const std::string placed = needle_of_question.at(question) + m[1].str() + ".";
      EXPECT_NE(first.find(placed), std::string::npos) << placed;
      if (j > 0) {
        EXPECT_EQ(seg[j].text, question) << "later questions follow the answer directly";
      }
    }
  }
  EXPECT_EQ(counts, (std::set<size_t>{1, 2, 3}));
  EXPECT_THROW(niah_documents(5, 1, 300, 4), std::invalid_argument);
}

TEST(TrainData, KvDocumentsWithSeveralQueriesAnswerEachQueriedKey) {
  const train_dataset one = kv_documents(3, 30, 40);
  const train_dataset many = kv_documents(3, 30, 40, 5);
  size_t most = 0;
  for (size_t i = 0; i < many.sequences.size(); ++i) {
    const std::vector<train_segment>& seg = many.sequences[i].segments;
    ASSERT_EQ(seg.size() % 2, 0u);
    ASSERT_LE(seg.size() / 2, 5u);
    most = std::max(most, seg.size() / 2);
    EXPECT_EQ(seg[1].text, one.sequences[i].segments[1].text) << "first answer as with one query";
    const std::string& records = seg[0].text;
    std::set<std::string> keys;
    for (size_t j = 0; j < seg.size(); j += 2) {
      std::smatch m;
      ASSERT_TRUE(std::regex_search(seg[j].text, m, std::regex("value of key ([0-9]{5})\\? The value is$")));
      EXPECT_TRUE(keys.insert(m[1].str()).second) << "a key is asked once";
      ASSERT_TRUE(seg[j + 1].target);
      const std::string line = "key " + m[1].str() + ": value" + seg[j + 1].text.substr(0, 6) + "\n";
      EXPECT_NE(records.find(line), std::string::npos) << line;
    }
  }
  EXPECT_EQ(most, 5u);
}

// Lookup documents ask only for elements whose role and name are unique on the page (the
// two "link 'Boats'" lines are never asked for), answer each with the id written on that
// line, ask each element once per document, and skip a page without elements.
TEST(TrainData, LookupDocumentsAskForUniqueElementsAndAnswerTheirIds) {
  const std::string page =
      "Tab 0 (current): Home\n\n"
      "\t[12] link 'Cars'\n"
      "\t[13] link 'Boats'\n"
      "\t\t[14] StaticText 'Boats'\n"
      "\t[15] link 'Boats'\n"
      "\t[16] button 'Search' required: False\n";
  const std::map<std::string, std::string> expected = {
      {"\nWhich element is the link 'Cars'? It is", " [12]."},
      {"\nWhich element is the StaticText 'Boats'? It is", " [14]."},
      {"\nWhich element is the button 'Search'? It is", " [16]."},
  };
  std::set<std::string> asked_ever;
  std::set<size_t> counts;
  for (uint64_t seed = 0; seed < 30; ++seed) {
    const train_dataset d = lookup_documents({page, "Tab 0 (current): Empty\n\nno elements here\n"}, seed, 10);
    ASSERT_EQ(d.sequences.size(), 1u) << "the page without elements gives no document";
    const std::vector<train_segment>& seg = d.sequences[0].segments;
    ASSERT_EQ(seg.size() % 2, 0u);
    counts.insert(seg.size() / 2);
    EXPECT_EQ(seg[0].text.rfind(page + "\n", 0), 0u) << "the document starts with the page";
    std::set<std::string> asked;
    for (size_t j = 0; j < seg.size(); j += 2) {
      const std::string question = j == 0 ? seg[0].text.substr(page.size() + 1) : seg[j].text;
      ASSERT_TRUE(expected.count(question)) << question;
      EXPECT_EQ(seg[j + 1].text, expected.at(question));
      EXPECT_TRUE(seg[j + 1].target && !seg[j].target);
      EXPECT_TRUE(asked.insert(question).second) << "asked twice: " << question;
      asked_ever.insert(question);
    }
  }
  EXPECT_EQ(asked_ever.size(), 3u);
  EXPECT_EQ(counts, (std::set<size_t>{1, 2, 3}));
}

// A byte-level vocabulary (256 byte tokens in GPT-2's byte-to-unicode form, no merges, and
// the three ChatML specials) written to a vocabulary-only GGUF.
std::filesystem::path byte_vocab_gguf() {
  std::vector<std::string> tokens;
  std::vector<int32_t> types;
  auto byte_char = [](int b) {  // GPT-2: printable bytes map to themselves, others to U+0100+
    static std::vector<int> map;
    if (map.empty()) {
      int n = 0;
      for (int c = 0; c < 256; ++c) {
        const bool keep = (c >= 33 && c <= 126) || (c >= 161 && c <= 172) || (c >= 174 && c <= 255);
        map.push_back(keep ? c : 256 + n++);
      }
    }
    const int cp = map[static_cast<size_t>(b)];
    std::string s;
    if (cp < 0x80) s += static_cast<char>(cp);
    else {
      s += static_cast<char>(0xC0 | (cp >> 6));
      s += static_cast<char>(0x80 | (cp & 0x3F));
    }
    return s;
  };
  for (int b = 0; b < 256; ++b) tokens.push_back(byte_char(b)), types.push_back(1);
  for (const char* s : {"<|endoftext|>", "<|im_start|>", "<|im_end|>"}) tokens.push_back(s), types.push_back(3);
  const auto path = std::filesystem::temp_directory_path() / "kvarena-test-train-data-vocab.gguf";
  gguf_writer w;
  w.set_string("general.architecture", "llama");
  w.set_string("tokenizer.ggml.model", "gpt2");
  w.set_string("tokenizer.ggml.pre", "qwen2");
  w.set_string_array("tokenizer.ggml.tokens", tokens);
  w.set_i32_array("tokenizer.ggml.token_type", types);
  w.set_string_array("tokenizer.ggml.merges", {});
  w.set_u32("tokenizer.ggml.eos_token_id", 256);
  w.write(path.string());
  return path;
}

TEST(TrainData, TokenFilesHoldEachSegmentWithItsMaskAndOffsets) {
  const auto tok = tokenizer::from_file(byte_vocab_gguf().string());
  train_dataset d{"t", {}};
  d.sequences.push_back({{{"ab", false}, {"<|im_end|>", true}}});
  d.sequences.push_back({{{"c", false}, {"de", true}}});
  const auto dir = std::filesystem::temp_directory_path() / "kvarena-test-train-tokens";
  std::filesystem::remove_all(dir);
  EXPECT_EQ(write_token_files(d, *tok, dir.string(), 2), 6);
  auto read = [&](const char* ext) {
    std::ifstream f(dir / "tokens" / (std::string("t") + ext), std::ios::binary);
    return std::string((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  };
  const std::string ids = read(".tok"), mask = read(".mask"), idx = read(".idx");
  ASSERT_EQ(ids.size(), 12u);
  std::vector<uint16_t> v(6);
  std::memcpy(v.data(), ids.data(), 12);
  // Bytes are their own ids here ('a' = 97 ...); <|im_end|> is id 258.
  EXPECT_EQ(v, (std::vector<uint16_t>{97, 98, 258, 99, 100, 101}));
  EXPECT_EQ(mask, std::string("\0\0\1\0\1\1", 6));
  ASSERT_EQ(idx.size(), 24u);
  uint64_t off[3];
  std::memcpy(off, idx.data(), 24);
  EXPECT_EQ(off[0], 0u);
  EXPECT_EQ(off[1], 3u);
  EXPECT_EQ(off[2], 6u);
}

TEST(TrainData, AnActionsFreeTextIsItsTypedTextOrStopAnswer) {
  struct row {
    const char* reply;
    const char* text;  // nullptr: no free text
  };
  const row rows[] = {
      {"```type [58] [Blue Lamp, 2 Pack] [1]```", "Blue Lamp, 2 Pack"},
      {"```type [3] [a]b] [0]```", "a]b"},              // greedy, as action-parse.h
      {"```type [3] [Price: [1] high] [0]```", "Price: [1] high"},
      {"```type [7] [no flag]```", "no flag"},
      {"```type [7] [ends in one] [x]```", "ends in one] [x"},  // [x] is no flag
      {"```stop [$20.99]```", "$20.99"},
      {"In summary: ```stop [N/A]``` done", "N/A"},
      {"type [5] [bare] [1]", "bare"},
      {"```text\ntype [ 5 ] [tagged] [1]\n```", "tagged"},  // lenient forms of action-parse.h
      {"```stop N/A```", "N/A"},
      {"```click [12]```", nullptr},
      {"```stop []```", nullptr},
      {"```type [4] [] [1]```", nullptr},
      {"```type [4]```", nullptr},
      {"```scroll [down]```", nullptr},
  };
  for (const row& r : rows) {
    const std::string_view reply = r.reply;
    const auto span = action_free_text_span(reply);
    if (!r.text) {
      EXPECT_FALSE(span.has_value()) << r.reply;
      continue;
    }
    ASSERT_TRUE(span.has_value()) << r.reply;
    EXPECT_EQ(reply.substr(span->first, span->second - span->first), r.text) << r.reply;
  }
}

TEST(TrainData, TheFreeTextOfATargetReplyIsMaskedTwo) {
  const auto tok = tokenizer::from_file(byte_vocab_gguf().string());
  train_sequence q{{{"p [1] [q]", false}, {"```type [1] [ab] [1]```", true}}};
  std::vector<uint16_t> ids;
  std::vector<uint8_t> mask;
  encode_sequence(q, *tok, &ids, &mask);
  // One byte, one token: context "p [1] [q]" (9), then "```type [1] [" (13), "ab", "] [1]```" (8).
  const std::string want = std::string(9, '\0') + std::string(13, '\1') + std::string(2, '\2') + std::string(8, '\1');
  EXPECT_EQ(std::string(mask.begin(), mask.end()), want);
  // A note line is free text too, apart from the action's: "NOTE: $5" (8), "\n```type [1] [" (14),
  // "ab", "] [1]```" (8).
  train_sequence n{{{"NOTE: $5\n```type [1] [ab] [1]```", true}}};
  ids.clear(), mask.clear();
  encode_sequence(n, *tok, &ids, &mask);
  EXPECT_EQ(std::string(mask.begin(), mask.end()),
            std::string(8, '\2') + std::string(14, '\1') + std::string(2, '\2') + std::string(8, '\1'));
  // Context is never marked, even when it reads as an action.
  train_sequence c{{{"```type [1] [ab] [1]```", false}}};
  ids.clear(), mask.clear();
  encode_sequence(c, *tok, &ids, &mask);
  EXPECT_EQ(std::count(mask.begin(), mask.end(), 0), static_cast<long>(mask.size()));
}

}  // namespace
}  // namespace kvarena
