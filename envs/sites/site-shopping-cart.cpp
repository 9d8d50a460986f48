// site-shopping-cart.cpp: the shopping pages that fill and empty the cart: cart (add,
// update quantities, remove), wish list (add, remove, move to the cart) and checkout
// (shipping address and method -> an order). All need a login; every change goes into
// the tenant's database, stamped with the seeded clock (seed_now).
#include <algorithm>

#include "seed-data.h"
#include "site-auth.h"
#include "site-shopping.h"

namespace kvarena::sites {

using namespace shopping;

namespace {

// A quantity typed into a form: 0..kMaxQtyPerLine, else nullopt.
std::optional<int64_t> parse_qty(std::string_view s) {
  std::string t = trim(std::string(s));
  if (t.empty() || t.size() > 3 || !std::all_of(t.begin(), t.end(), [](char c) { return c >= '0' && c <= '9'; }))
    return std::nullopt;
  int64_t v = std::stoll(t);
  return v <= kMaxQtyPerLine ? std::optional<int64_t>(v) : std::nullopt;
}

std::optional<int64_t> parse_id(std::string_view s) {
  if (s.empty() || s.size() > 12 || !std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; }))
    return std::nullopt;
  return std::stoll(std::string(s));
}

// A 422 page that says what went wrong and links back.
http_response problem_page(page_context& ctx, const site& s, std::string_view title, const std::string& message,
                           const std::string& back_rel, std::string_view back_label) {
  html content = error_summary({message}) + element("p", link(ctx.url(back_rel), back_label));
  return s.render(ctx, title, content, 422);
}

int64_t qty_in_cart(sqlite_db& db, int64_t user_id, int64_t product_id) {
  return db.query_int("SELECT qty FROM cart_items WHERE user_id = ?1 AND product_id = ?2", {user_id, product_id}, 0);
}

struct address_input {
  std::string name, street, city, state, zip, phone, method;
};

address_input default_address(page_context& ctx) {
  auto orders = user_orders(ctx.db, ctx.user->id);
  if (!orders.empty()) {
    const auto& o = orders.front();
    return {o.ship_name, o.ship_street, o.ship_city, o.ship_state, o.ship_zip, o.ship_phone, o.shipping_method};
  }
  address_input a;
  a.name = ctx.user->display_name;
  auto loc = ctx.db.query("SELECT location FROM users WHERE id = ?1", {ctx.user->id});
  std::string location = loc.empty() ? "" : std::get<std::string>(loc[0][0]);
  if (size_t comma = location.find(", "); comma != std::string::npos) {
    a.city = location.substr(0, comma);
    a.state = location.substr(comma + 2);
  }
  a.method = shipping_methods().front().value;
  return a;
}

std::map<std::string, std::string> validate_address(const address_input& in) {
  std::map<std::string, std::string> e;
  if (in.name.size() < 2 || in.name.size() > 80)
    e["name"] = "Enter the full name of the recipient (2 to 80 characters).";
  if (in.street.size() < 3 || in.street.size() > 120) e["street"] = "Enter a street address (3 to 120 characters).";
  if (in.city.size() < 2 || in.city.size() > 60) e["city"] = "Enter a city (2 to 60 characters).";
  const auto& states = us_state_codes();
  if (std::find(states.begin(), states.end(), in.state) == states.end()) e["state"] = "Choose a state from the list.";
  bool zip_ok = (in.zip.size() == 5 || (in.zip.size() == 10 && in.zip[5] == '-'));
  for (size_t i = 0; i < in.zip.size() && zip_ok; ++i)
    if (i != 5 && !(in.zip[i] >= '0' && in.zip[i] <= '9')) zip_ok = false;
  if (!zip_ok) e["zip"] = "Enter a 5-digit ZIP code, e.g. 15213 (or ZIP+4, e.g. 15213-1234).";
  int digits = 0;
  bool phone_chars = true;
  for (char c : in.phone) {
    if (c >= '0' && c <= '9')
      ++digits;
    else if (std::string_view(" -+().").find(c) == std::string_view::npos)
      phone_chars = false;
  }
  if (!phone_chars || digits < 7 || digits > 15)
    e["phone"] = "Enter a phone number of 7 to 15 digits, e.g. 412-555-0134.";
  if (!find_shipping_method(in.method)) e["method"] = "Choose a shipping method.";
  return e;
}

