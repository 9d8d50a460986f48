// test-eval-html.cpp: the program_html evaluator (targets, navigation, prep actions,
// locators, func: helpers, required contents) and locator parsing, against the fake page of
// eval-test-util.h (specs/web-envs.md §2). No network.
#include <gtest/gtest.h>

#include "eval-test-util.h"

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
