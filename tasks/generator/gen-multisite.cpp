// gen-multisite.cpp: tasks across two sites, started with one tab per site (start_url
// "A |AND| B", as VWA's multi-site tasks): carry a price from the store to a classifieds
// listing or a forum post, and compare the same kind of item on both sites.
#include <stdexcept>

#include "generator/gen-templates.h"

namespace kvarena::tasks::gen {
namespace {

draft base(const std::vector<std::string>& sites, const std::string& name, int template_id,
           const std::string& intent_template) {
  draft d;
  d.sites = sites;
  for (const std::string& s : sites) {
    std::string upper;
    for (char c : s) upper += static_cast<char>(c >= 'a' && c <= 'z' ? c - 'a' + 'A' : c);
    d.start_url += (d.start_url.empty() ? "" : " |AND| ") + ("__" + upper + "__");
  }
  d.template_name = "multisite." + name;
  d.template_id = template_id;
  d.intent_template = intent_template;
  d.reasoning = "medium";
  d.overall = "hard";
  return d;
}

void post_offer_price(plan_builder& p, const std::string& title, const std::string& desc, int64_t cents,
                     const std::string& category, const std::string& city) {
  p.click("link", "Post a listing")
      .type("textbox", "Title (required)", title)
      .type("textbox", "Description (required)", desc)
      .type("textbox", "Price ($) (required)", price_input(cents))
      .type("combobox", "Category (required)", category)
      .type("combobox", "Condition (required)", "New")
      .type("combobox", "Location (required)", city)
      .click("button", "Post listing")
      .expect("Your listing was posted.");
}

void store_to_classifieds(const site_data& data, std::vector<draft>& out) {
  std::vector<json> items = shopping_nameable_products(data, "p.price_cents >= 3000 AND c.parent_id = 1");
  const struct {
    const char* category;
    const char* city;
  } where[] = {{"TV & Audio", "Seattle, WA"}, {"Computers", "Chicago, IL"}};
  for (size_t k = 0; k < 2; ++k) {
    const json& r = spread(items, k * 2 + 1, 4, "electronics of $30 or more");
    int64_t offer = num(r, "price_cents") - 1000;
    std::string title = "Unused: " + str(r, "name");
    std::string desc = "Never used, still sealed in the original box. Pickup only.";
    draft d = base({"shopping", "classifieds"}, "store_price_to_listing", 401,
                   "I bought \"{product}\" from One Stop Market but never used it. Sell it on the classifieds for $10 "
                   "less than the store's current price: title \"{title}\", category {category}, condition New, location "
                   "{location}, description \"{description}\".");
    d.instantiation = {{"product", str(r, "name")}, {"title", title}, {"category", where[k].category},
                       {"location", where[k].city}, {"description", desc}};
    auto price = html_target("func:classifieds_get_latest_listing_url('__CLASSIFIEDS__')", qs("p.price"));
    auto h1 = html_target("last", qs("main h1"));
    expect_html(d, {with_exact(price, money(offer)), with_exact(h1, title)});
    shopping_find_product(d.plan, str(r, "name"));
    d.plan.expect(money(num(r, "price_cents"))).tab(1);
    post_offer_price(d.plan, title, desc, offer, where[k].category, where[k].city);
    d.plan.stop();
    out.push_back(d);
  }
}

void compare_prices(const site_data& data, std::vector<draft>& out) {
  const struct {
    const char* listing_like;
    const char* product_like;
  } pairs[] = {{"%tent%", "%Dome Tent%"},
               {"%headphones%", "%Over-Ear Headphones%"},
               {"%keyboard%", "%Mechanical Gaming Keyboard%"},
               {"%lamp%", "%Lamp%"},
               {"%camera%", "%Camera%"},
               {"%coffee%", "%Coffee%"}};
  int made = 0;
  for (const auto& pr : pairs) {
    if (made == 2) break;
    json listings = data.rows("classifieds", std::string(k_classifieds_listing_sql) + "WHERE l.title LIKE " +
                                                 sql_text(pr.listing_like) +
                                                 " AND (SELECT COUNT(*) FROM listings o WHERE o.title = l.title) = 1 "
                                                 "ORDER BY l.id");
    json products = data.rows("shopping", std::string(k_shopping_product_sql) + "WHERE p.name LIKE " +
                                              sql_text(pr.product_like) + " ORDER BY p.id");
    const json* l = nullptr;
    const json* p = nullptr;
    for (const json& a : listings)
      for (const json& b : products)
        if (!l && num(a, "price_cents") != num(b, "price_cents") &&
            classifieds_search_count(data, str(a, "title")) <= 20 && shopping_search_count(data, str(b, "name")) <= 12) {
          l = &a;
          p = &b;
        }
    if (!l) continue;
    ++made;
    int64_t lc = num(*l, "price_cents"), pc = num(*p, "price_cents");
    bool store_cheaper = pc < lc;
    std::string winner = store_cheaper ? str(*p, "name") : str(*l, "title");
    int64_t diff = store_cheaper ? lc - pc : pc - lc;
    draft d = base({"classifieds", "shopping"}, "compare_prices", 402,
                   "Which is cheaper: the classifieds listing \"{listing}\" or \"{product}\" on One Stop Market? "
                   "Name the cheaper one and say by how much.");
    d.instantiation = {{"listing", str(*l, "title")}, {"product", str(*p, "name")}};
    expect_must_include(d, {winner, price_alternatives(diff)});
    classifieds_find_listing(d.plan, str(*l, "title"));
    d.plan.expect(money(lc)).tab(1);
    shopping_find_product(d.plan, str(*p, "name"));
    d.plan.expect(money(pc)).stop(winner + " is cheaper, by " + money(diff));
    out.push_back(d);
  }
  if (made < 2) throw std::runtime_error("generator: fewer than 2 listing/product pairs to compare");
}

void store_to_forum(const site_data& data, std::vector<draft>& out) {
  std::vector<json> items = shopping_nameable_products(data, "c.parent_id = 21");
  const json& r = spread(items, 2, 5, "sports products");
  std::string title = "Price check: " + str(r, "name");
  draft d = base({"shopping", "reddit"}, "store_price_to_forum", 403,
                 "Post in f/{forum} a text post titled \"{title}\" whose body is the current One Stop Market price of "
                 "\"{product}\", written like $12.34.");
  d.instantiation = {{"forum", "fitness"}, {"title", title}, {"product", str(r, "name")}};
  auto h1 = html_target("func:reddit_get_latest_post_url('__REDDIT__')", qs("main h1"));
  auto body = html_target("last", qs("main", "innerText"));
  expect_html(d, {with_exact(h1, title), with_must_include(body, {money(num(r, "price_cents")), "f/fitness"})});
  shopping_find_product(d.plan, str(r, "name"));
  d.plan.expect(money(num(r, "price_cents")))
      .tab(1)
      .click("link", "Submit")
      .type("combobox", "Forum (required)", "f/fitness")
      .type("textbox", "Title (required)", title)
      .type("textbox", "Body (optional)", money(num(r, "price_cents")))
      .click("button", "Submit")
      .expect("Your submission was posted.")
      .stop();
  out.push_back(d);
}

void classifieds_to_forum(const site_data& data, std::vector<draft>& out) {
  json cat = data.row("classifieds", "SELECT c.slug, c.name FROM categories c WHERE c.slug = 'bicycles'");
  json l = data.row("classifieds", std::string(k_classifieds_listing_sql) +
                                       "WHERE c.slug = 'bicycles' ORDER BY l.price_cents, l.posted_at DESC, l.id DESC "
                                       "LIMIT 1");
  std::string title = "Cheapest bike on the classifieds this week";
  draft d = base({"classifieds", "reddit"}, "listing_to_forum", 404,
                 "Find the cheapest listing in the {category} category of the classifieds and share it in f/{forum}: a "
                 "text post titled \"{title}\" whose body gives the listing's title and its price.");
  d.instantiation = {{"category", str(cat, "name")}, {"forum", "pittsburgh"}, {"title", title}};
  auto h1 = html_target("func:reddit_get_latest_post_url('__REDDIT__')", qs("main h1"));
  auto body = html_target("last", qs("main", "innerText"));
  expect_html(d, {with_exact(h1, title), with_must_include(body, {str(l, "title"), money(num(l, "price_cents"))})});
  d.plan.click("link", str(cat, "name"))
      .type("combobox", "Sort by", "Price: low to high")
      .click("button", "Apply filters")
      .click("link", str(l, "title"))
      .expect(money(num(l, "price_cents")))
      .tab(1)
      .click("link", "Submit")
      .type("combobox", "Forum (required)", "f/pittsburgh")
      .type("textbox", "Title (required)", title)
      .type("textbox", "Body (optional)", str(l, "title") + ", " + money(num(l, "price_cents")))
      .click("button", "Submit")
      .expect("Your submission was posted.")
      .stop();
  out.push_back(d);
}

}  // namespace

void multisite_templates(const site_data& data, std::vector<draft>& out) {
  store_to_classifieds(data, out);
  compare_prices(data, out);
  if (data.has_site("reddit")) {
    store_to_forum(data, out);
    classifieds_to_forum(data, out);
  }
}

}  // namespace kvarena::tasks::gen
