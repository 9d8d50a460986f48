// gen-long-horizon.cpp: the long-horizon suite: tasks whose answer or final action needs a
// fact that was on screen at least k_min_memory_distance (5) steps before it is used, with
// ordinary browsing in between, so an agent that keeps only the latest observation (or
// whose KV-cache policy evicted it) loses it. Each task records its facts in
// kvarena.memory (fact, seen_step, used_step) and the seeing step "expect"s the fact, so
// the oracle proves it is on screen there.
//   long.store_price_to_listing   store price -> browse classifieds -> post a listing at it
//   long.compare_products         price of A -> orders, wish list -> price of B -> difference
//   long.classifieds_offer        price of X -> cheapest in a category -> offer X's price
//   long.forum_points             points of post A -> top post of another forum -> compare
//   long.rating_to_forum          store rating -> vote in a forum -> post the rating
#include <stdexcept>

#include "generator/gen-templates.h"
#include "sites/site-forum.h"

namespace kvarena::tasks::gen {
namespace {

constexpr size_t k_per_template = 6;

draft base(const std::vector<std::string>& sites, const std::string& start_url, const std::string& name,
           int template_id, const std::string& intent_template) {
  draft d;
  d.sites = sites;
  d.start_url = start_url;
  d.template_name = "long." + name;
  d.template_id = template_id;
  d.intent_template = intent_template;
  d.reasoning = "hard";
  d.overall = "hard";
  return d;
}

// Records that `fact` is on screen after the plan's last step (and makes the oracle check
// it); returns that step's index for the memory entry.
int seen(draft& d, const std::string& fact) {
  d.plan.expect(fact);
  return d.plan.last();
}

void remember(draft& d, const std::string& fact, int seen_step, int used_step) {
  d.memory.push_back({fact, seen_step, used_step});
}

const char* const k_cities[] = {"Seattle, WA", "Boston, MA", "Chicago, IL", "Denver, CO", "Austin, TX", "Atlanta, GA"};

// Classifieds subcategories with their most expensive listing (unique) and cheapest (unique,
// sold by someone else than the agent's user).
struct leaf_extremes {
  json category, priciest, cheapest;
};

std::vector<leaf_extremes> classifieds_leaves(const site_data& data) {
  json cats = data.rows("classifieds", "SELECT id, slug, name FROM categories WHERE parent_id IS NOT NULL ORDER BY id");
  std::vector<leaf_extremes> out;
  for (const json& c : cats) {
    std::string where = "WHERE c.slug = " + sql_text(str(c, "slug"));
    json hi = data.rows("classifieds", std::string(k_classifieds_listing_sql) + where +
                                           " ORDER BY l.price_cents DESC, l.posted_at DESC, l.id DESC LIMIT 2");
    json lo = data.rows("classifieds", std::string(k_classifieds_listing_sql) + where +
                                           " ORDER BY l.price_cents, l.posted_at DESC, l.id DESC LIMIT 2");
    if (hi.size() < 2 || num(hi[0], "price_cents") == num(hi[1], "price_cents")) continue;
    if (num(lo[0], "price_cents") == num(lo[1], "price_cents") || num(lo[0], "seller_id") == 1) continue;
    // The listing must be nameable in a link: its title must be unique on the sorted page.
    if (str(hi[0], "title") == str(hi[1], "title") || str(lo[0], "title") == str(lo[1], "title")) continue;
    out.push_back({c, hi[0], lo[0]});
  }
  if (out.size() < k_per_template) throw std::runtime_error("generator: too few classifieds categories fit");
  return out;
}

void store_price_to_listing(const site_data& data, std::vector<draft>& out) {
  std::vector<json> items = shopping_nameable_products(data, "p.price_cents >= 1000");
  std::vector<leaf_extremes> leaves = classifieds_leaves(data);
  const char* const post_in[] = {"Cameras", "Tools", "Kitchen", "Fitness", "Video Games", "Books"};
  for (size_t k = 0; k < k_per_template; ++k) {
    const json& r = spread(items, k * 5 + 3, k_per_template * 5, "store products");
    const leaf_extremes& lx = leaves[(k * 3 + 1) % leaves.size()];
    std::string title = "Like new: " + str(r, "name");
    std::string desc = "Bought it last month and barely used it; selling at the store's price.";
    draft d = base({"shopping", "classifieds"}, "__SHOPPING__ |AND| __CLASSIFIEDS__", "store_price_to_listing", 501,
                   "On One Stop Market, look up the price of \"{product}\". Then switch to the classifieds tab: open "
                   "the {browse} category, sort it by price from high to low, open its most expensive listing and "
                   "then its seller's profile. Finally, post a classifieds listing titled \"{title}\" in {category} "
                   "(condition \"Like new\", location {location}, description \"{description}\") priced at exactly "
                   "the One Stop Market price of \"{product}\".");
    d.instantiation = {{"product", str(r, "name")}, {"browse", str(lx.category, "name")}, {"title", title},
                       {"category", post_in[k]},    {"location", k_cities[k]},           {"description", desc}};
    std::string price = money(num(r, "price_cents"));
    auto p = html_target("func:classifieds_get_latest_listing_url('__CLASSIFIEDS__')", qs("p.price"));
    auto h1 = html_target("last", qs("main h1"));
    expect_html(d, {with_exact(p, price), with_exact(h1, title)});
    shopping_find_product(d.plan, str(r, "name"));
    int s = seen(d, price);
    d.plan.tab(1)
        .click("link", str(lx.category, "name"))
        .type("combobox", "Sort by", "Price: high to low")
        .click("button", "Apply filters")
        .click("link", str(lx.priciest, "title"))
        .click("link", str(lx.priciest, "display_name"))
        .expect("Member since")
        .click("link", "Post a listing")
        .type("textbox", "Title (required)", title)
        .type("textbox", "Description (required)", desc)
        .type("textbox", "Price ($) (required)", price_input(num(r, "price_cents")));
    remember(d, price, s, d.plan.last());
    d.plan.type("combobox", "Category (required)", post_in[k])
        .type("combobox", "Condition (required)", "Like new")
        .type("combobox", "Location (required)", k_cities[k])
        .click("button", "Post listing")
        .expect("Your listing was posted.")
        .stop();
    out.push_back(d);
  }
}

void compare_products(const site_data& data, std::vector<draft>& out) {
  std::vector<json> items = shopping_nameable_products(data);
  json orders = data.rows("shopping", "SELECT number FROM orders WHERE user_id = 1 ORDER BY created_at DESC, id DESC");
  if (orders.empty()) throw std::runtime_error("generator: the shopping user has no orders");
  for (size_t k = 0; k < k_per_template; ++k) {
    const json* a = &spread(items, k * 7 + 1, k_per_template * 7, "store products");
    const json* b = &spread(items, k * 7 + 4, k_per_template * 7, "store products");
    for (size_t step = 5; num(*a, "price_cents") == num(*b, "price_cents"); ++step)
      b = &spread(items, k * 7 + step, k_per_template * 7, "store products");
    int64_t pa = num(*a, "price_cents"), pb = num(*b, "price_cents");
    int64_t diff = pa > pb ? pa - pb : pb - pa;
    draft d = base({"shopping"}, "__SHOPPING__", "compare_products", 502,
                   "Open \"{a}\" and note its price. Then open my orders and my most recent order, then my wish "
                   "list, and then open \"{b}\". How much more does the more expensive of these two products cost "
                   "than the other?");
    d.instantiation = {{"a", str(*a, "name")}, {"b", str(*b, "name")}};
    expect_must_include(d, {price_alternatives(diff)});
    shopping_find_product(d.plan, str(*a, "name"));
    int s = seen(d, money(pa));
    d.plan.click("link", "My Orders")
        .click("link", "View order " + str(orders[0], "number"))
        .click("link", "My Wish List");
    shopping_find_product(d.plan, str(*b, "name"));
    d.plan.expect(money(pb)).stop(money(diff));
    remember(d, money(pa), s, d.plan.last());
    out.push_back(d);
  }
}

void classifieds_offer(const site_data& data, std::vector<draft>& out) {
  std::vector<json> items = classifieds_nameable_listings(data);
  std::vector<leaf_extremes> leaves = classifieds_leaves(data);
  for (size_t k = 0; k < k_per_template; ++k) {
    const json& x = spread(items, k * 4 + 2, k_per_template * 4, "listings");
    const leaf_extremes& lx = leaves[(k * 5 + 2) % leaves.size()];
    std::string price = money(num(x, "price_cents"));
    std::string message = "Would you take " + price + "?";
    draft d = base({"classifieds"}, "__CLASSIFIEDS__", "classifieds_offer", 503,
                   "Open the listing \"{listing}\" and note its price. Then go to the home page, open the {category} "
                   "category, sort it by price from low to high, open its cheapest listing and its seller's profile, "
                   "and go back to that listing. Send its seller the message \"Would you take PRICE?\", where PRICE "
                   "is the price of \"{listing}\" exactly as its listing shows it (like $1,250.00).");
    d.instantiation = {{"listing", str(x, "title")}, {"category", str(lx.category, "name")}};
    auto sent = html_target("__CLASSIFIEDS__/my/messages", qs("main section:nth-of-type(2) tbody tr:first-child"));
    expect_html(d, {with_must_include(sent, {message, str(lx.cheapest, "title")})});
    classifieds_find_listing(d.plan, str(x, "title"));
    int s = seen(d, price);
    d.plan.click("link", "Home")
        .click("link", str(lx.category, "name"))
        .type("combobox", "Sort by", "Price: low to high")
        .click("button", "Apply filters")
        .click("link", str(lx.cheapest, "title"))
        .click("link", str(lx.cheapest, "display_name"))
        .expect("Member since")
        .back()
        .type("textbox", "Message to " + str(lx.cheapest, "display_name") + " (required)", message);
    remember(d, price, s, d.plan.last());
    d.plan.click("button", "Send message").expect("Your message was sent").stop();
    out.push_back(d);
  }
}

void forum_points(const site_data& data, std::vector<draft>& out) {
  std::vector<json> posts = reddit_nameable_posts(data);
  json forums = data.rows("reddit", "SELECT id, name FROM forums ORDER BY name COLLATE NOCASE, id");
  std::vector<std::pair<json, json>> tops;  // forum, its unique top post
  for (const json& f : forums) {
    json top = data.rows("reddit", std::string(k_reddit_post_sql) + "WHERE p.forum_id = " + std::to_string(num(f, "id")) +
                                       " ORDER BY p.score DESC, p.created_min DESC, p.id DESC LIMIT 2");
    if (top.size() == 2 && num(top[0], "score") > num(top[1], "score")) tops.emplace_back(f, top[0]);
  }
  if (tops.size() < k_per_template) throw std::runtime_error("generator: too few forums with a clear top post");
  for (size_t k = 0; k < k_per_template; ++k) {
    const auto& [f, top] = tops[(k * 5 + 1) % tops.size()];
    const json* a = &spread(posts, k * 9 + 4, k_per_template * 9, "forum posts");
    for (size_t step = 1; str(*a, "forum") == str(f, "name") || num(*a, "score") == num(top, "score"); ++step)
      a = &spread(posts, k * 9 + 4 + step, k_per_template * 9, "forum posts");
    int64_t sa = num(*a, "score"), st = num(top, "score");
    std::string winner = sa > st ? str(*a, "title") : str(top, "title");
    std::string diff = std::to_string(sa > st ? sa - st : st - sa);
    draft d = base({"reddit"}, "__REDDIT__", "forum_points", 504,
                   "Open the post \"{post}\" and note its points. Then go to f/{forum}, sort it by top, open its "
                   "highest-scoring post and the profile of that post's author, and go back. Which of the two posts "
                   "has more points, and by how many?");
    d.instantiation = {{"post", str(*a, "title")}, {"forum", str(f, "name")}};
    expect_must_include(d, {winner, diff});
    reddit_find_post(d.plan, str(*a, "title"));
    std::string fact = sites::forum::points(sa);
    int s = seen(d, fact);
    reddit_open_forum(d.plan, str(f, "name"));
    d.plan.click("link", "Top")
        .click("link", str(top, "title"))
        .expect(sites::forum::points(st))
        .click("link", str(top, "username"))
        .back()
        .stop("\"" + winner + "\" has more points, by " + diff);
    remember(d, fact, s, d.plan.last());
    out.push_back(d);
  }
}

void rating_to_forum(const site_data& data, std::vector<draft>& out) {
  std::vector<json> items =
      shopping_nameable_products(data, "(SELECT COUNT(*) FROM reviews r WHERE r.product_id = p.id) >= 2");
  // Forums whose newest post the agent's user has not voted on and did not write.
  json forums = data.rows("reddit", "SELECT id, name FROM forums ORDER BY name COLLATE NOCASE, id");
  std::vector<std::pair<json, json>> fresh;
  for (const json& f : forums) {
    json p = data.rows("reddit", std::string(k_reddit_post_sql) + "WHERE p.forum_id = " + std::to_string(num(f, "id")) +
                                     " ORDER BY p.created_min DESC, p.id DESC LIMIT 1");
    if (!p.empty() && num(p[0], "my_votes") == 0 && num(p[0], "user_id") != 1) fresh.emplace_back(f, p[0]);
  }
  if (fresh.size() < k_per_template) throw std::runtime_error("generator: too few forums fit rating_to_forum");
  for (size_t k = 0; k < k_per_template; ++k) {
    const json& r = spread(items, k * 3 + 2, k_per_template * 3, "reviewed products");
    const auto& [f, newest] = fresh[(k * 4 + 3) % fresh.size()];
    std::string rating = shopping_rating(r);
    std::string title = "Anyone tried " + str(r, "name") + "?";
    std::string body = "Rated " + rating + " out of 5 on One Stop Market";
    draft d = base({"shopping", "reddit"}, "__SHOPPING__ |AND| __REDDIT__", "rating_to_forum", 505,
                   "On One Stop Market, check the average customer rating of \"{product}\". Then, in the forum tab, "
                   "open f/{forum}, sort it by new, open the newest post and upvote it. Finally submit a text post to "
                   "f/{forum} titled \"{title}\" with the body \"Rated X out of 5 on One Stop Market\", where X is "
                   "that product's average rating.");
    d.instantiation = {{"product", str(r, "name")}, {"forum", str(f, "name")}, {"title", title}};
    auto h1 = html_target("func:reddit_get_latest_post_url('__REDDIT__')", qs("main h1"));
    auto text = html_target("last", qs("main", "innerText"));
    auto vote = html_target("__REDDIT__" + reddit_post_path(newest), qs("main > .vote .score"));
    expect_html(d, {with_exact(h1, title), with_must_include(text, {body}),
                    with_exact(vote, sites::forum::points(num(newest, "score") + 1))});
    shopping_find_product(d.plan, str(r, "name"));
    int s = seen(d, rating);
    d.plan.tab(1);
    reddit_open_forum(d.plan, str(f, "name"));
    d.plan.click("link", "New")
        .click("link", str(newest, "title"))
        .click("button", "Upvote " + str(newest, "title"))
        .click("link", "Submit")
        .type("combobox", "Forum (required)", "f/" + str(f, "name"))
        .type("textbox", "Title (required)", title)
        .type("textbox", "Body (optional)", body);
    remember(d, rating, s, d.plan.last());
    d.plan.click("button", "Submit").expect("Your submission was posted.").stop();
    out.push_back(d);
  }
}

}  // namespace

void long_horizon_templates(const site_data& data, std::vector<draft>& out) {
  store_price_to_listing(data, out);
  compare_products(data, out);
  classifieds_offer(data, out);
  if (data.has_site("reddit")) {
    forum_points(data, out);
    rating_to_forum(data, out);
  }
}

}  // namespace kvarena::tasks::gen
