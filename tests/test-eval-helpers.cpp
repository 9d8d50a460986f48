// test-eval-helpers.cpp: the func: helpers of VisualWebArena's and WebArena's
// helper_functions.py (envs/eval/vwa-helpers/site-helpers-vwa.h). Page helpers run on small pages in
// the real sites' markup (Magento order and product pages, Postmill comments, GitLab
// members); the REST helpers run against the local shopping site's API and against a fake
// Magento (a local HTTP server answering the real endpoints' JSON shapes; Magento itself
// cannot run here).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "browser/text/http-fetch.h"
#include "eval/page-probe.h"
#include "sites/http-server.h"
#include "eval/vwa-helpers/site-eval-helpers.h"
#include "sites/site-server.h"
#include "eval-test-util.h"

namespace kvarena {
namespace {

std::optional<std::string> call(const char* helper, page_probe& page, std::vector<std::string> args,
                                std::map<std::string, std::string> sites = {}) {
  const eval_site_helper_fn* fn = sites::site_eval_helpers().find(helper);
  if (!fn) throw std::runtime_error(std::string("no helper ") + helper);
  return (*fn)(eval_helper_call{page, args, sites});
}

// A Magento order view: one <tbody> per product, cells "col <key>".
const char* k_order_page = R"(<html><body><table id="my-orders-table"><thead><tr><th>Product</th></tr></thead>
<tbody><tr><td class="col name"><strong>Protein Bars, Strawberry</strong><dl class="item-options"><dt>Size</dt><dd>12 Count (Pack of 1)</dd><dt>Color</dt><dd>Red</dd></dl></td>
<td class="col sku">B00MXUFL0E </td><td class="col price">$24.50</td><td class="col qty">Ordered2</td><td class="col subtotal">$49.00</td></tr></tbody>
<tbody><tr><td class="col name"><strong>Protein Bars, Cookie Dough</strong></td><td class="col sku">B07ZD2PB9F</td>
<td class="col price">$42.30</td><td class="col qty">Ordered12</td><td class="col subtotal">$84.60</td></tr></tbody></table></body></html>)";

TEST(VwaHelpers, OrderPage) {
  fake_page page;
  page.html = k_order_page;
  EXPECT_EQ(call("shopping_get_order_product_name_list", page, {"__page__"}),
            "Protein Bars, Strawberry\nSize\n12 Count (Pack of 1)\nColor\nRed |OR| Protein Bars, Cookie Dough");
  EXPECT_EQ(call("shopping_get_order_product_quantity", page, {"__page__", "B00MXUFL0E"}), "2");
  EXPECT_EQ(call("shopping_get_order_product_quantity", page, {"__page__", "X |OR| B07ZD2PB9F"}), "12");
  EXPECT_EQ(call("shopping_get_order_product_quantity", page, {"__page__", "NOPE"}), "0");
  EXPECT_EQ(call("shopping_get_order_product_option", page, {"__page__", "B00MXUFL0E", "Size"}), "12 Count (Pack of 1)");
  EXPECT_EQ(call("shopping_get_order_product_option", page, {"__page__", "B00MXUFL0E", "Flavor"}), "");
  EXPECT_EQ(call("shopping_get_order_product_option", page, {"__page__", "B07ZD2PB9F", "Size"}), "");
  const nlohmann::json all = nlohmann::json::parse(*call("shopping_get_all_product_order", page, {"__page__"}));
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[0]["qty"], "Ordered2");
  EXPECT_EQ(all[0]["options"]["Color"], "Red");
  EXPECT_FALSE(all[1].contains("options"));
  page.html = "<p>not an order</p>";  // VWA's JavaScript throws; its catch gives "" / 0
  EXPECT_EQ(call("shopping_get_order_product_name_list", page, {"__page__"}), "");
  EXPECT_EQ(call("shopping_get_order_product_quantity", page, {"__page__", "B00MXUFL0E"}), "0");
}

