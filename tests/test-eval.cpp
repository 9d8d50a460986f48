// test-eval.cpp: the evaluators (envs/eval/evaluator.h and the eval-*.h parts), one test
// per rule of specs/web-envs.md §2, against a fake page and scripted judges (eval-test-util.h):
// text cleaning and tokens, string_match, the judge, url_match, the task score, odd input.
// program_html and locators: test-eval-html.cpp. No network.
#include <gtest/gtest.h>

#include "eval-test-util.h"

// ---- clean() and tokens ----

TEST(EvalText, CleanStripsOnePairOfQuotesLowercasesAndTrims) {
  EXPECT_EQ(clean_answer("'Yes'"), "yes");
  EXPECT_EQ(clean_answer("\"Blue Bike\""), "blue bike");
  EXPECT_EQ(clean_answer("\"'x'\""), "'x'");  // one pair only
  EXPECT_EQ(clean_answer("'mismatched\""), "'mismatched\"");
  EXPECT_EQ(clean_answer("  Padded  "), "padded");  // WA trims, VWA does not
  EXPECT_EQ(clean_answer("'"), "");
  EXPECT_EQ(clean_answer(""), "");
  EXPECT_EQ(clean_answer("\xC3\x89T\xC3\x89"), "\xC3\xA9t\xC3\xA9");  // ÉTÉ -> été
  EXPECT_EQ(clean_answer("\xC3\x97"), "\xC3\x97");                    // × unchanged
}

TEST(EvalText, WordTokensApproximateNltk) {
  using v = std::vector<std::string>;
  EXPECT_EQ(word_tokens("it costs $170."), (v{"it", "costs", "$", "170", "."}));
  EXPECT_EQ(word_tokens("1,000 items at 5:30"), (v{"1,000", "items", "at", "5:30"}));
  EXPECT_EQ(word_tokens("red, blue: green"), (v{"red", ",", "blue", ":", "green"}));
  EXPECT_EQ(word_tokens("(170%)"), (v{"(", "170", "%", ")"}));
  EXPECT_EQ(word_tokens("don't it's 'quoted'"), (v{"do", "n't", "it", "'s", "'", "quoted", "'"}));
  EXPECT_EQ(word_tokens("e-mail a/b wait..."), (v{"e-mail", "a/b", "wait", "..."}));
  EXPECT_EQ(word_tokens("  "), v{});
  EXPECT_EQ(word_tokens("..."), (v{"..."}));
}

// ---- string_match ----

TEST(StringMatch, ExactMatchComparesCleanedStrings) {
  reference_answer_set r;
  r.exact_match = "Yes";
  EXPECT_EQ(score_answer(string_task(r), "'yes'").score, 1);
  EXPECT_EQ(score_answer(string_task(r), "yes.").score, 0);
  eval_result res = score_answer(string_task(r), "no");
  EXPECT_TRUE(contains(res.evaluators[0].detail, "'no' != 'yes'")) << res.evaluators[0].detail;
}

TEST(StringMatch, MustIncludeNeedsEveryItem) {
  EXPECT_EQ(must_include({"red", "bike"}, "A red bike"), 1);
  EXPECT_EQ(must_include({"red", "bike"}, "A red car"), 0);
}

TEST(StringMatch, MustIncludeOrAlternatives) {
  EXPECT_EQ(must_include({"red |OR| crimson", "bike"}, "a crimson bike"), 1);
  EXPECT_EQ(must_include({"red |OR| crimson"}, "a blue bike"), 0);
  EXPECT_EQ(must_include({"|OR|"}, "|or|"), 1);  // no spaces around: not a separator
}

