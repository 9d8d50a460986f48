// test-eval.cpp: the evaluators (envs/eval/evaluator.h and the eval-*.h parts), one test
// per rule of specs/web-envs.md §2, against a fake page and scripted judges. No network.
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "eval/early-stop.h"
#include "eval/eval-judge.h"
#include "eval/eval-locator.h"
#include "eval/eval-text.h"
#include "eval/eval-url-match.h"
#include "eval/evaluator.h"
#include "eval/task.h"

using namespace kvarena;

namespace {

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

// A page that records what the evaluator did with it.
class fake_page : public page_probe {
 public:
  std::string url = "http://127.0.0.1:7770/";
  std::string html = "<html><body>whole page</body></html>";
  std::map<std::string, std::string> values;  // locator -> its value
  std::set<std::string> throwing;             // locators whose evaluation throws
  std::set<std::string> unreachable;          // URLs that do not open
  std::set<std::string> failing_prep;         // prep actions that fail
  std::vector<std::string> log;

  std::string current_url() override { return url; }
  bool navigate(const std::string& to, std::string* err) override {
    log.push_back("goto " + to);
    if (unreachable.count(to)) {
      *err = "connection refused";
      return false;
    }
    url = to;
    return true;
  }
  std::string page_html() override {
    log.push_back("html");
    return html;
  }
  std::optional<std::string> eval_locator(const std::string& locator) override {
    log.push_back("locate " + locator);
    if (throwing.count(locator)) throw std::runtime_error("TypeError: null has no outerText");
    auto it = values.find(locator);
    if (it == values.end()) return std::nullopt;
    return it->second;
  }
  bool run_prep_action(const std::string& js, std::string* err) override {
    log.push_back("prep " + js);
    if (failing_prep.count(js)) {
      *err = "element not found";
      return false;
    }
    return true;
  }
};

// A judge that answers with a fixed reply, or throws, or reports an error.
class scripted_judge : public fuzzy_judge {
 public:
  std::string reply = "correct";
  std::string error;
  bool throws = false;
  int calls = 0;
  judge_request last;
  judge_result judge(const judge_request& req) override {
    ++calls;
    last = req;
    if (throws) throw std::runtime_error("model crashed");
    return {reply, error};
  }
  std::string name() override { return "scripted"; }
};

task string_task(reference_answer_set refs, const std::string& note = "") {
  task t;
  t.task_id = 1;
  t.sites = {"shopping"};
  t.start_url = "http://127.0.0.1:7770";
  t.intent = "How much does the red bike cost?";
  t.eval.eval_types = {"string_match"};
  t.eval.reference_answers = std::move(refs);
  if (!note.empty()) t.eval.string_note = note;
  return t;
}

eval_result score_answer(const task& t, const std::string& answer, fuzzy_judge* judge = nullptr) {
  eval_inputs in;
  in.answer = answer;
  in.judge = judge;
  return evaluate_task(t, in);
}

double must_include(std::vector<std::string> items, const std::string& answer) {
  reference_answer_set r;
  r.must_include = std::move(items);
  return score_answer(string_task(r), answer).score;
}

double required(std::vector<std::string> conditions, const std::string& answer) {
  reference_answer_set r;
  r.required_values = std::move(conditions);
  return score_answer(string_task(r), answer).score;
}

task url_task(const std::string& reference, std::optional<std::string> note) {
  task t;
  t.task_id = 2;
  t.sites = {"reddit"};
  t.start_url = "http://127.0.0.1:9999";
  t.intent = "Open the post";
  t.eval.eval_types = {"url_match"};
  t.eval.reference_url = reference;
  t.eval.url_note = std::move(note);
  return t;
}

double url_score(const std::string& reference, std::optional<std::string> note, const std::string& page_url) {
  fake_page page;
  page.url = page_url;
  eval_inputs in;
  in.page = &page;
  return evaluate_task(url_task(reference, std::move(note)), in).score;
}

program_html_target target(const std::string& url, const std::string& locator,
                           reference_answer_set rc) {
  program_html_target p;
  p.url = url;
  p.locator = locator;
  p.required_contents = std::move(rc);
  return p;
}

reference_answer_set includes(std::vector<std::string> items) {
  reference_answer_set r;
  r.must_include = std::move(items);
  return r;
}

task html_task(std::vector<program_html_target> targets) {
  task t;
  t.task_id = 3;
  t.sites = {"classifieds"};
  t.start_url = "http://127.0.0.1:9980";
  t.intent = "Post a comment";
  t.eval.eval_types = {"program_html"};
  t.eval.program_html = std::move(targets);
  return t;
}

eval_result run_html(const task& t, fake_page& page, const eval_helper_registry* helpers = nullptr,
                     fuzzy_judge* judge = nullptr) {
  eval_inputs in;
  in.page = &page;
  in.helpers = helpers;
  in.judge = judge;
  return evaluate_task(t, in);
}

}  // namespace

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

