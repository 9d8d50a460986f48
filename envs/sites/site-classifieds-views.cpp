// site-classifieds-views.cpp: HTML pieces several classifieds pages share: the result
// list, pagination, the search filter form and the option lists of the selects.
#include "picture-pages.h"
#include "seed-data.h"
#include "site-classifieds.h"

namespace kvarena::sites::classifieds {

html listing_list(const page_context& ctx, const std::vector<listing_row>& rows) {
  if (rows.empty()) return element("p", {{"class", "empty"}}, text("No listings match."));
  std::vector<html> items;
  for (const auto& r : rows) {
    std::string meta = format_money(r.price_cents) + " | " + condition_label(r.condition) + " | " + r.location +
                       " | Posted " + r.posted_at.substr(0, 10);
    std::string thumb = thumb_style(ctx, "listing_pictures", r.id);  // a CSS background: no node
    items.push_back(element("article", {{thumb.empty() ? "" : "style", thumb}},
                            element("h3", link(ctx.url("/item/" + std::to_string(r.id)), r.title)) +
                                element("p", {{"class", "meta"}}, text(meta))));
  }
  return list(items, "ol", "results");
}

html result_summary(const listing_page& p) {
  if (p.total == 0) return element("p", text("0 listings found."));
  int64_t first = int64_t(p.page - 1) * kListingsPerPage + 1;
  int64_t last = first + int64_t(p.rows.size()) - 1;
  return element("p", {{"class", "summary"}},
                 text("Showing " + std::to_string(first) + "-" + std::to_string(last) + " of " +
                      std::to_string(p.total) + (p.total == 1 ? " listing" : " listings")));
}

html pagination(const page_context& ctx, const listing_page& p, std::string_view path, const listing_filter& f,
                bool include_category) {
  auto href = [&](int page) {
    listing_filter g = f;
    g.page = page;
    return ctx.url(std::string(path)) + filter_query_string(g, include_category);
  };
  return pagination_nav(p.page, p.pages, href);
}

std::vector<option_item> leaf_category_options(const std::vector<category>& cats) {
  std::vector<option_item> out;
  std::string group;
  for (const auto& c : cats) {
    if (c.parent_id == 0) group = c.name;
    else out.push_back({c.slug, c.name, group});
  }
  return out;
}

std::vector<option_item> location_options() {
  std::vector<option_item> out;
  for (const auto& c : us_cities()) out.push_back({c.label(), c.label(), ""});
  return out;
}

std::vector<option_item> condition_options() {
  std::vector<option_item> out;
  for (const auto& c : conditions()) out.push_back({c.value, c.label, ""});
  return out;
}

html filter_form(const page_context& ctx, const std::vector<category>& cats, const listing_filter& f) {
  // Filters pick a whole top category too ("All Vehicles"), unlike the posting form.
  std::vector<option_item> cat_opts = {{"", "All categories", ""}};
  for (const auto& c : cats) {
    if (c.parent_id == 0) cat_opts.push_back({c.slug, "All " + c.name, c.name});
    else cat_opts.push_back({c.slug, c.name, cat_opts.back().group});
  }
  std::vector<option_item> cond_opts = {{"", "Any condition", ""}};
  for (auto& o : condition_options()) cond_opts.push_back(o);
  std::vector<option_item> loc_opts = {{"", "Any location", ""}};
  for (auto& o : location_options()) loc_opts.push_back(o);
  std::vector<option_item> sort_opts = {
      {"newest", "Newest first", ""}, {"price_asc", "Price: low to high", ""}, {"price_desc", "Price: high to low", ""}};
  auto dollars = [](const std::optional<int64_t>& c) { return c ? price_input_text(*c) : std::string(); };
  html fields = labeled_input("filter-q", "Keywords", "q", f.q, field_opts().input_type("search")) +
                labeled_select("filter-category", "Category", "category", cat_opts, f.category) +
                labeled_input("filter-min-price", "Minimum price ($)", "min_price", dollars(f.min_cents),
                              field_opts().input_type("number").attribute("step", "any")) +
                labeled_input("filter-max-price", "Maximum price ($)", "max_price", dollars(f.max_cents),
                              field_opts().input_type("number").attribute("step", "any")) +
                labeled_select("filter-condition", "Condition", "condition", cond_opts, f.condition) +
                labeled_select("filter-location", "Location", "location", loc_opts, f.location) +
                labeled_select("filter-sort", "Sort by", "sort", sort_opts, f.sort) + submit_button("Apply filters");
  return element("section", {{"aria-label", "Filters"}},
                 element("h2", text("Filter listings")) +
                     element("form", {{"method", "get"}, {"action", ctx.url("/search")}}, fields));
}

}  // namespace kvarena::sites::classifieds
