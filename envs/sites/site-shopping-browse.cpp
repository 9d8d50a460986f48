// site-shopping-browse.cpp: the public shopping pages (home, category, search, product),
// the route table and the page frame.
#include "site-auth.h"
#include "picture-pages.h"
#include "site-shopping.h"

namespace kvarena::sites {

using namespace shopping;

void site_shopping::add_routes(site_router& r) const {
  add_browse_routes(r);
  add_cart_routes(r);
  add_account_routes(r);
  add_rest_routes(r);
  add_picture_routes(r, "product_pictures");
}

page_chrome site_shopping::chrome(const page_context& ctx) const {
  page_chrome c;
  c.site_title = title();
  for (const auto& cat : load_categories(ctx.db))
    if (cat.parent_id == 0) c.nav.push_back({cat.name, ctx.url("/category/" + std::to_string(cat.id))});
  std::string cart = "My Cart";
  if (ctx.user) {
    int64_t n = cart_quantity(ctx.db, ctx.user->id);
    if (n > 0) cart += " (" + std::to_string(n) + ")";
  }
  c.nav.push_back({cart, ctx.url("/cart")});
  c.nav.push_back({"My Wish List", ctx.url("/wishlist")});
  c.nav.push_back({"My Orders", ctx.url("/orders")});
  c.nav.push_back({"My Account", ctx.url("/account")});
  c.search_action = ctx.url("/search");
  c.search_placeholder = "Search entire store here...";
  if (ctx.req.path == ctx.url("/search")) c.search_value = ctx.req.query.get("q");
  c.footer = "One Stop Market: a local test store of kvarena. Prices in US dollars.";
  return c;
}

namespace {

html category_tree(const page_context& ctx, const std::vector<category>& cats) {
  std::vector<tree_item> items;
  for (const auto& c : cats) {
    html a = link(ctx.url("/category/" + std::to_string(c.id)), c.name) + text(" (" + std::to_string(c.products) + ")");
    items.push_back({c.parent_id == 0, a});
  }
  return two_level_list(items, "categories");
}

// One spelling per listing (product_query_string); other spellings of the same query
// (empty fields, default sort, page=1, another order) redirect there, unless a value was
// unusable: the page then explains what was ignored.
std::optional<http_response> canonical_redirect(const page_context& ctx, const std::string& path,
                                                const product_query& f, std::string_view default_sort,
                                                const std::vector<std::string>& problems) {
  size_t q = ctx.req.target.find('?');
  std::string received = q == std::string::npos ? "" : ctx.req.target.substr(q);
  std::string canonical = product_query_string(f, default_sort);
  if (!problems.empty() || received == canonical) return std::nullopt;
  return http_response::redirect(ctx.url(path) + canonical, 302);
}

html results_section(const page_context& ctx, const product_page& page, const std::string& path, const product_query& f,
                     const std::vector<std::string>& sorts) {
  return element("section", {{"aria-labelledby", "results-heading"}},
                 element("h2", {{"id", "results-heading"}}, text("Products")) + result_summary(page) +
                     sort_form(ctx, path, f, sorts) + product_grid(ctx, page.rows) +
                     pagination(ctx, page, path, f, sorts.front()));
}

html review_list(const std::vector<review_row>& reviews) {
  if (reviews.empty()) return element("p", text("No reviews yet. Be the first to review this product."));
  std::vector<html> items;
  for (const auto& r : reviews)
    items.push_back(element(
        "article", element("h3", text(r.title)) +
                       element("p", {{"class", "rating"}}, text("Rating: " + std::to_string(r.rating) + " out of 5")) +
                       text_paragraphs(r.body) +
                       element("p", {{"class", "meta"}},
                               text("Review by " + r.nickname + ", posted on " + r.created_at.substr(0, 10)))));
  return list(items, "ol", "reviews");
}

html detail_list(const page_context& ctx, const product_row& p) {
  std::string availability =
      p.stock > 0 ? "In stock (" + std::to_string(p.stock) + " available)" : std::string("Out of stock");
  std::vector<std::pair<std::string, html>> rows = {
      {"SKU", text(p.sku)},
      {"Price", text(format_money(p.price_cents))},
      {"Availability", text(availability)},
      {"Category", link(ctx.url("/category/" + std::to_string(p.parent_id)), p.parent_name) + text(" > ") +
                       link(ctx.url("/category/" + std::to_string(p.category_id)), p.category_name)},
      {"Product ID", text(std::to_string(p.id))}};
  html inner;
  for (const auto& [k, v] : rows) inner += element("dt", text(k)) + element("dd", v);
  return element("dl", {{"class", "details"}}, inner);
}

html buy_box(const page_context& ctx, const product_row& p) {
  std::string here = "/product/" + std::to_string(p.id);
  html out = element("p", {{"class", "price"}}, text(format_money(p.price_cents))) + rating_summary(p);
  if (p.stock > 0) {
    out +=
        element("form", {{"method", "post"}, {"action", ctx.url("/cart/add")}},
                hidden_input("product_id", std::to_string(p.id)) + hidden_input("next", here) +
                    labeled_input("qty", "Qty", "qty", "1", field_opts().input_type("number").attribute("min", "1")) +
                    submit_button("Add to Cart"));
  } else {
    out += element("p", {{"class", "stock"}}, text("Out of stock: this product cannot be added to the cart."));
  }
  out += action_button(ctx.url("/wishlist/add"), "Add to Wish List", "",
                       {{"product_id", std::to_string(p.id)}, {"next", here}});
  return element("section", {{"aria-label", "Buy"}}, out);
}

}  // namespace

void site_shopping::add_browse_routes(site_router& r) const {
  add_catalogue_routes(r);
  add_product_routes(r);
}

// The home page (featured, top rated, categories) and a category's products.
void site_shopping::add_catalogue_routes(site_router& r) const {
  r.add("GET", "/", [this](page_context& ctx) {
    auto cats = load_categories(ctx.db);
    std::vector<product_row> featured;
    auto st = ctx.db.prepare("SELECT id FROM products WHERE featured = 1 ORDER BY id");
    while (st.step())
      if (auto p = get_product(ctx.db, st.int64(0))) featured.push_back(std::move(*p));
    product_query top_rated;
    top_rated.sort = "rating";
    auto best = find_products(ctx.db, top_rated, 8);
    html content = element("section", element("h2", text("Featured products")) + product_grid(ctx, featured)) +
                   element("section", element("h2", text("Top rated")) + product_grid(ctx, best.rows)) +
                   element("section", element("h2", text("Shop by category")) + category_tree(ctx, cats));
    return render(ctx, "Welcome to One Stop Market", content);
  });

  r.add("GET", "/category/{id}", [this](page_context& ctx) {
    auto cats = load_categories(ctx.db);
    auto id = ctx.param_id("id");
    const category* c = id ? find_category(cats, *id) : nullptr;
    if (!c) return error_page(ctx, 404, "There is no such category. Pick one from the menu.");
    std::vector<std::string> problems;
    auto f = product_query_from(ctx.req.query, category_sorts(), problems);
    f.q.clear();
    f.category_id = c->id;
    std::string path = "/category/" + std::to_string(c->id);
    if (auto r = canonical_redirect(ctx, path, f, category_sorts().front(), problems)) return *r;
    auto page = find_products(ctx.db, f);
    std::vector<std::pair<std::string, std::string>> crumbs;
    html subcats;
    if (c->parent_id != 0) {
      if (const category* parent = find_category(cats, c->parent_id))
        crumbs.emplace_back(parent->name, ctx.url("/category/" + std::to_string(parent->id)));
    } else {
      std::vector<html> items;
      for (const auto& s : cats)
        if (s.parent_id == c->id)
          items.push_back(link(ctx.url("/category/" + std::to_string(s.id)), s.name) +
                          text(" (" + std::to_string(s.products) + ")"));
      subcats = element("section", element("h2", text("Shop by subcategory")) + list(items));
    }
    crumbs.emplace_back(c->name, ctx.url(path));
    html content = breadcrumb(ctx, crumbs) + error_summary(problems) + subcats +
                   results_section(ctx, page, path, f, category_sorts());
    return render(ctx, c->name, content);
  });
}

// Search results and one product's page.
void site_shopping::add_product_routes(site_router& r) const {
  r.add("GET", "/search", [this](page_context& ctx) {
    std::vector<std::string> problems;
    auto f = product_query_from(ctx.req.query, search_sorts(), problems);
    if (auto r = canonical_redirect(ctx, "/search", f, search_sorts().front(), problems)) return *r;
    if (f.q.empty()) {
      html content = error_summary(problems) +
                     element("p", text("Enter a word to search for in the search box, e.g. headphones."));
      return render(ctx, "Search", content);
    }
    auto page = find_products(ctx.db, f);
    html content = error_summary(problems) + results_section(ctx, page, "/search", f, search_sorts());
    return render(ctx, "Search results for: '" + f.q + "'", content);
  });

  r.add("GET", "/product/{id}", [this](page_context& ctx) {
    auto id = ctx.param_id("id");
    auto p = id ? get_product(ctx.db, *id) : std::nullopt;
    if (!p) return error_page(ctx, 404, "There is no product with this number.");
    std::string here = "/product/" + std::to_string(p->id);
    html content = breadcrumb(ctx, {{p->parent_name, ctx.url("/category/" + std::to_string(p->parent_id))},
                                    {p->category_name, ctx.url("/category/" + std::to_string(p->category_id))}});
    content += buy_box(ctx, *p);
    content += element("section", element("h2", text("Details")) + text_paragraphs(p->description));
    content += element("section", element("h2", text("More Information")) + detail_list(ctx, *p));
    html write = ctx.user
                     ? review_form(ctx, p->id,
                                   {"", ctx.user->display_name.substr(0, ctx.user->display_name.find(' ')), "", ""}, {})
                     : element("p", link(ctx.url("/login?next=" + url_encode(here)), "Log in to write a review"));
    content += element(
        "section", {{"id", "reviews"}, {"aria-labelledby", "reviews-heading"}},
        element("h2", {{"id", "reviews-heading"}}, text("Customer Reviews (" + std::to_string(p->review_count) + ")")) +
            review_list(product_reviews(ctx.db, p->id)));
    content += element("section", element("h2", text("Write Your Own Review")) + write);
    // Last in <main> (the stylesheet shows it left of the buy box), so only the nodes after
    // it get new ids in the text browser; the alt text is the product name, as Magento's.
    content += picture_figure(ctx, "product_pictures", p->id, p->name, "product-media");
    return render(ctx, p->name, content);
  });
}

}  // namespace kvarena::sites
