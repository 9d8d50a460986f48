// site-shopping-account.cpp: the shopping account pages (all need a login): the
// dashboard, order history and one order's detail, the user's reviews, and writing a
// review for a product (the form also appears on the product page).
#include "seed-data.h"
#include "site-auth.h"
#include "site-shopping.h"

namespace kvarena::sites {

using namespace shopping;

namespace shopping {

html review_form(const page_context& ctx, int64_t product_id, const review_input& in,
                 const std::map<std::string, std::string>& errors) {
  auto err = [&](const char* f) {
    auto it = errors.find(f);
    return it == errors.end() ? std::string() : it->second;
  };
  std::vector<std::string> summary;
  for (const char* f : {"rating", "nickname", "title", "body"})
    if (!err(f).empty()) summary.push_back(err(f));
  std::vector<option_item> ratings = {{"", "Choose a rating", ""}};
  for (int i = 5; i >= 1; --i)
    ratings.push_back({std::to_string(i), std::to_string(i) + (i == 1 ? " star" : " stars"), ""});
  auto req = [&](const char* f) { return field_opts().mark_required().show_error(err(f)); };
  html fields = labeled_select("review-rating", "Rating", "rating", ratings, in.rating, req("rating")) +
                labeled_input("review-nickname", "Nickname", "nickname", in.nickname, req("nickname")) +
                labeled_input("review-title", "Summary", "title", in.title, req("title")) +
                labeled_textarea("review-body", "Review", "body", in.body, req("body").text_rows(5)) +
                submit_button("Submit Review");
  return error_summary(summary) +
         element("form",
                 {{"method", "post"}, {"action", ctx.url("/product/" + std::to_string(product_id) + "/review")}},
                 fields);
}

}  // namespace shopping

namespace {

std::map<std::string, std::string> validate_review(const review_input& in) {
  std::map<std::string, std::string> e;
  if (in.rating.size() != 1 || in.rating[0] < '1' || in.rating[0] > '5')
    e["rating"] = "Choose a rating from 1 to 5 stars.";
  if (in.nickname.empty() || in.nickname.size() > 40) e["nickname"] = "Enter a nickname of at most 40 characters.";
  if (in.title.empty() || in.title.size() > 100) e["title"] = "Enter a summary of at most 100 characters.";
  if (in.body.size() < 5 || in.body.size() > 5000)
    e["body"] = "The review must be 5 to 5000 characters long (it has " + std::to_string(in.body.size()) + ").";
  return e;
}

std::string shipping_label(std::string_view value) {
  const shipping_method* m = find_shipping_method(value);
  return m ? m->label : std::string(value);
}

html orders_table(const page_context& ctx, const std::vector<order_row>& orders) {
  if (orders.empty()) return element("p", text("You have placed no orders."));
  std::vector<std::vector<html>> rows;
  for (const auto& o : orders)
    rows.push_back({text(o.number), text(o.created_at.substr(0, 10)), text(o.ship_name),
                    text(format_money(o.total_cents)), text(o.status),
                    element("a", {{"href", ctx.url("/orders/" + o.number)}, {"aria-label", "View order " + o.number}},
                            text("View Order"))});
  return data_table({"Order #", "Date", "Ship To", "Order Total", "Status", "Action"}, rows);
}

}  // namespace

void site_shopping::add_account_routes(site_router& r) const {
  add_order_routes(r);
  add_review_routes(r);
}

// The account overview and the user's orders.
void site_shopping::add_order_routes(site_router& r) const {
  r.add("GET", "/account", [this](page_context& ctx) {
    if (auto login = require_login(ctx)) return *login;
    auto info = ctx.db.query("SELECT email, location FROM users WHERE id = ?1", {ctx.user->id});
    std::string email = info.empty() ? "" : std::get<std::string>(info[0][0]);
    auto orders = user_orders(ctx.db, ctx.user->id);
    if (orders.size() > 5) orders.resize(5);
    html content =
        element("section", element("h2", text("Contact Information")) + element("p", text(ctx.user->display_name)) +
                               element("p", text(email))) +
        element("section",
                element("h2", text("Account")) +
                    list({link(ctx.url("/orders"), "My Orders"), link(ctx.url("/wishlist"), "My Wish List"),
                          link(ctx.url("/reviews"), "My Product Reviews"), link(ctx.url("/cart"), "My Cart")})) +
        element("section", element("h2", text("Recent Orders")) + orders_table(ctx, orders));
    return render(ctx, "My Account", content);
  });

  r.add("GET", "/orders", [this](page_context& ctx) {
    if (auto login = require_login(ctx)) return *login;
    return render(ctx, "My Orders", orders_table(ctx, user_orders(ctx.db, ctx.user->id)));
  });

  r.add("GET", "/orders/{number}", [this](page_context& ctx) {
    if (auto login = require_login(ctx)) return *login;
    auto order = get_order(ctx.db, ctx.params["number"]);
    if (!order || order->user_id != ctx.user->id)
      return error_page(ctx, 404, "You have no order with this number. See My Orders for your orders.");
    // Magento's order table (id, a <tbody> per item, cells "col <key>"), so VWA's order
    // helpers (helpers-shopping-page.cpp) read this page as they read Magento's.
    html head;
    for (const char* h : {"Product Name", "SKU", "Price", "Qty", "Subtotal"}) head += element("th", {{"scope", "col"}}, text(h));
    html items_table_body;
    for (const auto& it : order_items(ctx.db, order->id))
      items_table_body += element(
          "tbody", element("tr", element("td", {{"class", "col name"}}, link(product_href(ctx, it.product_id), it.name)) +
                                     element("td", {{"class", "col sku"}}, text(it.sku)) +
                                     element("td", {{"class", "col price"}}, text(format_money(it.price_cents))) +
                                     element("td", {{"class", "col qty"}}, text(std::to_string(it.qty))) +
                                     element("td", {{"class", "col subtotal"}},
                                             text(format_money(it.price_cents * it.qty)))));
    html items_table =
        element("table", {{"id", "my-orders-table"}}, element("thead", element("tr", head)) + items_table_body);
    std::vector<std::pair<std::string, std::string>> facts = {
        {"Order number", order->number},
        {"Order date", order->created_at},
        {"Status", order->status},
        {"Subtotal", format_money(order->subtotal_cents)},
        {"Shipping & Handling", format_money(order->shipping_cents)},
        {"Grand Total", format_money(order->total_cents)}};
    html dl;
    for (const auto& [k, v] : facts) dl += element("dt", text(k)) + element("dd", text(v));
    html address = element("address", text(order->ship_name) + void_element("br", {}) + text(order->ship_street) +
                                          void_element("br", {}) +
                                          text(order->ship_city + ", " + order->ship_state + " " + order->ship_zip) +
                                          void_element("br", {}) + text("Phone: " + order->ship_phone));
    html content = element("p", {{"class", "status"}}, text("Status: " + order->status)) +
                   element("section", element("h2", text("Items Ordered")) +
                                          items_table) +
                   element("section", element("h2", text("Order Totals")) + element("dl", {{"class", "totals"}}, dl)) +
                   element("section", element("h2", text("Shipping Address")) + address) +
                   element("section", element("h2", text("Shipping Method")) +
                                          element("p", text(shipping_label(order->shipping_method)))) +
                   element("p", link(ctx.url("/orders"), "Back to My Orders"));
    return render(ctx, "Order # " + order->number, content);
  });
}

// The user's reviews and writing one.
void site_shopping::add_review_routes(site_router& r) const {
  r.add("GET", "/reviews", [this](page_context& ctx) {
    if (auto login = require_login(ctx)) return *login;
    std::vector<std::vector<html>> rows;
    for (const auto& rv : user_reviews(ctx.db, ctx.user->id))
      rows.push_back({text(rv.created_at.substr(0, 10)), link(product_href(ctx, rv.product_id), rv.product_name),
                      text(std::to_string(rv.rating) + " out of 5"), text(rv.title), text(rv.body)});
    html content = rows.empty() ? element("p", text("You have submitted no reviews."))
                                : data_table({"Created", "Product Name", "Rating", "Summary", "Review"}, rows);
    return render(ctx, "My Product Reviews", content);
  });

  r.add("GET", "/product/{id}/review", [this](page_context& ctx) {
    if (auto login = require_login(ctx)) return *login;
    auto id = ctx.param_id("id");
    auto p = id ? get_product(ctx.db, *id) : std::nullopt;
    if (!p) return error_page(ctx, 404, "There is no product with this number.");
    std::string first = ctx.user->display_name.substr(0, ctx.user->display_name.find(' '));
    html content = element("p", text("You're reviewing: ") + link(product_href(ctx, p->id), p->name)) +
                   review_form(ctx, p->id, {"", first, "", ""}, {});
    return render(ctx, "Write Your Own Review", content);
  });

  r.add("POST", "/product/{id}/review", [this](page_context& ctx) {
    auto id = ctx.param_id("id");
    std::string here = id ? "/product/" + std::to_string(*id) : "/";
    if (auto login = require_login(ctx, here + "/review")) return *login;
    auto p = id ? get_product(ctx.db, *id) : std::nullopt;
    if (!p) return error_page(ctx, 404, "There is no product with this number.");
    const auto& f = ctx.req.form;
    review_input in{f.get("rating"), trim(f.get("nickname")), trim(f.get("title")), trim(f.get("body"))};
    auto errors = validate_review(in);
    if (!errors.empty()) {
      html content = element("p", text("You're reviewing: ") + link(product_href(ctx, p->id), p->name)) +
                     review_form(ctx, p->id, in, errors);
      return render(ctx, "Write Your Own Review", content, 422);
    }
    ctx.db.query(
        "INSERT INTO reviews (product_id, user_id, nickname, rating, title, body, created_at) "
        "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
        {p->id, ctx.user->id, in.nickname, int64_t(in.rating[0] - '0'), in.title, in.body, seed_now()});
    ctx.flash("You submitted your review for " + p->name + ".");
    return http_response::redirect(ctx.url(here));
  });
}

}  // namespace kvarena::sites