TEST(VwaHelpers, ProductPage) {
  fake_page page;
  page.html = R"(<div id="maincontent"><div class="columns"><div><div class="product-info-main">
<div class="product-info-price"><div class="price-box price-final_price"><span><span>$1,024.99</span></span></div></div>
<div class="rating-result" title="87%"></div><a id="tab-label-reviews-title">Reviews 14</a></div></div></div></div>
<table id="productDetails_detailBullets_sections1"><tbody><tr><th>Brand Name</th><td>Acme</td></tr>
<tr><th>Item Weight</th><td>2 pounds</td></tr><tr><th>Manufacturer</th><td>Acme Corp</td></tr></tbody></table>)";
  EXPECT_EQ(call("shopping_get_product_price", page, {"__page__"}), "1");  // parseFloat("1,024.99") = 1
  EXPECT_EQ(call("shopping_get_num_reviews", page, {"__page__"}), "14");
  EXPECT_EQ(call("shopping_get_rating_as_percentage", page, {"__page__"}), "87");
  EXPECT_EQ(call("shopping_get_product_attributes", page, {"__page__", "manufacturer |OR| brand name"}),
            "Acme, Acme Corp");
  EXPECT_EQ(call("shopping_get_product_attributes", page, {"__page__", "color"}), "");
  page.html = R"(<div id="maincontent"><div class="columns"><div><div class="product-info-main"><div class="product-info-price">
<div class="price-box price-final_price"><span><span>$24.50</span></span></div></div></div></div></div></div>)";
  EXPECT_EQ(call("shopping_get_product_price", page, {"__page__"}), "24.5");
  EXPECT_EQ(call("shopping_get_num_reviews", page, {"__page__"}), "0");
  EXPECT_EQ(call("shopping_get_rating_as_percentage", page, {"__page__"}), "0");
}

// Postmill's post page: #main holds the post, then comments with data-level.
std::string comment(int level, const std::string& user, const std::string& text, const std::string& time,
                    const std::string& children = "") {
  return "<article class=\"comment\" data-level=\"" + std::to_string(level) +
         "\"><div class=\"comment__main\"><header><h1><a class=\"fg-inherit\">" + user + "</a><span><time datetime=\"" +
         time + "\">ago</time></span></h1></header><div class=\"comment__content\"><p>" + text +
         "</p></div><span class=\"vote__net-score\">3</span></div>" + children + "</article>";
}

TEST(VwaHelpers, RedditCommentTree) {
  fake_page page;
  const std::string me = "MarvelsGrantMan136";
  page.html = "<main id=\"main\">" +
              comment(1, "alice", "first", "2023-01-01T10:00:00+00:00",
                      comment(2, me, "my old reply", "2023-01-02T10:00:00+00:00") +
                          comment(2, "bob", "bob's reply", "2023-01-03T10:00:00+00:00",
                                  comment(3, me, "my newest reply", "2023-01-03T12:00:00+02:00"))) +
              comment(1, "carol", "second", "2023-01-01T09:00:00Z", comment(2, me, "middle", "2023-01-02T12:00:00Z")) +
              "</main>";
  // 12:00+02:00 is 10:00Z on the 3rd: the newest of mine.
  EXPECT_EQ(call("reddit_get_latest_comment_content_by_username", page, {"__page__", me}), "my newest reply");
  EXPECT_EQ(call("reddit_get_parent_comment_username_of_latest_comment_by_username", page, {"__page__", me}), "bob");
  EXPECT_EQ(call("reddit_get_latest_comment_content_by_username", page, {"__page__", "nobody"}), "");
  const nlohmann::json obj =
      nlohmann::json::parse(*call("reddit_get_parent_comment_obj_of_latest_comment_by_username", page, {"__page__", me}));
  EXPECT_EQ(obj["username"], "bob");
  EXPECT_EQ(obj["content"], "bob's reply");
  const nlohmann::json tree = nlohmann::json::parse(*call("reddit_get_post_comment_tree", page, {"__page__"}));
  EXPECT_EQ(tree["children"].size(), 2u);  // the two top-level comments
  EXPECT_EQ(tree["children"][0]["children"][1]["username"], "bob");
  page.html = "<main id=\"main\"><p>no comments</p></main>";  // .fg-inherit missing: VWA gives ""
  EXPECT_EQ(call("reddit_get_latest_comment_content_by_username", page, {"__page__", me}), "");
  EXPECT_EQ(call("reddit_get_parent_comment_username_of_latest_comment_by_username", page, {"__page__", me}), "");
}