TEST(StringMatch, SingleTokenReferenceMustBeAToken) {
  EXPECT_EQ(must_include({"170"}, "000000170"), 0);
  EXPECT_EQ(must_include({"170"}, "The order number is 000000170."), 0);
  EXPECT_EQ(must_include({"170"}, "It is $170."), 1);
  EXPECT_EQ(must_include({"170"}, "170 items"), 1);
  EXPECT_EQ(must_include({"0"}, "10 items"), 0);
  EXPECT_EQ(must_include({"yes"}, "yesterday"), 0);
  // More than one token: substring.
  EXPECT_EQ(must_include({"blue bike"}, "a light blue bikes shop"), 1);
  EXPECT_EQ(must_include({"$170"}, "cost:$1700"), 1);  // "$170" is two tokens -> substring
}

TEST(StringMatch, MustExcludeNegatesWithTheSameTokenRule) {
  reference_answer_set r;
  r.must_exclude = {"no"};
  EXPECT_EQ(score_answer(string_task(r), "I know the answer").score, 1);  // "no" not a token
  EXPECT_EQ(score_answer(string_task(r), "No, it is not").score, 0);
  r.must_exclude = {"not available"};
  EXPECT_EQ(score_answer(string_task(r), "It is NOT AVAILABLE now").score, 0);
  eval_result res = score_answer(string_task(r), "not available");
  EXPECT_TRUE(contains(res.evaluators[0].detail, "must_exclude: present 'not available'"));
}

TEST(StringMatch, OneOfAnySubstring) {
  reference_answer_set r;
  r.one_of = {"Pittsburgh", "PGH"};
  EXPECT_EQ(score_answer(string_task(r), "in pgh, PA").score, 1);
  EXPECT_EQ(score_answer(string_task(r), "Philadelphia").score, 0);
}

TEST(StringMatch, RequiredValuesEveryOperator) {
  EXPECT_EQ(required({"< 700"}, "699"), 1);
  EXPECT_EQ(required({"< 700"}, "700"), 0);  // strict (VWA's slack would pass 700)
  EXPECT_EQ(required({"<= 700"}, "700"), 1);
  EXPECT_EQ(required({"<= 700"}, "700.5"), 0);
  EXPECT_EQ(required({"> 3"}, "3"), 0);
  EXPECT_EQ(required({"> 3"}, "3.01"), 1);
  EXPECT_EQ(required({">= 3"}, "3"), 1);
  EXPECT_EQ(required({">= 3"}, "2.99"), 0);
  EXPECT_EQ(required({"== 12"}, "12"), 1);
  EXPECT_EQ(required({"== 12"}, "12.5"), 0);
  EXPECT_EQ(required({">= 2", "<= 5"}, "4"), 1);  // every item must hold
  EXPECT_EQ(required({">= 2", "<= 5"}, "6"), 0);
  EXPECT_EQ(required({"== 0 |OR| > 100"}, "150"), 1);  // alternatives
  EXPECT_EQ(required({"==-5"}, "-5"), 1);
}

TEST(StringMatch, RequiredValuesParsesNumbersWithCommas) {
  EXPECT_EQ(required({"== 1234"}, "1,234"), 1);
  EXPECT_EQ(required({"> 1000"}, "$1,234.50 in total"), 1);
  EXPECT_EQ(required({"== 1000000"}, "1,000,000"), 1);
  EXPECT_EQ(required({"== 0"}, "$0.00"), 1);
  EXPECT_EQ(required({"== 1234"}, "== 1,234"), 1);
  EXPECT_EQ(required({"== 2020"}, "2020-05-01"), 1);  // '-' after a digit is not a sign
  EXPECT_EQ(parse_first_number("about -3 degrees").value(), -3);
  EXPECT_EQ(parse_first_number("v.5").value(), 0.5);
  EXPECT_FALSE(parse_first_number("none").has_value());
  EXPECT_FALSE(parse_first_number("").has_value());
}

TEST(StringMatch, RequiredValuesWithoutNumberOrWithBadCondition) {
  reference_answer_set r;
  r.required_values = {"< 10"};
  eval_result res = score_answer(string_task(r), "a few");
  EXPECT_EQ(res.score, 0);
  EXPECT_TRUE(contains(res.evaluators[0].detail, "no number")) << res.evaluators[0].detail;
  r.required_values = {"about 10"};
  res = score_answer(string_task(r), "10");
  EXPECT_EQ(res.score, 0);
  EXPECT_TRUE(contains(res.evaluators[0].detail, "is not a condition")) << res.evaluators[0].detail;
}

