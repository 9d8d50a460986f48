// test-train-retarget.cpp: the agent-retarget training set (datagen/retarget-objectives.h): a page's
// lines read into depth, id, role and name; an element's siblings (same role and depth, same
// container); a step that picks an element the objective names, rendered again with the
// objective naming a sibling and the action picking it (pages and expected variants written
// out by hand); the set and its list of made-up objectives through write_train_data.
#include <gtest/gtest.h>


#include <filesystem>
#include <fstream>
#include <set>

#include "train-data-on-seed.h"
#include "retarget-objectives.h"

namespace kvarena {
namespace {

// A page in the env's text form: header, blank line, the tree by tabs.
const std::string k_page =
    "Tab 0 (current): All listings\n"
    "\n"
    "[1] RootWebArea 'All listings' focused: True\n"
    "\t[12] link 'Home'\n"
    "\t[20] navigation 'Categories'\n"
    "\t\t[21] link 'Cars'\n"
    "\t\t[22] StaticText '(6)'\n"
    "\t\t[23] link 'Auto Parts'\n"
    "\t\t[25] link \"Men's Clothing\"\n"
    "\t\t[26] link 'Books'\n"
    "\t[30] combobox 'Category' hasPopup: menu expanded: False\n"
    "\t\t[31] option 'All categories' selected: True\n"
    "\t\t[32] group 'Vehicles'\n"
    "\t\t\t[33] option 'Cars' selected: False\n"
    "\t\t\t[34] option 'Motorcycles' selected: False\n"
    "\t\t[35] group 'Hobbies'\n"
    "\t\t\t[36] option 'Books' selected: False\n"
    "\t[41] combobox 'Condition' hasPopup: menu expanded: False\n"
    "\t\t[42] option 'Any condition' selected: True\n"
    "\t\t[43] option 'New' selected: False\n"
    "\t\t[44] option 'Used' selected: False\n"
    "\t[40] link 'Log out'";

TEST(TrainRetarget, PageLinesGiveDepthIdRoleAndName) {
  const std::vector<page_line> l = page_lines(k_page);
  ASSERT_EQ(l.size(), 22u);
  EXPECT_EQ(l[0].id, -1);  // the header
  EXPECT_EQ(l[1].id, -1);  // the blank line
  EXPECT_EQ(l[2].depth, 0);
  EXPECT_EQ(l[2].id, 1);
  EXPECT_EQ(l[2].role, "RootWebArea");
  EXPECT_EQ(l[2].name, "All listings");
  EXPECT_EQ(l[8].depth, 2);
  EXPECT_EQ(l[8].id, 25);
  EXPECT_EQ(l[8].name, "Men's Clothing");  // double quotes around an apostrophe
  EXPECT_EQ(l[11].role, "option");
  EXPECT_EQ(l[11].name, "All categories");  // the state after the name is not part of it
  EXPECT_EQ(l[16].depth, 3);
  EXPECT_EQ(l[16].name, "Books");
  EXPECT_FALSE(l[16].selected);
  EXPECT_TRUE(l[11].selected);
  EXPECT_TRUE(l[18].selected);  // 'Any condition'
}

TEST(TrainRetarget, SiblingsShareRoleDepthAndContainer) {
  const std::vector<page_line> l = page_lines(k_page);
  auto ids = [&](size_t k, size_t container) {
    std::vector<int64_t> out;
    for (size_t j : sibling_lines(l, k, container)) out.push_back(l[j].id);
    return out;
  };
  EXPECT_EQ(parent_line(l, 7), 4u);    // link 'Auto Parts' -> navigation 'Categories'
  EXPECT_EQ(parent_line(l, 14), 12u);  // option 'Motorcycles' -> group 'Vehicles'
  EXPECT_EQ(parent_line(l, 2), 2u);    // the root has none (the header is not a parent)
  // The other links of the navigation; not 'Home' or 'Log out' (depth 1), not the StaticText.
  EXPECT_EQ(ids(7, 4), (std::vector<int64_t>{21, 25, 26}));
  // Under the combobox: the depth-3 options across its groups; 'All categories' is depth 2.
  EXPECT_EQ(ids(14, 10), (std::vector<int64_t>{33, 36}));
  // Under the group alone: its other option. Under the Condition box (option 'New'): its own
  // options, not the category box's.
  EXPECT_EQ(ids(14, 12), (std::vector<int64_t>{33}));
  EXPECT_EQ(ids(19, 17), (std::vector<int64_t>{42, 44}));
}

trajectory one_step(const std::string& intent, const std::string& action) {
  trajectory tr;
  tr.intent = intent;
  tr.steps.push_back({"Tab 0 (current): Home\n\n[1] RootWebArea 'Home'\n\t[9] link 'All listings'",
                      "http://localhost/classifieds/", "click [9]"});
  tr.steps.push_back({k_page, "http://localhost/classifieds/search", action});
  return tr;
}

std::set<std::pair<std::string, std::string>> as_set(const std::vector<retargeted_step>& v) {
  std::set<std::pair<std::string, std::string>> out;
  for (const retargeted_step& r : v) out.insert({r.intent, r.action});
  return out;
}

TEST(TrainRetarget, AClickOnANamedLinkIsRetargetedToItsSiblings) {
  const trajectory tr = one_step("Open the Auto Parts category, then its cheapest listing.", "click [23]");
  EXPECT_EQ(as_set(retarget_step(tr, 1, 8, 7)),
            (std::set<std::pair<std::string, std::string>>{
                {"Open the Cars category, then its cheapest listing.", "click [21]"},
                {"Open the Men's Clothing category, then its cheapest listing.", "click [25]"},
                {"Open the Books category, then its cheapest listing.", "click [26]"}}));
  // At most `variants`, distinct, drawn from the eligible ones.
  const std::vector<retargeted_step> two = retarget_step(tr, 1, 2, 7);
  ASSERT_EQ(two.size(), 2u);
  EXPECT_NE(two[0].action, two[1].action);
  // A sibling the objective already names is not eligible (the variant would be ambiguous).
  const trajectory both = one_step("Open the Auto Parts category, not Books.", "click [23]");
  EXPECT_EQ(as_set(retarget_step(both, 1, 8, 7)),
            (std::set<std::pair<std::string, std::string>>{{"Open the Cars category, not Books.", "click [21]"},
                                                           {"Open the Men's Clothing category, not Books.", "click [25]"}}));
}

// The forum list: each forum's link alone in its own cell, in its own row of the table.
const std::string k_forums =
    "Tab 0 (current): List of forums | Postmill\n"
    "\n"
    "[1] RootWebArea 'List of forums | Postmill' focused: True\n"
    "\t[20] link 'Forums'\n"
    "\t[41] main ''\n"
    "\t\t[44] table ''\n"
    "\t\t\t[56] row 'f/AskReddit Ask Reddit 25'\n"
    "\t\t\t\t[57] cell 'f/AskReddit'\n"
    "\t\t\t\t\t[58] link 'f/AskReddit'\n"
    "\t\t\t\t[64] cell '25'\n"
    "\t\t\t[66] row 'f/books Books 18'\n"
    "\t\t\t\t[67] cell 'f/books'\n"
    "\t\t\t\t\t[68] link 'f/books'\n"
    "\t\t\t\t[74] cell '18'\n"
    "\t\t\t[86] row 'f/fitness Fitness 14'\n"
    "\t\t\t\t[87] cell 'f/fitness'\n"
    "\t\t\t\t\t[88] link 'f/fitness'\n"
    "\t\t\t\t[94] cell '14'\n"
    "\t\t[99] link 'Next'";

TEST(TrainRetarget, ALinkAloneInItsCellTakesItsSiblingsFromTheTable) {
  const std::vector<page_line> l = page_lines(k_forums);
  // Lines: 0 header, 1 blank, 2 root, 3 Forums, 4 main, 5 table, 6 row, 7 cell, 8 link
  // 'f/AskReddit', ... 16 link 'f/fitness', ..., 18 link 'Next'.
  ASSERT_EQ(l[16].id, 88);
  EXPECT_EQ(parent_line(l, 16), 15u);        // its cell, which holds no other link
  EXPECT_EQ(sibling_container(l, 16), 5u);   // cell -> row -> table: the other forums' links
  EXPECT_EQ(sibling_container(l, 3), 2u);    // 'Forums' has siblings under the root already
  // 'Next' (depth 2) has none at its depth up to the root: its parent stays the container.
  EXPECT_EQ(sibling_container(l, 18), 4u);
  trajectory tr;
  tr.intent = "In the forum tab, open f/fitness, sort it by new, then post to f/fitness.";
  tr.steps.push_back({k_forums, "http://localhost/forums", "click [88]"});
  EXPECT_EQ(as_set(retarget_step(tr, 0, 8, 2)),
            (std::set<std::pair<std::string, std::string>>{
                {"In the forum tab, open f/AskReddit, sort it by new, then post to f/AskReddit.", "click [58]"},
                {"In the forum tab, open f/books, sort it by new, then post to f/books.", "click [68]"}}));
}

TEST(TrainRetarget, AScrollTowardTheNamedElementIsRetargetedToOthersThePageDoesNotShow) {
  // The list scrolled: f/fitness again (the overlap), then three forums the top did not show.
  const std::string lower =
      "Tab 0 (current): List of forums | Postmill\n"
      "\n"
      "[1] RootWebArea 'List of forums | Postmill' focused: True\n"
      "\t[41] main ''\n"
      "\t\t[44] table ''\n"
      "\t\t\t[86] row 'f/fitness Fitness 14'\n"
      "\t\t\t\t[87] cell 'f/fitness'\n"
      "\t\t\t\t\t[88] link 'f/fitness'\n"
      "\t\t\t[156] row 'f/nba NBA 30'\n"
      "\t\t\t\t[157] cell 'f/nba'\n"
      "\t\t\t\t\t[158] link 'f/nba'\n"
      "\t\t\t[166] row 'f/science Science 12'\n"
      "\t\t\t\t[167] cell 'f/science'\n"
      "\t\t\t\t\t[168] link 'f/science'\n"
      "\t\t\t[176] row 'f/television Television 9'\n"
      "\t\t\t\t[177] cell 'f/television'\n"
      "\t\t\t\t\t[178] link 'f/television'";
  trajectory tr;
  tr.intent = "In the forum tab, open f/nba, sort it by new.";
  tr.steps.push_back({k_forums, "http://localhost/forums", "scroll [down]"});
  tr.steps.push_back({lower, "http://localhost/forums", "click [158]"});
  // The scroll: objectives naming the forums the top does not show; f/fitness (shown) is not one.
  EXPECT_EQ(as_set(retarget_step(tr, 0, 8, 4)),
            (std::set<std::pair<std::string, std::string>>{
                {"In the forum tab, open f/science, sort it by new.", "scroll [down]"},
                {"In the forum tab, open f/television, sort it by new.", "scroll [down]"}}));
  EXPECT_EQ(retarget_step(tr, 0, 1, 4).size(), 1u);
  // The click after it: every other forum of the lower page, f/fitness too.
  EXPECT_EQ(retarget_step(tr, 1, 8, 4).size(), 3u);
  // A scroll that no pick follows has none.
  trajectory last = tr;
  last.steps.pop_back();
  EXPECT_TRUE(retarget_step(last, 0, 8, 4).empty());
}

TEST(TrainRetarget, ATypedOptionOfTheComboboxIsRetargetedToTheOtherOptions) {
  // 'Cars' is an option and a link: unique among the options, so eligible.
  const trajectory tr = one_step("Show me all Motorcycles listings.", "type [30] [Motorcycles] [0]");
  EXPECT_EQ(as_set(retarget_step(tr, 1, 8, 3)),
            (std::set<std::pair<std::string, std::string>>{{"Show me all Cars listings.", "type [30] [Cars] [0]"},
                                                           {"Show me all Books listings.", "type [30] [Books] [0]"}}));
}

TEST(TrainRetarget, OnlyTheSameBoxsOptionsAndNotTheOneSelectedAlready) {
  // 'Any condition' is selected (the box's current value): typing it would change nothing.
  const trajectory tr = one_step("Show New listings.", "type [41] [New] [0]");
  EXPECT_EQ(as_set(retarget_step(tr, 1, 8, 5)),
            (std::set<std::pair<std::string, std::string>>{{"Show Used listings.", "type [41] [Used] [0]"}}));
}

TEST(TrainRetarget, StepsThatPickNothingTheObjectiveNamesHaveNoVariants) {
  // The clicked link's name is not in the objective.
  EXPECT_TRUE(retarget_step(one_step("Find something to read.", "click [26]"), 1, 8, 1).empty());
  // Only as part of a longer word: "Cars" in "Carsharing".
  EXPECT_TRUE(retarget_step(one_step("Open Carsharing.", "click [21]"), 1, 8, 1).empty());
  // Typed text that is not an option of the box typed into.
  EXPECT_TRUE(retarget_step(one_step("Search for Books.", "type [12] [Books] [1]"), 1, 8, 1).empty());
  // Not an element action; an id not on the page.
  EXPECT_TRUE(retarget_step(one_step("Scroll past Books.", "scroll [down]"), 1, 8, 1).empty());
  EXPECT_TRUE(retarget_step(one_step("Open Books.", "click [99]"), 1, 8, 1).empty());
  EXPECT_TRUE(retarget_step(one_step("Open Books.", "click [26]"), 1, 0, 1).empty());
}

TEST(TrainRetarget, RenderedVariantsKeepThePageAndPreviousActionsAndChangeObjectiveAndReply) {
  const trajectory tr = one_step("Open the Auto Parts category.", "click [23]");
  const std::vector<train_sequence> seqs = render_retargeted_steps(tr, 8, 0.0, 11, nullptr, 1024);
  ASSERT_EQ(seqs.size(), 3u);
  std::set<std::string> replies;
  for (const train_sequence& q : seqs) {
    ASSERT_EQ(q.segments.size(), 3u);  // prompt, reply, end marker
    const std::string& prompt = q.segments[0].text;
    EXPECT_FALSE(q.segments[0].target);
    EXPECT_TRUE(q.segments[1].target);
    EXPECT_NE(prompt.find(k_page), std::string::npos);  // uncut with crop share 0
    EXPECT_NE(prompt.find("PREVIOUS ACTIONS:\nclick [9]"), std::string::npos) << prompt;
    EXPECT_EQ(prompt.find("Auto Parts category"), std::string::npos) << prompt;
    replies.insert(q.segments[1].text);
    if (q.segments[1].text == "```click [26]```") {
      EXPECT_NE(prompt.find("OBJECTIVE: Open the Books category.\n"), std::string::npos) << prompt;
    }
  }
  EXPECT_EQ(replies, (std::set<std::string>{"```click [21]```", "```click [25]```", "```click [26]```"}));
  // Crop share 1: each page cut around the new element (the header kept, 'Log out' 8+ lines
  // below [21] gone only when the cut is short; the element's own line always there).
  for (const train_sequence& q : render_retargeted_steps(tr, 8, 1.0, 11, nullptr, 1024)) {
    const std::string& prompt = q.segments[0].text;
    EXPECT_NE(prompt.find("Tab 0 (current): All listings\n\n"), std::string::npos);
    const std::string id = q.segments[1].text.substr(10, 2);  // "```click [21]```" -> "21"
    EXPECT_NE(prompt.find("[" + id + "] link"), std::string::npos) << prompt;
  }
}

// Through write_train_data on one real site seed (the oracle's trajectories, no tokenizer:
// the text goes to corpus.txt): the set is written and every made-up objective it lists in
// retarget-objectives.txt is one that a rendered step shows as its OBJECTIVE.
TEST(TrainRetarget, TrainDataWritesTheSetAndListsItsObjectives) {
  train_data_options o = one_seed_options(250, "retarget");
  const std::string dir = o.out_dir;
  o.retarget = 2;
  const train_data_summary sum = write_train_data(o);
  int64_t n = -1;
  for (const auto& [name, k] : sum.sequences)
    if (name == "agent-retarget") n = k;
  EXPECT_GT(n, 0);
  std::ifstream list(dir + "/retarget-objectives.txt");
  ASSERT_TRUE(list);
  const std::string corpus = file_text(dir + "/corpus.txt");
  ASSERT_FALSE(corpus.empty());
  std::string line;
  int64_t listed = 0;
  while (std::getline(list, line)) {
    ++listed;
    EXPECT_NE(corpus.find("OBJECTIVE: " + line + "\n"), std::string::npos) << line;
  }
  EXPECT_GT(listed, 0);
  EXPECT_LE(listed, n);  // distinct objectives, at most one per sequence
  std::filesystem::remove_all(dir);

  // Bad options fail before anything is written.
  train_data_options bad = o;
  bad.out_dir = dir + "-bad";
  bad.retarget = -1;
  EXPECT_THROW(write_train_data(bad), std::invalid_argument);
  bad.retarget = 2;
  bad.retarget_crop = 1.5;
  EXPECT_THROW(write_train_data(bad), std::invalid_argument);
  EXPECT_FALSE(std::filesystem::exists(bad.out_dir));
}

}  // namespace
}  // namespace kvarena
