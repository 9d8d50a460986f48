// test-sites-shopping.cpp: the shopping site (envs/sites/site-shopping*) end to end over
// loopback through libcurl: deterministic seed, category/search listings with every sort
// and every page checked against SQL written here independently of the site's query code,
// cart -> checkout -> order history, wish list, reviews, tenant isolation and reset.
#include <algorithm>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <thread>

#include "sites/seed-data.h"
#include "sites/site-shopping.h"
#include "test-sites-client.h"

using namespace kvarena::sites;
using namespace kvarena::test;
using json = nlohmann::json;

namespace {

class ShoppingTest : public site_fixture {
 protected:
  static json sql(const std::string& tenant, const std::string& q, std::vector<sql_value> params = {}) {
    return store().query(tenant, "shopping", q, params);
  }
  static int64_t count(const std::string& tenant, const std::string& q, std::vector<sql_value> params = {}) {
    return sql(tenant, q, std::move(params))[0].begin()->get<int64_t>();
  }
  static std::vector<int64_t> ids(const json& rows) {
    std::vector<int64_t> out;
    for (const auto& r : rows) out.push_back(r["id"].get<int64_t>());
    return out;
  }
  static std::vector<int64_t> grid_ids(const std::string& page) {
    return ids_in(page, "<ol class=\"products\">", "</ol>", "/product/([0-9]+)\"");
  }
  // Every product id of a listing, following "Next page" links.
  static std::vector<int64_t> all_pages(site_client& c, const std::string& url, int64_t expected_total) {
    std::vector<int64_t> got;
    std::string next = url;
    for (int page = 1; page <= 60 && !next.empty(); ++page) {
      auto r = c.get(next);
      EXPECT_EQ(r.status, 200) << next << " -> " << r.header("Location");
      if (page == 1 && expected_total > 0) {
        EXPECT_TRUE(r.has(" of " + std::to_string(expected_total) + "<")) << url;
      }
      auto ids = grid_ids(r.body);
      EXPECT_LE(ids.size(), size_t(shopping::kProductsPerPage));
      got.insert(got.end(), ids.begin(), ids.end());
      next = next_page_url(r.body);
    }
    return got;
  }
};

// The independent SQL for each sort; `rel` is the relevance expression (search only).
std::string order_by(const std::string& sort, const std::string& rel = "0") {
  const std::string n = "(SELECT COUNT(*) FROM reviews r WHERE r.product_id = p.id)";
  if (sort == "price_asc") return "p.price_cents, p.id";
  if (sort == "price_desc") return "p.price_cents DESC, p.id";
  if (sort == "rating")
    return n + " = 0, (SELECT AVG(rating) FROM reviews r WHERE r.product_id = p.id) DESC, " + n + " DESC, p.id";
  if (sort == "relevance") return "(" + rel + ") DESC, p.id";
  return "lower(p.name), p.id";
}

}  // namespace