// ---- program_html ----

TEST(ProgramHtml, TargetsInOrderWithNavigationPrepAndLocator) {
  program_html_target a = target("http://127.0.0.1:9980/item/1", "document.querySelector('.title').outerText",
                                 includes({"bike"}));
  a.prep_actions = std::vector<std::string>{"document.querySelector('#more').click()"};
  program_html_target b = target("last", "document.querySelector(\"#price\").value", includes({"120"}));
  fake_page page;
  page.values["document.querySelector('.title').outerText"] = "Red Bike";
  page.values["document.querySelector(\"#price\").value"] = "$120";
  eval_result res = run_html(html_task({a, b}), page);
  EXPECT_EQ(res.score, 1) << res.evaluators[0].detail;
  const std::vector<std::string> expected = {
      "goto http://127.0.0.1:9980/item/1", "prep document.querySelector('#more').click()",
      "locate document.querySelector('.title').outerText",
      "locate document.querySelector(\"#price\").value"};  // "last": no navigation
  EXPECT_EQ(page.log, expected);
}

TEST(ProgramHtml, OnlyTheFirstPresentKeyOfRequiredContentsCounts) {
  fake_page page;
  page.values["document.querySelector('#q').value"] = "5";
  // exact_match comes first: must_include (which would fail) is not checked.
  reference_answer_set rc;
  rc.exact_match = "5";
  rc.must_include = {"never there"};
  EXPECT_EQ(run_html(html_task({target("last", "document.querySelector('#q').value", rc)}), page).score, 1);
  // must_include before must_exclude.
  reference_answer_set inc;
  inc.must_include = {"5"};
  inc.must_exclude = {"5"};
  EXPECT_EQ(run_html(html_task({target("last", "document.querySelector('#q').value", inc)}), page).score, 1);
  // must_exclude before required_values.
  reference_answer_set exc;
  exc.must_exclude = {"7"};
  exc.required_values = {"> 100"};
  EXPECT_EQ(run_html(html_task({target("last", "document.querySelector('#q').value", exc)}), page).score, 1);
  // required_values before fuzzy_match.
  reference_answer_set req;
  req.required_values = {"== 5"};
  req.fuzzy_match = fuzzy_reference{false, {}, "something else"};
  EXPECT_EQ(run_html(html_task({target("last", "document.querySelector('#q').value", req)}), page).score, 1);
  // one_of is not a required_contents key: alone it leaves none.
  reference_answer_set only_one_of;
  only_one_of.one_of = {"5"};
  eval_result res = run_html(html_task({target("last", "document.querySelector('#q').value", only_one_of)}), page);
  EXPECT_EQ(res.score, 0);
  EXPECT_TRUE(contains(res.evaluators[0].detail, "none of exact_match")) << res.evaluators[0].detail;
}