html order_summary(const std::vector<cart_line>& lines) {
  std::vector<std::vector<html>> rows;
  for (const auto& l : lines)
    rows.push_back({text(l.name), text(format_money(l.price_cents)), text(std::to_string(l.qty)),
                    text(format_money(l.price_cents * l.qty))});
  return element("section", element("h2", text("Order Summary")) +
                                data_table({"Product", "Price", "Qty", "Subtotal"}, rows) +
                                element("p", text("Cart subtotal: " + format_money(cart_subtotal_cents(lines)))));
}

html checkout_form(const page_context& ctx, const address_input& in, const std::map<std::string, std::string>& errors) {
  auto err = [&](const char* f) {
    auto it = errors.find(f);
    return it == errors.end() ? std::string() : it->second;
  };
  std::vector<std::string> summary;
  for (const char* f : {"name", "street", "city", "state", "zip", "phone", "method"})
    if (!err(f).empty()) summary.push_back(err(f));
  std::vector<option_item> states = {{"", "Please select a state", ""}};
  for (const auto& s : us_state_codes()) states.push_back({s, s, ""});
  std::vector<option_item> methods;
  for (const auto& m : shipping_methods())
    methods.push_back({m.value, std::string(m.label) + " (" + format_money(m.cents) + ")", ""});
  auto req = [&](const char* f) { return field_opts().mark_required().show_error(err(f)); };
  html fields = element("h2", text("Shipping Address")) +
                labeled_input("ship-name", "Full name", "name", in.name, req("name")) +
                labeled_input("ship-street", "Street address", "street", in.street, req("street")) +
                labeled_input("ship-city", "City", "city", in.city, req("city")) +
                labeled_select("ship-state", "State", "state", states, in.state, req("state")) +
                labeled_input("ship-zip", "ZIP code", "zip", in.zip, req("zip")) +
                labeled_input("ship-phone", "Phone number", "phone", in.phone, req("phone").input_type("tel")) +
                element("h2", text("Shipping Method")) +
                labeled_select("ship-method", "Shipping method", "method", methods, in.method, req("method")) +
                submit_button("Place Order");
  return error_summary(summary) + element("form", {{"method", "post"}, {"action", ctx.url("/checkout")}}, fields);
}

}  // namespace

void site_shopping::add_cart_routes(site_router& r) const {
  add_cart_page_routes(r);
  add_cart_update_routes(r);
  add_wishlist_page_routes(r);
  add_wishlist_change_routes(r);
  add_checkout_routes(r);
  add_order_placed_routes(r);
}

