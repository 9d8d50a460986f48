// test-train-revalue.cpp: the agent-revalued training set (datagen/revalue-noted-numbers.h): a note's
// first number; a random number of the same shape; a hand-made long-horizon trajectory
// (note a rating by element, later type it) rendered with the number made new everywhere,
// its expected prompts and replies written out by hand; trajectories with nothing to copy.
#include <gtest/gtest.h>

#include <set>

#include "revalue-noted-numbers.h"

namespace kvarena {
namespace {

std::string joined(const train_sequence& q, bool targets) {
  std::string out;
  for (const train_segment& s : q.segments)
    if (s.target == targets) out += s.text;
  return out;
}

TEST(TrainRevalue, TheFirstNumberOfANote) {
  EXPECT_EQ(first_number("Rating: 2.4 out of 5 (7 reviews)"), "2.4");
  EXPECT_EQ(first_number("$12,800.00"), "12,800.00");
  EXPECT_EQ(first_number("31 points"), "31");
  EXPECT_EQ(first_number("$23.99."), "23.99");
  EXPECT_EQ(first_number("1, 2"), "1");
  EXPECT_EQ(first_number("no digits"), "");
}

TEST(TrainRevalue, ARandomNumberKeepsTheShapeAndChanges) {
  std::set<std::string> seen;
  for (uint64_t seed = 0; seed < 50; ++seed) {
    const std::string n = random_number_like("23.99", seed);
    ASSERT_EQ(n.size(), 5u) << n;
    EXPECT_EQ(n[2], '.');
    EXPECT_NE(n, "23.99");
    EXPECT_TRUE(n[0] >= '1' && n[0] <= '4') << n;  // first digit 1..2x2
    for (size_t i : {1, 3, 4}) EXPECT_TRUE(n[i] >= '0' && n[i] <= '9') << n;
    seen.insert(n);
  }
  EXPECT_GT(seen.size(), 40u);
  EXPECT_EQ(random_number_like("12,800.00", 3).find(','), 2u);
  EXPECT_EQ(random_number_like("12,800.00", 3).size(), 9u);
  EXPECT_EQ(random_number_like("2.4", 1), random_number_like("2.4", 1));  // deterministic
}

// Step 0 notes the rating by its element; step 1 types it; "$12.40" holds "2.4" only inside
// a longer number and stays.
trajectory rating_trajectory() {
  trajectory t;
  t.intent = "Note the rating, then post it.";
  t.steps.push_back({"[5] StaticText 'Rating: 2.4 out of 5'\n[6] StaticText '$12.40'", "http://localhost/p",
                     "click [9]", "Rating: 2.4 out of 5", 5});
  t.steps.push_back({"[7] textbox 'Body'", "http://localhost/new", "type [7] [Rated 2.4] [0]"});
  t.steps.push_back({"[8] heading 'Done'", "http://localhost/done", "stop []"});
  return t;
}

TEST(TrainRevalue, TheNumberIsNewEverywhereAndTheNoteAndTypingStepsAreKept) {
  const trajectory t = rating_trajectory();
  const std::vector<train_sequence> out = render_revalued_steps(t, 2, 11, nullptr, 0);
  ASSERT_EQ(out.size(), 4u);  // two copies x (the note step, the typing step)
  std::set<std::string> numbers;
  for (int c = 0; c < 2; ++c) {
    const std::string n = random_number_like("2.4", 11 * 1000003ull + static_cast<uint64_t>(c));
    numbers.insert(n);
    const train_sequence& note = out[2 * c];
    const train_sequence& type = out[2 * c + 1];
    EXPECT_EQ(joined(note, true), "NOTE [5]\n```click [9]```<|im_end|>");
    EXPECT_NE(joined(note, false).find("[5] StaticText 'Rating: " + n + " out of 5'\n[6] StaticText '$12.40'"),
              std::string::npos)
        << joined(note, false);
    EXPECT_NE(joined(type, false).find("PREVIOUS ACTIONS:\nclick [9] (NOTE: Rating: " + n + " out of 5)"),
              std::string::npos)
        << joined(type, false);
    EXPECT_EQ(joined(type, true), "```type [7] [Rated " + n + "] [0]```<|im_end|>");
    EXPECT_EQ(joined(note, false).find("2.4 out"), std::string::npos);
  }
  EXPECT_EQ(numbers.size(), 2u);
}

TEST(TrainRevalue, NothingWhenTheNumberIsNotTypedOrThereIsNoNote) {
  trajectory t = rating_trajectory();
  t.steps[1].action = "type [7] [Rated 5] [0]";  // a difference or another value: no copy
  EXPECT_TRUE(render_revalued_steps(t, 2, 11, nullptr, 0).empty());
  t = rating_trajectory();
  t.steps[0].note = "";
  t.steps[0].note_element = -1;
  EXPECT_TRUE(render_revalued_steps(t, 2, 11, nullptr, 0).empty());
  t = rating_trajectory();
  t.steps[1].action = "type [7] [Rated 12.4] [0]";  // inside a longer number
  EXPECT_TRUE(render_revalued_steps(t, 2, 11, nullptr, 0).empty());
}

}  // namespace
}  // namespace kvarena
