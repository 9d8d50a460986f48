// test-actions.cpp: the action grammar (envs/eval/action-parse.h) and the early-stop rules
// (envs/eval/early-stop.h), against specs/web-envs.md §3 and VWA's create_id_based_action.
#include <gtest/gtest.h>

#include <string>

#include "eval/action-parse.h"
#include "eval/early-stop.h"

using namespace kvarena;

namespace {

action parse_ok(const std::string& text) {
  action_parse_result r = parse_action(text);
  EXPECT_TRUE(r.ok()) << text << " -> " << r.error;
  return r.act;
}

std::string parse_err(const std::string& text) {
  action_parse_result r = parse_action(text);
  EXPECT_FALSE(r.ok()) << text << " parsed as " << to_string(r.act);
  EXPECT_EQ(r.act.kind, action_kind::none);
  return r.error;
}

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

}  // namespace

// ---- every verb ----

TEST(ActionParse, Click) {
  action a = parse_ok("click [12]");
  EXPECT_EQ(a.kind, action_kind::click);
  EXPECT_EQ(a.element_id, 12);
  EXPECT_EQ(a.raw, "click [12]");
}

TEST(ActionParse, TypeWithFlags) {
  action a = parse_ok("type [164] [restaurants near CMU] [1]");
  EXPECT_EQ(a.kind, action_kind::type);
  EXPECT_EQ(a.element_id, 164);
  EXPECT_EQ(a.text, "restaurants near CMU");
  EXPECT_TRUE(a.press_enter);
  a = parse_ok("type [164] [restaurants] [0]");
  EXPECT_FALSE(a.press_enter);
  EXPECT_EQ(a.text, "restaurants");
}

TEST(ActionParse, TypeMissingFlagMeansEnter) {
  action a = parse_ok("type [7] [blue bike]");
  EXPECT_EQ(a.text, "blue bike");
  EXPECT_TRUE(a.press_enter);
}

TEST(ActionParse, Hover) {
  action a = parse_ok("hover [3]");
  EXPECT_EQ(a.kind, action_kind::hover);
  EXPECT_EQ(a.element_id, 3);
}

TEST(ActionParse, Press) {
  action a = parse_ok("press [Control+a]");
  EXPECT_EQ(a.kind, action_kind::press);
  EXPECT_EQ(a.key, "Control+a");
  EXPECT_EQ(parse_ok("press [Enter]").key, "Enter");
}

TEST(ActionParse, ScrollBothDirectionsWithAndWithoutBrackets) {
  EXPECT_EQ(parse_ok("scroll [down]").direction, scroll_direction::down);
  EXPECT_EQ(parse_ok("scroll [up]").direction, scroll_direction::up);
  EXPECT_EQ(parse_ok("scroll down").direction, scroll_direction::down);  // VWA's regex allows it
  EXPECT_EQ(parse_ok("scroll [up]").kind, action_kind::scroll);
}

TEST(ActionParse, TabsAndNavigation) {
  EXPECT_EQ(parse_ok("new_tab").kind, action_kind::new_tab);
  action t = parse_ok("tab_focus [2]");
  EXPECT_EQ(t.kind, action_kind::tab_focus);
  EXPECT_EQ(t.tab, 2);
  EXPECT_EQ(parse_ok("close_tab").kind, action_kind::close_tab);
  action g = parse_ok("goto [http://127.0.0.1:7770/checkout/cart/]");
  EXPECT_EQ(g.kind, action_kind::goto_url);
  EXPECT_EQ(g.url, "http://127.0.0.1:7770/checkout/cart/");
  EXPECT_EQ(parse_ok("go_back").kind, action_kind::go_back);
  EXPECT_EQ(parse_ok("go_forward").kind, action_kind::go_forward);
}

TEST(ActionParse, StopWithAnswerEmptyAndBare) {
  action a = parse_ok("stop [$25.99]");
  EXPECT_EQ(a.kind, action_kind::stop);
  EXPECT_EQ(a.answer, "$25.99");
  EXPECT_EQ(parse_ok("stop []").answer, "");
  EXPECT_EQ(parse_ok("stop").answer, "");
  EXPECT_EQ(parse_ok("stop [N/A]").answer, "N/A");
  EXPECT_EQ(parse_ok("stop N/A").answer, "N/A");  // lenient: VWA would answer ""
}