TEST(StringMatch, ConditionParsing) {
  for (const char* ok : {"< 700", "<=3", " >= 2.5 ", "== 1,000", "> -1", "== +4"})
    EXPECT_TRUE(parse_condition(ok).has_value()) << ok;
  for (const char* bad : {"", "700", "=< 3", "< ", "< abc", "== 1 2", "<> 3", "= 3", "== inf", "== nan"})
    EXPECT_FALSE(parse_condition(bad).has_value()) << bad;
}

TEST(StringMatch, KeysMultiply) {
  reference_answer_set r;
  r.must_include = {"red"};
  r.must_exclude = {"blue"};
  EXPECT_EQ(score_answer(string_task(r), "red").score, 1);
  EXPECT_EQ(score_answer(string_task(r), "red and blue").score, 0);
}

TEST(StringMatch, FuzzyListEachReferenceJudged) {
  reference_answer_set r;
  r.fuzzy_match = fuzzy_reference{true, {"blue bike", "$120"}, ""};
  eval_result res = score_answer(string_task(r), "The blue bike costs $120.");
  EXPECT_EQ(res.score, 1);
  EXPECT_EQ(res.judge, "deterministic");
  EXPECT_EQ(score_answer(string_task(r), "The blue bike").score, 0);

  scripted_judge judge;
  judge.reply = "Correct.";
  res = score_answer(string_task(r), "whatever", &judge);
  EXPECT_EQ(res.score, 1);
  EXPECT_EQ(judge.calls, 2);
  EXPECT_EQ(judge.last.intent, "How much does the red bike cost?");
  EXPECT_EQ(judge.last.question, judge_question::fuzzy_match);
  EXPECT_EQ(res.judge, "scripted");
  judge.reply = "partially correct";
  EXPECT_EQ(score_answer(string_task(r), "whatever", &judge).score, 0);
  judge.reply = "Incorrect";
  EXPECT_EQ(score_answer(string_task(r), "whatever", &judge).score, 0);
}

TEST(StringMatch, NotApplicableAnswer) {
  reference_answer_set r;
  r.fuzzy_match = fuzzy_reference{false, {}, "N/A"};
  const std::string note = "The OP did not provide a recipe";
  scripted_judge judge;
  judge.reply = "different";
  eval_result res = score_answer(string_task(r, note), "N/A", &judge);
  EXPECT_EQ(res.score, 1);
  EXPECT_EQ(judge.calls, 0);  // "n/a" needs no judge
  EXPECT_EQ(res.judge, "");
  EXPECT_EQ(score_answer(string_task(r, note), "'n/a'", &judge).score, 1);

  res = score_answer(string_task(r, note), "There is no recipe from the OP", &judge);
  EXPECT_EQ(res.score, 0);
  EXPECT_EQ(judge.last.question, judge_question::unachievable);
  EXPECT_EQ(judge.last.reference, note);
  judge.reply = "Same";
  EXPECT_EQ(score_answer(string_task(r, note), "There is no recipe from the OP", &judge).score, 1);
  // The deterministic judge: the reason must appear in the answer.
  EXPECT_EQ(score_answer(string_task(r, note), "N/A: the OP did not provide a recipe.").score, 1);
  EXPECT_EQ(score_answer(string_task(r, note), "N/A: the site is down").score, 0);
}

