// site-shopping-rest.cpp: the part of Magento's REST API that VisualWebArena's and
// WebArena's evaluation helpers call (helpers-shopping-rest.cpp), answered from the local
// shopping site's tables in Magento's JSON shapes, so those helpers run on the local site
// as on the real one:
//   POST /rest/default/V1/integration/admin/token  {"username":"admin","password":"admin1234"}
//                                                  -> "token" (a JSON string)
//   GET  /rest/V1/orders?searchCriteria[pageSize]=N  {"items":[{"increment_id", "created_at",
//                                                  "customer_id", "grand_total", "status"}]},
//                                                  every user's orders, newest first
//   GET  /rest/V1/products/{sku}/reviews           [{"id","title","detail","nickname",
//                                                  "created_at","ratings":[{"rating_name":
//                                                  "Rating","percent","value"}]}], oldest first
//   GET  /rest/V1/products/{sku}                   {"id","sku","name","price",
//                                                  "custom_attributes":[{"attribute_code":"url_key"}]}
// The GETs need "Authorization: Bearer <token>" (401 otherwise, as Magento). Two pages
// make the URLs the helpers build open here: /sales/order/view/order_id/{n} (Magento's
// order view) redirects to /orders/{number}, /catalog/product/view/id/{id}.html (the
// url_key page) to /product/{id}.
#include <algorithm>
#include <cstdlib>
#include <string>

#include <nlohmann/json.hpp>

#include "site-shopping.h"
#include "eval/vwa-helpers/site-helpers-vwa.h"

namespace kvarena::sites {
namespace {

using json = nlohmann::json;
constexpr const char* k_admin_token = "kvarena-shopping-admin-token";

bool authorised(const page_context& ctx) { return ctx.req.header("authorization") == std::string("Bearer ") + k_admin_token; }

http_response unauthorised() {
  return http_response::json(json{{"message", "The consumer isn't authorized to access %resources."}}.dump(), 401);
}

std::optional<int64_t> product_id_by_sku(sqlite_db& db, const std::string& sku) {
  auto rows = db.query("SELECT id FROM products WHERE sku = ?1", {sku});
  if (rows.empty()) return std::nullopt;
  return std::get<int64_t>(rows[0][0]);
}

http_response no_product(const std::string& sku) {
  return http_response::json(
      json{{"message", "The product that was requested doesn't exist. Verify the product and try again."},
           {"sku", sku}}.dump(),
      404);
}

}  // namespace

void site_shopping::add_rest_routes(site_router& r) const {
  r.add("POST", "/rest/default/V1/integration/admin/token", [](page_context& ctx) {
    json body = json::parse(ctx.req.body, nullptr, false);
    if (!body.is_object() || body.value("username", "") != k_shopping_admin_user ||
        body.value("password", "") != k_shopping_admin_password)
      return http_response::json(json{{"message", "The account sign-in was incorrect or your account is disabled "
                                                   "temporarily. Please wait and try again later."}}.dump(),
                                 401);
    return http_response::json(json(k_admin_token).dump());
  });

  r.add("GET", "/rest/V1/orders", [](page_context& ctx) {
    if (!authorised(ctx)) return unauthorised();
    const std::string size = ctx.req.query.get("searchCriteria[pageSize]", "20");
    const long long page_size = std::max(1LL, std::atoll(size.c_str()));
    auto rows = ctx.db.query("SELECT number, created_at, user_id, total_cents, status FROM orders "
                             "ORDER BY created_at DESC, id DESC LIMIT ?1",
                             {static_cast<int64_t>(page_size)});
    json items = json::array();
    for (const auto& row : rows)
      items.push_back({{"increment_id", std::get<std::string>(row[0])},
                       {"created_at", std::get<std::string>(row[1])},
                       {"customer_id", std::get<int64_t>(row[2])},
                       {"grand_total", static_cast<double>(std::get<int64_t>(row[3])) / 100.0},
                       {"status", std::get<std::string>(row[4])}});
    return http_response::json(json{{"items", items}, {"total_count", items.size()}}.dump());
  });

  r.add("GET", "/rest/V1/products/{sku}/reviews", [](page_context& ctx) {
    if (!authorised(ctx)) return unauthorised();
    const std::string sku = ctx.params["sku"];
    auto id = product_id_by_sku(ctx.db, sku);
    if (!id) return no_product(sku);
    auto reviews = shopping::product_reviews(ctx.db, *id);  // newest first
    json out = json::array();
    for (auto it = reviews.rbegin(); it != reviews.rend(); ++it)
      out.push_back({{"id", it->id},
                     {"title", it->title},
                     {"detail", it->body},
                     {"nickname", it->nickname},
                     {"created_at", it->created_at},
                     {"ratings", json::array({{{"rating_name", "Rating"}, {"percent", it->rating * 20}, {"value", it->rating}}})}});
    return http_response::json(out.dump());
  });

  r.add("GET", "/rest/V1/products/{sku}", [](page_context& ctx) {
    if (!authorised(ctx)) return unauthorised();
    const std::string sku = ctx.params["sku"];
    auto id = product_id_by_sku(ctx.db, sku);
    if (!id) return no_product(sku);
    auto p = shopping::get_product(ctx.db, *id);
    if (!p) return no_product(sku);
    json attrs = json::array({{{"attribute_code", "url_key"}, {"value", "catalog/product/view/id/" + std::to_string(*id)}},
                              {{"attribute_code", "description"}, {"value", p->description}}});
    return http_response::json(json{{"id", *id},
                                    {"sku", p->sku},
                                    {"name", p->name},
                                    {"price", static_cast<double>(p->price_cents) / 100.0},
                                    {"custom_attributes", attrs}}.dump());
  });

  r.add("GET", "/sales/order/view/order_id/{id}", [](page_context& ctx) {
    auto id = ctx.param_id("id");
    if (!id) return http_response::redirect(ctx.url("/orders"));
    return http_response::redirect(ctx.url("/orders/" + shopping::order_number(*id)));
  });

  r.add("GET", "/catalog/product/view/id/{page}", [](page_context& ctx) {
    std::string page = ctx.params["page"];
    if (page.size() > 5 && page.compare(page.size() - 5, 5, ".html") == 0) page.resize(page.size() - 5);
    return http_response::redirect(ctx.url("/product/" + page));
  });
}

}  // namespace kvarena::sites
