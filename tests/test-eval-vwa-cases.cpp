// test-eval-vwa-cases.cpp: VisualWebArena's own evaluator test cases
// (tests/test_evaluation_harness/test_exact_evaluators.py and test_helper_functions.py in its
// repository) rewritten for kvarena: the same task eval configs and agent outcomes, the same
// expected scores. VWA drives a real browser to the pages; here the final page is a fake
// holding what that page would show (its URL, HTML and form values), and the shopping REST
// API is a local fake Magento answering as the real one.
#include <nlohmann/json.hpp>

#include "eval-test-util.h"
#include "sites/http-server.h"
#include "eval/vwa-helpers/site-eval-helpers.h"

namespace {

// A VWA test config's "eval" object as a task kvarena loads.
task vwa_task(const std::string& eval_json) {
  const std::string text = R"({"sites": ["reddit"], "task_id": 0, "require_login": false, "storage_state": null,
    "start_url": "http://127.0.0.1:9/", "intent_template": "", "instantiation_dict": {}, "intent": "x",
    "require_reset": false, "eval": )" + eval_json + "}";
  task_suite s = parse_tasks(text, "vwa-case.json");
  EXPECT_TRUE(s.ok()) << (s.errors.empty() ? "" : s.errors[0]);
  return s.tasks.empty() ? task{} : s.tasks[0];
}

double evaluate(const task& t, fake_page& page, const std::string& answer = "",
                std::map<std::string, std::string> sites = {}) {
  eval_inputs in;
  in.answer = answer;
  in.page = &page;
  in.helpers = &sites::site_eval_helpers();
  in.sites = std::move(sites);
  eval_result r = evaluate_task(t, in);
  for (const auto& ev : r.evaluators) std::printf("  %s: %g %s\n", ev.type.c_str(), ev.score, ev.detail.c_str());
  return r.score;
}

const char* k_string_match = R"({"eval_types": ["string_match"], "reference_answers": {"must_include": ["1985/04/18"],
  "must_exclude": ["1985/04/17"]}, "reference_url": "", "program_html": null})";

TEST(VwaCases, StringMatchSuccessAndFail) {
  fake_page page;
  EXPECT_EQ(evaluate(vwa_task(k_string_match), page, "The date is 1985/04/18"), 1);
  EXPECT_EQ(evaluate(vwa_task(k_string_match), page, "The date is 1936/04/18"), 0);
}

TEST(VwaCases, UrlExactMatchSuccessAndFail) {
  const char* cfg = R"({"eval_types": ["url_match"], "reference_answers": null, "reference_url": "https://www.google.com/",
    "program_html": null})";
  fake_page page;
  page.url = "https://www.google.com/";
  EXPECT_EQ(evaluate(vwa_task(cfg), page), 1);
  page.url = "https://github.com/web-arena-x";
  EXPECT_EQ(evaluate(vwa_task(cfg), page), 0);
}

// html_content_exact_match.json: the last page must show "What are mammals?", google.com
// "Google Search".
TEST(VwaCases, HtmlContentMatchSuccessAndFail) {
  const char* cfg = R"({"eval_types": ["program_html"], "reference_answers": null, "reference_url": "",
    "program_html": [{"url": "last", "required_contents": {"must_include": ["What are mammals?"],
    "must_exclude": ["What are birds?"]}, "locator": ""}, {"url": "https://www.google.com/", "required_contents":
    {"must_include": ["Google Search"], "must_exclude": ["Bing Search"]}, "locator": ""}]})";
  struct pages_by_url : fake_page {
    std::map<std::string, std::string> pages;
    std::string page_html() override { return pages[url]; }
  } page;
  page.pages["https://russmaxdesign.github.io/exercise"] = "<h2>What are mammals?</h2>";
  page.pages["https://www.google.com/"] = "<input value='Google Search'>";
  page.url = "https://russmaxdesign.github.io/exercise";
  EXPECT_EQ(evaluate(vwa_task(cfg), page), 1);
  page.url = "https://www.google.com/";  // the agent stopped on google.com
  EXPECT_EQ(evaluate(vwa_task(cfg), page), 0);
}