// VWA's tasks (require_llm_judge) without a judge: a case whose score no verdict could
// change is scored, never `unsupported` (issue 41): the reference N/A answered N/A is an
// exact match (1), as VisualWebArena checks exact match first; a failed exact_match beside
// a fuzzy_match is 0. Only what needs the judge's verdict is unsupported.
TEST(StringMatch, DeterministicCasesNeedNoJudge) {
  auto without_judge = [](const task& t, const std::string& answer) {
    eval_inputs in;
    in.answer = answer;
    in.require_llm_judge = true;
    return evaluate_task(t, in);
  };
  reference_answer_set na;
  na.fuzzy_match = fuzzy_reference{false, {}, "N/A"};
  const task t = string_task(na, "The OP did not provide a recipe");
  eval_result res = without_judge(t, "N/A");
  EXPECT_EQ(res.status, eval_status::scored) << res.evaluators[0].detail;
  EXPECT_EQ(res.score, 1);
  EXPECT_TRUE(res.success);
  EXPECT_EQ(res.judge, "") << "no judge was asked";
  EXPECT_TRUE(contains(res.evaluators[0].detail, "answered N/A")) << res.evaluators[0].detail;
  EXPECT_EQ(without_judge(t, " n/a ").score, 1);
  // A reason instead of N/A: only a judge can say whether it is the same one.
  res = without_judge(t, "There is no recipe");
  EXPECT_EQ(res.status, eval_status::unsupported);
  EXPECT_EQ(res.evaluators[0].detail, k_needs_judge);

  reference_answer_set both;
  both.exact_match = "blue";
  both.fuzzy_match = fuzzy_reference{true, {"navy blue"}, ""};
  res = without_judge(string_task(both), "red");
  EXPECT_EQ(res.status, eval_status::scored) << "exact_match failed: 0 whatever a judge says";
  EXPECT_EQ(res.score, 0);
  EXPECT_EQ(without_judge(string_task(both), "blue").status, eval_status::unsupported);
}

TEST(StringMatch, UnexpectedJudgeReplyScoresZeroWithANote) {
  reference_answer_set r;
  r.fuzzy_match = fuzzy_reference{true, {"blue"}, ""};
  scripted_judge judge;
  judge.reply = "I am not sure, maybe?";
  eval_result res = score_answer(string_task(r), "blue", &judge);
  EXPECT_EQ(res.score, 0);
  ASSERT_EQ(res.notes.size(), 1u);
  EXPECT_TRUE(contains(res.notes[0], "unexpected reply 'I am not sure, maybe?'")) << res.notes[0];

  judge.throws = true;
  res = score_answer(string_task(r), "blue", &judge);
  EXPECT_EQ(res.score, 0);
  EXPECT_TRUE(contains(res.notes.at(0), "model crashed")) << res.notes[0];

  judge.throws = false;
  judge.error = "timeout after 30 s";
  res = score_answer(string_task(r), "blue", &judge);
  EXPECT_EQ(res.score, 0);
  EXPECT_TRUE(contains(res.notes.at(0), "timeout")) << res.notes[0];

  r.fuzzy_match = fuzzy_reference{false, {}, "N/A"};
  judge.error = "";
  judge.reply = "";
  res = score_answer(string_task(r, "closed"), "it is closed", &judge);
  EXPECT_EQ(res.score, 0);
  EXPECT_TRUE(contains(res.notes.at(0), "same / different")) << res.notes[0];
}

TEST(Judge, VerdictRule) {
  EXPECT_EQ(judge_verdict(judge_question::fuzzy_match, "correct"), 1);
  EXPECT_EQ(judge_verdict(judge_question::fuzzy_match, "The answer is CORRECT."), 1);
  EXPECT_EQ(judge_verdict(judge_question::fuzzy_match, "incorrect"), 0);
  EXPECT_EQ(judge_verdict(judge_question::fuzzy_match, "partially correct"), 0);
  EXPECT_EQ(judge_verdict(judge_question::fuzzy_match, "yes"), -1);
  EXPECT_EQ(judge_verdict(judge_question::unachievable, "same"), 1);
  EXPECT_EQ(judge_verdict(judge_question::unachievable, "different"), 0);
  EXPECT_EQ(judge_verdict(judge_question::unachievable, ""), -1);
}

