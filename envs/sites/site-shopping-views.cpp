// site-shopping-views.cpp: HTML pieces several shopping pages share: the product grid,
// rating line, result summary, sort form, pagination, breadcrumb, tables and one-button
// forms, plus small text helpers.
#include "picture-pages.h"
#include "site-shopping.h"

namespace kvarena::sites::shopping {

std::string product_href(const page_context& ctx, int64_t id) { return ctx.url("/product/" + std::to_string(id)); }

html action_button(std::string_view action, std::string_view label, std::string_view aria_label,
                   const std::vector<std::pair<std::string, std::string>>& hidden) {
  html inner;
  for (const auto& [n, v] : hidden) inner += hidden_input(n, v);
  inner += element("button", {{"type", "submit"}, {aria_label.empty() ? "" : "aria-label", std::string(aria_label)}},
                   text(label));
  return element("form", {{"method", "post"}, {"action", std::string(action)}, {"class", "inline"}}, inner);
}

html rating_summary(const product_row& p) {
  if (p.review_count == 0) return element("p", {{"class", "rating"}}, text("No reviews yet"));
  std::string s = "Rating: " + rating_text(p.rating_sum, p.review_count) + " out of 5 (" +
                  std::to_string(p.review_count) + (p.review_count == 1 ? " review)" : " reviews)");
  // The stylesheet draws the stars from --fill (an attribute, not a node: the text
  // browser's ids are DOM preorder indices and stay as they were).
  int64_t fill = (p.rating_sum * 100 + p.review_count * 5 / 2) / (p.review_count * 5);
  return element("p", {{"class", "rating"}, {"style", "--fill:" + std::to_string(fill) + "%"}}, text(s));
}

html product_grid(const page_context& ctx, const std::vector<product_row>& rows) {
  if (rows.empty()) return element("p", {{"class", "empty"}}, text("No products match."));
  std::string here = ctx.relative_target();
  std::vector<html> items;
  for (const auto& p : rows) {
    html card = element("h3", link(product_href(ctx, p.id), p.name)) +
                element("p", {{"class", "price"}}, text(format_money(p.price_cents))) + rating_summary(p);
    if (p.stock > 0)
      card += action_button(ctx.url("/cart/add"), "Add to Cart", "Add " + p.name + " to cart",
                            {{"product_id", std::to_string(p.id)}, {"qty", "1"}, {"next", here}});
    else
      card += element("p", {{"class", "stock"}}, text("Out of stock"));
    card += action_button(ctx.url("/wishlist/add"), "Add to Wish List", "Add " + p.name + " to wish list",
                          {{"product_id", std::to_string(p.id)}, {"next", here}});
    std::string thumb = thumb_style(ctx, "product_pictures", p.id);  // a CSS background: no node
    items.push_back(element("article", {{thumb.empty() ? "" : "style", thumb}}, card));
  }
  return list(items, "ol", "products");
}

html result_summary(const product_page& p) {
  if (p.total == 0) return element("p", {{"class", "summary"}}, text("0 items found."));
  int64_t first = int64_t(p.page - 1) * kProductsPerPage + 1;
  int64_t last = first + int64_t(p.rows.size()) - 1;
  return element(
      "p", {{"class", "summary"}},
      text("Items " + std::to_string(first) + "-" + std::to_string(last) + " of " + std::to_string(p.total)));
}

html pagination(const page_context& ctx, const product_page& p, std::string_view path, const product_query& f,
                std::string_view default_sort) {
  auto href = [&](int page) {
    product_query g = f;
    g.page = page;
    return ctx.url(std::string(path)) + product_query_string(g, default_sort);
  };
  return pagination_nav(p.page, p.pages, href);
}

html sort_form(const page_context& ctx, std::string_view path, const product_query& f,
               const std::vector<std::string>& sorts) {
  std::vector<option_item> opts;
  for (const auto& s : sorts) opts.push_back({s, sort_label(s), ""});
  html fields;
  if (!f.q.empty()) fields += hidden_input("q", f.q);
  fields += labeled_select("sort-by", "Sort by", "sort", opts, f.sort) + submit_button("Sort");
  return element("form", {{"method", "get"}, {"action", ctx.url(std::string(path))}, {"class", "sorter"}}, fields);
}

html data_table(const std::vector<std::string>& headers, const std::vector<std::vector<html>>& rows) {
  html head;
  for (const auto& h : headers) head += element("th", {{"scope", "col"}}, text(h));
  html body;
  for (const auto& row : rows) {
    html cells;
    for (const auto& c : row) cells += element("td", c);
    body += element("tr", cells);
  }
  return element("table", element("thead", element("tr", head)) + element("tbody", body));
}

}  // namespace kvarena::sites::shopping
