// site-shopping-seed.cpp: the shopping schema and its deterministic seed data: the fixed
// category tree (site-shopping-catalogue.cpp), and from the seed: users, 352 products
// (name, SKU, price, stock, description), their reviews, past orders, wish lists and carts.
// Only seed_rng draws; same seed -> same rows.
#include <algorithm>
#include <cctype>
#include <set>
#include <tuple>

#include "picture-seed.h"
#include "seed-data.h"
#include "site-auth.h"
#include "site-shopping-catalogue.h"
#include "site-shopping.h"

namespace kvarena::sites {

namespace {

using shopping::catalogue;
using shopping::leaf_def;

void create_schema(sqlite_db& db) {
  create_users_table(db);
  create_categories_table(db);
  db.exec(R"sql(
    CREATE TABLE products (
      id INTEGER PRIMARY KEY,
      sku TEXT NOT NULL UNIQUE,
      category_id INTEGER NOT NULL REFERENCES categories(id),  -- a subcategory
      name TEXT NOT NULL,
      description TEXT NOT NULL,
      price_cents INTEGER NOT NULL CHECK (price_cents > 0),
      stock INTEGER NOT NULL CHECK (stock >= 0),                -- 0: out of stock
      featured INTEGER NOT NULL DEFAULT 0                       -- 1: on the home page
    );
    CREATE INDEX products_category ON products(category_id);
    CREATE TABLE reviews (
      id INTEGER PRIMARY KEY AUTOINCREMENT,
      product_id INTEGER NOT NULL REFERENCES products(id),
      user_id INTEGER REFERENCES users(id),
      nickname TEXT NOT NULL,
      rating INTEGER NOT NULL CHECK (rating BETWEEN 1 AND 5),
      title TEXT NOT NULL,
      body TEXT NOT NULL,
      created_at TEXT NOT NULL
    );
    CREATE INDEX reviews_product ON reviews(product_id);
    CREATE TABLE cart_items (
      id INTEGER PRIMARY KEY AUTOINCREMENT,
      user_id INTEGER NOT NULL REFERENCES users(id),
      product_id INTEGER NOT NULL REFERENCES products(id),
      qty INTEGER NOT NULL CHECK (qty > 0),
      added_at TEXT NOT NULL,
      UNIQUE (user_id, product_id)
    );
    CREATE TABLE wishlist_items (
      id INTEGER PRIMARY KEY AUTOINCREMENT,
      user_id INTEGER NOT NULL REFERENCES users(id),
      product_id INTEGER NOT NULL REFERENCES products(id),
      added_at TEXT NOT NULL,
      UNIQUE (user_id, product_id)
    );
    CREATE TABLE orders (
      id INTEGER PRIMARY KEY,
      number TEXT NOT NULL UNIQUE,        -- "000000170": the id in nine digits
      user_id INTEGER NOT NULL REFERENCES users(id),
      status TEXT NOT NULL,               -- Pending | Processing | Complete | Canceled
      created_at TEXT NOT NULL,
      ship_name TEXT NOT NULL,
      ship_street TEXT NOT NULL,
      ship_city TEXT NOT NULL,
      ship_state TEXT NOT NULL,
      ship_zip TEXT NOT NULL,
      ship_phone TEXT NOT NULL,
      shipping_method TEXT NOT NULL,      -- shopping::shipping_methods() value
      subtotal_cents INTEGER NOT NULL,
      shipping_cents INTEGER NOT NULL,
      total_cents INTEGER NOT NULL
    );
    CREATE INDEX orders_user ON orders(user_id);
    CREATE TABLE order_items (
      id INTEGER PRIMARY KEY AUTOINCREMENT,
      order_id INTEGER NOT NULL REFERENCES orders(id),
      product_id INTEGER NOT NULL,        -- no foreign key: the name and price are copied
      sku TEXT NOT NULL,
      name TEXT NOT NULL,
      price_cents INTEGER NOT NULL,
      qty INTEGER NOT NULL CHECK (qty > 0)
    );
    CREATE INDEX order_items_order ON order_items(order_id);
  )sql");
}

struct seeded_user {
  int64_t id;
  std::string display_name;
  us_city city;
};

std::vector<seeded_user> seed_users(sqlite_db& db, seed_rng& rng) {
  seeded_user_writer writer(db);
  std::vector<seeded_user> users;
  auto add = [&](const std::string& first, const std::string& last, const us_city& city) {
    users.push_back({writer.add(rng, first, last, city.label()), first + " " + last, city});
  };
  add("Emma", "Lopez", {"Pittsburgh", "PA"});  // the fixed account tasks log in as
  while (int(users.size()) < shopping::kSeedUsers) {
    // One draw per statement: argument evaluation order differs between compilers.
    std::string first = rng.pick(first_names());
    std::string last = rng.pick(last_names());
    add(first, last, rng.pick(us_cities()));
  }
  return users;
}

std::string draw_sku(seed_rng& rng, std::set<std::string>& taken) {
  static const std::string alphabet = "0123456789ABCDEFGHJKLMNPQRSTUVWXYZ";
  for (;;) {
    std::string sku = "B0";
    for (int i = 0; i < 8; ++i) sku += alphabet[rng.index(alphabet.size())];
    if (taken.insert(sku).second) return sku;
  }
}

struct seeded_product {
  int64_t id, price_cents, stock;
  std::string sku, name;
  const leaf_def* leaf;
};

std::vector<seeded_product> seed_products(sqlite_db& db, seed_rng& rng,
                                          const std::vector<std::pair<int64_t, const leaf_def*>>& leaves) {
  auto ins = db.prepare(
      "INSERT INTO products (id, sku, category_id, name, description, price_cents, stock, featured) "
      "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, 0)");
  std::vector<seeded_product> out;
  std::set<std::string> skus;
  for (const auto& [category_id, leaf] : leaves) {
    std::set<std::tuple<size_t, size_t, size_t>> used;  // (brand, kind, variant)
    for (int n = 0; n < shopping::kProductsPerLeaf;) {
      size_t b = rng.index(leaf->brands.size());
      size_t k = rng.index(leaf->kinds.size());
      size_t v = rng.index(leaf->variants.size());
      if (!used.insert({b, k, v}).second) continue;
      ++n;
      const auto& kind = leaf->kinds[k];
      std::string brand = leaf->brands[b];
      std::string name = brand + " " + kind.noun + ", " + leaf->variants[v];
      int64_t dollars = rng.uniform(kind.lo_dollars, kind.hi_dollars);
      int64_t price_cents = dollars * 100 - (rng.chance(0.2) ? 51 : 1);  // $58.99 or $58.49
      int64_t stock = rng.chance(0.06) ? 0 : rng.chance(0.1) ? rng.uniform(1, 5) : rng.uniform(6, 500);
      size_t f1 = rng.index(leaf->features.size());
      size_t f2 = (f1 + 1 + rng.index(leaf->features.size() - 1)) % leaf->features.size();
      size_t f3 =
          (f2 + 1) % leaf->features.size() == f1 ? (f2 + 2) % leaf->features.size() : (f2 + 1) % leaf->features.size();
      std::string description = "The " + brand + " " + kind.noun + " (" + leaf->variants[v] + ").\n" +
                                leaf->features[f1] + ". " + leaf->features[f2] + ". " + leaf->features[f3] + ".\n" +
                                "Every " + brand + " product comes with a 30-day return policy.";
      int64_t id = int64_t(out.size()) + 1;
      std::string sku = draw_sku(rng, skus);
      ins.bind_all({id, sku, category_id, name, description, price_cents, stock});
      ins.step();
      ins.reset();
      out.push_back({id, price_cents, stock, sku, name, leaf});
    }
  }
  // Featured on the home page: one product of each top category's first leaf, in stock.
  db.exec(R"sql(
    UPDATE products SET featured = 1 WHERE id IN (
      SELECT MIN(p.id) FROM products p JOIN categories c ON c.id = p.category_id
       WHERE c.position = 1 AND p.stock > 0 GROUP BY c.parent_id))sql");
  return out;
}

void seed_reviews(sqlite_db& db, seed_rng& rng, const std::vector<seeded_product>& products,
                  const std::vector<seeded_user>& users) {
  struct pending {
    int64_t minute, product_id, user_id;
    int rating;
  };
  std::vector<pending> all;
  for (const auto& p : products) {
    if (rng.chance(0.15)) continue;  // no reviews yet
    int base = int(rng.uniform(2, 5));
    int64_t n = rng.uniform(1, 9);
    for (int64_t i = 0; i < n; ++i) {
      // One draw per statement: the order of operands of + is unspecified.
      int rating = base + int(rng.uniform(-1, 1));
      if (rng.chance(0.3)) ++rating;
      rating = std::clamp(rating, 1, 5);
      // User 1 wrote a few reviews, so "My Product Reviews" is never empty.
      int64_t user = all.size() % 97 == 5 ? 1 : users[1 + rng.index(users.size() - 1)].id;
      all.push_back({rng.uniform(0, kSeedNowMinutes - 24 * 60), p.id, user, rating});
    }
  }
  std::stable_sort(all.begin(), all.end(), [](const pending& a, const pending& b) { return a.minute < b.minute; });
  auto ins = db.prepare(
      "INSERT INTO reviews (product_id, user_id, nickname, rating, title, body, created_at) "
      "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)");
  for (const auto& r : all) {
    const auto& user = users[size_t(r.user_id - 1)];
    const auto& text = rng.pick(shopping::review_texts(r.rating));
    const auto& product = products[size_t(r.product_id - 1)];
    std::string nickname = user.display_name.substr(0, user.display_name.find(' '));
    ins.bind_all({r.product_id, r.user_id, nickname, int64_t(r.rating), std::string(text.title),
                  replace_s(text.body, product.leaf->review_noun), seed_datetime(r.minute)});
    ins.step();
    ins.reset();
  }
}

void seed_orders(sqlite_db& db, seed_rng& rng, const std::vector<seeded_product>& products,
                 const std::vector<seeded_user>& users) {
  constexpr int kOrders = 180;
  std::vector<int64_t> minutes(kOrders);
  for (auto& m : minutes) m = rng.uniform(0, kSeedNowMinutes - 60);
  std::sort(minutes.begin(), minutes.end());
  auto ins = db.prepare(
      "INSERT INTO orders (id, number, user_id, status, created_at, ship_name, ship_street, ship_city, ship_state, "
      "ship_zip, ship_phone, shipping_method, subtotal_cents, shipping_cents, total_cents) "
      "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15)");
  auto item = db.prepare(
      "INSERT INTO order_items (order_id, product_id, sku, name, price_cents, qty) VALUES (?1, ?2, ?3, ?4, ?5, ?6)");
  // Each user keeps one street address and phone across orders.
  std::vector<std::string> streets, phones, zips;
  for (size_t u = 0; u < users.size(); ++u) {
    // One draw per statement: the order of operands of + is unspecified.
    std::string number = std::to_string(rng.uniform(10, 9999));
    streets.push_back(number + " " + rng.pick(shopping::street_names()));
    std::string exchange = std::to_string(rng.uniform(200, 999));
    phones.push_back("555-" + exchange + "-" + std::to_string(rng.uniform(1000, 9999)));
    zips.push_back(std::to_string(rng.uniform(10000, 99999)));
  }
  for (int i = 0; i < kOrders; ++i) {
    int64_t id = i + 1;
    const seeded_user& user = i % 15 == 4 ? users[0] : users[1 + rng.index(users.size() - 1)];
    int64_t age_minutes = kSeedNowMinutes - minutes[size_t(i)];
    std::string status = age_minutes < 3 * 24 * 60   ? "Pending"
                         : age_minutes < 8 * 24 * 60 ? "Processing"
                         : rng.chance(0.12)          ? "Canceled"
                                                     : "Complete";
    int64_t lines = rng.chance(0.5) ? 1 : rng.uniform(2, 4);
    std::set<int64_t> chosen;
    std::vector<std::pair<const seeded_product*, int64_t>> items;  // (product, qty)
    int64_t subtotal = 0;
    for (int64_t l = 0; l < lines; ++l) {
      const auto& p = products[rng.index(products.size())];
      if (!chosen.insert(p.id).second) continue;
      int64_t qty = rng.chance(0.75) ? 1 : rng.uniform(2, 3);
      items.emplace_back(&p, qty);
      subtotal += p.price_cents * qty;
    }
    const auto& method = shopping::shipping_methods()[rng.index(shopping::shipping_methods().size())];
    size_t u = size_t(user.id - 1);
    ins.bind_all({id, shopping::order_number(id), user.id, status, seed_datetime(minutes[size_t(i)]), user.display_name,
                  streets[u], user.city.name, user.city.state, zips[u], phones[u], std::string(method.value), subtotal,
                  method.cents, subtotal + method.cents});
    ins.step();
    ins.reset();
    for (const auto& [p, qty] : items) {
      item.bind_all({id, p->id, p->sku, p->name, p->price_cents, qty});
      item.step();
      item.reset();
    }
  }
}

void seed_lists(sqlite_db& db, seed_rng& rng, const std::vector<seeded_product>& products,
                const std::vector<seeded_user>& users) {
  auto wish = db.prepare("INSERT OR IGNORE INTO wishlist_items (user_id, product_id, added_at) VALUES (?1, ?2, ?3)");
  auto cart =
      db.prepare("INSERT OR IGNORE INTO cart_items (user_id, product_id, qty, added_at) VALUES (?1, ?2, ?3, ?4)");
  for (const auto& user : users) {
    // User 1: three wished products and an empty cart (tasks start from there).
    int64_t wishes = user.id == 1 ? 3 : rng.uniform(0, 4);
    for (int64_t i = 0; i < wishes; ++i) {
      // User 1's wishes are bought by a task: draw again while the product is out of stock
      // (a redraw only happens where the first draw was out of stock, so seeds that never
      // needed one keep their content).
      const seeded_product* p = &products[rng.index(products.size())];
      while (user.id == 1 && p->stock == 0) p = &products[rng.index(products.size())];
      wish.bind_all({user.id, p->id,
                     seed_datetime(rng.uniform(kSeedNowMinutes - 90 * 24 * 60, kSeedNowMinutes - 60))});
      wish.step();
      wish.reset();
    }
    if (user.id == 1 || rng.chance(0.6)) continue;
    int64_t lines = rng.uniform(1, 3);
    for (int64_t i = 0; i < lines; ++i) {
      cart.bind_all({user.id, products[rng.index(products.size())].id, rng.uniform(1, 2),
                     seed_datetime(rng.uniform(kSeedNowMinutes - 14 * 24 * 60, kSeedNowMinutes - 60))});
      cart.step();
      cart.reset();
    }
  }
}

}  // namespace

void site_shopping::seed(sqlite_db& db, uint64_t seed) const {
  create_schema(db);
  seed_rng rng(seed, /*stream=*/0x73686f70);  // "shop"
  auto users = seed_users(db, rng);
  auto leaves = seed_category_tree(db, catalogue());  // (leaf id, definition), in catalogue order
  auto products = seed_products(db, rng, leaves);
  seed_reviews(db, rng, products, users);
  seed_orders(db, rng, products, users);
  seed_lists(db, rng, products, users);
  seed_product_pictures(db, seed);  // a stream of its own: the rows above do not change
}

}  // namespace kvarena::sites