TEST(Judge, DeterministicRule) {
  EXPECT_EQ(judge_normalise("  'The Blue-Bike, used!' "), "the blue bike used");
  deterministic_judge j;
  auto ask = [&](const std::string& ref, const std::string& pred) {
    return j.judge({judge_question::fuzzy_match, "", ref, pred}).reply;
  };
  EXPECT_EQ(ask("blue bike", "A BLUE bike, used"), "correct");
  EXPECT_EQ(ask("blue bike", "bluebike"), "incorrect");
  EXPECT_EQ(ask("bike", "bikes"), "incorrect");  // whole words only
  EXPECT_EQ(ask("", "anything"), "incorrect");
  EXPECT_EQ(ask("Same text", "same text"), "correct");
  EXPECT_EQ(j.judge({judge_question::unachievable, "", "no recipe", "there is no recipe"}).reply, "same");
}

// ---- url_match ----

TEST(UrlMatch, CanonicalUrl) {
  EXPECT_EQ(canonical_url("http://localhost:7770/"), "http://127.0.0.1:7770");
  EXPECT_EQ(canonical_url("http://LOCALHOST/a/b/"), "http://127.0.0.1/a/b");
  EXPECT_EQ(canonical_url("http://127.0.0.1:7770//"), "http://127.0.0.1:7770/");  // one '/' only
  EXPECT_EQ(canonical_url(" localhost:9999/f/food "), "127.0.0.1:9999/f/food");
  EXPECT_EQ(canonical_url("http://example.com/localhost/"), "http://example.com/localhost");
  EXPECT_EQ(canonical_url("http://localhost.example.com/"), "http://localhost.example.com");
  EXPECT_EQ(canonical_url("http://u:p@localhost:1/x?q=localhost"), "http://u:p@127.0.0.1:1/x?q=localhost");
  EXPECT_EQ(canonical_url(""), "");
  EXPECT_EQ(canonical_url("/"), "");
}

TEST(UrlMatch, ExactWithLocalhostAndTrailingSlash) {
  EXPECT_EQ(url_score("http://localhost:9999/f/food/82896", "EXACT", "http://127.0.0.1:9999/f/food/82896/"), 1);
  EXPECT_EQ(url_score("http://127.0.0.1:9999/f/food/82896/", "EXACT", "http://localhost:9999/f/food/82896"), 1);
  EXPECT_EQ(url_score("http://127.0.0.1:9999/f/food/82896", "EXACT", "http://127.0.0.1:9999/f/food/82896/comments"), 0);
}

TEST(UrlMatch, ExactIsTheDefault) {
  EXPECT_EQ(url_score("http://127.0.0.1:9999/f/food", std::nullopt, "http://127.0.0.1:9999/f/food/1"), 0);
  EXPECT_EQ(url_score("http://127.0.0.1:9999/f/food", std::nullopt, "http://127.0.0.1:9999/f/food"), 1);
}

TEST(UrlMatch, GoldInPred) {
  EXPECT_EQ(url_score("http://localhost:9999/f/food/82896", "GOLD in PRED",
                      "http://127.0.0.1:9999/f/food/82896/homemade-pork-belly"), 1);
  EXPECT_EQ(url_score("http://127.0.0.1:9999/f/food/82896", "GOLD in PRED", "http://127.0.0.1:9999/f/food"), 0);
}

TEST(UrlMatch, OrAlternativesAndEmptyOnes) {
  const std::string refs = "http://127.0.0.1:9999/f/food/125449/-/comment/2293962 |OR| "
                           "http://127.0.0.1:9999/f/food/125449/-/comment/2305083";
  EXPECT_EQ(url_score(refs, "EXACT", "http://127.0.0.1:9999/f/food/125449/-/comment/2305083"), 1);
  EXPECT_EQ(url_score(refs, "EXACT", "http://127.0.0.1:9999/f/food/125449"), 0);
  // An empty alternative never matches (it would be a substring of every URL).
  EXPECT_EQ(url_score("http://x/a |OR| ", "GOLD in PRED", "http://y/b"), 0);
}