// The cart page and adding a product to it.
void site_shopping::add_cart_page_routes(site_router& r) const {
  r.add("GET", "/cart", [this](page_context& ctx) {
    if (auto login = require_login(ctx)) return *login;
    auto lines = load_cart(ctx.db, ctx.user->id);
    if (lines.empty()) {
      html content = element("p", text("You have no items in your shopping cart.")) +
                     element("p", link(ctx.url("/"), "Continue shopping"));
      return render(ctx, "Shopping Cart", content);
    }
    std::vector<std::vector<html>> rows;
    for (const auto& l : lines) {
      std::string id = std::to_string(l.product_id);
      html qty_form = element(
          "form", {{"method", "post"}, {"action", ctx.url("/cart/update")}, {"class", "inline"}},
          hidden_input("product_id", id) +
              labeled_input("qty-" + id, "Quantity of " + l.name, "qty", std::to_string(l.qty),
                            field_opts().input_type("number").attribute("min", "0")) +
              element("button", {{"type", "submit"}, {"aria-label", "Update quantity of " + l.name}}, text("Update")));
      rows.push_back(
          {link(product_href(ctx, l.product_id), l.name) + element("small", text(" SKU: " + l.sku)),
           text(format_money(l.price_cents)), qty_form, text(format_money(l.price_cents * l.qty)),
           action_button(ctx.url("/cart/remove"), "Remove", "Remove " + l.name + " from cart", {{"product_id", id}})});
    }
    html content = data_table({"Item", "Price", "Qty", "Subtotal", "Action"}, rows) +
                   element("section", {{"aria-label", "Summary"}},
                           element("h2", text("Summary")) +
                               element("p", text("Subtotal: " + format_money(cart_subtotal_cents(lines)))) +
                               element("p", link(ctx.url("/checkout"), "Proceed to Checkout")));
    return render(ctx, "Shopping Cart", content);
  });

  r.add("POST", "/cart/add", [this](page_context& ctx) {
    auto pid = parse_id(ctx.req.form.get("product_id"));
    std::string back = safe_return(ctx.req.form.get("next"), pid ? "/product/" + std::to_string(*pid) : "/");
    if (auto login = require_login(ctx, back)) return *login;
    auto p = pid ? get_product(ctx.db, *pid) : std::nullopt;
    if (!p) return problem_page(ctx, *this, "Not added", "There is no such product.", "/", "Go to the home page");
    auto qty = parse_qty(ctx.req.form.get("qty", "1"));
    int64_t have = qty_in_cart(ctx.db, ctx.user->id, p->id);
    std::string message;
    if (!qty || *qty < 1)
      message = "Enter a quantity from 1 to " + std::to_string(kMaxQtyPerLine) + ".";
    else if (p->stock == 0)
      message = p->name + " is out of stock.";
    else if (have + *qty > p->stock)
      message = "The requested quantity is not available: only " + std::to_string(p->stock) + " of " + p->name +
                " are in stock" + (have ? " and " + std::to_string(have) + " are already in your cart." : ".");
    else if (have + *qty > kMaxQtyPerLine)
      message = "At most " + std::to_string(kMaxQtyPerLine) + " of one product fit in the cart.";
    if (!message.empty()) return problem_page(ctx, *this, "Not added to cart", message, back, "Go back");
    ctx.db.query(
        "INSERT INTO cart_items (user_id, product_id, qty, added_at) VALUES (?1, ?2, ?3, ?4) "
        "ON CONFLICT (user_id, product_id) DO UPDATE SET qty = qty + excluded.qty",
        {ctx.user->id, p->id, *qty, seed_now()});
    ctx.flash("You added " + p->name + " to your shopping cart.");
    return http_response::redirect(ctx.url(back));
  });
}

// Changing a line's quantity, removing a line.
void site_shopping::add_cart_update_routes(site_router& r) const {
  r.add("POST", "/cart/update", [this](page_context& ctx) {
    if (auto login = require_login(ctx, "/cart")) return *login;
    auto pid = parse_id(ctx.req.form.get("product_id"));
    auto qty = parse_qty(ctx.req.form.get("qty"));
    auto p = pid ? get_product(ctx.db, *pid) : std::nullopt;
    if (!p || qty_in_cart(ctx.db, ctx.user->id, p->id) == 0)
      return problem_page(ctx, *this, "Cart not updated", "That product is not in your cart.", "/cart",
                          "Back to the cart");
    if (!qty)
      return problem_page(ctx, *this, "Cart not updated",
                          "Enter a quantity from 0 to " + std::to_string(kMaxQtyPerLine) + " (0 removes the item).",
                          "/cart", "Back to the cart");
    if (*qty > p->stock)
      return problem_page(ctx, *this, "Cart not updated",
                          "The requested quantity is not available: only " + std::to_string(p->stock) + " of " +
                              p->name + " are in stock.",
                          "/cart", "Back to the cart");
    if (*qty == 0) {
      ctx.db.query("DELETE FROM cart_items WHERE user_id = ?1 AND product_id = ?2", {ctx.user->id, p->id});
      ctx.flash("You removed " + p->name + " from your shopping cart.");
    } else {
      ctx.db.query("UPDATE cart_items SET qty = ?3 WHERE user_id = ?1 AND product_id = ?2",
                   {ctx.user->id, p->id, *qty});
      ctx.flash("You updated the quantity of " + p->name + " to " + std::to_string(*qty) + ".");
    }
    return http_response::redirect(ctx.url("/cart"));
  });

  r.add("POST", "/cart/remove", [this](page_context& ctx) {
    if (auto login = require_login(ctx, "/cart")) return *login;
    auto pid = parse_id(ctx.req.form.get("product_id"));
    auto p = pid ? get_product(ctx.db, *pid) : std::nullopt;
    if (!p || qty_in_cart(ctx.db, ctx.user->id, p->id) == 0)
      return problem_page(ctx, *this, "Not removed", "That product is not in your cart.", "/cart", "Back to the cart");
    ctx.db.query("DELETE FROM cart_items WHERE user_id = ?1 AND product_id = ?2", {ctx.user->id, p->id});
    ctx.flash("You removed " + p->name + " from your shopping cart.");
    return http_response::redirect(ctx.url("/cart"));
  });
}

