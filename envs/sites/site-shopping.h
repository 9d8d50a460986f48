// site-shopping.h: the shopping site, in the image of VWA's Magento "One Stop Market": a
// catalogue in a two-level category tree, keyword search, product pages with customer
// reviews, a cart, a wish list, checkout, and the account pages (orders, reviews).
//
// URLs (relative to the site base, e.g. /main/shopping); tasks' reference URLs use them:
//   /                            home: featured products and the category tree
//   /category/{id}?sort=&page=   a category (a top category includes its subcategories);
//                                sort: name (default) | price_asc | price_desc | rating
//   /search?q=&sort=&page=       keyword search; sort: relevance (default) | name | price_asc
//                                | price_desc | rating
//   /product/{id}                a product: details, reviews, add to cart / wish list forms
//   /product/{id}/review         write a review (login); POST stores it
//   /cart                        the cart; POST /cart/add, /cart/update, /cart/remove
//   /wishlist                    the wish list; POST /wishlist/add, /wishlist/remove,
//                                /wishlist/move (to the cart)
//   /checkout                    shipping address and method; POST places the order
//   /checkout/success/{number}   "Your order number is 000000191"
//   /account                     account dashboard
//   /orders, /orders/{number}    order history and one order (number: 9 digits, 000000170)
//   /reviews                     the user's own reviews
//   /login, /logout              (site-auth.h); user "emma.lopez" exists for every seed
//   /rest/...                    the part of Magento's REST API the evaluation helpers
//                                call (site-shopping-rest.cpp)
// Every page that changes state needs a login; search and sort URLs have one canonical
// spelling (other spellings redirect there), so url_match tasks compare exactly.
//
// Tables (state for evaluators): users (site-auth.h), categories(id, parent_id, slug, name,
// position), products(id, sku, category_id, name, description, price_cents, stock,
// featured), reviews(id, product_id, user_id, nickname, rating, title, body, created_at),
// cart_items(id, user_id, product_id, qty, added_at), wishlist_items(id, user_id,
// product_id, added_at), orders(id, number, user_id, status, created_at, ship_*, shipping_
// method, subtotal_cents, shipping_cents, total_cents), order_items(id, order_id,
// product_id, sku, name, price_cents, qty). A product's rating and review count are
// computed from its reviews. Files: -catalogue (fixed word lists), -seed (schema, data),
// -query (SQL), -views (shared HTML), -browse (public pages), -cart (cart, wish list,
// checkout), -account (orders, reviews).
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "site-text.h"
#include "site.h"

namespace kvarena::sites {

class site_shopping : public site {
 public:
  std::string name() const override { return "shopping"; }
  std::string title() const override { return "One Stop Market"; }
  void seed(sqlite_db& db, uint64_t seed) const override;
  void add_routes(site_router& r) const override;
  page_chrome chrome(const page_context& ctx) const override;
  std::string_view stylesheet() const override;  // site-shopping-style.cpp