TEST_F(ShoppingTest, SeedIsDeterministicAndComplete) {
  auto only_shopping = [] { return std::vector<std::shared_ptr<const site>>{std::make_shared<site_shopping>()}; };
  site_store a(only_shopping(), 7), b(only_shopping(), 7), c(only_shopping(), 8);
  EXPECT_EQ(a.snapshot_hash("shopping"), b.snapshot_hash("shopping"));
  EXPECT_EQ(a.snapshot_hash("shopping"), store().snapshot_hash("shopping"));
  EXPECT_NE(a.snapshot_hash("shopping"), c.snapshot_hash("shopping"));
  EXPECT_EQ(a.content_hash("main", "shopping"), a.snapshot_hash("shopping"));
  auto n = [&](const char* q) { return a.query("main", "shopping", q)[0].begin()->get<int64_t>(); };
  std::printf("shopping seed 7: %zu bytes; %lld products, %lld categories, %lld reviews, %lld orders, %lld users\n",
              a.snapshot_bytes("shopping"), (long long)n("SELECT COUNT(*) FROM products"),
              (long long)n("SELECT COUNT(*) FROM categories"), (long long)n("SELECT COUNT(*) FROM reviews"),
              (long long)n("SELECT COUNT(*) FROM orders"), (long long)n("SELECT COUNT(*) FROM users"));
  EXPECT_GE(n("SELECT COUNT(*) FROM products"), 300);
  EXPECT_EQ(n("SELECT COUNT(DISTINCT name) FROM products"), n("SELECT COUNT(*) FROM products"));
  // Two levels: products sit in subcategories, whose parents are top categories.
  EXPECT_EQ(n("SELECT COUNT(*) FROM products p JOIN categories c ON c.id = p.category_id "
              "JOIN categories t ON t.id = c.parent_id WHERE t.parent_id IS NULL"),
            n("SELECT COUNT(*) FROM products"));
  EXPECT_GE(n("SELECT COUNT(*) FROM categories WHERE parent_id IS NULL"), 8);
  EXPECT_GE(n("SELECT COUNT(*) FROM reviews"), 1000);
  EXPECT_EQ(n("SELECT COUNT(*) FROM reviews WHERE rating NOT BETWEEN 1 AND 5"), 0);
  EXPECT_GT(n("SELECT COUNT(*) FROM products WHERE stock = 0"), 0);
  EXPECT_EQ(n("SELECT COUNT(*) FROM products WHERE featured = 1"), 9);
  EXPECT_EQ(a.query("main", "shopping", "SELECT username FROM users WHERE id = 1")[0]["username"], "emma.lopez");
  EXPECT_GE(n("SELECT COUNT(*) FROM orders WHERE user_id = 1"), 5);
  EXPECT_EQ(n("SELECT COUNT(*) FROM orders WHERE number <> printf('%09d', id)"), 0);
  EXPECT_EQ(n("SELECT COUNT(*) FROM orders o WHERE total_cents <> subtotal_cents + shipping_cents OR subtotal_cents <> "
              "(SELECT SUM(price_cents * qty) FROM order_items i WHERE i.order_id = o.id)"),
            0);
  EXPECT_EQ(n("SELECT COUNT(*) FROM wishlist_items WHERE user_id = 1"), 3);
  EXPECT_EQ(n("SELECT COUNT(*) FROM cart_items WHERE user_id = 1"), 0);
  EXPECT_GE(n("SELECT COUNT(*) FROM reviews WHERE user_id = 1"), 1);
}

TEST_F(ShoppingTest, CategoryListingsSortAndPaginateLikeSql) {
  std::string t;
  std::string base = fresh("shopping", &t);
  site_client c;
  auto tops = ids(sql(t, "SELECT id FROM categories WHERE parent_id IS NULL ORDER BY position"));
  auto leaf =
      sql(t, "SELECT id FROM categories WHERE parent_id IS NOT NULL ORDER BY id LIMIT 1")[0]["id"].get<int64_t>();
  for (int64_t cat : {tops[0], tops[3], leaf}) {
    for (std::string sort : {"name", "price_asc", "price_desc", "rating"}) {
      auto expected = ids(sql(t,
                              "SELECT p.id FROM products p WHERE p.category_id IN (SELECT id FROM categories WHERE "
                              "id = ?1 OR parent_id = ?1) ORDER BY " +
                                  order_by(sort),
                              {cat}));
      ASSERT_FALSE(expected.empty());
      std::string url = base + "/category/" + std::to_string(cat) + (sort == "name" ? "" : "?sort=" + sort);
      EXPECT_EQ(all_pages(c, url, int64_t(expected.size())), expected) << url;
    }
  }
  // Page 2 of a top category, by URL.
  auto second = c.get(base + "/category/" + std::to_string(tops[0]) + "?sort=price_asc&page=2");
  ASSERT_EQ(second.status, 200);
  auto page2 = ids(sql(t,
                       "SELECT p.id FROM products p WHERE p.category_id IN (SELECT id FROM categories WHERE "
                       "parent_id = ?1) ORDER BY p.price_cents, p.id LIMIT 12 OFFSET 12",
                       {tops[0]}));
  EXPECT_EQ(grid_ids(second.body), page2);
  EXPECT_TRUE(second.has("Items 13-24 of "));
  EXPECT_TRUE(second.has("<span aria-current=\"page\">Page 2</span>"));
  EXPECT_EQ(c.get(base + "/category/9999").status, 404);
  EXPECT_EQ(c.get(base + "/category/abc").status, 404);
}