// The wish list page.
void site_shopping::add_wishlist_page_routes(site_router& r) const {
  r.add("GET", "/wishlist", [this](page_context& ctx) {
    if (auto login = require_login(ctx)) return *login;
    auto st =
        ctx.db.prepare("SELECT w.product_id, w.added_at FROM wishlist_items w WHERE w.user_id = ?1 ORDER BY w.id");
    st.bind(1, ctx.user->id);
    std::vector<std::vector<html>> rows;
    while (st.step()) {
      auto p = get_product(ctx.db, st.int64(0));
      if (!p) continue;
      std::string id = std::to_string(p->id);
      html actions = action_button(ctx.url("/wishlist/remove"), "Remove", "Remove " + p->name + " from wish list",
                                   {{"product_id", id}});
      if (p->stock > 0)
        actions = action_button(ctx.url("/wishlist/move"), "Add to Cart", "Move " + p->name + " to cart",
                                {{"product_id", id}}) +
                  actions;
      rows.push_back({link(product_href(ctx, p->id), p->name), text(format_money(p->price_cents)),
                      text(p->stock > 0 ? "In stock" : "Out of stock"), text(st.text(1).substr(0, 10)), actions});
    }
    html content = rows.empty() ? element("p", text("You have no items in your wish list."))
                                : data_table({"Product", "Price", "Availability", "Added on", "Actions"}, rows);
    return render(ctx, "My Wish List", content);
  });
}

// Adding to, removing from, and moving out of the wish list.
void site_shopping::add_wishlist_change_routes(site_router& r) const {
  auto wishlist_change = [this](const char* what) {
    return [this, what](page_context& ctx) {
      auto pid = parse_id(ctx.req.form.get("product_id"));
      std::string fallback = std::string(what) == "add" && pid ? "/product/" + std::to_string(*pid) : "/wishlist";
      std::string back = safe_return(ctx.req.form.get("next"), fallback);
      if (auto login = require_login(ctx, back)) return *login;
      auto p = pid ? get_product(ctx.db, *pid) : std::nullopt;
      if (!p) return problem_page(ctx, *this, "Wish list not changed", "There is no such product.", back, "Go back");
      bool listed = ctx.db.query_int("SELECT COUNT(*) FROM wishlist_items WHERE user_id = ?1 AND product_id = ?2",
                                     {ctx.user->id, p->id}) > 0;
      std::string op = what;
      if (op == "add") {
        if (!listed)
          ctx.db.query("INSERT INTO wishlist_items (user_id, product_id, added_at) VALUES (?1, ?2, ?3)",
                       {ctx.user->id, p->id, seed_now()});
        ctx.flash(p->name + (listed ? " is already in your wish list." : " has been added to your wish list."));
        return http_response::redirect(ctx.url(back));
      }
      if (!listed)
        return problem_page(ctx, *this, "Wish list not changed", p->name + " is not in your wish list.", "/wishlist",
                            "Back to the wish list");
      if (op == "move") {
        int64_t have = qty_in_cart(ctx.db, ctx.user->id, p->id);
        if (p->stock <= have || have >= kMaxQtyPerLine)
          return problem_page(ctx, *this, "Not added to cart", p->name + " is out of stock.", "/wishlist",
                              "Back to the wish list");
        sqlite_transaction tx(ctx.db);
        ctx.db.query(
            "INSERT INTO cart_items (user_id, product_id, qty, added_at) VALUES (?1, ?2, 1, ?3) "
            "ON CONFLICT (user_id, product_id) DO UPDATE SET qty = qty + 1",
            {ctx.user->id, p->id, seed_now()});
        ctx.db.query("DELETE FROM wishlist_items WHERE user_id = ?1 AND product_id = ?2", {ctx.user->id, p->id});
        tx.commit();
        ctx.flash("You moved " + p->name + " from your wish list to your shopping cart.");
        return http_response::redirect(ctx.url("/wishlist"));
      }
      ctx.db.query("DELETE FROM wishlist_items WHERE user_id = ?1 AND product_id = ?2", {ctx.user->id, p->id});
      ctx.flash(p->name + " has been removed from your wish list.");
      return http_response::redirect(ctx.url("/wishlist"));
    };
  };
  r.add("POST", "/wishlist/add", wishlist_change("add"));
  r.add("POST", "/wishlist/remove", wishlist_change("remove"));
  r.add("POST", "/wishlist/move", wishlist_change("move"));
}