TEST(ActionParse, Clear) {
  action a = parse_ok("clear [81]");
  EXPECT_EQ(a.kind, action_kind::clear);
  EXPECT_EQ(a.element_id, 81);
}

// ---- robustness ----

TEST(ActionParse, BracketsInsideTextAreGreedy) {
  action a = parse_ok("type [3] [a]b] [0]");
  EXPECT_EQ(a.text, "a]b");
  EXPECT_FALSE(a.press_enter);
  a = parse_ok("type [3] [see [1] and [2]] [1]");
  EXPECT_EQ(a.text, "see [1] and [2]");
  a = parse_ok("type [3] [x] [1] [0]");  // the text is "x] [1", the flag 0
  EXPECT_EQ(a.text, "x] [1");
  EXPECT_FALSE(a.press_enter);
  a = parse_ok("type [3] [array[2]]");  // missing flag; the last bracket is not 0/1
  EXPECT_EQ(a.text, "array[2]");
  EXPECT_TRUE(a.press_enter);
  EXPECT_EQ(parse_ok("stop [the answer is [b] or ]c]").answer, "the answer is [b] or ]c");
}

TEST(ActionParse, WhitespaceAndNewlines) {
  EXPECT_EQ(parse_ok("   click [12]   \n").element_id, 12);
  EXPECT_EQ(parse_ok("click [ 12 ]").element_id, 12);
  EXPECT_EQ(parse_ok("click[12]").element_id, 12);
  action a = parse_ok("type [5] [line one\nline two] [0]");
  EXPECT_EQ(a.text, "line one\nline two");
  EXPECT_EQ(parse_ok("stop [first\nsecond]").answer, "first\nsecond");
  EXPECT_EQ(parse_ok("type [5] [  padded  ] [1]").text, "  padded  ");  // text kept verbatim
}

TEST(ActionParse, TextAfterACompleteActionIsIgnored) {
  EXPECT_EQ(parse_ok("click [12] to open the listing").element_id, 12);
  EXPECT_EQ(parse_ok("go_back now").kind, action_kind::go_back);
}

TEST(ActionParse, VerbsAreLowercaseLikeVWA) {
  std::string e = parse_err("Click [12]");
  EXPECT_TRUE(contains(e, "lowercase")) << e;
  EXPECT_TRUE(contains(e, "'click'")) << e;
  EXPECT_TRUE(contains(e, "click [id]")) << e;
  EXPECT_TRUE(contains(parse_err("STOP [yes]"), "'stop'"));
}

// ---- malformed forms: each message names the problem and the valid form ----

TEST(ActionParse, MalformedElementIds) {
  for (const char* bad : {"click [abc]", "click []", "click", "click 12", "click [12", "click [-1]",
                          "click [1.5]"}) {
    std::string e = parse_err(bad);
    EXPECT_TRUE(contains(e, "invalid click action")) << bad << ": " << e;
    EXPECT_TRUE(contains(e, "Use click [id], e.g. click [12]")) << bad << ": " << e;
  }
  EXPECT_TRUE(contains(parse_err("click [abc]"), "'abc' is not a number"));
  EXPECT_TRUE(contains(parse_err("click [12"), "missing ']'"));
  EXPECT_TRUE(contains(parse_err("click [99999999999999999999999]"), "too large"));
  EXPECT_TRUE(contains(parse_err("hover [x]"), "Use hover [id]"));
  EXPECT_TRUE(contains(parse_err("clear []"), "Use clear [id]"));
}

TEST(ActionParse, MalformedType) {
  std::string e = parse_err("type [12]");
  EXPECT_TRUE(contains(e, "text to type is missing")) << e;
  EXPECT_TRUE(contains(e, "type [id] [text] [0|1]")) << e;
  EXPECT_TRUE(contains(parse_err("type [12] [1]"), "text to type is missing"));
  EXPECT_TRUE(contains(parse_err("type [x] [hello] [1]"), "element id"));
  EXPECT_TRUE(contains(parse_err("type [12] hello"), "must be in brackets"));
  EXPECT_TRUE(contains(parse_err("type [12] [] [1]"), "clear [id]"));
  EXPECT_TRUE(contains(parse_err("type [12] [hello] [1] and submit"), "must be in brackets"));
}