// html_content_element_exact_match.json and html_content_url_comb.json: form values typed
// by the agent, read with VWA's (unclosed) attribute selector.
const char* k_element_match = R"([{"url": "last", "required_contents": {"must_include": ["Hello World"],
  "must_exclude": ["Goodbye World"]}, "locator": "document.querySelector('[id=\"form-name\"').value"},
  {"url": "last", "required_contents": {"must_include": ["alexisxy@hotmail.com"], "must_exclude":
  ["alexisxy@gmail.com"]}, "locator": "document.querySelector('[id=\"form-email\"').value"}])";

TEST(VwaCases, HtmlContentElementMatchAndUrlComb) {
  const std::string cfg = std::string(R"({"eval_types": ["program_html"], "reference_answers": null,
    "reference_url": "", "program_html": )") + k_element_match + "}";
  fake_page page;
  page.url = "https://russmaxdesign.github.io/exercise/";
  page.values["document.querySelector('[id=\"form-name\"').value"] = "Hello World";
  page.values["document.querySelector('[id=\"form-email\"').value"] = "alexisxy@hotmail.com";
  EXPECT_EQ(evaluate(vwa_task(cfg), page), 1);
  const std::string comb = std::string(R"({"eval_types": ["program_html", "url_match"], "reference_answers": null,
    "reference_url": "https://russmaxdesign.github.io/", "url_note": "GOLD in PRED", "program_html": )") +
                           k_element_match + "}";
  EXPECT_EQ(evaluate(vwa_task(comb), page), 1);
  page.values["document.querySelector('[id=\"form-name\"').value"] = "Hello";  // the fail case
  EXPECT_EQ(evaluate(vwa_task(cfg), page), 0);
}

// func_eval_success.json / func_eval_fail.json: the newest review of B09BCM56J7 is by
// cupcakecupcake, rated 100%.
TEST(VwaCases, FuncEvalSuccessAndFail) {
  sites::http_server magento({}, [](const sites::http_request& req) {
    if (req.path == "/rest/default/V1/integration/admin/token") return sites::http_response::json("\"t\"");
    if (req.path == "/rest/V1/products/B09BCM56J7/reviews" && req.header("authorization") == "Bearer t")
      return sites::http_response::json(R"([{"nickname":"someone","ratings":[{"rating_name":"Rating","percent":60}]},
        {"nickname":"cupcakecupcake","ratings":[{"rating_name":"Rating","percent":100}]}])");
    return sites::http_response::json("{}", 404);
  });
  magento.start();
  auto cfg = [](const char* rating) {
    return std::string(R"J({"eval_types": ["program_html"], "reference_answers": null, "reference_url": "",
      "program_html": [{"url": "last", "required_contents": {"must_include": [")J") + rating + R"J("]},
      "locator": "func:shopping_get_sku_latest_review_rating('B09BCM56J7')"}, {"url": "last", "required_contents":
      {"must_include": ["cupcakecupcake"]}, "locator": "func:shopping_get_sku_latest_review_author('B09BCM56J7')"}]})J";
  };
  fake_page page;
  EXPECT_EQ(evaluate(vwa_task(cfg("100")), page, "", {{"shopping", magento.base_url()}}), 1);
  EXPECT_EQ(evaluate(vwa_task(cfg("80")), page, "", {{"shopping", magento.base_url()}}), 0);
}