// Checkout: the address and method form, and placing the order.
void site_shopping::add_checkout_routes(site_router& r) const {
  r.add("GET", "/checkout", [this](page_context& ctx) {
    if (auto login = require_login(ctx)) return *login;
    auto lines = load_cart(ctx.db, ctx.user->id);
    if (lines.empty()) {
      ctx.flash("Your shopping cart is empty: add products before checking out.");
      return http_response::redirect(ctx.url("/cart"));
    }
    return render(ctx, "Checkout", order_summary(lines) + checkout_form(ctx, default_address(ctx), {}));
  });

  r.add("POST", "/checkout", [this](page_context& ctx) {
    if (auto login = require_login(ctx, "/checkout")) return *login;
    auto lines = load_cart(ctx.db, ctx.user->id);
    if (lines.empty()) {
      ctx.flash("Your shopping cart is empty: add products before checking out.");
      return http_response::redirect(ctx.url("/cart"));
    }
    const auto& f = ctx.req.form;
    address_input in{trim(f.get("name")), trim(f.get("street")), trim(f.get("city")), f.get("state"),
                     trim(f.get("zip")),  trim(f.get("phone")),  f.get("method")};
    auto errors = validate_address(in);
    std::vector<std::string> stock_problems;
    for (const auto& l : lines)
      if (l.qty > l.stock)
        stock_problems.push_back("Only " + std::to_string(l.stock) + " of " + l.name +
                                 " are in stock; change the quantity in your cart.");
    if (!errors.empty() || !stock_problems.empty())
      return render(ctx, "Checkout",
                    error_summary(stock_problems) + order_summary(lines) + checkout_form(ctx, in, errors), 422);
    const shipping_method* method = find_shipping_method(in.method);
    int64_t subtotal = cart_subtotal_cents(lines);
    sqlite_transaction tx(ctx.db);
    int64_t id = ctx.db.query_int("SELECT COALESCE(MAX(id), 0) + 1 FROM orders");
    std::string number = order_number(id);
    ctx.db.query(
        "INSERT INTO orders (id, number, user_id, status, created_at, ship_name, ship_street, ship_city, ship_state, "
        "ship_zip, ship_phone, shipping_method, subtotal_cents, shipping_cents, total_cents) "
        "VALUES (?1, ?2, ?3, 'Pending', ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)",
        {id, number, ctx.user->id, seed_now(), in.name, in.street, in.city, in.state, in.zip, in.phone,
         std::string(method->value), subtotal, method->cents, subtotal + method->cents});
    for (const auto& l : lines) {
      ctx.db.query(
          "INSERT INTO order_items (order_id, product_id, sku, name, price_cents, qty) "
          "VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
          {id, l.product_id, l.sku, l.name, l.price_cents, l.qty});
      ctx.db.query("UPDATE products SET stock = stock - ?2 WHERE id = ?1", {l.product_id, l.qty});
    }
    ctx.db.query("DELETE FROM cart_items WHERE user_id = ?1", {ctx.user->id});
    tx.commit();
    return http_response::redirect(ctx.url("/checkout/success/" + number));
  });
}

// The confirmation after an order is placed.
void site_shopping::add_order_placed_routes(site_router& r) const {
  r.add("GET", "/checkout/success/{number}", [this](page_context& ctx) {
    if (auto login = require_login(ctx)) return *login;
    auto order = get_order(ctx.db, ctx.params["number"]);
    if (!order || order->user_id != ctx.user->id)
      return error_page(ctx, 404, "You have no order with this number. See My Orders for your orders.");
    html content = element("p", text("Thank you for your purchase!")) +
                   element("p", text("Your order number is: ") +
                                    link(ctx.url("/orders/" + order->number), order->number) + text(".")) +
                   element("p", text("Order total: " + format_money(order->total_cents) +
                                     ". We'll email you an order "
                                     "confirmation with details and tracking info.")) +
                   element("p", link(ctx.url("/"), "Continue Shopping"));
    return render(ctx, "Thank you for your purchase!", content);
  });
}

}  // namespace kvarena::sites