TEST_F(ShoppingTest, SearchMatchesSqlForEverySort) {
  std::string t;
  std::string base = fresh("shopping", &t);
  site_client c;
  auto sku = sql(t, "SELECT sku FROM products WHERE id = 17")[0]["sku"].get<std::string>();
  for (std::string q : std::vector<std::string>{"headphones", "wireless black", "stainless steel", sku, "queen"}) {
    std::vector<std::string> words;
    std::istringstream in(q);
    for (std::string w; in >> w;) words.push_back(w);
    std::string where = "1", rel = "0";
    std::vector<sql_value> params;
    for (const auto& w : words) {
      params.push_back("%" + w + "%");
      std::string n = "?";
      n += std::to_string(params.size());
      where += " AND (p.name LIKE " + n + " OR p.description LIKE " + n + " OR p.sku LIKE " + n + ")";
      rel += " + 2 * (p.name LIKE " + n + ") + (p.description LIKE " + n + ")";
    }
    for (std::string sort : {"relevance", "name", "price_asc", "price_desc", "rating"}) {
      auto expected =
          ids(sql(t, "SELECT p.id FROM products p WHERE " + where + " ORDER BY " + order_by(sort, rel), params));
      ASSERT_FALSE(expected.empty()) << q;
      std::string url = base + "/search?q=" + url_encode(q, true) + (sort == "relevance" ? "" : "&sort=" + sort);
      EXPECT_EQ(all_pages(c, url, int64_t(expected.size())), expected) << url;
    }
  }
  auto none = c.get(base + "/search?q=zzzunobtainium");
  EXPECT_EQ(none.status, 200);
  EXPECT_TRUE(none.has("0 items found."));
  auto empty = c.get(base + "/search");
  EXPECT_EQ(empty.status, 200);
  EXPECT_TRUE(empty.has("Enter a word to search for"));
  // One canonical spelling per listing; bad values are explained, not fatal.
  std::string path = site_base_path(t, "shopping");
  for (const auto& [messy, canonical] : std::vector<std::pair<std::string, std::string>>{
           {"/search?q=usb+cable&sort=relevance&page=1", "/search?q=usb+cable"},
           {"/search?sort=price_asc&q=%20usb%20%20cable%20", "/search?q=usb+cable&sort=price_asc"},
           {"/search?q=", "/search"},
           {"/category/1?sort=name&page=1", "/category/1"},
           {"/category/2?q=ignored&page=2&sort=rating", "/category/2?sort=rating&page=2"}}) {
    auto r = c.get(base + messy);
    EXPECT_EQ(r.status, 302) << messy;
    EXPECT_EQ(r.header("Location"), path + canonical) << messy;
  }
  auto bad = c.get(base + "/search?q=usb&sort=cheapest");
  EXPECT_EQ(bad.status, 200);
  EXPECT_TRUE(bad.has("Unknown sort order &#39;cheapest&#39;"));
  EXPECT_EQ(c.get(base + "/category/1?sort=relevance").status, 200);  // not a category sort: explained
}