TEST(UrlMatch, BadRuleOrNoPageScoresZero) {
  fake_page page;
  eval_inputs in;
  in.page = &page;
  eval_result res = evaluate_task(url_task("http://127.0.0.1:7770", "FUZZY"), in);
  EXPECT_EQ(res.score, 0);
  EXPECT_TRUE(contains(res.evaluators[0].detail, "unknown url_note")) << res.evaluators[0].detail;
  res = evaluate_task(url_task("http://127.0.0.1:7770", "EXACT"), eval_inputs{});
  EXPECT_EQ(res.score, 0);
  EXPECT_TRUE(contains(res.evaluators[0].detail, "no page")) << res.evaluators[0].detail;
}

// ---- the task score ----

TEST(Evaluate, ScoreIsTheProductOverEvalTypes) {
  task t = url_task("http://127.0.0.1:7770/cart", "EXACT");
  t.eval.eval_types = {"string_match", "url_match"};
  t.eval.reference_answers = includes({"$25"});
  fake_page page;
  page.url = "http://127.0.0.1:7770/cart";
  eval_inputs in;
  in.page = &page;
  in.answer = "The total is $25";
  eval_result res = evaluate_task(t, in);
  ASSERT_EQ(res.evaluators.size(), 2u);
  EXPECT_EQ(res.evaluators[0].type, "string_match");
  EXPECT_EQ(res.evaluators[1].type, "url_match");
  EXPECT_EQ(res.score, 1);
  EXPECT_TRUE(res.success);
  EXPECT_EQ(res.status, eval_status::scored);

  page.url = "http://127.0.0.1:7770/";
  res = evaluate_task(t, in);
  EXPECT_EQ(res.evaluators[0].score, 1);
  EXPECT_EQ(res.evaluators[1].score, 0);
  EXPECT_EQ(res.score, 0);
  EXPECT_FALSE(res.success);
}

TEST(Evaluate, EvaluatesAfterAnEarlyStop) {
  // The agent looped on the right page: url_match still passes on the final page.
  early_stop_rules rules;
  for (int i = 0; i < 5; ++i) rules.record(parse_action("scroll [down]"));
  early_stop_decision d = rules.check();
  ASSERT_TRUE(d.stop);
  task t = url_task("http://127.0.0.1:9999/f/food/82896", "GOLD in PRED");
  fake_page page;
  page.url = "http://127.0.0.1:9999/f/food/82896/some-title";
  eval_inputs in;
  in.page = &page;
  in.answer = early_stop_answer(d.reason);
  EXPECT_EQ(in.answer, "Early stop: Same action for 5 times");
  EXPECT_EQ(evaluate_task(t, in).score, 1);

  // A question task is scored against the early-stop answer, and fails.
  reference_answer_set r;
  r.must_include = {"11"};
  eval_result res = score_answer(string_task(r), in.answer);
  EXPECT_EQ(res.score, 0);
  EXPECT_TRUE(contains(res.evaluators[0].detail, "missing '11'")) << res.evaluators[0].detail;
  // ... and an infeasible task is not passed by stopping early.
  reference_answer_set na;
  na.fuzzy_match = fuzzy_reference{false, {}, "N/A"};
  EXPECT_EQ(score_answer(string_task(na, "no such product"), in.answer).score, 0);
}

TEST(Evaluate, PageImageQueryIsUnsupportedNeverScored) {
  task t = url_task("http://127.0.0.1:7770", "EXACT");
  t.eval.eval_types = {"url_match", "page_image_query"};
  fake_page page;
  page.url = "http://127.0.0.1:7770";
  eval_inputs in;
  in.page = &page;
  eval_result res = evaluate_task(t, in);
  EXPECT_EQ(res.evaluators[0].score, 1);
  EXPECT_EQ(res.evaluators[1].status, eval_status::unsupported);
  EXPECT_TRUE(contains(res.evaluators[1].detail, "unsupported"));
  EXPECT_EQ(res.status, eval_status::unsupported);
  EXPECT_STREQ(eval_status_name(res.status), "unsupported");
  EXPECT_EQ(res.score, 0);
  EXPECT_FALSE(res.success);
}