TEST(ProgramHtml, FuzzyMatchAlternativesInRequiredContents) {
  fake_page page;
  page.values["document.querySelector('.comment').outerText"] = "Great bike, thanks!";
  reference_answer_set rc;
  rc.fuzzy_match = fuzzy_reference{false, {}, "terrible |OR| great bike"};
  EXPECT_EQ(run_html(html_task({target("last", "document.querySelector('.comment').outerText", rc)}), page).score, 1);
  rc.fuzzy_match = fuzzy_reference{false, {}, "terrible |OR| awful"};
  EXPECT_EQ(run_html(html_task({target("last", "document.querySelector('.comment').outerText", rc)}), page).score, 0);
}

TEST(ProgramHtml, EmptyLocatorIsTheWholePage) {
  fake_page page;
  page.html = "<html><div class=x>Posted by MarvelsGrantMan136</div></html>";
  EXPECT_EQ(run_html(html_task({target("last", "  ", includes({"marvelsgrantman136"}))}), page).score, 1);
  EXPECT_EQ(page.log, std::vector<std::string>{"html"});
}

TEST(ProgramHtml, ThrowingOrUnknownLocatorYieldsEmptyText) {
  fake_page page;
  const std::string loc = "document.querySelector('.gone').outerText";
  page.throwing.insert(loc);
  reference_answer_set excl;
  excl.must_exclude = {"bike"};
  EXPECT_EQ(run_html(html_task({target("last", loc, excl)}), page).score, 1);  // "" excludes anything
  EXPECT_EQ(run_html(html_task({target("last", loc, includes({"bike"}))}), page).score, 0);
  reference_answer_set empty_exact;
  empty_exact.exact_match = "";
  EXPECT_EQ(run_html(html_task({target("last", loc, empty_exact)}), page).score, 1);
  // A backend that cannot run the JS (nullopt) behaves the same.
  EXPECT_EQ(run_html(html_task({target("last", "[...document.querySelectorAll('a')].length", empty_exact)}), page).score, 1);
}

TEST(ProgramHtml, LambdaLocatorThatFailsScoresZero) {
  fake_page page;
  eval_result res = run_html(html_task({target("last", "lambda: page.title()", includes({"x"}))}), page);
  EXPECT_EQ(res.score, 0);
  EXPECT_TRUE(contains(res.evaluators[0].detail, "the page is wrong")) << res.evaluators[0].detail;
}

TEST(ProgramHtml, FuncHelpersForUrlsAndLocators) {
  eval_helper_registry helpers;
  std::vector<std::string> seen_args;
  helpers.add("reddit_get_post_url", [&](page_probe&, const std::vector<std::string>& args) {
    seen_args = args;
    return std::optional<std::string>(args.at(0) + "/comments");
  });
  helpers.add("get_query_text", [](page_probe& p, const std::vector<std::string>& args) {
    return std::optional<std::string>(args.at(0) + "|" + args.at(1) + "|" + p.current_url());
  });
  fake_page page;
  page.url = "http://127.0.0.1:9999/f/food/82896";
  task t = html_task({target("func:reddit_get_post_url('__last_url__')",
                             "func:get_query_text(__page__, '.submission__inner')",
                             includes({"__page__|.submission__inner|http://127.0.0.1:9999/f/food/82896/comments"}))});
  eval_result res = run_html(t, page, &helpers);
  EXPECT_EQ(res.score, 1) << res.evaluators[0].detail;
  EXPECT_EQ(seen_args, std::vector<std::string>{"http://127.0.0.1:9999/f/food/82896"});
  EXPECT_EQ(page.log.at(0), "goto http://127.0.0.1:9999/f/food/82896/comments");
}

