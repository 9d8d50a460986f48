// test-train-rename.cpp: the agent-renamed training set (datagen/rename-quoted-names.h): quoted names
// found in objectives, new names that keep a name's shape, and a trajectory rewritten so the
// new name stands everywhere the old one stood (typed, form-encoded, as a forum slug). The
// expected strings are written out by hand.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <regex>
#include <set>

#include "rename-quoted-names.h"

namespace kvarena {
namespace {

TEST(TrainRename, QuotedNamesAreTheQuotedStringsOnceEachInOrder) {
  const std::string intent =
      R"(Send the seller of "IKEA writing desk" this message: "Would you take 10% less?" )"
      R"(and open "IKEA writing desk" again, "unterminated)";
  EXPECT_EQ(quoted_names(intent), (std::vector<std::string>{"IKEA writing desk", "Would you take 10% less?"}));
  EXPECT_TRUE(quoted_names("How many listings are there in Winter Sports?").empty());
  EXPECT_TRUE(quoted_names(R"(Title ends with "" here)").empty());
}

TEST(TrainRename, ReplaceWholeLeavesPartsOfLongerWordsAlone) {
  EXPECT_EQ(replace_whole("nba nbax xnba nba. [nba] nba2", "nba", "golf"), "golf nbax xnba golf. [golf] nba2");
  // A name that starts with a space matches after a letter: nothing to join there.
  EXPECT_EQ(replace_whole("Title (solved)", " (solved)", " (done)"), "Title (done)");
  EXPECT_EQ(replace_whole("aaaa", "aa", "b"), "aaaa");  // never inside a longer word
  EXPECT_EQ(replace_whole("aa aa", "aa", "aa aa"), "aa aa aa aa");  // no re-matching of the output
}

TEST(TrainRename, WordPoolIsTheDistinctWholeWordsOfThreeToFourteenLetters) {
  EXPECT_EQ(word_pool({"[12] link 'Cars' Cars x2y go", "Extraordinarily long-lasting"}),
            (std::vector<std::string>{"Cars", "lasting", "link", "long"}));
}

TEST(TrainRename, NovelNameSwapsLongWordsKeepingCaseDigitsAndPunctuation) {
  const std::vector<std::string> pool = {"apple", "banana", "cherry", "Damson"};
  const std::string name = "Dreamweave Microfiber Bed Sheet Set, Gray";
  const std::regex shape(
      R"(^(Dreamweave|Apple|Banana|Cherry|Damson) (Microfiber|Apple|Banana|Cherry|Damson) )"
      R"((Bed|Apple|Banana|Cherry|Damson) (Sheet|Apple|Banana|Cherry|Damson) )"
      R"((Set|Apple|Banana|Cherry|Damson), (Gray|Apple|Banana|Cherry|Damson)$)");
  std::set<std::string> seen;
  for (uint64_t seed = 0; seed < 40; ++seed) {
    const std::string n = novel_name(name, pool, seed);
    EXPECT_NE(n, name) << seed;
    EXPECT_TRUE(std::regex_match(n, shape)) << n;
    EXPECT_EQ(n, novel_name(name, pool, seed));  // deterministic
    seen.insert(n);
  }
  EXPECT_GT(seen.size(), 20u);  // 2^6 shapes x 4 words: the draws differ

  for (uint64_t seed = 0; seed < 20; ++seed) {  // "20" and "in" stay; lower case stays lower
    const std::string n = novel_name("Kids bike 20 in", pool, seed);
    EXPECT_TRUE(std::regex_match(n, std::regex(R"(^(Kids|Apple|Banana|Cherry|Damson) )"
                                               R"((bike|apple|banana|cherry|damson) 20 in$)")))
        << n;
    EXPECT_NE(n, "Kids bike 20 in");
  }
  EXPECT_EQ(novel_name("TV 55 in", pool, 3), "TV 55 in");  // nothing of three letters to swap
  EXPECT_EQ(novel_name("Set", {"set", "SET"}, 3), "Set");  // no different word in the pool
}

TEST(TrainRename, TheSwapShareSetsHowManyWordsAreNew) {
  const std::vector<std::string> pool = {"apple", "banana", "cherry", "Damson"};
  const std::string name = "Dreamweave Microfiber Bed Sheet Set, Gray";
  const std::regex all_new(R"(^(Apple|Banana|Cherry|Damson) (Apple|Banana|Cherry|Damson) (Apple|Banana|Cherry|Damson) )"
                           R"((Apple|Banana|Cherry|Damson) (Apple|Banana|Cherry|Damson), (Apple|Banana|Cherry|Damson)$)");
  auto kept = [&](const std::string& n) {  // words of the old name still in place
    int k = 0;
    for (const char* w : {"Dreamweave ", "Microfiber ", "Bed ", "Sheet ", "Set,", "Gray"}) k += n.find(w) != std::string::npos;
    return k;
  };
  int kept_low = 0;
  for (uint64_t seed = 0; seed < 30; ++seed) {
    EXPECT_TRUE(std::regex_match(novel_name(name, pool, seed, 1.0), all_new)) << novel_name(name, pool, seed, 1.0);
    EXPECT_EQ(kept(novel_name(name, pool, seed, 0.0)), 5) << novel_name(name, pool, seed, 0.0);  // exactly one new
    kept_low += kept(novel_name(name, pool, seed, 0.2));
  }
  EXPECT_GT(kept_low, 30 * 3);  // a fifth swapped: about 4.8 of 6 kept on average
}

rename_options copies(int n, double crop_share, int64_t crop_lines = 24) {
  rename_options o;
  o.copies = n;
  o.crop_share = crop_share;
  o.crop_lines = crop_lines;
  return o;
}

trajectory shopping_trajectory() {
  trajectory t;
  t.intent = R"(Add "Dreamweave Microfiber Bed Sheet Set, Gray" to my cart.)";
  t.steps.push_back({"[58] searchbox 'Search'\n[60] link 'Dreamweave Microfiber Bed Sheet Set, Gray, 2 Pack'",
                     "http://localhost/shopping/", "type [58] [Dreamweave Microfiber Bed Sheet Set, Gray] [1]"});
  t.steps.push_back({"Search results for: 'Dreamweave Microfiber Bed Sheet Set, Gray'\n[71] link "
                     "'Dreamweave Microfiber Bed Sheet Set, Gray'",
                     "http://localhost/shopping/search?q=Dreamweave+Microfiber+Bed+Sheet+Set%2C+Gray", "click [71]"});
  return t;
}

// shopping_trajectory() and a last step that does not act on the name.
trajectory shopping_trajectory_to_cart() {
  trajectory t = shopping_trajectory();
  t.steps.push_back({"Dreamweave Microfiber Bed Sheet Set, Gray\n\n[80] button 'Add to Cart'\n[81] link 'Home'",
                     "http://localhost/shopping/product/12", "click [80]"});
  return t;
}

TEST(TrainRename, RenamedTrajectoryHasTheNewNameEverywhereIncludingUrls) {
  const trajectory r =
      renamed_trajectory(shopping_trajectory(), {{"Dreamweave Microfiber Bed Sheet Set, Gray",
                                                  "Lantern Microfiber Bed Maple Set, Gray"}});
  EXPECT_EQ(r.intent, R"(Add "Lantern Microfiber Bed Maple Set, Gray" to my cart.)");
  ASSERT_EQ(r.steps.size(), 2u);
  EXPECT_EQ(r.steps[0].observation,
            "[58] searchbox 'Search'\n[60] link 'Lantern Microfiber Bed Maple Set, Gray, 2 Pack'");
  EXPECT_EQ(r.steps[0].url, "http://localhost/shopping/");
  EXPECT_EQ(r.steps[0].action, "type [58] [Lantern Microfiber Bed Maple Set, Gray] [1]");
  EXPECT_EQ(r.steps[1].observation,
            "Search results for: 'Lantern Microfiber Bed Maple Set, Gray'\n[71] link 'Lantern Microfiber Bed Maple Set, Gray'");
  EXPECT_EQ(r.steps[1].url, "http://localhost/shopping/search?q=Lantern+Microfiber+Bed+Maple+Set%2C+Gray");
  EXPECT_EQ(r.steps[1].action, "click [71]");
}

TEST(TrainRename, ForumSlugsAreRenamedAndTwoNamesCanSwap) {
  trajectory t;
  t.intent = R"(Downvote the post "Small details in Better Call Saul", then compare "Red Mug" and "Blue Mug".)";
  t.steps.push_back({"[9] link 'Small details in Better Call Saul' Red Mug, Blue Mug",
                     "http://localhost/reddit/f/television/12/small-details-in-better-call-saul", "click [9]"});
  const trajectory r = renamed_trajectory(t, {{"Small details in Better Call Saul", "Small lanterns in Better Call Maple"},
                                              {"Red Mug", "Blue Mug"},
                                              {"Blue Mug", "Red Mug"}});
  EXPECT_EQ(r.intent,
            R"(Downvote the post "Small lanterns in Better Call Maple", then compare "Blue Mug" and "Red Mug".)");
  EXPECT_EQ(r.steps[0].observation, "[9] link 'Small lanterns in Better Call Maple' Blue Mug, Red Mug");
  EXPECT_EQ(r.steps[0].url, "http://localhost/reddit/f/television/12/small-lanterns-in-better-call-maple");
}

TEST(TrainRename, AStepActsOnANameByTypingItOrByItsElementsLine) {
  const std::vector<std::string> names = {"Lantern Mug"};
  EXPECT_TRUE(acts_on_name({"[58] searchbox 'Search'", "u", "type [58] [Lantern Mug] [1]"}, names));
  EXPECT_TRUE(acts_on_name({"[70] link 'Home'\n\t\t[71] link 'Lantern Mug, Gray'", "u", "click [71]"}, names));
  EXPECT_TRUE(acts_on_name({"x", "u", "stop [Lantern Mug]"}, names));
  // The name in the page's header or on another element's line is not this element's.
  EXPECT_FALSE(acts_on_name({"Results for 'Lantern Mug'\n\n[70] link 'Home'\n[71] link 'Lantern Mug'", "u", "click [70]"},
                            names));
  EXPECT_FALSE(acts_on_name({"[170] link 'Lantern Mug'\n[17] link 'Home'", "u", "click [17]"}, names));
  EXPECT_FALSE(acts_on_name({"[58] searchbox 'Search'", "u", "type [58] [Lantern] [1]"}, names));
  EXPECT_FALSE(acts_on_name({"x", "u", "scroll [down]"}, names));
}

TEST(TrainRename, RenderedStepsCarryTheNewNameInObjectiveAndReplyAndNeverTheOld) {
  const std::vector<std::string> pool = {"apple", "banana", "cherry", "Damson"};
  const std::vector<train_sequence> seqs = render_renamed_steps(shopping_trajectory_to_cart(), pool, 7, copies(2, 0.5), nullptr, 0);
  ASSERT_EQ(seqs.size(), 4u);  // two renamings x the two steps on the name (history mode last)
  std::set<std::string> typed;
  for (size_t i = 0; i < seqs.size(); ++i) {
    std::string context, target;
    for (const train_segment& s : seqs[i].segments) (s.target ? target : context) += s.text;
    EXPECT_EQ(context.find("Dreamweave Microfiber Bed Sheet Set, Gray"), std::string::npos) << context;
    EXPECT_EQ(target.find("Dreamweave Microfiber Bed Sheet Set, Gray"), std::string::npos) << target;
    EXPECT_EQ(target.find("click [80]"), std::string::npos);  // not the cart step
    if (i % 2 == 0) {  // the typing step: the reply types the objective's (new) name
      std::smatch m;
      ASSERT_TRUE(std::regex_search(target, m, std::regex(R"(type \[58\] \[([^\]]+)\])"))) << target;
      EXPECT_NE(context.find("\"" + m[1].str() + "\""), std::string::npos) << m[1].str();
      typed.insert(m[1].str());
    }
  }
  EXPECT_EQ(typed.size(), 2u);  // each renaming draws its own name

  trajectory plain = shopping_trajectory();
  plain.intent = "Add the cheapest bed sheet set to my cart.";
  EXPECT_TRUE(render_renamed_steps(plain, pool, 7, copies(2, 0.5), nullptr, 0).empty());
}

TEST(TrainRename, TheCropShareOfTheRenamedStepsHaveTheirPageCutAroundTheElement) {
  trajectory t;
  t.intent = R"(Open "Lantern Mug".)";
  std::string page = "Tab 0 (current): Shop\n\n";
  for (int i = 100; i < 160; ++i) {  // appends: GCC 12 warns falsely on "[" + std::string
    page += '[';
    page += std::to_string(i);
    page += "] link 'Item ";
    page += std::to_string(i);
    page += "'\n";
  }
  page += "[200] link 'Lantern Mug'";
  t.steps.push_back({page, "http://localhost/", "click [200]"});
  auto count = [&](double share, int* whole, int* cut) {
    const std::vector<train_sequence> seqs = render_renamed_steps(t, {"apple", "banana", "cherry"}, 11, copies(16, share), nullptr, 0);
    ASSERT_EQ(seqs.size(), 16u);
    for (const train_sequence& q : seqs) {
      const std::string& context = q.segments.front().text;
      const bool has_first = context.find("[100] link 'Item 100'") != std::string::npos;
      EXPECT_NE(context.find("Tab 0 (current): Shop"), std::string::npos);  // the header stays
      (has_first ? *whole : *cut) += 1;
      if (!has_first) {
        EXPECT_EQ(context.find("[130] link"), std::string::npos);  // at most 24 lines before [200]
      }
    }
  };
  int whole = 0, cut = 0;
  count(0.5, &whole, &cut);
  EXPECT_GE(whole, 3);
  EXPECT_GE(cut, 3);
  whole = cut = 0;
  count(1.0, &whole, &cut);
  EXPECT_EQ(cut, 16);
  whole = cut = 0;
  count(0.0, &whole, &cut);
  EXPECT_EQ(whole, 16);

  // crop_lines 3: at most three item lines before the element ([157]..[159]) survive a cut.
  for (const train_sequence& q : render_renamed_steps(t, {"apple", "banana", "cherry"}, 11, copies(16, 1.0, 3), nullptr, 0)) {
    const std::string& context = q.segments.front().text;
    EXPECT_EQ(context.find("[156] link"), std::string::npos);
    EXPECT_NE(context.find("[158] link"), std::string::npos);  // at least two kept
  }
}

TEST(TrainRename, BadRenamedOptionsAreRefusedBeforeAnythingIsWritten) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("kvarena-train-rename-" + std::to_string(::getpid()));
  rename_options bad[4];  // each one knob out of range, the rest valid
  for (rename_options& r : bad) r.copies = 1;
  bad[0].crop_share = 1.5;
  bad[1].swap_share = -0.1;
  bad[2].crop_lines = 0;
  bad[3].copies = -1;
  for (const rename_options& r : bad) {
    train_data_options o;
    o.out_dir = dir.string();
    o.site_seeds = {2};
    o.renamed = r;
    EXPECT_THROW(write_train_data(o), std::invalid_argument);
  }
  EXPECT_FALSE(std::filesystem::exists(dir));
}

}  // namespace
}  // namespace kvarena