TEST_F(ShoppingTest, ProductPageShowsEveryField) {
  std::string t;
  std::string base = fresh("shopping", &t);
  auto p = sql(t,
               "SELECT p.*, c.name AS cat, (SELECT COUNT(*) FROM reviews r WHERE r.product_id = p.id) AS n, "
               "(SELECT SUM(rating) FROM reviews r WHERE r.product_id = p.id) AS s FROM products p "
               "JOIN categories c ON c.id = p.category_id WHERE p.stock > 0 AND "
               "(SELECT COUNT(*) FROM reviews r WHERE r.product_id = p.id) >= 3 ORDER BY p.id LIMIT 1")[0];
  site_client c;
  int64_t id = p["id"];
  auto r = c.get(base + "/product/" + std::to_string(id));
  ASSERT_EQ(r.status, 200);
  EXPECT_TRUE(r.has("<h1>" + escape_html(p["name"].get<std::string>()) + "</h1>"));
  EXPECT_TRUE(r.has(p["sku"].get<std::string>()));
  EXPECT_TRUE(r.has(format_money(p["price_cents"].get<int64_t>())));
  EXPECT_TRUE(r.has(escape_html(p["cat"].get<std::string>())));
  EXPECT_TRUE(r.has("In stock (" + std::to_string(p["stock"].get<int64_t>()) + " available)"));
  int64_t n = p["n"], s = p["s"];
  EXPECT_TRUE(r.has(" out of 5 (" + std::to_string(n) + " reviews)"));
  EXPECT_TRUE(r.has("Customer Reviews (" + std::to_string(n) + ")"));
  char avg[16];
  std::snprintf(avg, sizeof avg, "%.1f", double(s) / double(n) + 1e-9);
  EXPECT_TRUE(r.has(std::string("Rating: ") + avg + " out of 5")) << avg;
  size_t articles = 0;
  for (size_t pos = r.body.find("<ol class=\"reviews\">");
       (pos = r.body.find("<article>", pos + 1)) != std::string::npos;)
    ++articles;
  EXPECT_EQ(int64_t(articles), n);
  EXPECT_TRUE(r.has("<label for=\"qty\">Qty</label>"));
  EXPECT_TRUE(r.has(">Add to Cart</button>"));
  EXPECT_TRUE(r.has(">Add to Wish List</button>"));
  EXPECT_TRUE(r.has("Log in to write a review"));
  auto out = sql(t, "SELECT id FROM products WHERE stock = 0 LIMIT 1")[0]["id"].get<int64_t>();
  EXPECT_TRUE(c.get(base + "/product/" + std::to_string(out)).has("Out of stock"));
  EXPECT_EQ(c.get(base + "/product/0").status, 404);
  EXPECT_EQ(c.get(base + "/product/100000").status, 404);
}