TEST(Evaluate, UrlMatchUsesTheFinalPageEvenAfterProgramHtmlNavigates) {
  task t = html_task({target("http://127.0.0.1:9980/admin", "", includes({"whole page"}))});
  t.eval.eval_types = {"program_html", "url_match"};
  t.eval.reference_url = "http://127.0.0.1:9980/item/5";
  fake_page page;
  page.url = "http://127.0.0.1:9980/item/5";
  eval_result res = run_html(t, page);
  EXPECT_EQ(res.evaluators[0].score, 1);
  EXPECT_EQ(res.evaluators[1].score, 1) << res.evaluators[1].detail;
  EXPECT_EQ(page.url, "http://127.0.0.1:9980/admin");
}

TEST(Evaluate, NoEvalTypesOrUnknownTypeScoresZero) {
  task t = string_task(includes({"x"}));
  t.eval.eval_types = {};
  eval_result res = score_answer(t, "x");
  EXPECT_EQ(res.score, 0);
  EXPECT_FALSE(res.success);
  t.eval.eval_types = {"string_match", "vibes_match"};
  res = score_answer(t, "x");
  EXPECT_EQ(res.score, 0);
  EXPECT_TRUE(contains(res.evaluators[1].detail, "unknown eval type 'vibes_match'"));
  t.eval.eval_types = {"string_match"};
  t.eval.reference_answers.reset();
  EXPECT_EQ(score_answer(t, "x").score, 0);
}

// ---- odd input never crashes ----

TEST(Evaluate, OddInputNeverCrashes) {
  const std::string huge(1 << 18, 'a');
  const std::string bad_utf8 = "\xff\xfe\xc3(\xe2\x82";
  reference_answer_set r;
  r.exact_match = bad_utf8;
  r.must_include = {huge, "", bad_utf8 + " |OR| " + huge};
  r.must_exclude = {""};
  r.one_of = {"", bad_utf8};
  r.required_values = {"", "<", bad_utf8};
  r.fuzzy_match = fuzzy_reference{true, {"", huge}, ""};
  for (const std::string& answer : {std::string(), huge, bad_utf8, std::string(1000, '['), std::string("\0\0", 2)}) {
    eval_result res = score_answer(string_task(r), answer);
    EXPECT_GE(res.score, 0);
    EXPECT_LE(res.score, 1);
    for (const auto& ev : res.evaluators) EXPECT_LT(ev.detail.size(), 10000u);
  }
  fake_page page;
  page.url = bad_utf8;
  page.html = huge;
  for (const std::string& loc : {huge, bad_utf8, std::string("document.querySelector('"), std::string("func:"),
                                 std::string("func:x(") + huge, std::string("document.") + huge}) {
    task t = html_task({target(bad_utf8, loc, r), target("last", loc, reference_answer_set{})});
    t.eval.eval_types = {"program_html", "url_match", "string_match", "page_image_query"};
    t.eval.reference_url = bad_utf8 + " |OR| ";
    t.eval.reference_answers = r;
    eval_result res = run_html(t, page);
    EXPECT_EQ(res.score, 0);
  }
  EXPECT_TRUE(word_tokens(huge).size() == 1);
  EXPECT_EQ(word_tokens(std::string(200000, '\'')).size(), 200000u);  // linear, not quadratic
  EXPECT_EQ(word_tokens(std::string(200000, '.') + "a" + std::string(200000, '\'')).size(), 200001u);
  EXPECT_EQ(canonical_url(bad_utf8), bad_utf8);
  EXPECT_EQ(message_snippet("ok \xff end"), "ok ? end");
  EXPECT_EQ(message_snippet("\xe2\x82\xac\xe2\x82\xac", 4), "\xe2\x82\xac...");  // never cuts a character
}
