// site-shopping-query.cpp: the shopping SQL: categories with counts, products with their
// review aggregates, sorted and paginated listings and search, reviews, the cart, orders,
// and the mapping between listing parameters and URLs.
#include <algorithm>
#include <cctype>
#include <cstdio>

#include "site-shopping.h"

namespace kvarena::sites::shopping {

std::vector<category> load_categories(sqlite_db& db) {
  auto st = db.prepare(R"sql(
    SELECT c.id, COALESCE(c.parent_id, 0), c.slug, c.name,
           (SELECT COUNT(*) FROM products p JOIN categories pc ON pc.id = p.category_id
             WHERE pc.id = c.id OR pc.parent_id = c.id)
      FROM categories c LEFT JOIN categories t ON t.id = c.parent_id
     ORDER BY COALESCE(t.position, c.position), c.parent_id IS NOT NULL, c.position)sql");
  std::vector<category> out;
  while (st.step()) out.push_back({st.int64(0), st.int64(1), st.text(2), st.text(3), st.int64(4)});
  return out;
}

const category* find_category(const std::vector<category>& cats, int64_t id) {
  for (const auto& c : cats)
    if (c.id == id) return &c;
  return nullptr;
}

namespace {

const char* kProductColumns = R"sql(
  SELECT p.id, p.sku, p.name, p.description, p.price_cents, p.stock, p.category_id, c.name,
         COALESCE(c.parent_id, 0), COALESCE(t.name, ''), COALESCE(r.n, 0), COALESCE(r.s, 0)
    FROM products p
    JOIN categories c ON c.id = p.category_id
    LEFT JOIN categories t ON t.id = c.parent_id
    LEFT JOIN (SELECT product_id, COUNT(*) AS n, SUM(rating) AS s FROM reviews GROUP BY product_id) r
      ON r.product_id = p.id)sql";

product_row row_from(sqlite_stmt& st) {
  return {st.int64(0), st.text(1), st.text(2),  st.text(3), st.int64(4),  st.int64(5),
          st.int64(6), st.text(7), st.int64(8), st.text(9), st.int64(10), st.int64(11)};
}

}  // namespace

std::optional<product_row> get_product(sqlite_db& db, int64_t id) {
  auto st = db.prepare(std::string(kProductColumns) + " WHERE p.id = ?1");
  st.bind(1, id);
  if (!st.step()) return std::nullopt;
  return row_from(st);
}

std::string rating_text(int64_t rating_sum, int64_t review_count) {
  if (review_count <= 0) return "";
  int64_t tenths = (rating_sum * 10 * 2 + review_count) / (review_count * 2);  // rounded half up
  return std::to_string(tenths / 10) + "." + std::to_string(tenths % 10);
}

const std::vector<std::string>& category_sorts() {
  static const std::vector<std::string> v = {"name", "price_asc", "price_desc", "rating"};
  return v;
}

const std::vector<std::string>& search_sorts() {
  static const std::vector<std::string> v = {"relevance", "name", "price_asc", "price_desc", "rating"};
  return v;
}

std::string sort_label(std::string_view sort) {
  if (sort == "relevance") return "Relevance";
  if (sort == "name") return "Product name";
  if (sort == "price_asc") return "Price: low to high";
  if (sort == "price_desc") return "Price: high to low";
  if (sort == "rating") return "Customer rating";
  return std::string(sort);
}