TEST_F(ShoppingTest, CartCheckoutAndOrderHistory) {
  std::string t;
  std::string base = fresh("shopping", &t);
  std::string path = site_base_path(t, "shopping");
  site_client c;
  auto anon = c.get(base + "/cart");
  EXPECT_EQ(anon.status, 303);
  EXPECT_EQ(anon.header("Location"), path + "/login?next=%2Fcart");
  int64_t carts = count(t, "SELECT COUNT(*) FROM cart_items");
  auto anon_add = c.post(base + "/cart/add", {{"product_id", "3"}, {"qty", "1"}});
  EXPECT_EQ(anon_add.status, 303);
  EXPECT_EQ(anon_add.header("Location"), path + "/login?next=%2Fproduct%2F3");
  EXPECT_EQ(count(t, "SELECT COUNT(*) FROM cart_items"), carts);
  login(c, base, "emma.lopez");

  auto stocked = ids(sql(t, "SELECT id FROM products WHERE stock >= 10 ORDER BY id LIMIT 3"));
  int64_t a = stocked[0], b = stocked[1], d = stocked[2];
  auto added = c.post(base + "/cart/add",
                      {{"product_id", std::to_string(a)}, {"qty", "2"}, {"next", "/product/" + std::to_string(a)}});
  ASSERT_EQ(added.status, 303) << added.body;
  EXPECT_EQ(added.header("Location"), path + "/product/" + std::to_string(a));
  EXPECT_TRUE(c.get(base + "/product/" + std::to_string(a)).has("to your shopping cart."));
  c.post(base + "/cart/add", {{"product_id", std::to_string(a)}, {"qty", "1"}});  // adds up: 3
  c.post(base + "/cart/add", {{"product_id", std::to_string(b)}, {"qty", "1"}});
  c.post(base + "/cart/add", {{"product_id", std::to_string(d)}, {"qty", "4"}});
  EXPECT_EQ(count(t, "SELECT qty FROM cart_items WHERE user_id = 1 AND product_id = ?1", {a}), 3);
  EXPECT_EQ(c.post(base + "/cart/add", {{"product_id", std::to_string(a)}, {"qty", "zero"}}).status, 422);
  auto out_id = sql(t, "SELECT id FROM products WHERE stock = 0 LIMIT 1")[0]["id"].get<int64_t>();
  auto oos = c.post(base + "/cart/add", {{"product_id", std::to_string(out_id)}, {"qty", "1"}});
  EXPECT_EQ(oos.status, 422);
  EXPECT_TRUE(oos.has("is out of stock."));

  auto cart = c.get(base + "/cart");
  ASSERT_EQ(cart.status, 200);
  EXPECT_TRUE(cart.has("My Cart (8)"));
  EXPECT_TRUE(unlabelled_controls(cart.body).empty());
  EXPECT_TRUE(cart.has("<label for=\"qty-" + std::to_string(b) + "\">Quantity of "));
  EXPECT_EQ(c.post(base + "/cart/update", {{"product_id", std::to_string(b)}, {"qty", "2"}}).status, 303);
  EXPECT_EQ(count(t, "SELECT qty FROM cart_items WHERE user_id = 1 AND product_id = ?1", {b}), 2);
  EXPECT_EQ(c.post(base + "/cart/update", {{"product_id", std::to_string(b)}, {"qty", "100000"}}).status, 422);
  EXPECT_EQ(c.post(base + "/cart/remove", {{"product_id", std::to_string(d)}}).status, 303);
  EXPECT_EQ(count(t, "SELECT COUNT(*) FROM cart_items WHERE user_id = 1"), 2);
  EXPECT_EQ(c.post(base + "/cart/remove", {{"product_id", std::to_string(d)}}).status, 422);
  int64_t subtotal = count(t,
                           "SELECT SUM(p.price_cents * ci.qty) FROM cart_items ci JOIN products p ON p.id = "
                           "ci.product_id WHERE ci.user_id = 1");
  EXPECT_TRUE(c.get(base + "/cart").has("Subtotal: " + format_money(subtotal)));

  auto form = c.get(base + "/checkout");
  ASSERT_EQ(form.status, 200);
  EXPECT_TRUE(unlabelled_controls(form.body).empty());
  auto last = sql(t, "SELECT * FROM orders WHERE user_id = 1 ORDER BY created_at DESC, id DESC LIMIT 1")[0];
  EXPECT_TRUE(form.has("value=\"" + escape_html(last["ship_street"].get<std::string>()) + "\"")) << "prefilled";
  auto invalid = c.post(base + "/checkout", {{"name", "Emma Lopez"},
                                             {"street", ""},
                                             {"city", "Pittsburgh"},
                                             {"state", "XX"},
                                             {"zip", "123"},
                                             {"phone", "call me"},
                                             {"method", "drone"}});
  EXPECT_EQ(invalid.status, 422);
  for (const char* msg : {"Enter a street address", "Choose a state from the list.", "Enter a 5-digit ZIP code",
                          "Enter a phone number of 7 to 15 digits", "Choose a shipping method."})
    EXPECT_TRUE(invalid.has(msg)) << msg;
  EXPECT_EQ(count(t, "SELECT COUNT(*) FROM cart_items WHERE user_id = 1"), 2) << "a failed checkout keeps the cart";

  int64_t orders_before = count(t, "SELECT COUNT(*) FROM orders");
  int64_t stock_a = count(t, "SELECT stock FROM products WHERE id = ?1", {a});
  auto placed = c.post(base + "/checkout", {{"name", "Emma Lopez"},
                                            {"street", "4400 Forbes Avenue"},
                                            {"city", "Pittsburgh"},
                                            {"state", "PA"},
                                            {"zip", "15213"},
                                            {"phone", "412-555-0134"},
                                            {"method", "express"}});
  ASSERT_EQ(placed.status, 303) << placed.body.substr(0, 2000);
  std::string number = shopping::order_number(orders_before + 1);
  EXPECT_EQ(placed.header("Location"), path + "/checkout/success/" + number);
  auto success = c.get(server_->base_url() + placed.header("Location"));
  EXPECT_EQ(success.status, 200);
  EXPECT_TRUE(success.has("Your order number is: "));
  EXPECT_TRUE(success.has(">" + number + "</a>"));

  auto order = sql(t, "SELECT * FROM orders WHERE number = ?1", {number})[0];
  EXPECT_EQ(order["user_id"], 1);
  EXPECT_EQ(order["status"], "Pending");
  EXPECT_EQ(order["created_at"], seed_now());
  EXPECT_EQ(order["subtotal_cents"], subtotal);
  EXPECT_EQ(order["shipping_cents"], 1500);
  EXPECT_EQ(order["total_cents"], subtotal + 1500);
  EXPECT_EQ(order["ship_zip"], "15213");
  EXPECT_EQ(count(t, "SELECT COUNT(*) FROM order_items WHERE order_id = ?1", {order["id"].get<int64_t>()}), 2);
  EXPECT_EQ(
      count(t, "SELECT qty FROM order_items WHERE order_id = ?1 AND product_id = ?2", {order["id"].get<int64_t>(), a}),
      3);
  EXPECT_EQ(count(t, "SELECT stock FROM products WHERE id = ?1", {a}), stock_a - 3);
  EXPECT_EQ(count(t, "SELECT COUNT(*) FROM cart_items WHERE user_id = 1"), 0);

  auto history = c.get(base + "/orders");
  ASSERT_EQ(history.status, 200);
  size_t first_row = history.body.find("<tbody><tr><td>");
  ASSERT_NE(first_row, std::string::npos);
  EXPECT_EQ(history.body.substr(first_row + 15, 9), number) << "newest order first";
  int64_t user_orders = count(t, "SELECT COUNT(*) FROM orders WHERE user_id = 1");
  EXPECT_EQ(int64_t(ids_in(history.body, "<tbody>", "</tbody>", "aria-label=\"View order ([0-9]+)\"").size()),
            user_orders);
  auto detail = c.get(base + "/orders/" + number);
  ASSERT_EQ(detail.status, 200);
  EXPECT_TRUE(detail.has("<h1>Order # " + number + "</h1>"));
  EXPECT_TRUE(detail.has("Status: Pending"));
  EXPECT_TRUE(detail.has("Grand Total</dt><dd>" + format_money(subtotal + 1500)));
  EXPECT_TRUE(detail.has("4400 Forbes Avenue"));
  EXPECT_TRUE(detail.has("Express Delivery"));
  // A seeded, completed order of the same user, and someone else's order.
  auto old = sql(t, "SELECT number, status FROM orders WHERE user_id = 1 AND id <= ?1 ORDER BY id LIMIT 1",
                 {orders_before})[0];
  EXPECT_TRUE(
      c.get(base + "/orders/" + old["number"].get<std::string>()).has("Status: " + old["status"].get<std::string>()));
  auto theirs = sql(t, "SELECT number FROM orders WHERE user_id <> 1 LIMIT 1")[0]["number"].get<std::string>();
  EXPECT_EQ(c.get(base + "/orders/" + theirs).status, 404);
  EXPECT_EQ(c.get(base + "/checkout/success/" + theirs).status, 404);
  auto empty = c.get(base + "/checkout");
  EXPECT_EQ(empty.status, 303) << "nothing to check out";
  EXPECT_EQ(empty.header("Location"), path + "/cart");
}

