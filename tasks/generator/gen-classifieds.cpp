// gen-classifieds.cpp: classifieds task templates (VWA's OSClass kinds): find-and-navigate
// with filters (url_match on the canonical search URL), questions about listings
// (string_match: must_include, exact_match, fuzzy_match, required_values), posting,
// editing, deleting and contacting (program_html), and infeasible requests (N/A).
#include <set>
#include <stdexcept>

#include "generator/gen-templates.h"
#include "sites/site-classifieds.h"

namespace kvarena::tasks::gen {
namespace {

namespace cl = sites::classifieds;

const char* const k_site = "classifieds";
const char* const k_home = "__CLASSIFIEDS__";

draft base(const std::string& name, int template_id, const std::string& intent_template) {
  return site_draft(k_site, k_home, name, template_id, intent_template);
}

}  // namespace

// The site search's result count for `q` (every word in the title or the description),
// as find_listings computes it.
int64_t classifieds_search_count(const site_data& data, const std::string& q) {
  return site_search_count(data, k_site, "listings", {"title", "description"}, q);
}

const char* const k_classifieds_listing_sql =
    "SELECT l.id, l.title, l.description, l.price_cents, l.condition, l.location, l.posted_at, "
    "u.username, u.display_name, c.slug AS category_slug, c.name AS category_name, l.seller_id "
    "FROM listings l JOIN users u ON u.id = l.seller_id JOIN categories c ON c.id = l.category_id ";

std::vector<json> classifieds_nameable_listings(const site_data& data) {
  json rows = data.rows(k_site, std::string(k_classifieds_listing_sql) +
                                    "WHERE l.seller_id != 1 AND (SELECT COUNT(*) FROM listings o WHERE o.title = "
                                    "l.title) = 1 ORDER BY l.id");
  std::vector<json> out;
  for (const json& r : rows)
    if (classifieds_search_count(data, str(r, "title")) <= cl::kListingsPerPage) out.push_back(r);
  return out;
}

void classifieds_find_listing(plan_builder& p, const std::string& title) {
  search_and_open(p, title);
}

namespace {


std::string url(const std::string& rel) { return std::string(k_home) + rel; }

std::string search_url(const cl::listing_filter& f) { return url("/search" + cl::filter_query_string(f)); }

std::string condition_label(const std::string& value) { return cl::condition_label(value); }

// -------------------------------------------------------------------------------------------

void filter_urls(const site_data& data, std::vector<draft>& out) {
  // (a) a subcategory in one city, cheapest first: the first pairs with >= 2 listings.
  json pairs = data.rows(k_site,
                         "SELECT c.slug, c.name, l.location, COUNT(*) AS n FROM listings l JOIN categories c ON c.id = "
                         "l.category_id GROUP BY c.id, l.location HAVING n >= 2 ORDER BY n DESC, c.position, c.id, "
                         "l.location");
  for (size_t k : {size_t(0), size_t(3)}) {
    const json& r = pairs.at(k);
    draft d = base("filter_url", 101, "Show me all {category} listings in {location}, sorted by price from low to high.");
    d.instantiation = {{"category", str(r, "name")}, {"location", str(r, "location")}};
    cl::listing_filter f;
    f.category = str(r, "slug");
    f.location = str(r, "location");
    f.sort = "price_asc";
    expect_url(d, search_url(f));
    d.plan.click("link", "All listings")
        .type("combobox", "Category", str(r, "name"))
        .type("combobox", "Location", str(r, "location"))
        .type("combobox", "Sort by", "Price: low to high")
        .click("button", "Apply filters")
        .stop();
    d.reasoning = "easy";
    d.overall = "medium";
    out.push_back(d);
  }
  // (b) keyword and a price cap.
  {
    draft d = base("filter_url", 101, "Find listings matching \"{q}\" that cost at most ${max_price}.");
    d.instantiation = {{"q", "guitar"}, {"max_price", "400"}};
    cl::listing_filter f;
    f.q = "guitar";
    f.max_cents = 40000;
    expect_url(d, search_url(f));
    d.plan.click("link", "All listings")
        .type("searchbox", "Keywords", "guitar")
        .type("spinbutton", "Maximum price ($)", "400")
        .click("button", "Apply filters")
        .stop();
    d.overall = "medium";
    out.push_back(d);
  }
  // (c) a whole top category in one condition, most expensive first.
  {
    draft d = base("filter_url", 101, "Show {category} listings in \"{condition}\" condition, most expensive first.");
    d.instantiation = {{"category", "Vehicles"}, {"condition", "Like new"}};
    cl::listing_filter f;
    f.category = "vehicles";
    f.condition = "like-new";
    f.sort = "price_desc";
    expect_url(d, search_url(f));
    d.plan.click("link", "All listings")
        .type("combobox", "Category", "All Vehicles")
        .type("combobox", "Condition", "Like new")
        .type("combobox", "Sort by", "Price: high to low")
        .click("button", "Apply filters")
        .stop();
    d.overall = "medium";
    out.push_back(d);
  }
  // (d) a keyword search the agent may refine: the reference only has to be in the URL.
  {
    draft d = base("keyword_search", 102, "Search the classifieds for \"{q}\".");
    d.instantiation = {{"q", "camping"}};
    expect_url(d, url("/search?q=camping"), /*gold_in_pred=*/true);
    d.plan.type("searchbox", "Search", "camping", true).stop();
    out.push_back(d);
  }
}

void cheapest_and_counts(const site_data& data, std::vector<draft>& out) {
  // Subcategories whose cheapest listing is unique.
  json leaves = data.rows(k_site,
                          "SELECT c.slug, c.name, COUNT(*) AS n, MIN(l.price_cents) AS lo, MAX(l.price_cents) AS hi, "
                          "(SELECT COUNT(*) FROM listings x WHERE x.category_id = c.id AND x.price_cents = "
                          "MIN(l.price_cents)) AS at_lo, (SELECT COUNT(*) FROM listings x WHERE x.category_id = c.id "
                          "AND x.price_cents = MAX(l.price_cents)) AS at_hi FROM listings l JOIN categories c ON c.id "
                          "= l.category_id GROUP BY c.id ORDER BY c.id");
  std::vector<json> unique_lo, unique_hi;
  for (const json& r : leaves) {
    if (num(r, "at_lo") == 1 && num(r, "lo") > 0) unique_lo.push_back(r);
    if (num(r, "at_hi") == 1) unique_hi.push_back(r);
  }
  for (size_t k = 0; k < 3; ++k) {
    const json& r = spread(unique_lo, k, 3);
    json item = data.row(k_site, std::string(k_classifieds_listing_sql) + "WHERE c.slug = " + sql_text(str(r, "slug")) +
                                     " ORDER BY l.price_cents, l.posted_at DESC, l.id DESC LIMIT 1");
    draft d = base("cheapest_price", 103, "What is the price of the cheapest listing in the {category} category?");
    d.instantiation = {{"category", str(r, "name")}};
    expect_must_include(d, {price_alternatives(num(item, "price_cents"))});
    d.plan.click("link", str(r, "name"))
        .type("combobox", "Sort by", "Price: low to high")
        .click("button", "Apply filters")
        .click("link", str(item, "title"))
        .expect(money(num(item, "price_cents")))
        .stop(money(num(item, "price_cents")));
    d.reasoning = "medium";
    d.overall = "medium";
    out.push_back(d);
  }
  // The most expensive listing of a subcategory: open it (url_match, exact).
  for (size_t k = 0; k < 2; ++k) {
    const json& r = spread(unique_hi, k + 1, 4);
    json item = data.row(k_site, std::string(k_classifieds_listing_sql) + "WHERE c.slug = " + sql_text(str(r, "slug")) +
                                     " ORDER BY l.price_cents DESC, l.posted_at DESC, l.id DESC LIMIT 1");
    draft d = base("open_most_expensive", 104, "Open the most expensive listing in the {category} category.");
    d.instantiation = {{"category", str(r, "name")}};
    expect_url(d, url("/item/" + std::to_string(num(item, "id"))));
    d.plan.click("link", str(r, "name"))
        .type("combobox", "Sort by", "Price: high to low")
        .click("button", "Apply filters")
        .click("link", str(item, "title"))
        .expect(money(num(item, "price_cents")))
        .stop();
    d.overall = "medium";
    out.push_back(d);
  }
  // How many listings a subcategory has (required_values).
  for (size_t k = 0; k < 2; ++k) {
    const json& r = leaves.at(k == 0 ? 6 : 19);
    draft d = base("count_category", 105, "How many listings are there in the {category} category?");
    d.instantiation = {{"category", str(r, "name")}};
    expect_required_values(d, {"== " + std::to_string(num(r, "n"))});
    std::string n = std::to_string(num(r, "n"));
    d.plan.click("link", str(r, "name"))
        .expect("of " + n + " listing")
        .stop(n);
    out.push_back(d);
  }
}

void listing_questions(const site_data& data, std::vector<draft>& out) {
  std::vector<json> items = classifieds_nameable_listings(data);
  const size_t n = 6;
  {
    const json& r = spread(items, 0, n);
    draft d = base("listing_seller", 106, "Who is selling \"{title}\"? Give the seller's name.");
    d.instantiation = {{"title", str(r, "title")}};
    expect_must_include(d, {str(r, "display_name")});
    classifieds_find_listing(d.plan, str(r, "title"));
    d.plan.expect(str(r, "display_name")).stop(str(r, "display_name"));
    out.push_back(d);
  }
  {
    const json& r = spread(items, 1, n);
    draft d = base("listing_condition", 107, "What condition is \"{title}\" in, according to its listing?");
    d.instantiation = {{"title", str(r, "title")}};
    std::string label = condition_label(str(r, "condition"));
    expect_exact(d, label);
    classifieds_find_listing(d.plan, str(r, "title"));
    d.plan.expect(label).stop(label);
    out.push_back(d);
  }
  {
    const json& r = spread(items, 2, n);
    std::string city = str(r, "location").substr(0, str(r, "location").find(','));
    draft d = base("listing_location", 108, "In which city is \"{title}\" offered?");
    d.instantiation = {{"title", str(r, "title")}};
    expect_must_include(d, {city});
    classifieds_find_listing(d.plan, str(r, "title"));
    d.plan.expect(str(r, "location")).stop(str(r, "location"));
    out.push_back(d);
  }
  {
    const json& r = spread(items, 3, n);
    std::string day = str(r, "posted_at").substr(0, 10);
    draft d = base("listing_date", 109, "On which date was \"{title}\" posted? Answer as YYYY-MM-DD.");
    d.instantiation = {{"title", str(r, "title")}};
    expect_must_include(d, {day});
    classifieds_find_listing(d.plan, str(r, "title"));
    d.plan.expect(str(r, "posted_at")).stop(day);
    out.push_back(d);
  }
  {
    const json& r = spread(items, 4, n);
    std::string desc = str(r, "description");
    size_t a = desc.find('\n');
    size_t b = a == std::string::npos ? std::string::npos : desc.find('\n', a + 1);
    std::string features = a == std::string::npos ? desc : desc.substr(a + 1, b == std::string::npos ? b : b - a - 1);
    draft d = base("listing_features", 110,
                   "What does the seller of \"{title}\" say about its features, apart from the condition and the "
                   "pickup place?");
    d.instantiation = {{"title", str(r, "title")}};
    expect_fuzzy(d, {features});
    classifieds_find_listing(d.plan, str(r, "title"));
    d.plan.expect(features).stop(features);
    d.reasoning = "medium";
    d.overall = "medium";
    out.push_back(d);
  }
  {
    const json& r = spread(items, 5, n);
    draft d = base("seller_profile", 111, "Open the profile page of the seller of \"{title}\".");
    d.instantiation = {{"title", str(r, "title")}};
    expect_url(d, url("/user/" + str(r, "username")));
    classifieds_find_listing(d.plan, str(r, "title"));
    d.plan.click("link", str(r, "display_name")).expect("Member since").stop();
    out.push_back(d);
  }
  {
    json m = data.row(k_site,
                      "SELECT m.listing_title, u.display_name FROM messages m JOIN users u ON u.id = m.sender_id "
                      "WHERE m.recipient_id = 1 ORDER BY m.sent_at DESC, m.id DESC LIMIT 1");
    draft d = base("latest_message", 112, "Who sent me my most recent message, and which listing was it about?");
    expect_must_include(d, {str(m, "display_name"), str(m, "listing_title")});
    d.plan.click("link", "Messages")
        .expect(str(m, "display_name"))
        .stop(str(m, "display_name") + ", about " + str(m, "listing_title"));
    d.reasoning = "medium";
    out.push_back(d);
  }
}

struct new_listing {
  const char* title;
  const char* category;  // leaf name as in the form
  const char* category_slug;
  int64_t cents;
  const char* condition;  // value
  const char* location;
  const char* description;
};

const new_listing k_new_listings[] = {
    {"Blue road bike, 54 cm frame", "Bicycles", "bicycles", 35000, "used", "Pittsburgh, PA",
     "Lightly used road bike with a 54 cm aluminium frame, new tires and a fresh chain."},
    {"Oak writing desk with two drawers", "Tables & Desks", "tables-desks", 12000, "like-new", "Denver, CO",
     "Solid oak writing desk, 120 x 60 cm, two drawers, no scratches. Pickup only."},
    {"Acoustic guitar with soft case", "Musical Instruments", "musical-instruments", 8999, "used", "Austin, TX",
     "Full-size acoustic guitar, new strings, comes with a soft case and a tuner."},
};

void post_listings(const site_data& data, std::vector<draft>& out) {
  for (size_t k = 0; k < 3; ++k) {
    const new_listing& n = k_new_listings[k];
    draft d = base("post_listing", 113,
                   "Post a listing titled \"{title}\" in the {category} category for ${price}, condition \"{condition}\", "
                   "located in {location}, with the description \"{description}\".");
    std::string cond = condition_label(n.condition);
    d.instantiation = {{"title", n.title},         {"category", n.category},   {"price", price_input(n.cents)},
                       {"condition", cond},         {"location", n.location},   {"description", n.description}};
    std::vector<program_html_target> t;
    // The three locator forms in turn: the listing found by a func: helper, the agent's
    // last page, the whole page's HTML.
    std::string page = k == 1 ? "last" : "func:classifieds_get_latest_listing_url('__CLASSIFIEDS__')";
    if (k < 2) {
      auto title = html_target(page, qs("main h1"));
      t.push_back(with_exact(title, n.title));
      auto price = html_target("last", qs("p.price"));
      t.push_back(with_exact(price, money(n.cents)));
      auto details = html_target("last", qs("dl.details"));
      t.push_back(with_must_include(details, {cond, n.location, n.category}));
    } else {
      auto whole = html_target(page, "");
      t.push_back(with_must_include(whole, {n.title, money(n.cents), n.description}));
    }
    expect_html(d, t);
    d.plan.click("link", "Post a listing")
        .type("textbox", "Title (required)", n.title)
        .type("textbox", "Description (required)", n.description)
        .type("textbox", "Price ($) (required)", price_input(n.cents))
        .type("combobox", "Category (required)", n.category)
        .type("combobox", "Condition (required)", cond)
        .type("combobox", "Location (required)", n.location)
        .click("button", "Post listing")
        .expect("Your listing was posted.")
        .stop();
    d.reasoning = "easy";
    d.overall = "medium";
    out.push_back(d);
  }
  (void)data;
}

void change_own_listings(const site_data& data, std::vector<draft>& out) {
  json mine = data.rows(k_site, std::string(k_classifieds_listing_sql) + "WHERE l.seller_id = 1 ORDER BY l.id");
  if (mine.size() < 3) throw std::runtime_error("generator: the classifieds user has fewer than 3 listings");
  {
    const json& r = mine.at(1);
    int64_t cents = num(r, "price_cents") * 8 / 1000 * 100;  // 80%, whole dollars
    draft d = base("edit_price", 114, "Lower the price of my listing \"{title}\" to ${price}.");
    d.instantiation = {{"title", str(r, "title")}, {"price", price_input(cents)}};
    std::string item = url("/item/" + std::to_string(num(r, "id")));
    auto price = html_target(item, qs("p.price"));
    auto title = html_target("last", qs("main h1"));
    expect_html(d, {with_exact(price, money(cents)), with_exact(title, str(r, "title"))});
    d.plan.click("link", "My listings")
        .click("link", str(r, "title"))
        .click("link", "Edit listing")
        .clear("textbox", "Price ($) (required)")
        .type("textbox", "Price ($) (required)", price_input(cents))
        .click("button", "Save changes")
        .expect("Your changes were saved.")
        .stop();
    d.overall = "medium";
    out.push_back(d);
  }
  {
    const json& r = mine.at(3);
    draft d = base("delete_listing", 115, "Delete my listing \"{title}\".");
    d.instantiation = {{"title", str(r, "title")}};
    auto listed = html_target(url("/my/listings"), qs("main", "innerText"));
    auto gone = html_target(url("/item/" + std::to_string(num(r, "id"))), qs("main h1", "textContent"));
    expect_html(d, {with_must_exclude(listed, {str(r, "title")}), with_exact(gone, "404 Not Found")});
    d.plan.click("link", "My listings")
        .click("link", str(r, "title"))
        .click("link", "Delete listing")
        .click("button", "Yes, delete this listing")
        .expect("was deleted")
        .stop();
    d.overall = "medium";
    out.push_back(d);
  }
  {
    // Infeasible: the user cannot message themself about their own listing.
    const json& r = mine.at(2);
    draft d = base("contact_own_listing", 116, "Ask the seller of \"{title}\" whether it is still available.");
    d.instantiation = {{"title", str(r, "title")}};
    expect_na(d, "\"" + str(r, "title") + "\" is the user's own listing; one cannot message oneself about it.");
    d.plan.click("link", "My listings").click("link", str(r, "title")).expect("Manage your listing").stop("N/A");
    d.reasoning = "hard";
    d.overall = "medium";
    out.push_back(d);
  }
}

void contact_sellers(const site_data& data, std::vector<draft>& out) {
  std::vector<json> items = classifieds_nameable_listings(data);
  const char* const messages[] = {"Hi, is this still available? I could pick it up on Saturday.",
                                  "Would you take 10% less if I pay in cash today?"};
  for (size_t k = 0; k < 2; ++k) {
    const json& r = spread(items, 2 * k + 1, 5);
    draft d = base("contact_seller", 117, "Send the seller of \"{title}\" this message: \"{message}\"");
    d.instantiation = {{"title", str(r, "title")}, {"message", messages[k]}};
    auto sent = html_target(url("/my/messages"), qs("main section:nth-of-type(2) tbody tr:first-child"));
    expect_html(d, {with_must_include(sent, {messages[k], str(r, "title"), str(r, "display_name")})});
    classifieds_find_listing(d.plan, str(r, "title"));
    d.plan.type("textbox", "Message to " + str(r, "display_name") + " (required)", messages[k])
        .click("button", "Send message")
        .expect("Your message was sent")
        .stop();
    d.overall = "medium";
    out.push_back(d);
  }
}

void infeasible(const site_data& data, std::vector<draft>& out) {
  {
    if (classifieds_search_count(data, "Ferrari") != 0) throw std::runtime_error("generator: a Ferrari listing exists");
    draft d = base("missing_listing", 118, "What is the asking price of the {item} listed on the classifieds?");
    d.instantiation = {{"item", "Ferrari 488"}};
    expect_na(d, "There is no Ferrari listing on the site.");
    d.plan.type("searchbox", "Search", "Ferrari", true).expect("0 listings found").stop("N/A");
    d.reasoning = "medium";
    out.push_back(d);
  }
  {
    draft d = base("missing_category", 119, "Post my parrot cage for $40 in the {category} category.");
    d.instantiation = {{"category", "Pets"}};
    expect_na(d, "The site has no Pets category to post in.");
    d.plan.click("link", "Post a listing").stop("N/A");
    d.reasoning = "hard";
    d.overall = "medium";
    out.push_back(d);
  }
}

}  // namespace

void classifieds_templates(const site_data& data, std::vector<draft>& out) {
  filter_urls(data, out);
  cheapest_and_counts(data, out);
  listing_questions(data, out);
  post_listings(data, out);
  change_own_listings(data, out);
  contact_sellers(data, out);
  infeasible(data, out);
}

}  // namespace kvarena::tasks::gen