// func_url_func_1.json: the post of a comment URL, then its .submission__inner text.
TEST(VwaCases, FuncUrlFuncLast) {
  const char* cfg = R"J({"eval_types": ["program_html"], "reference_answers": null, "reference_url": "",
    "program_html": [{"url": "func:reddit_get_post_url('__last_url__')", "locator":
    "document.querySelector('.submission__inner').outerText", "required_contents": {"must_include": ["&#x200B;"]}}]})J";
  fake_page page;
  page.url = "http://reddit.test/f/wallstreetbets/50431/-/comment/676875";
  page.values["document.querySelector('.submission__inner').outerText"] = "GME to the moon &#x200B;";
  EXPECT_EQ(evaluate(vwa_task(cfg), page), 1);
  EXPECT_EQ(page.url.rfind("http://reddit.test/f/wallstreetbets/50431", 0), 0u) << page.url;  // the post, not the comment
}

// html_required_values_{success,failure}_1.json on the Olympus OM-D E-M1 page: 12 reviews,
// $629.99, manufacturer Olympus.
TEST(VwaCases, HtmlRequiredValuesSuccessAndFailure) {
  auto cfg = [](const char* price, bool exclude_canon) {
    return std::string(R"J({"eval_types": ["program_html"], "reference_answers": null, "reference_url": "",
      "program_html": [{"url": "last", "locator": "func:shopping_get_num_reviews(__page__)", "required_contents":
      {"required_values": [">= 12"]}}, {"url": "last", "locator": "func:shopping_get_product_price(__page__)",
      "required_contents": {"required_values": [")J") + price + R"J("]}}, {"url": "last", "locator":
      "func:shopping_get_product_attributes(__page__, 'manufacturer |OR| brand name')", "required_contents":
      {"must_include": ["Olympus |OR| Nikon"])J" + (exclude_canon ? R"J(, "must_exclude": ["Canon"])J" : "") + "}}]}";
  };
  fake_page page;
  page.html = R"(<div id="maincontent"><div class="columns"><div><div class="product-info-main">
    <div class="product-info-price"><div class="price-box price-final_price"><span><span>$629.99</span></span></div></div>
    </div></div></div></div><a id="tab-label-reviews-title">Reviews 12</a>
    <table id="productDetails_detailBullets_sections1"><tbody><tr><th>Manufacturer</th><td>Olympus</td></tr></tbody></table>)";
  EXPECT_EQ(evaluate(vwa_task(cfg("< 700", true)), page), 1);
  EXPECT_EQ(evaluate(vwa_task(cfg("< 600", false)), page), 0);
}

// test_helper_functions.py: product attributes, query text (and lower-cased), price.
TEST(VwaCases, HelperFunctionsOnProductPages) {
  const eval_helper_registry& h = sites::site_eval_helpers();
  const std::map<std::string, std::string> no_sites;
  auto call = [&](const char* name, page_probe& p, std::vector<std::string> args) {
    return (*h.find(name))(eval_helper_call{p, args, no_sites}).value_or("<none>");
  };
  fake_page page;
  page.html = R"(<table id="productDetails_detailBullets_sections1"><tbody><tr><th>Brand Name</th><td>NEC</td></tr>
    <tr><th>Manufacturer</th><td>NEC Displays</td></tr></tbody></table>)";
  EXPECT_NE(call("shopping_get_product_attributes", page, {"__page__", "manufacturer |OR| brand name"}).find("NEC Displays"),
            std::string::npos);
  page.html = R"(<div id="maincontent"><div class="columns"><div><div class="product-info-main"><div class="product-info-price">
    <div class="price-box price-final_price"><span><span>$26.99</span></span></div></div></div></div></div></div>)";
  EXPECT_EQ(call("shopping_get_product_price", page, {"__page__"}), "26.99");
  const std::string sel = "#maincontent > div.page-title-wrapper.product > h1 > span";
  page.values["document.querySelector(\"" + sel + "\").outerText"] = "La Guapa Virtual Projection Keyboard";
  EXPECT_NE(call("get_query_text", page, {"__page__", sel}).find("Projection Keyboard"), std::string::npos);
  EXPECT_NE(call("get_query_text_lowercase", page, {"__page__", sel}).find("projection keyboard"), std::string::npos);
}

}  // namespace