TEST(VwaHelpers, GitlabMemberRoleAndLowercaseQuery) {
  fake_page page;
  page.html = R"(<table><tr><td data-label="Account"><span class="gl-avatar-labeled-sublabel">@byteblaze</span></td>
<td class="col-max-role"><span>Owner</span></td></tr><tr><td data-label="Account"><span class="gl-avatar-labeled-sublabel">@yjlou</span></td>
<td class="col-max-role"><span>Developer</span></td></tr></table>)";
  EXPECT_EQ(call("gitlab_get_project_memeber_role", page, {"__page__", "yjlou"}), "Developer");
  EXPECT_EQ(call("gitlab_get_project_memeber_role", page, {"__page__", "nobody"}), "");
  ASSERT_NE(sites::site_eval_helpers().find("get_query_text_lowercase"), nullptr);
}

// A fake Magento: the admin token and the product/review/order endpoints as Magento answers.
sites::http_response fake_magento(const sites::http_request& req) {
  if (req.path == "/rest/default/V1/integration/admin/token")
    return req.body.find("\"admin1234\"") != std::string::npos ? sites::http_response::json("\"tok\"")
                                                                : sites::http_response::json("{}", 401);
  if (req.header("authorization") != "Bearer tok") return sites::http_response::json("{\"message\":\"no\"}", 401);
  if (req.path == "/rest/V1/orders")
    return sites::http_response::json(R"({"items":[{"increment_id":"000000191","created_at":"2023-05-01"}]})");
  if (req.path == "/rest/V1/products/B09S3PK7R3/reviews")
    return sites::http_response::json(R"([{"nickname":"old","title":"t0","detail":"d0","ratings":[{"rating_name":"Rating","percent":40}]},
      {"nickname":"Emma","title":"Great","detail":"Loved it","ratings":[{"rating_name":"Rating","percent":100}]}])");
  if (req.path == "/rest/V1/products/EMPTY/reviews") return sites::http_response::json("[]");
  if (req.path == "/rest/V1/products/B09S3PK7R3")
    return sites::http_response::json(R"({"sku":"B09S3PK7R3","custom_attributes":[{"attribute_code":"url_key","value":"magic-mug"}]})");
  return sites::http_response::json("{\"message\":\"not found\"}", 404);
}

TEST(VwaHelpers, RestHelpersAgainstAFakeMagento) {
  sites::http_server magento({}, fake_magento);
  magento.start();
  const std::map<std::string, std::string> urls = {{"shopping", magento.base_url() + "/"}};
  fake_page page;
  const std::string shop = magento.base_url();
  EXPECT_EQ(call("shopping_get_latest_order_url", page, {}, urls), shop + "/sales/order/view/order_id/191/");
  EXPECT_EQ(call("shopping_get_auth_token", page, {}, urls), "tok");
  EXPECT_EQ(call("shopping_get_sku_latest_review_author", page, {"B09S3PK7R3"}, urls), "Emma");
  EXPECT_EQ(call("shopping_get_sku_latest_review_rating", page, {"B09S3PK7R3"}, urls), "100");
  EXPECT_EQ(call("shopping_get_sku_latest_review_text", page, {"B09S3PK7R3"}, urls), "Loved it");
  EXPECT_EQ(call("shopping_get_sku_latest_review_title", page, {"B09S3PK7R3"}, urls), "Great");
  EXPECT_EQ(call("shopping_get_sku_latest_review_author", page, {"EMPTY"}, urls), "");
  EXPECT_EQ(call("shopping_get_sku_product_page_url", page, {"B09S3PK7R3"}, urls), shop + "/magic-mug.html");
  EXPECT_THROW(call("shopping_get_sku_latest_review_author", page, {"MISSING"}, urls), std::runtime_error);
  try {
    call("shopping_get_latest_order_url", page, {}, {});
    ADD_FAILURE() << "no site URL: expected a throw";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("--site shopping=URL"), std::string::npos) << e.what();
  }
}