 private:
  // Each file's route table, by concern, registered in this order (the router takes the
  // first matching pattern and lists a path's methods for 405 in this order).
  void add_browse_routes(site_router& r) const;  // -browse.cpp:
  void add_catalogue_routes(site_router& r) const;
  void add_product_routes(site_router& r) const;
  void add_cart_routes(site_router& r) const;  // -cart.cpp:
  void add_cart_page_routes(site_router& r) const;
  void add_cart_update_routes(site_router& r) const;
  void add_wishlist_page_routes(site_router& r) const;
  void add_wishlist_change_routes(site_router& r) const;
  void add_checkout_routes(site_router& r) const;
  void add_order_placed_routes(site_router& r) const;
  void add_account_routes(site_router& r) const;  // -account.cpp:
  void add_order_routes(site_router& r) const;
  void add_review_routes(site_router& r) const;
  void add_rest_routes(site_router& r) const;  // -rest.cpp: Magento's REST API (helpers)
};

namespace shopping {

inline constexpr int kProductsPerPage = 12;
inline constexpr int kSeedUsers = 40;
inline constexpr int kProductsPerLeaf = 11;
inline constexpr int kMaxQtyPerLine = 99;
inline constexpr const char* kFixedUsername = "emma.lopez";  // user 1 for every seed

struct category {
  int64_t id = 0;
  int64_t parent_id = 0;  // 0 for a top category
  std::string slug, name;
  int64_t products = 0;  // subcategories included
};
std::vector<category> load_categories(sqlite_db& db);  // top categories first, each followed by its children
const category* find_category(const std::vector<category>& cats, int64_t id);

struct product_row {
  int64_t id = 0;
  std::string sku, name, description;
  int64_t price_cents = 0, stock = 0;
  int64_t category_id = 0;
  std::string category_name;
  int64_t parent_id = 0;
  std::string parent_name;
  int64_t review_count = 0, rating_sum = 0;  // rating = rating_sum / review_count
};
std::optional<product_row> get_product(sqlite_db& db, int64_t id);
// "4.3" (one decimal, rounded half up); "" without reviews.
std::string rating_text(int64_t rating_sum, int64_t review_count);

// Listing and search parameters. Words of `q` must each appear in the name, description or
// SKU (case-insensitive); relevance = per word 2 if in the name + 1 if in the description.
struct product_query {
  std::string q;
  int64_t category_id = 0;  // 0: all; a top category includes its subcategories
  std::string sort;         // name | price_asc | price_desc | rating | relevance (search)
  int page = 1;
};
struct product_page {
  std::vector<product_row> rows;
  int64_t total = 0;
  int page = 1, pages = 1;
};
// Ties: name by name then id; prices and relevance by id; rating by average, then review
// count, then id, products without reviews last.
product_page find_products(sqlite_db& db, const product_query& f, int per_page = kProductsPerPage);
// sort and page from the query string, checked against `sorts` (the first is the default).
product_query product_query_from(const param_list& q, const std::vector<std::string>& sorts,
                                 std::vector<std::string>& problems);
// Canonical query: "" or "?q=usb+cable&sort=price_asc&page=2" (q; sort when not the
// default; page when > 1).
std::string product_query_string(const product_query& f, std::string_view default_sort);
const std::vector<std::string>& category_sorts();  // name first
const std::vector<std::string>& search_sorts();    // relevance first
std::string sort_label(std::string_view sort);

struct review_row {
  int64_t id = 0, product_id = 0;
  std::string product_name;
  std::string nickname;
  int64_t rating = 0;
  std::string title, body, created_at;
};
std::vector<review_row> product_reviews(sqlite_db& db, int64_t product_id);  // newest first
std::vector<review_row> user_reviews(sqlite_db& db, int64_t user_id);        // newest first

struct cart_line {
  int64_t product_id = 0;
  std::string sku, name;
  int64_t price_cents = 0, qty = 0, stock = 0;
};
std::vector<cart_line> load_cart(sqlite_db& db, int64_t user_id);  // in the order added
int64_t cart_quantity(sqlite_db& db, int64_t user_id);             // items, counting quantities
int64_t cart_subtotal_cents(const std::vector<cart_line>& lines);

struct shipping_method {
  const char* value;  // "flatrate"
  const char* label;  // "Flat Rate"
  int64_t cents;
};
const std::vector<shipping_method>& shipping_methods();
const shipping_method* find_shipping_method(std::string_view value);
const std::vector<std::string>& us_state_codes();  // "AL", "AK", ... for the address form

struct order_row {
  int64_t id = 0;
  std::string number, status, created_at;
  std::string ship_name, ship_street, ship_city, ship_state, ship_zip, ship_phone, shipping_method;
  int64_t subtotal_cents = 0, shipping_cents = 0, total_cents = 0;
  int64_t user_id = 0;
};
struct order_item {
  int64_t product_id = 0;
  std::string sku, name;
  int64_t price_cents = 0, qty = 0;
};
std::vector<order_row> user_orders(sqlite_db& db, int64_t user_id);  // newest first
std::optional<order_row> get_order(sqlite_db& db, std::string_view number);
std::vector<order_item> order_items(sqlite_db& db, int64_t order_id);
std::string order_number(int64_t id);  // 170 -> "000000170"

// The "write a review" form (site-shopping-account.cpp); errors: field name -> message.
struct review_input {
  std::string rating, nickname, title, body;
};
html review_form(const page_context& ctx, int64_t product_id, const review_input& in,
                 const std::map<std::string, std::string>& errors);

// Shared HTML (site-shopping-views.cpp).
html product_grid(const page_context& ctx, const std::vector<product_row>& rows);
html rating_summary(const product_row& p);  // "Rating: 4.3 out of 5 (12 reviews)"
html result_summary(const product_page& p);
html pagination(const page_context& ctx, const product_page& p, std::string_view path, const product_query& f,
                std::string_view default_sort);
html sort_form(const page_context& ctx, std::string_view path, const product_query& f,
               const std::vector<std::string>& sorts);
html data_table(const std::vector<std::string>& headers, const std::vector<std::vector<html>>& rows);
// A POST form of hidden fields and one button; aria_label names the button for a screen
// reader when its text alone is ambiguous ("Add to Cart" in a list of products).
html action_button(std::string_view action, std::string_view label, std::string_view aria_label,
                   const std::vector<std::pair<std::string, std::string>>& hidden);
std::string product_href(const page_context& ctx, int64_t id);
using sites::safe_return;  // site-text.h
using sites::trim;

}  // namespace shopping
}  // namespace kvarena::sites