TEST_F(ShoppingTest, WishListAddMoveRemove) {
  std::string t;
  std::string base = fresh("shopping", &t);
  site_client c;
  login(c, base, "emma.lopez");
  auto listed = ids(sql(t, "SELECT product_id AS id FROM wishlist_items w WHERE user_id = 1 ORDER BY w.id"));
  ASSERT_EQ(listed.size(), 3u);
  auto page = c.get(base + "/wishlist");
  ASSERT_EQ(page.status, 200);
  EXPECT_EQ(ids_in(page.body, "<tbody>", "</tbody>", "/product/([0-9]+)\""), listed);
  int64_t fresh_id = sql(t,
                         "SELECT id FROM products WHERE stock > 5 AND id NOT IN (SELECT product_id FROM "
                         "wishlist_items WHERE user_id = 1) ORDER BY id LIMIT 1")[0]["id"];
  std::string pid = std::to_string(fresh_id);
  auto added = c.post(base + "/wishlist/add", {{"product_id", pid}, {"next", "/product/" + pid}});
  EXPECT_EQ(added.status, 303);
  EXPECT_TRUE(c.get(base + "/product/" + pid).has("has been added to your wish list."));
  c.post(base + "/wishlist/add", {{"product_id", pid}});
  EXPECT_EQ(count(t, "SELECT COUNT(*) FROM wishlist_items WHERE user_id = 1 AND product_id = ?1", {fresh_id}), 1);
  EXPECT_EQ(count(t, "SELECT COUNT(*) FROM wishlist_items WHERE user_id = 1"), 4);
  EXPECT_EQ(c.post(base + "/wishlist/move", {{"product_id", pid}}).status, 303);
  EXPECT_EQ(count(t, "SELECT COUNT(*) FROM wishlist_items WHERE user_id = 1 AND product_id = ?1", {fresh_id}), 0);
  EXPECT_EQ(count(t, "SELECT qty FROM cart_items WHERE user_id = 1 AND product_id = ?1", {fresh_id}), 1);
  EXPECT_EQ(c.post(base + "/wishlist/remove", {{"product_id", std::to_string(listed[0])}}).status, 303);
  EXPECT_EQ(count(t, "SELECT COUNT(*) FROM wishlist_items WHERE user_id = 1"), 2);
  EXPECT_EQ(c.post(base + "/wishlist/remove", {{"product_id", std::to_string(listed[0])}}).status, 422);
  EXPECT_EQ(c.post(base + "/wishlist/add", {{"product_id", "999999"}}).status, 422);
  // Another user's wish list is untouched.
  auto other = sql(t, "SELECT COUNT(*) AS n FROM wishlist_items WHERE user_id <> 1")[0]["n"].get<int64_t>();
  EXPECT_EQ(other, count("main", "SELECT COUNT(*) FROM wishlist_items WHERE user_id <> 1"));
}