TEST(ActionParse, MalformedOthers) {
  EXPECT_TRUE(contains(parse_err("press Enter"), "Use press [key+comb]"));
  EXPECT_TRUE(contains(parse_err("press [ ]"), "empty"));
  std::string e = parse_err("scroll [left]");
  EXPECT_TRUE(contains(e, "up or down")) << e;
  EXPECT_TRUE(contains(e, "scroll [up|down]")) << e;
  EXPECT_TRUE(contains(parse_err("scroll"), "direction is missing"));
  EXPECT_TRUE(contains(parse_err("scroll [Down]"), "up or down"));
  EXPECT_TRUE(contains(parse_err("tab_focus [first]"), "Use tab_focus [n]"));
  EXPECT_TRUE(contains(parse_err("tab_focus [99999999999]"), "too large"));
  EXPECT_TRUE(contains(parse_err("goto"), "Use goto [url]"));
  EXPECT_TRUE(contains(parse_err("goto []"), "URL is empty"));
}

TEST(ActionParse, UnknownVerbListsEveryForm) {
  std::string e = parse_err("jump [12]");
  EXPECT_TRUE(contains(e, "unknown action 'jump'")) << e;
  for (const char* form : {"click [id]", "type [id] [text] [0|1]", "hover [id]", "press [key+comb]",
                           "scroll [up|down]", "new_tab", "tab_focus [n]", "close_tab", "goto [url]",
                           "go_back", "go_forward", "stop [answer]", "clear [id]"})
    EXPECT_TRUE(contains(e, form)) << form;
  EXPECT_TRUE(contains(parse_err("go-back"), "unknown action 'go-back'"));
  EXPECT_TRUE(contains(parse_err("Action: click [12]"), "unknown action 'Action:'"));
  EXPECT_TRUE(contains(parse_err(""), "empty action"));
  EXPECT_TRUE(contains(parse_err("   \n\t "), "empty action"));
}

// ---- model output: the first ``` block ----

TEST(ActionParse, ModelOutputTakesFirstBacktickBlock) {
  const std::string reply =
      "Let's think step-by-step. The search box is [164]. I should type the query.\n"
      "In summary, the next action I will perform is ```type [164] [red bicycle] [1]```\n"
      "Alternatively ```click [3]```";
  action_parse_result r = parse_model_output(reply);
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_EQ(r.act.kind, action_kind::type);
  EXPECT_EQ(r.act.text, "red bicycle");
  EXPECT_EQ(r.act.raw, "type [164] [red bicycle] [1]");
}

TEST(ActionParse, ModelOutputBlockForms) {
  EXPECT_EQ(parse_model_output("```\nclick [5]\n```").act.element_id, 5);
  EXPECT_EQ(parse_model_output("```text\nscroll [down]\n```").act.kind, action_kind::scroll);
  EXPECT_EQ(parse_model_output("````click [6]````").act.element_id, 6);
  EXPECT_EQ(parse_model_output("```new_tab\n```").act.kind, action_kind::new_tab);
  EXPECT_EQ(parse_model_output("``` stop [42] ```").act.answer, "42");
}

TEST(ActionParse, ModelOutputWithoutBackticksFails) {
  action_parse_result r = parse_model_output("I will click [12]");
  EXPECT_FALSE(r.ok());
  EXPECT_TRUE(contains(r.error, "triple backticks")) << r.error;
  EXPECT_EQ(r.act.kind, action_kind::none);
  EXPECT_FALSE(parse_model_output("```click [12]").ok());  // unclosed
  EXPECT_TRUE(contains(parse_model_output("``````").error, "empty action"));
  EXPECT_TRUE(contains(parse_model_output("``` ```").error, "empty action"));
  r = parse_model_output("so ```Click [4]```");
  EXPECT_TRUE(contains(r.error, "lowercase")) << r.error;
}

TEST(ActionParse, BareActionMayBeFenced) {
  EXPECT_EQ(parse_action("```click [9]```").act.element_id, 9);
  EXPECT_EQ(parse_action("```click [9]```").act.raw, "click [9]");
  // Backticks inside text are just text.
  EXPECT_EQ(parse_ok("type [1] [say ```hi```] [0]").text, "say ```hi```");
}

