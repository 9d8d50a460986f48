// helpers-shopping-rest.cpp: the shopping helpers that ask the site's REST API (Magento's
// /rest/... endpoints; the local shopping site answers the same ones, see
// site-shopping-rest.cpp). An admin token first, then one GET (site-helpers-vwa.h).
// An API that cannot be reached or answers an error throws: the evaluator then scores
// the target 0 with the message, as VWA's assert fails.
#include <cctype>
#include <stdexcept>
#include <string>

#include <nlohmann/json.hpp>

#include "common/http-call.h"
#include "site-helpers-vwa.h"

namespace kvarena::sites {
namespace {

using json = nlohmann::json;

std::string percent_encode(const std::string& s) {
  static const char* hex = "0123456789ABCDEF";
  std::string out;
  for (unsigned char ch : s) {
    if (std::isalnum(ch) || ch == '-' || ch == '_' || ch == '.' || ch == '~') out += static_cast<char>(ch);
    else out += std::string("%") + hex[ch >> 4] + hex[ch & 15];
  }
  return out;
}

json parse_answer(const http_call_response& res, const std::string& what) {
  if (!res.ok) throw std::runtime_error(what + ": " + res.error);
  if (res.status != 200)
    throw std::runtime_error(what + ": HTTP " + std::to_string(res.status) + " " + res.body.substr(0, 200));
  json j = json::parse(res.body, nullptr, false);
  if (j.is_discarded()) throw std::runtime_error(what + ": the answer is not JSON: " + res.body.substr(0, 200));
  return j;
}

// POST /rest/default/V1/integration/admin/token {"username", "password"} -> "token".
std::string admin_token(const std::string& shop) {
  http_call_request req;
  req.method = "POST";
  req.url = shop + "/rest/default/V1/integration/admin/token";
  req.headers = {{"Content-Type", "application/json"}};
  req.body = json{{"username", k_shopping_admin_user}, {"password", k_shopping_admin_password}}.dump();
  json j = parse_answer(http_call(req), "shopping admin token from " + req.url);
  if (!j.is_string()) throw std::runtime_error("shopping admin token from " + req.url + ": not a JSON string");
  return j.get<std::string>();
}

json admin_get(const std::string& shop, const std::string& rel) {
  http_call_request req;
  req.url = shop + rel;
  req.headers = {{"Authorization", "Bearer " + admin_token(shop)}, {"Content-Type", "application/json"}};
  return parse_answer(http_call(req), "GET " + req.url);
}

std::string text_of(const json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_number_integer()) return std::to_string(v.get<long long>());
  return v.dump();
}

std::optional<std::string> latest_order_url(const eval_helper_call& c) {
  const std::string shop = c.site_url("shopping");
  json j = admin_get(shop,
                     "/rest/V1/orders?searchCriteria%5BsortOrders%5D%5B0%5D%5Bfield%5D=created_at"
                     "&searchCriteria%5BsortOrders%5D%5B0%5D%5Bdirection%5D=DESC&searchCriteria%5BpageSize%5D=1");
  if (!j.contains("items") || !j["items"].is_array() || j["items"].empty())
    throw std::runtime_error("GET " + shop + "/rest/V1/orders: no orders");
  const json& id = j["items"][0].at("increment_id");
  long long n = std::stoll(text_of(id));  // "000000191" -> 191
  return shop + "/sales/order/view/order_id/" + std::to_string(n) + "/";
}

// The reviews of a SKU, oldest first (VWA takes the last as the latest).
json sku_reviews(const eval_helper_call& c) {
  const std::string sku = c.args.empty() ? "" : c.args[0];
  if (sku.empty()) throw std::invalid_argument("needs a SKU argument");
  json j = admin_get(c.site_url("shopping"), "/rest/V1/products/" + percent_encode(sku) + "/reviews");
  if (!j.is_array()) throw std::runtime_error("the reviews of SKU " + sku + " are not a JSON list");
  return j;
}

std::optional<std::string> latest_review_field(const eval_helper_call& c, const char* field) {
  json j = sku_reviews(c);
  if (j.empty()) return "";
  return text_of(j.back().at(field));
}

std::optional<std::string> latest_review_rating(const eval_helper_call& c) {
  json j = sku_reviews(c);
  if (j.empty()) return "";
  if (j[0].at("ratings").at(0).at("rating_name") != "Rating")
    throw std::runtime_error("the first rating of a review is not named 'Rating'");
  return text_of(j.back().at("ratings").at(0).at("percent"));
}

std::optional<std::string> product_page_url(const eval_helper_call& c) {
  const std::string shop = c.site_url("shopping");
  const std::string sku = c.args.empty() ? "" : c.args[0];
  json j = admin_get(shop, "/rest/V1/products/" + percent_encode(sku));
  if (j.empty()) return "";
  for (const json& a : j.value("custom_attributes", json::array()))
    if (a.value("attribute_code", "") == "url_key") return shop + "/" + text_of(a.at("value")) + ".html";
  return "";
}

}  // namespace

void register_shopping_rest_helpers(eval_helper_registry& r) {
  r.add("shopping_get_auth_token", [](const eval_helper_call& c) { return std::optional<std::string>(admin_token(c.site_url("shopping"))); });
  r.add("shopping_get_latest_order_url", latest_order_url);
  r.add("shopping_get_sku_latest_review_author",
        [](const eval_helper_call& c) { return latest_review_field(c, "nickname"); });
  r.add("shopping_get_sku_latest_review_rating", latest_review_rating);
  r.add("shopping_get_sku_latest_review_text",
        [](const eval_helper_call& c) { return latest_review_field(c, "detail"); });
  r.add("shopping_get_sku_latest_review_title",
        [](const eval_helper_call& c) { return latest_review_field(c, "title"); });
  r.add("shopping_get_sku_product_page_url", product_page_url);
}

}  // namespace kvarena::sites