TEST_F(ShoppingTest, WriteAReview) {
  std::string t;
  std::string base = fresh("shopping", &t);
  site_client c;
  EXPECT_EQ(c.post(base + "/product/5/review", {{"rating", "5"}}).status, 303);  // to the login page
  login(c, base, "emma.lopez");
  auto form = c.get(base + "/product/5/review");
  ASSERT_EQ(form.status, 200);
  EXPECT_TRUE(unlabelled_controls(form.body).empty());
  EXPECT_TRUE(form.has("value=\"Emma\"")) << "nickname prefilled";
  auto invalid =
      c.post(base + "/product/5/review", {{"rating", "9"}, {"nickname", "Emma"}, {"title", ""}, {"body", "ok"}});
  EXPECT_EQ(invalid.status, 422);
  for (const char* msg : {"Choose a rating from 1 to 5 stars.", "Enter a summary", "The review must be 5 to 5000"})
    EXPECT_TRUE(invalid.has(msg)) << msg;
  int64_t before = count(t, "SELECT COUNT(*) FROM reviews WHERE product_id = 5");
  const std::string evil = "<script>alert(1)</script> & \"great\"";
  auto posted =
      c.post(base + "/product/5/review",
             {{"rating", "4"}, {"nickname", "Em"}, {"title", evil}, {"body", "Works well <b>every</b> day."}});
  ASSERT_EQ(posted.status, 303) << posted.body.substr(0, 1000);
  auto row = sql(t, "SELECT * FROM reviews WHERE product_id = 5 ORDER BY id DESC LIMIT 1")[0];
  EXPECT_EQ(row["user_id"], 1);
  EXPECT_EQ(row["rating"], 4);
  EXPECT_EQ(row["title"], evil);
  EXPECT_EQ(row["created_at"], seed_now());
  auto page = c.get(base + "/product/5");
  EXPECT_TRUE(page.has("You submitted your review for"));
  EXPECT_TRUE(page.has("Customer Reviews (" + std::to_string(before + 1) + ")"));
  EXPECT_TRUE(page.has(escape_html(evil)));
  EXPECT_FALSE(page.has("<script>"));
  EXPECT_FALSE(page.has("<b>every"));
  auto mine = c.get(base + "/reviews");
  EXPECT_TRUE(mine.has(escape_html(evil)));
  EXPECT_EQ(int64_t(ids_in(mine.body, "<tbody>", "</tbody>", "/product/([0-9]+)\"").size()),
            count(t, "SELECT COUNT(*) FROM reviews WHERE user_id = 1"));
}

