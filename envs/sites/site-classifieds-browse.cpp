// site-classifieds-browse.cpp: the public classifieds pages (home, category, search,
// listing, seller profile), the route table and the page frame.
#include "site-auth.h"
#include "picture-pages.h"
#include "site-classifieds.h"

namespace kvarena::sites {

using namespace classifieds;

void site_classifieds::add_routes(site_router& r) const {
  add_browse_routes(r);
  add_account_routes(r);
  add_picture_routes(r, "listing_pictures");
}

page_chrome site_classifieds::chrome(const page_context& ctx) const {
  page_chrome c;
  c.site_title = title();
  c.nav = {{"Home", ctx.url("/")},
           {"All listings", ctx.url("/search")},
           {"Post a listing", ctx.url("/post")},
           {"My listings", ctx.url("/my/listings")},
           {"Messages", ctx.url("/my/messages")}};
  c.search_action = ctx.url("/search");
  c.search_placeholder = "e.g., a blue used car";
  if (ctx.req.path == ctx.url("/search")) c.search_value = ctx.req.query.get("q");
  c.footer = "Classifieds: a local test site of kvarena. Prices in US dollars.";
  return c;
}

namespace {

html category_tree(const page_context& ctx, const std::vector<category>& cats) {
  std::vector<tree_item> items;
  for (const auto& c : cats) {
    html a = link(ctx.url("/category/" + c.slug), c.name) + text(" (" + std::to_string(c.listings) + ")");
    items.push_back({c.parent_id == 0, a});
  }
  return two_level_list(items, "categories");
}

html results_section(const page_context& ctx, const listing_page& page, std::string_view path, const listing_filter& f,
                     bool include_category) {
  return element("section", {{"aria-labelledby", "results-heading"}},
                 element("h2", {{"id", "results-heading"}}, text("Listings")) + result_summary(page) +
                     listing_list(ctx, page.rows) + pagination(ctx, page, path, f, include_category));
}

// Listing searches have one spelling (filter_query_string); any other spelling of the same
// filters (empty fields of a submitted form, another order, "page=1") is redirected there.
// Not when some value was unusable: the page then explains what was ignored.
std::optional<http_response> canonical_redirect(const page_context& ctx, const std::string& path, const listing_filter& f,
                                                bool include_category, const std::vector<std::string>& problems) {
  size_t q = ctx.req.target.find('?');
  std::string received = q == std::string::npos ? "" : ctx.req.target.substr(q);
  std::string canonical = filter_query_string(f, include_category);
  if (!problems.empty() || received == canonical) return std::nullopt;
  return http_response::redirect(ctx.url(path) + canonical, 302);
}

html detail_list(const page_context& ctx, const listing_row& r) {
  std::vector<std::pair<std::string, html>> rows = {
      {"Price", text(format_money(r.price_cents))},
      {"Condition", text(condition_label(r.condition))},
      {"Category", link(ctx.url("/category/" + r.parent_slug), r.parent_name) + text(" > ") +
                       link(ctx.url("/category/" + r.category_slug), r.category_name)},
      {"Location", text(r.location)},
      {"Posted", text(r.posted_at)},
      {"Seller", link(ctx.url("/user/" + r.seller_username), r.seller_name)},
      {"Listing ID", text(std::to_string(r.id))}};
  html inner;
  for (const auto& [k, v] : rows) inner += element("dt", text(k)) + element("dd", v);
  return element("dl", {{"class", "details"}}, inner);
}

}  // namespace

void site_classifieds::add_browse_routes(site_router& r) const {
  add_search_routes(r);
  add_listing_routes(r);
}

// Listings found by a filter: home (latest), search, a category.
void site_classifieds::add_search_routes(site_router& r) const {
  r.add("GET", "/", [this](page_context& ctx) {
    auto cats = load_categories(ctx.db);
    listing_filter latest;
    auto page = find_listings(ctx.db, latest, 12);
    html content = element("section", element("h2", text("Browse categories")) + category_tree(ctx, cats)) +
                   element("section", element("h2", text("Latest listings")) + listing_list(ctx, page.rows) +
                                          element("p", link(ctx.url("/search"), "See all listings")));
    return render(ctx, "Buy and sell near you", content);
  });

  r.add("GET", "/search", [this](page_context& ctx) {
    std::vector<std::string> problems;
    auto f = filter_from_query(ctx.db, ctx.req.query, problems);
    if (auto r = canonical_redirect(ctx, "/search", f, true, problems)) return *r;
    auto cats = load_categories(ctx.db);
    auto page = find_listings(ctx.db, f);
    std::string title = f.q.empty() ? "All listings" : "Search results for \"" + f.q + "\"";
    html content = error_summary(problems) + filter_form(ctx, cats, f) + results_section(ctx, page, "/search", f, true);
    return render(ctx, title, content);
  });

  r.add("GET", "/category/{slug}", [this](page_context& ctx) {
    auto cats = load_categories(ctx.db);
    const category* c = find_category(cats, ctx.params["slug"]);
    if (!c) return error_page(ctx, 404, "There is no category '" + ctx.params["slug"] + "'.");
    std::vector<std::string> problems;
    auto f = filter_from_query(ctx.db, ctx.req.query, problems);
    f.category = c->slug;
    std::string path = "/category/" + c->slug;
    if (auto r = canonical_redirect(ctx, path, f, false, problems)) return *r;
    auto page = find_listings(ctx.db, f);
    std::vector<std::pair<std::string, std::string>> crumbs;
    html subcats;
    if (c->parent_id != 0) {
      for (const auto& p : cats)
        if (p.id == c->parent_id) crumbs.emplace_back(p.name, ctx.url("/category/" + p.slug));
    } else {
      std::vector<html> items;
      for (const auto& s : cats)
        if (s.parent_id == c->id)
          items.push_back(link(ctx.url("/category/" + s.slug), s.name) + text(" (" + std::to_string(s.listings) + ")"));
      subcats = element("section", element("h2", text("Subcategories")) + list(items));
    }
    crumbs.emplace_back(c->name, ctx.url("/category/" + c->slug));
    html content = breadcrumb(ctx, crumbs) + error_summary(problems) + subcats + filter_form(ctx, cats, f) +
                   results_section(ctx, page, path, f, false);
    return render(ctx, c->name, content);
  });
}

// One listing, one seller's listings, and the placeholder photo.
void site_classifieds::add_listing_routes(site_router& r) const {
  r.add("GET", "/item/{id}", [this](page_context& ctx) {
    auto id = ctx.param_id("id");
    auto row = id ? get_listing(ctx.db, *id) : std::nullopt;
    if (!row) return error_page(ctx, 404, "There is no listing with this number; it may have been deleted.");
    html content = breadcrumb(ctx, {{row->parent_name, ctx.url("/category/" + row->parent_slug)},
                                    {row->category_name, ctx.url("/category/" + row->category_slug)}});
    content += element("p", {{"class", "price"}}, text(format_money(row->price_cents)));
    if (!row->image_alt.empty())
    {
      // The seeded listings with a photo description have a picture; a listing posted
      // during an episode shows the placeholder.
      std::string src = picture_url(ctx, "listing_pictures", row->id);
      content += element("figure", void_element("img", {{"src", src.empty() ? ctx.url("/static/no-photo.svg") : src},
                                                        {"alt", row->image_alt}}));
    }
    content += detail_list(ctx, *row);
    content += element("section", element("h2", text("Description")) + text_paragraphs(row->description));
    std::string here = "/item/" + std::to_string(row->id);
    if (ctx.user && ctx.user->id == row->seller_id) {
      content += element("section", element("h2", text("Manage your listing")) +
                                        list({link(ctx.url(here + "/edit"), "Edit listing"),
                                              link(ctx.url(here + "/delete"), "Delete listing")}));
    } else if (ctx.user) {
      content += element(
          "section", element("h2", text("Contact the seller")) +
                         element("form", {{"method", "post"}, {"action", ctx.url(here + "/contact")}},
                                 labeled_textarea("contact-message", "Message to " + row->seller_name, "message", "",
                                                  field_opts().mark_required().text_rows(4)) +
                                     submit_button("Send message")));
    } else {
      content += element("section", element("h2", text("Contact the seller")) +
                                        element("p", link(ctx.url("/login?next=" + url_encode(here)),
                                                          "Log in to contact the seller")));
    }
    return render(ctx, row->title, content);
  });

  r.add("GET", "/user/{username}", [this](page_context& ctx) {
    auto st = ctx.db.prepare("SELECT id, display_name, location, joined_at FROM users WHERE username = ?1");
    st.bind(1, ctx.params["username"]);
    if (!st.step()) return error_page(ctx, 404, "There is no user '" + ctx.params["username"] + "'.");
    listing_filter f;
    f.seller_id = st.int64(0);
    std::vector<std::string> ignored;
    f.page = filter_from_query(ctx.db, ctx.req.query, ignored).page;
    auto page = find_listings(ctx.db, f);
    html content = element("p", text("Location: " + st.text(2) + ". Member since " + st.text(3).substr(0, 10) + ".")) +
                   results_section(ctx, page, "/user/" + ctx.params["username"], f, false);
    return render(ctx, st.text(1), content);
  });

  r.add("GET", "/static/no-photo.svg", [](page_context&) {
    http_response res;
    res.content_type = "image/svg+xml";
    res.body =
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"320\" height=\"240\"><rect width=\"320\" height=\"240\" "
        "fill=\"#ddd\"/><text x=\"160\" y=\"125\" text-anchor=\"middle\" font-family=\"sans-serif\">Photo</text></svg>";
    return res;
  });
}

}  // namespace kvarena::sites