TEST(ProgramHtml, UnknownFailingOrThrowingHelpers) {
  eval_helper_registry helpers;
  helpers.add("shopping_get_latest_order_url",
              [](page_probe&, const std::vector<std::string>&) { return std::optional<std::string>(); });
  helpers.add("boom", [](page_probe&, const std::vector<std::string>&) -> std::optional<std::string> {
    throw std::runtime_error("API down");
  });
  fake_page page;
  eval_result res = run_html(html_task({target("func:nope()", "", includes({"x"}))}), page, &helpers);
  EXPECT_EQ(res.score, 0);
  EXPECT_TRUE(contains(res.evaluators[0].detail, "unknown func: helper 'nope'")) << res.evaluators[0].detail;
  EXPECT_TRUE(contains(res.evaluators[0].detail, "boom, shopping_get_latest_order_url")) << res.evaluators[0].detail;

  res = run_html(html_task({target("func:shopping_get_latest_order_url()", "", includes({"x"}))}), page, &helpers);
  EXPECT_EQ(res.score, 0);
  EXPECT_TRUE(contains(res.evaluators[0].detail, "found nothing")) << res.evaluators[0].detail;

  res = run_html(html_task({target("func:boom()", "", includes({"x"}))}), page, &helpers);
  EXPECT_EQ(res.score, 0);
  EXPECT_TRUE(contains(res.evaluators[0].detail, "API down")) << res.evaluators[0].detail;

  // A throwing locator helper yields "" (noted), like a throwing JS locator.
  reference_answer_set empty_exact;
  empty_exact.exact_match = "";
  res = run_html(html_task({target("last", "func:boom(__page__)", empty_exact)}), page, &helpers);
  EXPECT_EQ(res.score, 1) << res.evaluators[0].detail;
  EXPECT_TRUE(contains(res.notes.at(0), "API down"));

  // No registry at all.
  res = run_html(html_task({target("last", "func:boom()", empty_exact)}), page, nullptr);
  EXPECT_EQ(res.score, 0);
  EXPECT_TRUE(contains(res.evaluators[0].detail, "none registered")) << res.evaluators[0].detail;
}

TEST(ProgramHtml, PageThatDoesNotOpenOrNoPage) {
  fake_page page;
  page.unreachable.insert("http://127.0.0.1:1/x");
  eval_result res = run_html(html_task({target("http://127.0.0.1:1/x", "", includes({"x"}))}), page);
  EXPECT_EQ(res.score, 0);
  EXPECT_TRUE(contains(res.evaluators[0].detail, "connection refused")) << res.evaluators[0].detail;
  res = evaluate_task(html_task({target("last", "", includes({"x"}))}), eval_inputs{});
  EXPECT_EQ(res.score, 0);
  EXPECT_TRUE(contains(res.evaluators[0].detail, "no page"));
  task empty = html_task({});
  EXPECT_EQ(run_html(empty, page).score, 0);
}

TEST(ProgramHtml, FailingPrepActionIsNotedNotFatal) {
  program_html_target a = target("last", "", includes({"whole page"}));
  a.prep_actions = std::vector<std::string>{"document.querySelector('#tab').click()"};
  fake_page page;
  page.failing_prep.insert("document.querySelector('#tab').click()");
  eval_result res = run_html(html_task({a}), page);
  EXPECT_EQ(res.score, 1);
  ASSERT_EQ(res.notes.size(), 1u);
  EXPECT_TRUE(contains(res.notes[0], "element not found")) << res.notes[0];
}

TEST(ProgramHtml, ScoresMultiplyAcrossTargets) {
  fake_page page;
  page.values["document.querySelector('#a').outerText"] = "alpha";
  page.values["document.querySelector('#b').outerText"] = "beta";
  task t = html_task({target("last", "document.querySelector('#a').outerText", includes({"alpha"})),
                      target("last", "document.querySelector('#b').outerText", includes({"gamma"}))});
  eval_result res = run_html(t, page);
  EXPECT_EQ(res.score, 0);
  EXPECT_TRUE(contains(res.evaluators[0].detail, "target 1: must_include: missing 'gamma'")) << res.evaluators[0].detail;
}

// ---- locator parsing ----