TEST(VwaHelpers, RestHelpersAgainstTheLocalShoppingSite) {
  sites::sites_server server(sites::sites_options{});
  server.start();
  const std::map<std::string, std::string> urls = server.site_urls("main");
  const std::string shop = urls.at("shopping");
  fake_page page;
  auto newest = server.store().query("main", "shopping", "SELECT id FROM orders ORDER BY created_at DESC, id DESC LIMIT 1");
  ASSERT_EQ(newest.size(), 1u);
  EXPECT_EQ(call("shopping_get_latest_order_url", page, {}, urls),
            shop + "/sales/order/view/order_id/" + newest[0]["id"].dump() + "/");
  auto review = server.store().query("main", "shopping",
                                     "SELECT p.sku, r.nickname, r.rating, r.title, r.body FROM reviews r JOIN products p "
                                     "ON p.id = r.product_id ORDER BY r.created_at DESC, r.id DESC LIMIT 1");
  ASSERT_EQ(review.size(), 1u);
  const std::string sku = review[0]["sku"].get<std::string>();
  EXPECT_EQ(call("shopping_get_sku_latest_review_author", page, {sku}, urls), review[0]["nickname"].get<std::string>());
  EXPECT_EQ(call("shopping_get_sku_latest_review_rating", page, {sku}, urls), std::to_string(review[0]["rating"].get<int>() * 20));
  EXPECT_EQ(call("shopping_get_sku_latest_review_title", page, {sku}, urls), review[0]["title"].get<std::string>());
  EXPECT_EQ(call("shopping_get_sku_latest_review_text", page, {sku}, urls), review[0]["body"].get<std::string>());
  auto url = call("shopping_get_sku_product_page_url", page, {sku}, urls);
  ASSERT_TRUE(url);
  EXPECT_EQ(url->rfind(shop + "/catalog/product/view/id/", 0), 0u) << *url;
}

// The order helpers on the local shopping site's order page (Magento's table markup).
TEST(VwaHelpers, OrderHelpersOnTheLocalShoppingSite) {
  sites::sites_server server(sites::sites_options{});
  server.start();
  auto order = server.store().query("main", "shopping",
                                    "SELECT o.number, i.sku, i.qty, i.name, u.username FROM orders o JOIN order_items i ON "
                                    "i.order_id = o.id JOIN users u ON u.id = o.user_id ORDER BY o.id, i.id LIMIT 1");
  ASSERT_EQ(order.size(), 1u);
  const sites::site_store::cookie c = server.store().login("main", "shopping", order[0]["username"].get<std::string>());
  http_client http;
  http.add_cookie("Set-Cookie: " + c.name + "=" + c.value + "; Path=" + c.path);
  http_request get;
  get.url = server.site_urls("main").at("shopping") + "/orders/" + order[0]["number"].get<std::string>();
  http_response res = http.fetch(get);
  ASSERT_EQ(res.status, 200) << res.body.substr(0, 300);
  fake_page page;
  page.html = res.body;
  const std::string sku = order[0]["sku"].get<std::string>();
  EXPECT_EQ(call("shopping_get_order_product_quantity", page, {"__page__", sku}), std::to_string(order[0]["qty"].get<int>()));
  EXPECT_NE(call("shopping_get_order_product_name_list", page, {"__page__"})->find(order[0]["name"].get<std::string>()),
            std::string::npos);
  EXPECT_EQ(call("shopping_get_order_product_option", page, {"__page__", sku, "Size"}), "");
}

}  // namespace
}  // namespace kvarena