TEST(ActionParse, ExtractActionBlock) {
  EXPECT_EQ(extract_action_block("a ```x``` b ```y```").value(), "x");
  EXPECT_FALSE(extract_action_block("no block").has_value());
  EXPECT_FALSE(extract_action_block("``` only one").has_value());
}

// ---- canonical text ----

TEST(ActionParse, FreeTextRangeIsWhereTheTextOrAnswerLiesInTheInput) {
  struct row {
    bool model_output;  // parse_model_output, else parse_action
    const char* input;
    const char* free_text;  // the bytes the range covers; "" for none
  };
  const row rows[] = {
      {true, "I will type. ```type [58] [Blue Lamp] [1]```", "Blue Lamp"},
      {true, "```text\ntype [ 5 ] [a]b] [0]\n```", "a]b"},  // language tag, spaced id, greedy
      {true, "```stop [$20.99]``` then ```click [1]```", "$20.99"},
      {true, "```stop N/A```", "N/A"},
      {false, "  type [7] [no flag]", "no flag"},
      {false, "```stop [x]```", "x"},
      {false, "click [12]", ""},
      {false, "stop []", ""},
      {false, "type [4] [] [1]", ""},  // a failure has no range
  };
  for (const row& r : rows) {
    const std::string in = r.input;
    const action_parse_result p = r.model_output ? parse_model_output(in) : parse_action(in);
    ASSERT_LE(p.free_text_begin, p.free_text_end) << in;
    ASSERT_LE(p.free_text_end, in.size()) << in;
    EXPECT_EQ(in.substr(p.free_text_begin, p.free_text_end - p.free_text_begin), r.free_text) << in;
  }
}

TEST(ActionParse, ToStringRoundTrips) {
  for (const char* text :
       {"click [12]", "type [164] [a]b [c]] [0]", "type [3] [x] [1]", "hover [4]", "press [Control+v]",
        "scroll [up]", "scroll [down]", "new_tab", "tab_focus [0]", "close_tab",
        "goto [http://127.0.0.1:9999/f/food?sort=new]", "go_back", "go_forward", "stop [N/A]", "stop []",
        "clear [7]"}) {
    action a = parse_ok(text);
    EXPECT_EQ(to_string(a), text);
    action b = parse_ok(to_string(a));
    EXPECT_TRUE(same_action(a, b)) << text;
    EXPECT_EQ(a.text, b.text);
  }
  EXPECT_EQ(to_string(action{}), "none");
  EXPECT_EQ(to_string(parse_ok("type [2] [hi]")), "type [2] [hi] [1]");
}

TEST(ActionParse, SameActionFollowsVWA) {
  EXPECT_TRUE(same_action(parse_ok("click [1]"), parse_ok("click [ 1 ]")));
  EXPECT_FALSE(same_action(parse_ok("click [1]"), parse_ok("click [2]")));
  EXPECT_FALSE(same_action(parse_ok("click [1]"), parse_ok("hover [1]")));
  // VWA compares type actions by element id only.
  EXPECT_TRUE(same_action(parse_ok("type [5] [a]"), parse_ok("type [5] [b] [0]")));
  EXPECT_FALSE(same_action(parse_ok("stop [a]"), parse_ok("stop [b]")));
  EXPECT_TRUE(same_action(action{}, action{}));  // two parse failures
}

// ---- odd input never crashes ----

TEST(ActionParse, OddInputNeverCrashes) {
  std::string huge(1 << 20, 'x');
  EXPECT_FALSE(parse_action(huge).ok());
  EXPECT_LT(parse_action(huge).error.size(), 2000u);  // the message quotes a snippet only
  EXPECT_EQ(parse_ok("type [1] [" + huge + "] [0]").text.size(), huge.size());
  std::string brackets(100000, '[');
  EXPECT_FALSE(parse_action("click " + brackets).ok());
  EXPECT_TRUE(parse_action("stop " + brackets).ok());
  std::string invalid_utf8 = "click [\xff\xfe]";
  std::string e = parse_err(invalid_utf8);
  EXPECT_EQ(e.find('\xff'), std::string::npos);  // messages stay valid UTF-8
  EXPECT_FALSE(parse_action(std::string("cl\0ick [1]", 11)).ok());
  EXPECT_TRUE(parse_action(std::string("stop [a\0b]", 10)).ok());
  EXPECT_FALSE(parse_model_output(std::string(100000, '`')).ok());
}