product_page find_products(sqlite_db& db, const product_query& f, int per_page) {
  std::string where = " WHERE 1";
  std::string relevance = "0";
  std::vector<sql_value> params;
  for (const auto& w : words_of(f.q)) {
    params.push_back(like_pattern(w));
    std::string n = "?";
    n += std::to_string(params.size());
    where += " AND (p.name LIKE " + n + " ESCAPE '\\' OR p.description LIKE " + n + " ESCAPE '\\' OR p.sku LIKE " + n +
             " ESCAPE '\\')";
    relevance += " + (CASE WHEN p.name LIKE " + n + " ESCAPE '\\' THEN 2 ELSE 0 END)" +
                 " + (CASE WHEN p.description LIKE " + n + " ESCAPE '\\' THEN 1 ELSE 0 END)";
  }
  if (f.category_id != 0) {
    params.push_back(f.category_id);
    std::string n = "?";
    n += std::to_string(params.size());
    where += " AND p.category_id IN (SELECT id FROM categories WHERE id = " + n + " OR parent_id = " + n + ")";
  }

  product_page out;
  out.total = db.query_int("SELECT COUNT(*) FROM products p" + where, params);
  out.pages = std::max<int>(1, int((out.total + per_page - 1) / per_page));
  out.page = std::clamp(f.page, 1, out.pages);

  std::string order = " ORDER BY p.name COLLATE NOCASE ASC, p.id ASC";
  if (f.sort == "price_asc") order = " ORDER BY p.price_cents ASC, p.id ASC";
  if (f.sort == "price_desc") order = " ORDER BY p.price_cents DESC, p.id ASC";
  if (f.sort == "rating") order = " ORDER BY r.n IS NULL, CAST(r.s AS REAL) / r.n DESC, r.n DESC, p.id ASC";
  if (f.sort == "relevance") order = " ORDER BY (" + relevance + ") DESC, p.id ASC";
  auto st = db.prepare(std::string(kProductColumns) + where + order + " LIMIT " + std::to_string(per_page) +
                       " OFFSET " + std::to_string((out.page - 1) * per_page));
  st.bind_all(params);
  while (st.step()) out.rows.push_back(row_from(st));
  return out;
}

product_query product_query_from(const param_list& q, const std::vector<std::string>& sorts,
                                 std::vector<std::string>& problems) {
  product_query f;
  std::string joined;
  for (const auto& w : words_of(q.get("q"))) joined += (joined.empty() ? "" : " ") + w;
  f.q = joined;
  f.sort = sorts.front();
  std::string sort = q.get("sort");
  if (std::find(sorts.begin(), sorts.end(), sort) != sorts.end()) {
    f.sort = sort;
  } else if (!sort.empty()) {
    problems.push_back("Unknown sort order '" + sort + "'; sorted by " + sort_label(sorts.front()) + " instead.");
  }
  std::string page = q.get("page", "1");
  if (!page.empty() && page.size() < 6 &&
      std::all_of(page.begin(), page.end(), [](char c) { return c >= '0' && c <= '9'; }))
    f.page = std::max(1, std::stoi(page));
  return f;
}

std::string product_query_string(const product_query& f, std::string_view default_sort) {
  std::string s;
  auto add = [&](const char* name, const std::string& v) {
    if (v.empty()) return;
    s += s.empty() ? '?' : '&';
    s += std::string(name) + "=" + url_encode(v, /*space_as_plus=*/true);
  };
  add("q", f.q);
  if (f.sort != default_sort) add("sort", f.sort);
  if (f.page > 1) add("page", std::to_string(f.page));
  return s;
}

namespace {
std::vector<review_row> reviews_where(sqlite_db& db, const char* column, int64_t id) {
  auto st = db.prepare(std::string("SELECT r.id, r.product_id, p.name, r.nickname, r.rating, r.title, r.body, "
                                   "r.created_at FROM reviews r JOIN products p ON p.id = r.product_id WHERE r.") +
                       column + " = ?1 ORDER BY r.created_at DESC, r.id DESC");
  st.bind(1, id);
  std::vector<review_row> out;
  while (st.step())
    out.push_back({st.int64(0), st.int64(1), st.text(2), st.text(3), st.int64(4), st.text(5), st.text(6), st.text(7)});
  return out;
}
}  // namespace

std::vector<review_row> product_reviews(sqlite_db& db, int64_t product_id) {
  return reviews_where(db, "product_id", product_id);
}

std::vector<review_row> user_reviews(sqlite_db& db, int64_t user_id) { return reviews_where(db, "user_id", user_id); }

