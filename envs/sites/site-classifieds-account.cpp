// site-classifieds-account.cpp: the classifieds pages that need a login: post, edit and
// delete one's own listing (with validation messages that say what to fix), contact a
// seller, "my listings" and "messages". Every change goes into the tenant's database and
// is stamped with the seeded world's clock (seed_now), so end states are reproducible.
#include <algorithm>
#include <map>

#include "seed-data.h"
#include "site-auth.h"
#include "site-classifieds.h"

namespace kvarena::sites {

using namespace classifieds;

namespace {

struct listing_input {
  std::string title, description, price, category, condition, location, image_alt;
};

struct listing_values {
  std::string title, description, condition, location, image_alt;
  int64_t price_cents = 0, category_id = 0;
};

listing_input input_from_form(const param_list& f) {
  return {trim(f.get("title")),     trim(f.get("description")), trim(f.get("price")),    f.get("category"),
          f.get("condition"),       f.get("location"),          trim(f.get("image_alt"))};
}

listing_input input_from_row(const listing_row& r) {
  return {r.title, r.description, price_input_text(r.price_cents), r.category_slug, r.condition, r.location,
          r.image_alt};
}

// Field name -> what to fix. Empty when the input is valid (then `out` is filled).
std::map<std::string, std::string> validate(sqlite_db& db, const listing_input& in, listing_values& out) {
  std::map<std::string, std::string> errors;
  if (in.title.size() < 5 || in.title.size() > 100)
    errors["title"] = "Title must be 5 to 100 characters long (it has " + std::to_string(in.title.size()) + ").";
  if (in.description.size() < 20 || in.description.size() > 5000)
    errors["description"] =
        "Description must be 20 to 5000 characters long (it has " + std::to_string(in.description.size()) + ").";
  auto price = parse_price_cents(in.price);
  if (in.price.empty()) errors["price"] = "Enter a price in dollars, e.g. 250 or 19.99 (0 for free).";
  else if (!price) errors["price"] = "Price must be an amount in dollars, e.g. 250 or 19.99.";
  else if (*price > 100000000) errors["price"] = "Price must be at most $1,000,000.";
  auto cats = load_categories(db);
  const category* cat = find_category(cats, in.category);
  if (in.category.empty()) errors["category"] = "Choose a category.";
  else if (!cat) errors["category"] = "Choose a category from the list.";
  else if (cat->parent_id == 0) errors["category"] = "Choose a subcategory (such as Cars), not a whole section.";
  if (condition_label(in.condition).empty()) errors["condition"] = "Choose the item's condition.";
  bool known_location = std::any_of(us_cities().begin(), us_cities().end(),
                                    [&](const us_city& c) { return c.label() == in.location; });
  if (!known_location) errors["location"] = "Choose a location from the list.";
  if (in.image_alt.size() > 200) errors["image_alt"] = "Photo description must be at most 200 characters.";
  if (errors.empty())
    out = {in.title, in.description, in.condition, in.location, in.image_alt, *price, cat->id};
  return errors;
}

html listing_form(const page_context& ctx, std::string_view action, const listing_input& in,
                  const std::map<std::string, std::string>& errors, std::string_view submit_label) {
  auto err = [&](const char* field) {
    auto it = errors.find(field);
    return it == errors.end() ? std::string() : it->second;
  };
  std::vector<std::string> summary;
  for (const char* f : {"title", "description", "price", "category", "condition", "location", "image_alt"})
    if (!err(f).empty()) summary.push_back(err(f));
  std::vector<option_item> cats = {{"", "Choose a category", ""}};
  for (auto& o : leaf_category_options(load_categories(ctx.db))) cats.push_back(o);
  std::vector<option_item> conds = {{"", "Choose a condition", ""}};
  for (auto& o : condition_options()) conds.push_back(o);
  std::vector<option_item> locs = {{"", "Choose a location", ""}};
  for (auto& o : location_options()) locs.push_back(o);
  html fields =
      labeled_input("listing-title", "Title", "title", in.title, field_opts().mark_required().show_error(err("title"))) +
      labeled_textarea("listing-description", "Description", "description", in.description,
                       field_opts().mark_required().show_error(err("description"))) +
      labeled_input("listing-price", "Price ($)", "price", in.price,
                    field_opts().mark_required().show_error(err("price")).hint("In US dollars; 0 means free.")) +
      labeled_select("listing-category", "Category", "category", cats, in.category,
                     field_opts().mark_required().show_error(err("category"))) +
      labeled_select("listing-condition", "Condition", "condition", conds, in.condition,
                     field_opts().mark_required().show_error(err("condition"))) +
      labeled_select("listing-location", "Location", "location", locs, in.location,
                     field_opts().mark_required().show_error(err("location"))) +
      labeled_input("listing-image-alt", "Photo description (optional)", "image_alt", in.image_alt,
                    field_opts().show_error(err("image_alt"))) +
      submit_button(submit_label);
  return error_summary(summary) +
         element("form", {{"method", "post"}, {"action", ctx.url(std::string(action))}}, fields);
}

// The listing when it exists and the logged-in user sells it; otherwise the page to send.
struct owned {
  std::optional<listing_row> row;
  std::optional<http_response> response;
};
owned own_listing(page_context& ctx, const site& s, std::string_view action) {
  auto id = ctx.param_id("id");
  std::string here = id ? "/item/" + std::to_string(*id) : "/";
  if (auto login = require_login(ctx, here + std::string(action))) return {std::nullopt, std::move(login)};
  auto row = id ? get_listing(ctx.db, *id) : std::nullopt;
  if (!row) return {std::nullopt, s.error_page(ctx, 404, "There is no listing with this number; it may have been deleted.")};
  if (row->seller_id != ctx.user->id)
    return {std::nullopt, s.error_page(ctx, 403, "Only the seller can change this listing.")};
  return {std::move(row), std::nullopt};
}

html messages_table(const page_context& ctx, std::string_view who_column, sqlite_stmt& st) {
  html head = element("tr", element("th", {{"scope", "col"}}, text(who_column)) +
                                element("th", {{"scope", "col"}}, text("Listing")) +
                                element("th", {{"scope", "col"}}, text("Message")) +
                                element("th", {{"scope", "col"}}, text("Sent")));
  html body;
  int n = 0;
  while (st.step()) {
    ++n;
    html listing = st.is_null(2) ? text(st.text(1) + " (deleted)")
                                 : link(ctx.url("/item/" + std::to_string(st.int64(0))), st.text(1));
    body += element("tr", element("td", link(ctx.url("/user/" + st.text(3)), st.text(4))) + element("td", listing) +
                              element("td", text(st.text(5))) + element("td", text(st.text(6))));
  }
  if (n == 0) return element("p", text("No messages."));
  return element("table", element("thead", head) + element("tbody", body));
}

}  // namespace

void site_classifieds::add_account_routes(site_router& r) const {
  add_listing_form_routes(r);
  add_listing_action_routes(r);
  add_my_pages_routes(r);
}

// Posting a listing and editing one's own (the same form).
void site_classifieds::add_listing_form_routes(site_router& r) const {
  r.add("GET", "/post", [this](page_context& ctx) {
    if (auto login = require_login(ctx)) return *login;
    listing_input in;
    in.category = ctx.req.query.get("category");  // prefill, e.g. /post?category=cars
    in.condition = ctx.req.query.get("condition");
    return render(ctx, "Post a listing", listing_form(ctx, "/post", in, {}, "Post listing"));
  });

  r.add("POST", "/post", [this](page_context& ctx) {
    if (auto login = require_login(ctx, "/post")) return *login;
    listing_input in = input_from_form(ctx.req.form);
    listing_values v;
    auto errors = validate(ctx.db, in, v);
    if (!errors.empty()) return render(ctx, "Post a listing", listing_form(ctx, "/post", in, errors, "Post listing"), 422);
    auto st = ctx.db.prepare(
        "INSERT INTO listings (seller_id, category_id, title, description, price_cents, condition, location, "
        "posted_at, image_alt) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)");
    st.bind_all({ctx.user->id, v.category_id, v.title, v.description, v.price_cents, v.condition, v.location,
                 seed_now(), v.image_alt.empty() ? sql_value(nullptr) : sql_value(v.image_alt)});
    st.step();
    int64_t id = ctx.db.last_insert_rowid();
    ctx.flash("Your listing was posted.");
    return http_response::redirect(ctx.url("/item/" + std::to_string(id)));
  });

  r.add("GET", "/item/{id}/edit", [this](page_context& ctx) {
    auto own = own_listing(ctx, *this, "/edit");
    if (own.response) return *own.response;
    std::string action = "/item/" + std::to_string(own.row->id) + "/edit";
    return render(ctx, "Edit listing", listing_form(ctx, action, input_from_row(*own.row), {}, "Save changes"));
  });

  r.add("POST", "/item/{id}/edit", [this](page_context& ctx) {
    auto own = own_listing(ctx, *this, "/edit");
    if (own.response) return *own.response;
    std::string here = "/item/" + std::to_string(own.row->id);
    listing_input in = input_from_form(ctx.req.form);
    listing_values v;
    auto errors = validate(ctx.db, in, v);
    if (!errors.empty()) return render(ctx, "Edit listing", listing_form(ctx, here + "/edit", in, errors, "Save changes"), 422);
    auto st = ctx.db.prepare(
        "UPDATE listings SET category_id = ?1, title = ?2, description = ?3, price_cents = ?4, condition = ?5, "
        "location = ?6, image_alt = ?7 WHERE id = ?8");
    st.bind_all({v.category_id, v.title, v.description, v.price_cents, v.condition, v.location,
                 v.image_alt.empty() ? sql_value(nullptr) : sql_value(v.image_alt), own.row->id});
    st.step();
    ctx.flash("Your changes were saved.");
    return http_response::redirect(ctx.url(here));
  });
}

// Deleting one's own listing; messaging the seller of another.
void site_classifieds::add_listing_action_routes(site_router& r) const {
  r.add("GET", "/item/{id}/delete", [this](page_context& ctx) {
    auto own = own_listing(ctx, *this, "/delete");
    if (own.response) return *own.response;
    std::string here = "/item/" + std::to_string(own.row->id);
    html content = element("p", text("Delete \"" + own.row->title + "\"? This cannot be undone.")) +
                   post_button(ctx.url(here + "/delete"), "Yes, delete this listing") +
                   element("p", link(ctx.url(here), "No, keep it"));
    return render(ctx, "Delete listing", content);
  });

  r.add("POST", "/item/{id}/delete", [this](page_context& ctx) {
    auto own = own_listing(ctx, *this, "/delete");
    if (own.response) return *own.response;
    auto st = ctx.db.prepare("DELETE FROM listings WHERE id = ?1");
    st.bind(1, own.row->id);
    st.step();
    ctx.flash("Your listing \"" + own.row->title + "\" was deleted.");
    return http_response::redirect(ctx.url("/my/listings"));
  });

  r.add("POST", "/item/{id}/contact", [this](page_context& ctx) {
    auto id = ctx.param_id("id");
    std::string here = id ? "/item/" + std::to_string(*id) : "/";
    if (auto login = require_login(ctx, here)) return *login;
    auto row = id ? get_listing(ctx.db, *id) : std::nullopt;
    if (!row) return error_page(ctx, 404, "There is no listing with this number; it may have been deleted.");
    std::string body = trim(ctx.req.form.get("message"));
    std::string problem;
    if (row->seller_id == ctx.user->id) problem = "This is your own listing; you cannot message yourself.";
    else if (body.empty()) problem = "Write a message before sending it.";
    else if (body.size() > 2000) problem = "Messages must be at most 2000 characters.";
    if (!problem.empty()) {
      html content = error_summary({problem}) + element("p", link(ctx.url(here), "Back to the listing"));
      return render(ctx, "Message not sent", content, 422);
    }
    auto st = ctx.db.prepare(
        "INSERT INTO messages (listing_id, listing_title, sender_id, recipient_id, body, sent_at) "
        "VALUES (?1, ?2, ?3, ?4, ?5, ?6)");
    st.bind_all({row->id, row->title, ctx.user->id, row->seller_id, body, seed_now()});
    st.step();
    ctx.flash("Your message was sent to " + row->seller_name + ".");
    return http_response::redirect(ctx.url(here));
  });
}

// The logged-in user's own listings and messages.
void site_classifieds::add_my_pages_routes(site_router& r) const {
  r.add("GET", "/my/listings", [this](page_context& ctx) {
    if (auto login = require_login(ctx)) return *login;
    listing_filter f;
    f.seller_id = ctx.user->id;
    std::vector<std::string> ignored;
    f.page = filter_from_query(ctx.db, ctx.req.query, ignored).page;
    auto page = find_listings(ctx.db, f);
    html rows;
    for (const auto& l : page.rows) {
      std::string here = "/item/" + std::to_string(l.id);
      rows += element("tr", element("td", link(ctx.url(here), l.title)) + element("td", text(format_money(l.price_cents))) +
                                element("td", text(l.posted_at.substr(0, 10))) +
                                element("td", link(ctx.url(here + "/edit"), "Edit") + text(" ") +
                                                  link(ctx.url(here + "/delete"), "Delete")));
    }
    html content = element("p", link(ctx.url("/post"), "Post a new listing")) + result_summary(page);
    if (!page.rows.empty()) {
      html head = element("tr", element("th", {{"scope", "col"}}, text("Title")) +
                                    element("th", {{"scope", "col"}}, text("Price")) +
                                    element("th", {{"scope", "col"}}, text("Posted")) +
                                    element("th", {{"scope", "col"}}, text("Actions")));
      content += element("table", element("thead", head) + element("tbody", rows));
    }
    content += pagination(ctx, page, "/my/listings", f, false);
    return render(ctx, "My listings", content);
  });

  r.add("GET", "/my/messages", [this](page_context& ctx) {
    if (auto login = require_login(ctx)) return *login;
    // listing id, title as sent, live listing id (NULL if deleted), other user, name, body, time
    auto query = [&](const char* mine, const char* other) {
      auto st = ctx.db.prepare(std::string("SELECT m.listing_id, m.listing_title, l.id, u.username, u.display_name, "
                                           "m.body, m.sent_at FROM messages m JOIN users u ON u.id = m.") +
                               other + " LEFT JOIN listings l ON l.id = m.listing_id WHERE m." + mine +
                               " = ?1 ORDER BY m.sent_at DESC, m.id DESC");
      st.bind(1, ctx.user->id);
      return st;
    };
    auto received = query("recipient_id", "sender_id");
    auto sent = query("sender_id", "recipient_id");
    html content = element("section", element("h2", text("Received")) + messages_table(ctx, "From", received)) +
                   element("section", element("h2", text("Sent")) + messages_table(ctx, "To", sent));
    return render(ctx, "Messages", content);
  });
}

}  // namespace kvarena::sites