TEST_F(ShoppingTest, TenantsAreIsolatedAndResetRestoresTheSeed) {
  std::string main_hash = store().content_hash("main", "shopping");
  std::string ta, tb;
  std::string base_a = fresh("shopping", &ta), base_b = fresh("shopping", &tb);
  auto shopper = [](std::string base, int64_t product) {
    site_client c;
    login(c, base, "emma.lopez");
    for (int i = 0; i < 5; ++i)
      EXPECT_EQ(c.post(base + "/cart/add", {{"product_id", std::to_string(product)}, {"qty", "1"}}).status, 303);
  };
  auto stocked = ids(sql(ta, "SELECT id FROM products WHERE stock >= 10 ORDER BY id LIMIT 2"));
  std::thread x(shopper, base_a, stocked[0]), y(shopper, base_b, stocked[1]);
  x.join();
  y.join();
  EXPECT_EQ(
      count(ta, "SELECT COALESCE(SUM(qty), 0) FROM cart_items WHERE user_id = 1 AND product_id = ?1", {stocked[0]}), 5);
  EXPECT_EQ(count(ta, "SELECT COUNT(*) FROM cart_items WHERE user_id = 1 AND product_id = ?1", {stocked[1]}), 0);
  EXPECT_EQ(
      count(tb, "SELECT COALESCE(SUM(qty), 0) FROM cart_items WHERE user_id = 1 AND product_id = ?1", {stocked[1]}), 5);
  EXPECT_EQ(count(tb, "SELECT COUNT(*) FROM cart_items WHERE user_id = 1 AND product_id = ?1", {stocked[0]}), 0);
  EXPECT_EQ(store().content_hash("main", "shopping"), main_hash);
  site_client c;
  login(c, base_a, "emma.lopez");
  EXPECT_EQ(c.get(base_a + "/cart").status, 200);
  EXPECT_EQ(c.get(base_b + "/cart").status, 303) << "a login belongs to one tenant";

  // Change a lot, then reset: the content hash is the seed's again and everyone is logged out.
  c.post(base_a + "/wishlist/add", {{"product_id", "9"}});
  c.post(base_a + "/product/9/review",
         {{"rating", "1"}, {"nickname", "E"}, {"title", "Bad"}, {"body", "Broke at once."}});
  c.post(base_a + "/checkout", {{"name", "Emma Lopez"},
                                {"street", "1 Main Street"},
                                {"city", "Erie"},
                                {"state", "PA"},
                                {"zip", "16501"},
                                {"phone", "8145550000"},
                                {"method", "pickup"}});
  ASSERT_NE(store().content_hash(ta, "shopping"), store().snapshot_hash("shopping"));
  store().reset_tenant(ta);
  EXPECT_EQ(store().content_hash(ta, "shopping"), store().snapshot_hash("shopping"));
  EXPECT_EQ(c.get(base_a + "/cart").status, 303);
}

TEST_F(ShoppingTest, PagesRenderWithSemanticMarkup) {
  std::string t;
  std::string base = fresh("shopping", &t);
  site_client c;
  login(c, base, "emma.lopez");
  c.post(base + "/cart/add", {{"product_id", "2"}, {"qty", "1"}});
  std::string order = sql(t, "SELECT number FROM orders WHERE user_id = 1 LIMIT 1")[0]["number"];
  for (std::string p : std::vector<std::string>{
           "/", "/category/1", "/category/2?sort=price_desc", "/search?q=tea", "/product/1", "/cart", "/wishlist",
           "/checkout", "/orders", "/orders/" + order, "/account", "/reviews", "/product/1/review", "/login"}) {
    auto r = c.get(base + p);
    EXPECT_EQ(r.status, 200) << p;
    for (const char* tag : {"<nav aria-label=\"Main\">", "<main>", "<h1>", "<form role=\"search\"", "<footer>"})
      EXPECT_TRUE(r.has(tag)) << p << " lacks " << tag;
    EXPECT_FALSE(r.has("<script")) << p;
    EXPECT_TRUE(unlabelled_controls(r.body).empty()) << p;
  }
  auto home = c.get(base + "/");
  EXPECT_TRUE(home.has("Signed in as Emma Lopez"));
  EXPECT_TRUE(home.has("My Cart (1)"));
  EXPECT_TRUE(home.has(">Featured products</h2>"));
  EXPECT_TRUE(home.has("/category/1\">Electronics</a>"));
}
