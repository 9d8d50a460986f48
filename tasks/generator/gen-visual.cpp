// gen-visual.cpp: the vwa-visual suite: tasks whose answer depends on a picture (the
// sites' product, listing and image-post pictures, envs/sites/picture.h), in
// VisualWebArena's visual kinds. The attribute each template depends on:
//   shopping.visual_count          501  count of items in a product's picture
//   shopping.visual_pick_pattern   502  pattern, second and main colour of a picture in a category
//   classifieds.visual_compare     503  counts in two listings' photos, compared
//   classifieds.visual_badge_text  504  the label printed on the photo's badge (and its shape)
//   classifieds.visual_main_colour 505  main colour + object of photos in a category list
//   reddit.visual_image_post       506  object + pattern of an image post's picture in a forum
//   classifieds.visual_input_image 507  the listing whose photo shows the task's input image
//                                       (VWA's `image` field: the object-only query view)
// The text an agent reads never states these (alt texts are names or photo descriptions
// that name at most the main colour); the oracle answers from the generator's data.
#include <map>
#include <set>
#include <stdexcept>

#include "generator/gen-templates.h"
#include "sites/picture.h"
#include "sites/site-classifieds.h"
#include "sites/site-forum.h"
#include "sites/site-shopping.h"

namespace kvarena::tasks::gen {
namespace {

std::string number_word(int64_t n) {
  static const char* const w[] = {"zero", "one", "two", "three", "four"};
  return n >= 0 && n <= 4 ? w[n] : std::to_string(n);
}

std::string pattern_phrase(const json& pic) {
  return str(pic, "pattern") + " " + str(pic, "second_colour");  // "striped yellow"
}

// Picture attributes of `ids` in `table` of `site`, by id.
std::map<int64_t, json> pictures(const site_data& data, const std::string& site, const std::string& table) {
  std::map<int64_t, json> out;
  for (const json& r : data.rows(site, "SELECT * FROM " + table + " ORDER BY item_id")) out[num(r, "item_id")] = r;
  return out;
}

// The one row of a group (a category's listings, a forum's posts) a visual task can name by
// its picture alone: the first row, in order (newest first when asked), whose title no
// other row of the group has and whose picture's `look` no other picture of the group has;
// `eligible` narrows the candidates (not the counting). nullptr when no row qualifies.
template <class Look, class Eligible>
const json* unique_look(const json& rows, const std::map<int64_t, json>& pics, Look look, Eligible eligible,
                        bool newest_first = false) {
  std::map<std::string, int> looks, titles;
  for (const json& r : rows) {
    titles[str(r, "title")]++;
    if (pics.count(num(r, "id"))) looks[look(pics.at(num(r, "id")))]++;
  }
  for (size_t i = 0; i < rows.size(); ++i) {
    const json& r = rows[newest_first ? rows.size() - 1 - i : i];
    if (!pics.count(num(r, "id")) || titles[str(r, "title")] != 1) continue;  // its link names it alone
    const json& pic = pics.at(num(r, "id"));
    if (eligible(pic) && looks[look(pic)] == 1) return &r;
  }
  return nullptr;
}

const auto any_picture = [](const json&) { return true; };

void shopping_visual(const site_data& data, std::vector<draft>& out) {
  auto pics = pictures(data, "shopping", "product_pictures");
  // Count: products whose picture shows 2-4 items and whose name states no count.
  std::vector<json> counted;
  for (const json& r : shopping_nameable_products(data))
    if (num(pics.at(num(r, "id")), "item_count") >= 2 && str(r, "name").find(" Pack") == std::string::npos &&
        str(r, "name").find(" Piece") == std::string::npos)
      counted.push_back(r);
  for (size_t k = 0; k < 3; ++k) {
    const json& r = spread(counted, k * 4 + 1, 12, "shopping products with several items pictured");
    int64_t count = num(pics.at(num(r, "id")), "item_count");
    draft d = site_draft("shopping", "__SHOPPING__", "visual_count", 501,
                         "How many items are shown in the picture of \"{product}\"? Answer with a number.");
    d.instantiation = {{"product", str(r, "name")}};
    expect_exact(d, std::to_string(count));
    shopping_find_product(d.plan, str(r, "name"));
    d.plan.expect(str(r, "name")).stop(std::to_string(count));
    d.visual = "medium";
    out.push_back(d);
  }
  // Pick by pattern: in a subcategory, the one product whose picture has this (pattern,
  // second colour, main colour); buyable (in stock, not in the cart or wish list).
  json buyable_rows = data.rows("shopping", std::string(k_shopping_product_sql) +
                                                "WHERE p.stock >= 10 AND p.id NOT IN (SELECT product_id FROM cart_items "
                                                "WHERE user_id = 1) AND p.id NOT IN (SELECT product_id FROM "
                                                "wishlist_items WHERE user_id = 1) ORDER BY p.id");
  std::map<std::string, int> combos;  // category|pattern|second|main -> products
  for (const auto& [id, pic] : pics) {
    json p = data.row("shopping", "SELECT category_id FROM products WHERE id = " + std::to_string(id));
    combos[std::to_string(num(p, "category_id")) + "|" + str(pic, "pattern") + "|" + str(pic, "second_colour") + "|" +
           str(pic, "main_colour")]++;
  }
  std::vector<json> unique;
  std::set<int64_t> used_categories;
  for (const json& r : buyable_rows) {
    const json& pic = pics.at(num(r, "id"));
    if (str(pic, "pattern") == "solid") continue;
    std::string key = std::to_string(num(r, "category_id")) + "|" + str(pic, "pattern") + "|" +
                      str(pic, "second_colour") + "|" + str(pic, "main_colour");
    if (combos[key] == 1 && used_categories.insert(num(r, "category_id")).second) unique.push_back(r);
  }
  for (size_t k = 0; k < 3; ++k) {
    const json& r = spread(unique, k * 3 + 1, 9, "shopping products with a unique patterned picture");
    const json& pic = pics.at(num(r, "id"));
    draft d = site_draft("shopping", "__SHOPPING__", "visual_pick_pattern", 502,
                         "In the {category} category, add the item whose picture is {main_colour} with a "
                         "{pattern} pattern to my cart.");
    d.instantiation = {{"category", str(r, "category_name")},
                       {"main_colour", str(pic, "main_colour")},
                       {"pattern", pattern_phrase(pic)}};
    auto listed = html_target("__SHOPPING__/cart", qs("main table"));
    expect_html(d, {with_must_include(listed, {str(r, "name")})});
    d.plan.click("link", str(r, "parent_name")).click("link", str(r, "category_name"));
    d.plan.click("button", "Add " + str(r, "name") + " to cart").stop();
    d.visual = "hard";
    d.overall = "medium";
    out.push_back(d);
  }
}

void classifieds_visual(const site_data& data, std::vector<draft>& out) {
  auto pics = pictures(data, "classifieds", "listing_pictures");
  std::vector<json> photographed;
  for (const json& r : classifieds_nameable_listings(data))
    if (pics.count(num(r, "id"))) photographed.push_back(r);
  // Compare two listings' photos: which shows more items.
  for (size_t k = 0; k < 3; ++k) {
    const json& a = spread(photographed, k * 5 + 1, 15, "photographed classifieds listings");
    const json* b = nullptr;
    for (size_t j = 1; j < photographed.size() && !b; ++j) {
      const json& c = photographed[(k * 37 + j * 7) % photographed.size()];
      if (num(pics.at(num(c, "id")), "item_count") != num(pics.at(num(a, "id")), "item_count") && str(c, "title") != str(a, "title"))
        b = &c;
    }
    if (!b) throw std::runtime_error("generator: no two classifieds photos with different counts");
    const json& more = num(pics.at(num(a, "id")), "item_count") > num(pics.at(num(*b, "id")), "item_count") ? a : *b;
    draft d = site_draft("classifieds", "__CLASSIFIEDS__", "visual_compare", 503,
                         "Which of the listings \"{a}\" and \"{b}\" shows more items in its photo? Answer with its title.");
    d.instantiation = {{"a", str(a, "title")}, {"b", str(*b, "title")}};
    expect_exact(d, str(more, "title"));
    classifieds_find_listing(d.plan, str(a, "title"));
    classifieds_find_listing(d.plan, str(*b, "title"));
    d.plan.stop(str(more, "title"));
    d.visual = "hard";
    d.reasoning = "medium";
    out.push_back(d);
  }
  // The text printed on the photo's badge.
  for (size_t k = 0; k < 3; ++k) {
    const json& r = spread(photographed, k * 5 + 3, 15, "photographed classifieds listings");
    const json& pic = pics.at(num(r, "id"));
    draft d = site_draft("classifieds", "__CLASSIFIEDS__", "visual_badge_text", 504,
                         "What is printed on the {shape} badge in the photo of \"{title}\"?");
    d.instantiation = {{"shape", str(pic, "shape")}, {"title", str(r, "title")}};
    expect_exact(d, str(pic, "label"));
    classifieds_find_listing(d.plan, str(r, "title"));
    d.plan.stop(str(pic, "label"));
    d.visual = "medium";
    out.push_back(d);
  }
  // Main colour and object in a category's listing grid: the one listing whose photo
  // shows that colour with that pattern.
  json cats = data.rows("classifieds",
                        "SELECT c.id, c.slug, c.name, t.name AS parent_name FROM categories c JOIN categories t ON "
                        "t.id = c.parent_id ORDER BY c.id");
  std::vector<std::pair<json, json>> picks;  // (category, listing)
  for (const json& c : cats) {
    json ls = data.rows("classifieds", std::string(k_classifieds_listing_sql) + "WHERE l.category_id = " +
                                           std::to_string(num(c, "id")) + " ORDER BY l.id");
    if (ls.size() > size_t(sites::classifieds::kListingsPerPage)) continue;
    const auto colour_pattern = [](const json& pic) { return str(pic, "main_colour") + "|" + str(pic, "pattern"); };
    const auto patterned = [](const json& pic) { return str(pic, "pattern") != "solid"; };
    if (const json* l = unique_look(ls, pics, colour_pattern, patterned)) picks.emplace_back(c, *l);
  }
  for (size_t k = 0; k < 3; ++k) {
    if (picks.empty()) throw std::runtime_error("generator: no classifieds category with a unique photo");
    const auto& [c, l] = picks[(k * 5 + 2) * picks.size() / 15];
    const json& pic = pics.at(num(l, "id"));
    draft d = site_draft("classifieds", "__CLASSIFIEDS__", "visual_main_colour", 505,
                         "Among the {category} listings, open the one whose photo shows a {main_colour} {object} with "
                         "a {pattern} pattern.");
    d.instantiation = {{"category", str(c, "name")},
                       {"main_colour", str(pic, "main_colour")},
                       {"object", str(pic, "object")},
                       {"pattern", str(pic, "pattern")}};
    expect_url(d, "__CLASSIFIEDS__/item/" + std::to_string(num(l, "id")));
    d.plan.click("link", str(c, "parent_name")).click("link", str(c, "name")).click("link", str(l, "title"));
    d.plan.expect(str(l, "title")).stop();
    d.visual = "hard";
    out.push_back(d);
  }
}

// An input image: the object-only view of a listing's photo (same objects, colours,
// pattern and count, no badge, another size); the listing is the only one of its category
// whose photo has those attributes. The answer is its price.
void classifieds_input_image(const site_data& data, std::vector<draft>& out) {
  auto pics = pictures(data, "classifieds", "listing_pictures");
  json cats = data.rows("classifieds",
                        "SELECT c.id, c.name, t.name AS parent_name FROM categories c JOIN categories t ON "
                        "t.id = c.parent_id ORDER BY c.id");
  std::vector<std::pair<json, json>> picks;  // (category, listing)
  auto look = [&](const json& pic) {
    return str(pic, "object") + "|" + str(pic, "main_colour") + "|" + str(pic, "second_colour") + "|" +
           str(pic, "pattern") + "|" + std::to_string(num(pic, "item_count"));
  };
  for (const json& c : cats) {
    json ls = data.rows("classifieds", std::string(k_classifieds_listing_sql) + "WHERE l.category_id = " +
                                           std::to_string(num(c, "id")) + " ORDER BY l.id");
    if (ls.size() > size_t(sites::classifieds::kListingsPerPage)) continue;
    // The newest first: another listing than 505's.
    if (const json* l = unique_look(ls, pics, look, any_picture, /*newest_first=*/true)) picks.emplace_back(c, *l);
  }
  for (size_t k = 0; k < 3; ++k) {
    if (picks.empty()) throw std::runtime_error("generator: no classifieds category with a unique photo");
    const auto& [c, l] = picks[(k * 5 + 4) * picks.size() / 15];
    draft d = site_draft("classifieds", "__CLASSIFIEDS__", "visual_input_image", 507,
                         "Among the {category} listings, find the one whose photo shows the item in the input "
                         "image. What is its price?");
    d.instantiation = {{"category", str(c, "name")}};
    d.image = {"__CLASSIFIEDS__" + sites::picture_path(sites::kPictureQuery.name, num(l, "id"))};
    expect_must_include(d, {price_alternatives(num(l, "price_cents"))});
    d.plan.click("link", str(c, "parent_name")).click("link", str(c, "name")).click("link", str(l, "title"));
    d.plan.expect(str(l, "title")).stop(money(num(l, "price_cents")));
    d.visual = "hard";
    d.reasoning = "medium";
    out.push_back(d);
  }
}

void reddit_visual(const site_data& data, std::vector<draft>& out) {
  auto pics = pictures(data, "reddit", "post_pictures");
  json forums = data.rows("reddit", "SELECT f.id, f.name, (SELECT COUNT(*) FROM posts p WHERE p.forum_id = f.id) AS n "
                                    "FROM forums f ORDER BY f.id");
  std::vector<std::pair<json, json>> picks;  // (forum, post)
  for (const json& f : forums) {
    if (num(f, "n") > sites::forum::kPostsPerPage) continue;
    json ps = data.rows("reddit", "SELECT id, title FROM posts WHERE forum_id = " + std::to_string(num(f, "id")) +
                                      " ORDER BY id");
    const auto object_pattern_colour = [](const json& pic) {
      return str(pic, "object") + "|" + str(pic, "pattern") + "|" + str(pic, "main_colour");
    };
    if (const json* p = unique_look(ps, pics, object_pattern_colour, any_picture)) picks.emplace_back(f, *p);
  }
  for (size_t k = 0; k < 3; ++k) {
    if (picks.empty()) throw std::runtime_error("generator: no forum with a unique image post");
    const auto& [f, p] = picks[(k * 5 + 2) * picks.size() / 15];
    const json& pic = pics.at(num(p, "id"));
    draft d = site_draft("reddit", "__REDDIT__", "visual_image_post", 506,
                         "In f/{forum}, which post's image shows {count} {main_colour} {object} with a {pattern} "
                         "pattern? Answer with the post's title.");
    d.instantiation = {{"forum", str(f, "name")},
                       {"count", number_word(num(pic, "item_count"))},
                       {"main_colour", str(pic, "main_colour")},
                       {"object", str(pic, "object") + (num(pic, "item_count") > 1 ? "s" : "")},
                       {"pattern", str(pic, "pattern")}};
    expect_exact(d, str(p, "title"));
    reddit_open_forum(d.plan, str(f, "name"));
    d.plan.stop(str(p, "title"));  // every post of the forum is on its first page (checked above)
    d.visual = "hard";
    out.push_back(d);
  }
}

}  // namespace

void visual_templates(const site_data& data, std::vector<draft>& out) {
  shopping_visual(data, out);
  classifieds_visual(data, out);
  if (data.has_site("reddit")) reddit_visual(data, out);
  classifieds_input_image(data, out);
}

}  // namespace kvarena::tasks::gen