std::vector<cart_line> load_cart(sqlite_db& db, int64_t user_id) {
  auto st = db.prepare(
      "SELECT p.id, p.sku, p.name, p.price_cents, ci.qty, p.stock FROM cart_items ci "
      "JOIN products p ON p.id = ci.product_id WHERE ci.user_id = ?1 ORDER BY ci.id");
  st.bind(1, user_id);
  std::vector<cart_line> out;
  while (st.step()) out.push_back({st.int64(0), st.text(1), st.text(2), st.int64(3), st.int64(4), st.int64(5)});
  return out;
}

int64_t cart_quantity(sqlite_db& db, int64_t user_id) {
  return db.query_int("SELECT COALESCE(SUM(qty), 0) FROM cart_items WHERE user_id = ?1", {user_id});
}

int64_t cart_subtotal_cents(const std::vector<cart_line>& lines) {
  int64_t total = 0;
  for (const auto& l : lines) total += l.price_cents * l.qty;
  return total;
}

const std::vector<shipping_method>& shipping_methods() {
  static const std::vector<shipping_method> v = {
      {"flatrate", "Flat Rate", 500}, {"express", "Express Delivery", 1500}, {"pickup", "Store Pickup", 0}};
  return v;
}

const shipping_method* find_shipping_method(std::string_view value) {
  for (const auto& m : shipping_methods())
    if (value == m.value) return &m;
  return nullptr;
}

const std::vector<std::string>& us_state_codes() {
  static const std::vector<std::string> v = {
      "AL", "AK", "AZ", "AR", "CA", "CO", "CT", "DE", "DC", "FL", "GA", "HI", "ID", "IL", "IN", "IA", "KS",
      "KY", "LA", "ME", "MD", "MA", "MI", "MN", "MS", "MO", "MT", "NE", "NV", "NH", "NJ", "NM", "NY", "NC",
      "ND", "OH", "OK", "OR", "PA", "RI", "SC", "SD", "TN", "TX", "UT", "VT", "VA", "WA", "WV", "WI", "WY"};
  return v;
}

namespace {
const char* kOrderColumns =
    "SELECT id, number, status, created_at, ship_name, ship_street, ship_city, ship_state, ship_zip, ship_phone, "
    "shipping_method, subtotal_cents, shipping_cents, total_cents, user_id FROM orders";

order_row order_from(sqlite_stmt& st) {
  return {st.int64(0), st.text(1), st.text(2),  st.text(3),   st.text(4),   st.text(5),   st.text(6),  st.text(7),
          st.text(8),  st.text(9), st.text(10), st.int64(11), st.int64(12), st.int64(13), st.int64(14)};
}
}  // namespace

std::vector<order_row> user_orders(sqlite_db& db, int64_t user_id) {
  auto st = db.prepare(std::string(kOrderColumns) + " WHERE user_id = ?1 ORDER BY created_at DESC, id DESC");
  st.bind(1, user_id);
  std::vector<order_row> out;
  while (st.step()) out.push_back(order_from(st));
  return out;
}

std::optional<order_row> get_order(sqlite_db& db, std::string_view number) {
  auto st = db.prepare(std::string(kOrderColumns) + " WHERE number = ?1");
  st.bind(1, std::string(number));
  if (!st.step()) return std::nullopt;
  return order_from(st);
}

std::vector<order_item> order_items(sqlite_db& db, int64_t order_id) {
  auto st =
      db.prepare("SELECT product_id, sku, name, price_cents, qty FROM order_items WHERE order_id = ?1 ORDER BY id");
  st.bind(1, order_id);
  std::vector<order_item> out;
  while (st.step()) out.push_back({st.int64(0), st.text(1), st.text(2), st.int64(3), st.int64(4)});
  return out;
}

std::string order_number(int64_t id) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%09lld", static_cast<long long>(id));
  return buf;
}

}  // namespace kvarena::sites::shopping