TEST(Locator, QuerySelectorForms) {
  struct expect_case {
    const char* locator;
    const char* selector;
    element_property prop;
  };
  for (const expect_case& c : {
           expect_case{"document.querySelector('.submission__inner').outerText", ".submission__inner", element_property::outer_text},
           expect_case{"document.querySelector(\"#sidebar > section > h1\").textContent", "#sidebar > section > h1", element_property::text_content},
           expect_case{"document.querySelector('[id=\"qty\"]').value", "[id=\"qty\"]", element_property::value},
           expect_case{"document.querySelector(\"[data-qa=\\\"x\\\"]\").innerText", "[data-qa=\"x\"]", element_property::inner_text},
           expect_case{"  document.querySelector( `.price` ) . innerText ; ", ".price", element_property::inner_text},
           expect_case{"document.querySelector('#a\\\\:b').outerText", "#a\\:b", element_property::outer_text},
           expect_case{"document.body.innerText", "body", element_property::inner_text},
           expect_case{"document.body.outerText", "body", element_property::outer_text},
       }) {
    parsed_locator p = parse_locator(c.locator);
    EXPECT_EQ(p.kind, locator_kind::query_selector) << c.locator;
    EXPECT_EQ(p.selector, c.selector) << c.locator;
    EXPECT_EQ(p.property, c.prop) << c.locator;
  }
  EXPECT_STREQ(element_property_name(element_property::text_content), "textContent");
}

TEST(Locator, OtherForms) {
  EXPECT_EQ(parse_locator("").kind, locator_kind::whole_page);
  EXPECT_EQ(parse_locator(" \n").kind, locator_kind::whole_page);
  EXPECT_EQ(parse_locator("[...document.querySelectorAll('.item')].map(e => e.outerText)").kind, locator_kind::javascript);
  EXPECT_EQ(parse_locator("document.querySelector('.x').getAttribute('href')").kind, locator_kind::javascript);
  EXPECT_EQ(parse_locator("document.querySelector('.x').outerHTML").kind, locator_kind::javascript);
  EXPECT_EQ(parse_locator("document.querySelector('.x'").kind, locator_kind::javascript);
  EXPECT_EQ(parse_locator("document.querySelector(`${x}`).value").kind, locator_kind::javascript);
  EXPECT_EQ(parse_locator("lambda: page.title()").kind, locator_kind::lambda_js);
  parsed_locator f = parse_locator("func:shopping_get_sku_latest_review_rating('B0C1', 3, __page__)");
  ASSERT_EQ(f.kind, locator_kind::func_helper) << f.error;
  EXPECT_EQ(f.call.name, "shopping_get_sku_latest_review_rating");
  EXPECT_EQ(f.call.args, (std::vector<std::string>{"B0C1", "3", "__page__"}));
}

TEST(Locator, GarbageIsInvalidWithAMessage) {
  for (const char* bad : {"window.location", "$('.x').text()", "querySelector('.x')", "\xff\xfe", "func:", "func:1x()",
                          "func:f(", "func:f('unterminated)", "func:f(a b)", "func:f() trailing", "func:f(=)"}) {
    parsed_locator p = parse_locator(bad);
    EXPECT_EQ(p.kind, locator_kind::invalid) << bad;
    EXPECT_FALSE(p.error.empty()) << bad;
  }
  EXPECT_TRUE(contains(parse_locator("window.location").error, "document.querySelector"));
  EXPECT_TRUE(contains(parse_locator("func:f(").error, "missing ')'"));
}

TEST(Locator, FuncCallArguments) {
  func_call c;
  std::string err;
  ASSERT_TRUE(parse_func_call(" f ( 'a,b' , \"c\\\"d\" , -1.5, True, ) ; ", &c, &err)) << err;
  EXPECT_EQ(c.name, "f");
  EXPECT_EQ(c.args, (std::vector<std::string>{"a,b", "c\"d", "-1.5", "True"}));
  ASSERT_TRUE(parse_func_call("g()", &c, &err));
  EXPECT_TRUE(c.args.empty());
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
