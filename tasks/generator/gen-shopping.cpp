// gen-shopping.cpp: shopping task templates (VWA's One Stop Market kinds): product
// questions (price, rating, review count, SKU: string_match), sorted category and search
// pages (url_match), cheapest / best rated in a category, cart, wish list, checkout and
// reviews (program_html, with a func: helper for the newest order), order history
// questions, and infeasible requests (N/A).
#include <stdexcept>

#include "generator/gen-templates.h"
#include "sites/site-shopping.h"

namespace kvarena::tasks::gen {
namespace {

namespace sh = sites::shopping;

const char* const k_site = "shopping";
const char* const k_home = "__SHOPPING__";

draft base(const std::string& name, int template_id, const std::string& intent_template) {
  return site_draft(k_site, k_home, name, template_id, intent_template);
}

std::string url(const std::string& rel) { return std::string(k_home) + rel; }

}  // namespace

const char* const k_shopping_product_sql =
    "SELECT p.id, p.sku, p.name, p.price_cents, p.stock, p.category_id, c.name AS category_name, c.parent_id, "
    "t.name AS parent_name, (SELECT COUNT(*) FROM reviews r WHERE r.product_id = p.id) AS reviews, "
    "(SELECT COALESCE(SUM(rating), 0) FROM reviews r WHERE r.product_id = p.id) AS rating_sum "
    "FROM products p JOIN categories c ON c.id = p.category_id JOIN categories t ON t.id = c.parent_id ";

// The site search's result count for `q`, as find_products computes it.
int64_t shopping_search_count(const site_data& data, const std::string& q) {
  return site_search_count(data, k_site, "products", {"name", "description", "sku"}, q);
}

std::vector<json> shopping_nameable_products(const site_data& data, const std::string& extra_where) {
  json rows = data.rows(k_site, std::string(k_shopping_product_sql) + "WHERE (SELECT COUNT(*) FROM products o WHERE o.name = "
                                    "p.name) = 1 AND " + extra_where + " ORDER BY p.id");
  std::vector<json> out;
  for (const json& r : rows)
    if (shopping_search_count(data, str(r, "name")) <= sh::kProductsPerPage) out.push_back(r);
  if (out.empty()) throw std::runtime_error("generator: no shopping product fits: " + extra_where);
  return out;
}

void shopping_find_product(plan_builder& p, const std::string& name) {
  search_and_open(p, name);
}

std::string shopping_rating(const json& p) { return sh::rating_text(num(p, "rating_sum"), num(p, "reviews")); }

namespace {

// Subcategory pages: the top category in the navigation, then the subcategory link.
void open_category(plan_builder& p, const json& cat) {
  p.click("link", str(cat, "parent_name")).click("link", str(cat, "name"));
}


// -------------------------------------------------------------------------------------------

void product_questions(const site_data& data, std::vector<draft>& out) {
  std::vector<json> items = shopping_nameable_products(data);
  std::vector<json> reviewed = shopping_nameable_products(data, "(SELECT COUNT(*) FROM reviews r WHERE r.product_id = p.id) >= 2");
  for (size_t k = 0; k < 3; ++k) {
    const json& r = spread(items, k * 2, 7);
    draft d = base("product_price", 201, "What is the price of \"{product}\"?");
    d.instantiation = {{"product", str(r, "name")}};
    expect_must_include(d, {price_alternatives(num(r, "price_cents"))});
    shopping_find_product(d.plan, str(r, "name"));
    d.plan.expect(money(num(r, "price_cents"))).stop(money(num(r, "price_cents")));
    out.push_back(d);
  }
  for (size_t k = 0; k < 2; ++k) {
    const json& r = spread(reviewed, k * 3 + 1, 6);
    draft d = base("product_rating", 202, "What is the average customer rating of \"{product}\" (out of 5)?");
    d.instantiation = {{"product", str(r, "name")}};
    expect_must_include(d, {shopping_rating(r)});
    shopping_find_product(d.plan, str(r, "name"));
    d.plan.expect("Rating: " + shopping_rating(r) + " out of 5").stop(shopping_rating(r) + " out of 5");
    out.push_back(d);
  }
  {
    const json& r = spread(reviewed, 5, 6);
    draft d = base("review_count", 203, "How many customer reviews does \"{product}\" have?");
    d.instantiation = {{"product", str(r, "name")}};
    std::string n = std::to_string(num(r, "reviews"));
    expect_required_values(d, {"== " + n});
    shopping_find_product(d.plan, str(r, "name"));
    d.plan.expect("(" + n + " reviews)").stop(n);
    out.push_back(d);
  }
  {
    const json& r = spread(items, 5, 7);
    draft d = base("product_sku", 204, "What is the SKU of \"{product}\"?");
    d.instantiation = {{"product", str(r, "name")}};
    expect_exact(d, str(r, "sku"));
    shopping_find_product(d.plan, str(r, "name"));
    d.plan.expect(str(r, "sku")).stop(str(r, "sku"));
    out.push_back(d);
  }
}

void category_pages(const site_data& data, std::vector<draft>& out) {
  json cats = data.rows(k_site,
                        "SELECT c.id, c.name, t.name AS parent_name FROM categories c JOIN categories t ON t.id = "
                        "c.parent_id ORDER BY t.position, c.position");
  // Sorted category pages (url_match).
  const struct {
    size_t index;
    const char* sort;
    const char* label;
    const char* words;
  } sorted[] = {{2, "price_asc", "Price: low to high", "sorted by price from low to high"},
                {13, "rating", "Customer rating", "sorted by customer rating"}};
  for (const auto& s : sorted) {
    const json& c = cats.at(s.index);
    draft d = base("category_sorted", 205, "Show me the {category} products {order}.");
    d.instantiation = {{"category", str(c, "name")}, {"order", s.words}};
    sh::product_query q;
    q.sort = s.sort;
    expect_url(d, url("/category/" + std::to_string(num(c, "id")) + sh::product_query_string(q, "name")));
    open_category(d.plan, c);
    d.plan.type("combobox", "Sort by", s.label).click("button", "Sort").stop();
    d.overall = "medium";
    out.push_back(d);
  }
  // Search result pages (url_match).
  const struct {
    const char* q;
    const char* sort;
    const char* label;
    const char* words;
  } searches[] = {{"water bottle", "price_desc", "Price: high to low", "from the most to the least expensive"},
                  {"notebook", "price_asc", "Price: low to high", "from the cheapest"}};
  for (const auto& s : searches) {
    draft d = base("search_sorted", 206, "Search the store for \"{q}\" and sort the results {order}.");
    d.instantiation = {{"q", s.q}, {"order", s.words}};
    sh::product_query q;
    q.q = s.q;
    q.sort = s.sort;
    expect_url(d, url("/search" + sh::product_query_string(q, "relevance")));
    d.plan.type("searchbox", "Search", s.q, true).type("combobox", "Sort by", s.label).click("button", "Sort").stop();
    d.overall = "medium";
    out.push_back(d);
  }
  // Cheapest product of a subcategory (unique minimum), and the best rated one (unique
  // top average).
  std::vector<json> cheap, best;
  for (const json& c : cats) {
    std::string id = std::to_string(num(c, "id"));
    json lo = data.rows(k_site, std::string(k_shopping_product_sql) + "WHERE p.category_id = " + id +
                                    " ORDER BY p.price_cents, p.id LIMIT 2");
    if (lo.size() == 2 && num(lo[0], "price_cents") < num(lo[1], "price_cents")) cheap.push_back({c, lo[0]});
    json top = data.rows(k_site, std::string(k_shopping_product_sql) + "WHERE p.category_id = " + id +
                                     " AND (SELECT COUNT(*) FROM reviews r WHERE r.product_id = p.id) > 0 ORDER BY "
                                     "rating_sum * 1.0 / reviews DESC, reviews DESC, p.id LIMIT 2");
    if (top.size() == 2 && num(top[0], "rating_sum") * num(top[1], "reviews") >
                               num(top[1], "rating_sum") * num(top[0], "reviews"))
      best.push_back({c, top[0]});
  }
  if (cheap.size() < 4 || best.size() < 4) throw std::runtime_error("generator: too few shopping categories fit");
  for (size_t k = 0; k < 2; ++k) {
    const json& c = spread(cheap, k * 2 + 1, 4)[0];
    const json& p = spread(cheap, k * 2 + 1, 4)[1];
    draft d = base("cheapest_in_category", 207, "What is the cheapest product in the {category} category? Give its name.");
    d.instantiation = {{"category", str(c, "name")}};
    expect_must_include(d, {str(p, "name")});
    open_category(d.plan, c);
    d.plan.type("combobox", "Sort by", "Price: low to high")
        .click("button", "Sort")
        .click("link", str(p, "name"))
        .expect(money(num(p, "price_cents")))
        .stop(str(p, "name"));
    d.reasoning = "medium";
    d.overall = "medium";
    out.push_back(d);
  }
  {
    const json& c = spread(best, 2, 4)[0];
    const json& p = spread(best, 2, 4)[1];
    draft d = base("best_rated_in_category", 208, "Which product in the {category} category has the best average customer rating?");
    d.instantiation = {{"category", str(c, "name")}};
    expect_must_include(d, {str(p, "name")});
    open_category(d.plan, c);
    d.plan.type("combobox", "Sort by", "Customer rating")
        .click("button", "Sort")
        .click("link", str(p, "name"))
        .expect("Rating: " + shopping_rating(p) + " out of 5")
        .stop(str(p, "name"));
    d.reasoning = "medium";
    d.overall = "medium";
    out.push_back(d);
  }
}

// Products the user has neither in the cart nor in the wish list, in stock.
std::vector<json> buyable(const site_data& data) {
  return shopping_nameable_products(data,
                           "p.stock >= 10 AND p.id NOT IN (SELECT product_id FROM cart_items WHERE user_id = 1) AND "
                           "p.id NOT IN (SELECT product_id FROM wishlist_items WHERE user_id = 1)");
}

// From any page with the header: open the cart, check out with shipping `method`, and
// place the order.
void checkout_cart(plan_builder& p, const std::string& method) {
  p.click_containing("link", "My Cart")
      .click("link", "Proceed to Checkout")
      .type("combobox", "Shipping method (required)", method)
      .click("button", "Place Order")
      .expect("Your order number is")
      .stop();
}

void cart_and_wishlist(const site_data& data, std::vector<draft>& out) {
  std::vector<json> items = buyable(data);
  const int64_t quantities[] = {1, 3, 2};
  for (size_t k = 0; k < 3; ++k) {
    const json& r = spread(items, k * 3 + 2, 11);
    int64_t qty = quantities[k];
    draft d = base("add_to_cart", 209, qty == 1 ? "Add \"{product}\" to my cart." : "Add {qty} of \"{product}\" to my cart.");
    d.instantiation = {{"product", str(r, "name")}};
    if (qty > 1) d.instantiation["qty"] = qty;
    auto listed = html_target(url("/cart"), qs("main table"));
    auto count = html_target("last", qs("#qty-" + std::to_string(num(r, "id")), "value"));
    expect_html(d, {with_must_include(listed, {str(r, "name")}), with_exact(count, std::to_string(qty))});
    if (k == 2) {  // from the category page's list of products
      json cat = data.row(k_site, "SELECT c.id, c.name, t.name AS parent_name FROM categories c JOIN categories t ON "
                                  "t.id = c.parent_id WHERE c.id = " + std::to_string(num(r, "category_id")));
      d.instantiation["category"] = str(cat, "name");
      d.intent_template = "Add {qty} of \"{product}\" (in the {category} category) to my cart.";
      open_category(d.plan, cat);
      d.plan.click("button", "Add " + str(r, "name") + " to cart")
          .click_containing("link", "My Cart")
          .clear("spinbutton", "Quantity of " + str(r, "name"))
          .type("spinbutton", "Quantity of " + str(r, "name"), std::to_string(qty))
          .click("button", "Update quantity of " + str(r, "name"))
          .expect("You updated the quantity")
          .stop();
    } else {
      shopping_find_product(d.plan, str(r, "name"));
      if (qty > 1) d.plan.clear("spinbutton", "Qty").type("spinbutton", "Qty", std::to_string(qty));
      d.plan.click("button", "Add to Cart").expect("You added").stop();
    }
    d.overall = qty == 1 ? "easy" : "medium";
    out.push_back(d);
  }
  for (size_t k = 0; k < 2; ++k) {
    const json& r = spread(items, k * 3 + 4, 11);
    draft d = base("add_to_wishlist", 210, "Add \"{product}\" to my wish list.");
    d.instantiation = {{"product", str(r, "name")}};
    auto listed = html_target(url("/wishlist"), k == 0 ? "" : qs("main table", "textContent"));
    expect_html(d, {with_must_include(listed, {str(r, "name")})});
    shopping_find_product(d.plan, str(r, "name"));
    d.plan.click("button", "Add to Wish List").expect("has been added to your wish list").stop();
    out.push_back(d);
  }
  json wish = data.rows(k_site, "SELECT p.name, p.stock FROM wishlist_items w JOIN products p ON p.id = w.product_id "
                                "WHERE w.user_id = 1 ORDER BY w.id");
  if (wish.size() < 2) throw std::runtime_error("generator: the shopping user's wish list has fewer than 2 items");
  {
    draft d = base("remove_from_wishlist", 211, "Remove \"{product}\" from my wish list.");
    d.instantiation = {{"product", str(wish[1], "name")}};
    auto listed = html_target(url("/wishlist"), qs("main", "innerText"));
    auto kept = html_target("last", "func:get_query_text(__page__, 'main table')");
    expect_html(d, {with_must_exclude(listed, {str(wish[1], "name")}), with_must_include(kept, {str(wish[0], "name")})});
    d.plan.click("link", "My Wish List")
        .click("button", "Remove " + str(wish[1], "name") + " from wish list")
        .expect("has been removed from your wish list")
        .stop();
    out.push_back(d);
  }
  {
    draft d = base("wishlist_contents", 212, "Which products are on my wish list?");
    std::vector<std::string> names;
    std::string answer;
    for (const json& w : wish) {
      names.push_back(str(w, "name"));
      answer += (answer.empty() ? "" : "; ") + str(w, "name");
    }
    expect_must_include(d, names);
    d.plan.click("link", "My Wish List").expect(names.front()).stop(answer);
    out.push_back(d);
  }
}

void orders(const site_data& data, std::vector<draft>& out) {
  std::vector<json> items = buyable(data);
  // Place an order.
  {
    const json& r = spread(items, 6, 11);
    const sh::shipping_method& m = sh::shipping_methods().at(1);
    draft d = base("place_order", 213, "Buy one \"{product}\" with {method} shipping to my usual address.");
    d.instantiation = {{"product", str(r, "name")}, {"method", m.label}};
    auto order = html_target("func:shopping_get_latest_order_url('__SHOPPING__')", qs("main table"));
    auto totals = html_target("last", qs("dl.totals"));
    auto method = html_target("last", "");
    expect_html(d, {with_must_include(order, {str(r, "name")}),
                    with_must_include(totals, {money(num(r, "price_cents") + m.cents)}),
                    with_must_include(method, {m.label})});
    shopping_find_product(d.plan, str(r, "name"));
    d.plan.click("button", "Add to Cart");
    checkout_cart(d.plan, m.label);
    d.reasoning = "medium";
    d.overall = "hard";
    out.push_back(d);
  }
  {
    json wish = data.rows(k_site, "SELECT p.name, p.stock FROM wishlist_items w JOIN products p ON p.id = "
                                  "w.product_id WHERE w.user_id = 1 ORDER BY w.id");
    for (const json& w : wish)
      if (num(w, "stock") == 0) throw std::runtime_error("generator: a wish list product is out of stock: " + str(w, "name"));
    const sh::shipping_method& m = sh::shipping_methods().at(2);
    draft d = base("order_wishlist", 214, "Buy everything on my wish list, one of each, with {method}.");
    d.instantiation = {{"method", m.label}};
    std::vector<std::string> names;
    for (const json& w : wish) names.push_back(str(w, "name"));
    auto order = html_target("func:shopping_get_latest_order_url('__SHOPPING__')", qs("main table"));
    auto method = html_target("last", qs("main", "innerText"));
    expect_html(d, {with_must_include(order, names), with_must_include(method, {m.label})});
    d.plan.click("link", "My Wish List");
    for (const std::string& n : names) d.plan.click("button", "Move " + n + " to cart");
    checkout_cart(d.plan, m.label);
    d.reasoning = "medium";
    d.overall = "hard";
    out.push_back(d);
  }
  // Questions about past orders.
  json past = data.rows(k_site, "SELECT id, number, status, created_at, total_cents FROM orders WHERE user_id = 1 "
                                "ORDER BY created_at DESC, id DESC");
  if (past.size() < 4) throw std::runtime_error("generator: the shopping user has fewer than 4 orders");
  {
    const json& o = past.at(2);
    draft d = base("order_total", 215, "What was the grand total of my order number {number}?");
    d.instantiation = {{"number", str(o, "number")}};
    expect_must_include(d, {price_alternatives(num(o, "total_cents"))});
    d.plan.click("link", "My Orders")
        .click("link", "View order " + str(o, "number"))
        .expect(money(num(o, "total_cents")))
        .stop(money(num(o, "total_cents")));
    out.push_back(d);
  }
  {
    const json& o = past.at(0);
    draft d = base("latest_order_status", 216, "What is the status of my most recent order?");
    expect_exact(d, str(o, "status"));
    d.plan.click("link", "My Orders").expect(str(o, "number")).stop(str(o, "status"));
    out.push_back(d);
  }
  {
    draft d = base("order_count", 217, "How many orders have I placed so far?");
    std::string n = std::to_string(past.size());
    expect_required_values(d, {"== " + n});
    d.plan.click("link", "My Orders").stop(n);
    d.reasoning = "medium";
    out.push_back(d);
  }
  {
    const json& o = past.at(3);
    json its = data.rows(k_site, "SELECT name FROM order_items WHERE order_id = " + std::to_string(num(o, "id")) +
                                     " ORDER BY id");
    std::vector<std::string> names;
    std::string answer;
    for (const json& i : its) {
      names.push_back(str(i, "name"));
      answer += (answer.empty() ? "" : "; ") + str(i, "name");
    }
    draft d = base("order_items", 218, "Which products did I buy in order {number}?");
    d.instantiation = {{"number", str(o, "number")}};
    expect_must_include(d, names);
    d.plan.click("link", "My Orders").click("link", "View order " + str(o, "number")).expect(names.front()).stop(answer);
    out.push_back(d);
  }
}

void reviews(const site_data& data, std::vector<draft>& out) {
  std::vector<json> items = shopping_nameable_products(data, "p.id NOT IN (SELECT product_id FROM reviews WHERE user_id = 1)");
  const struct {
    int stars;
    const char* title;
    const char* body;
  } k_reviews[] = {{4, "Solid value", "Works as described and arrived quickly. Would buy again."},
                   {2, "Not for me", "Smaller than I expected and the finish scratches easily."}};
  for (size_t k = 0; k < 2; ++k) {
    const json& r = spread(items, k * 4 + 3, 9);
    const auto& rv = k_reviews[k];
    draft d = base("write_review", 219,
                   "Write a {stars}-star review of \"{product}\" with the summary \"{summary}\" and the text \"{text}\".");
    d.instantiation = {{"stars", rv.stars}, {"product", str(r, "name")}, {"summary", rv.title}, {"text", rv.body}};
    auto mine = html_target(url("/reviews"), qs("main table"));
    expect_html(d, {with_must_include(mine, {str(r, "name"), rv.title, rv.body,
                                             std::to_string(rv.stars) + " out of 5"})});
    shopping_find_product(d.plan, str(r, "name"));
    d.plan.type("combobox", "Rating (required)", std::to_string(rv.stars) + " stars")
        .type("textbox", "Summary (required)", rv.title)
        .type("textbox", "Review (required)", rv.body)
        .click("button", "Submit Review")
        .stop();
    d.overall = "medium";
    out.push_back(d);
  }
}

void infeasible(const site_data& data, std::vector<draft>& out) {
  {
    std::vector<json> gone = shopping_nameable_products(data, "p.stock = 0");
    const json& r = spread(gone, 1, 3);
    draft d = base("out_of_stock", 220, "Add \"{product}\" to my cart.");
    d.instantiation = {{"product", str(r, "name")}};
    expect_na(d, "\"" + str(r, "name") + "\" is out of stock, so it cannot be added to the cart.");
    shopping_find_product(d.plan, str(r, "name"));
    d.plan.expect("Out of stock").stop("N/A");
    d.reasoning = "medium";
    out.push_back(d);
  }
  {
    if (shopping_search_count(data, "rocket skates") != 0) throw std::runtime_error("generator: the store sells rocket skates");
    draft d = base("missing_product", 221, "What is the price of the {product}?");
    d.instantiation = {{"product", "Acme rocket skates"}};
    expect_na(d, "The store does not sell rocket skates.");
    d.plan.type("searchbox", "Search", "rocket skates", true).stop("N/A");
    out.push_back(d);
  }
  {
    int64_t max_id = num(data.row(k_site, "SELECT MAX(id) AS n FROM orders"), "n");
    std::string number = sh::order_number(max_id + 500);
    draft d = base("missing_order", 222, "When did I place order number {number}?");
    d.instantiation = {{"number", number}};
    expect_na(d, "The user has no order with number " + number + ".");
    d.plan.click("link", "My Orders").stop("N/A");
    d.reasoning = "medium";
    out.push_back(d);
  }
}

}  // namespace

void shopping_templates(const site_data& data, std::vector<draft>& out) {
  product_questions(data, out);
  category_pages(data, out);
  cart_and_wishlist(data, out);
  orders(data, out);
  reviews(data, out);
  infeasible(data, out);
}

}  // namespace kvarena::tasks::gen