// ---- early stop ----

namespace {
action_parse_result failure() { return parse_model_output("no action here"); }
}  // namespace

TEST(EarlyStop, MaxSteps) {
  early_stop_rules rules;
  for (int i = 0; i < 29; ++i) {
    rules.record(parse_ok("scroll [" + std::string(i % 2 ? "up" : "down") + "]"));
    EXPECT_FALSE(rules.check().stop) << i;
  }
  rules.record(parse_ok("click [1]"));
  early_stop_decision d = rules.check();
  EXPECT_TRUE(d.stop);
  EXPECT_EQ(d.reason, "Reach max steps 30");
  EXPECT_EQ(early_stop_answer(d.reason), "Early stop: Reach max steps 30");
}

TEST(EarlyStop, ThreeParseFailuresInARow) {
  early_stop_rules rules;
  rules.record(failure());
  rules.record(failure());
  EXPECT_FALSE(rules.check().stop);
  rules.record(parse_ok("click [1]"));
  rules.record(failure());
  rules.record(failure());
  EXPECT_FALSE(rules.check().stop);  // not in a row
  rules.record(failure());
  early_stop_decision d = rules.check();
  EXPECT_TRUE(d.stop);
  EXPECT_EQ(d.reason, "Failed to parse actions for 3 times");
}

TEST(EarlyStop, SameActionKTimes) {
  early_stop_rules rules;  // k = 5, VWA's default
  for (int i = 0; i < 4; ++i) rules.record(parse_ok("click [7]"));
  EXPECT_FALSE(rules.check().stop);
  rules.record(parse_ok("click [ 7 ]"));
  early_stop_decision d = rules.check();
  EXPECT_TRUE(d.stop);
  EXPECT_EQ(d.reason, "Same action for 5 times");

  early_stop_rules broken;
  for (int i = 0; i < 4; ++i) broken.record(parse_ok("click [7]"));
  broken.record(parse_ok("click [8]"));
  broken.record(parse_ok("click [7]"));
  EXPECT_FALSE(broken.check().stop);
}

TEST(EarlyStop, SameTypeActionAnywhere) {
  early_stop_rules rules;
  for (int i = 0; i < 4; ++i) {
    rules.record(parse_ok("type [3] [query " + std::to_string(i) + "]"));
    rules.record(parse_ok("click [9]"));
  }
  EXPECT_FALSE(rules.check().stop);
  rules.record(parse_ok("type [3] [another]"));
  early_stop_decision d = rules.check();
  EXPECT_TRUE(d.stop);
  EXPECT_EQ(d.reason, "Same typing action for 5 times");

  early_stop_rules other_fields;
  for (int i = 0; i < 8; ++i) other_fields.record(parse_ok("type [" + std::to_string(i % 4) + "] [x]"));
  EXPECT_FALSE(other_fields.check().stop);
}

TEST(EarlyStop, ConfigurableThresholds) {
  early_stop_config wa;
  wa.repeated_actions = 3;  // WA's default
  early_stop_rules rules(wa);
  for (int i = 0; i < 3; ++i) rules.record(parse_ok("scroll [down]"));
  EXPECT_EQ(rules.check().reason, "Same action for 3 times");

  early_stop_config off;
  off.max_steps = 0;
  off.parse_failures = 0;
  off.repeated_actions = 0;
  early_stop_rules none(off);
  for (int i = 0; i < 100; ++i) none.record(failure());
  EXPECT_FALSE(none.check().stop);
  EXPECT_EQ(none.steps(), 100);
  none.reset();
  EXPECT_EQ(none.steps(), 0);
}

TEST(EarlyStop, OrderOfRulesFollowsVWA) {
  early_stop_config cfg;
  cfg.max_steps = 3;
  early_stop_rules rules(cfg);
  for (int i = 0; i < 3; ++i) rules.record(failure());
  EXPECT_EQ(rules.check().reason, "Reach max steps 3");  // max steps is checked first
}

TEST(EarlyStop, EmptyHistoryDoesNotStop) {
  early_stop_rules rules;
  EXPECT_FALSE(rules.check().stop);
  EXPECT_EQ(rules.check().reason, "");
}
