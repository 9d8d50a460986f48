// test-sites-visual.cpp: what the sites look like without changing what a text agent
// reads: the stylesheet route of every site, the stylesheet link on every page, and that
// the link leaves the text browser's accessibility tree (ids included) exactly as it was
// without it; the pictures: a row for every product, photographed listing and image post,
// in agreement with the item's own text (colour, pack size), PNGs at the two sizes decoded
// with libpng here and showing the recorded main colour, drawn once and then cached, shown
// on item pages with their alt text and in lists as a CSS background only.
#include <gtest/gtest.h>
#include <png.h>

#include <nlohmann/json.hpp>
#include <regex>
#include <set>

#include "browser/common/ax-print.h"
#include "browser/common/ax-tree.h"
#include "browser/text/form-state.h"
#include "browser/text/html-document.h"
#include "sites/html.h"
#include "sites/picture.h"
#include "test-sites-client.h"

using namespace kvarena::sites;
using namespace kvarena::test;

namespace {

std::string tree_with_ids(const std::string& page) {
  kvarena::html_document doc(page);
  kvarena::form_state state(doc);
  return kvarena::render_ax_tree(kvarena::build_ax_tree(doc, state, nullptr), 0, 1 << 30).text;
}

class SitesVisual : public site_fixture {
 protected:
  static nlohmann::json sql(const std::string& tenant, const std::string& site, const std::string& q) {
    return store().query(tenant, site, q, {});
  }
};

struct rgb_image {
  int width = 0, height = 0;
  std::vector<unsigned char> px;  // (height, width, 3)
};
rgb_image decode_png(const std::string& bytes) {
  png_image img{};
  img.version = PNG_IMAGE_VERSION;
  rgb_image out;
  if (!png_image_begin_read_from_memory(&img, bytes.data(), bytes.size())) return out;
  img.format = PNG_FORMAT_RGB;
  out.px.resize(PNG_IMAGE_SIZE(img));
  if (!png_image_finish_read(&img, nullptr, out.px.data(), 0, nullptr)) return {};
  out.width = int(img.width);
  out.height = int(img.height);
  return out;
}
// Pixels within 2 of (r, g, b) in every channel.
int64_t pixels_of(const rgb_image& im, int r, int g, int b) {
  int64_t n = 0;
  for (size_t i = 0; i + 2 < im.px.size(); i += 3)
    if (std::abs(im.px[i] - r) <= 2 && std::abs(im.px[i + 1] - g) <= 2 && std::abs(im.px[i + 2] - b) <= 2) ++n;
  return n;
}

TEST_F(SitesVisual, EverySiteServesItsStylesheetAndEveryPageLinksIt) {
  site_client c;
  const std::vector<std::pair<std::string, std::string>> pages = {
      {"classifieds", "/"}, {"classifieds", "/item/3"}, {"shopping", "/"}, {"shopping", "/product/3"},
      {"reddit", "/"},      {"reddit", "/forums"},      {"shopping", "/no/such/page"}};
  for (const auto& [site, path] : pages) {
    std::string base = fresh(site);
    auto r = c.get(base + path);
    std::string href = base.substr(base.find("/", 8)) + "/static/site.css";
    EXPECT_TRUE(r.has("<link rel=\"stylesheet\" href=\"" + href + "\">")) << site << path;
    auto css = c.get(base + "/static/site.css");
    EXPECT_EQ(css.status, 200) << site;
    EXPECT_EQ(css.header("Content-Type"), "text/css; charset=utf-8") << site;
    EXPECT_NE(css.body.find("main {"), std::string::npos) << site;  // the shared base rules
  }
  // Each site's own layout follows the base: the product grid, the listing grid, the post list.
  EXPECT_TRUE(c.get(fresh("shopping") + "/static/site.css").has("ol.products {"));
  EXPECT_TRUE(c.get(fresh("classifieds") + "/static/site.css").has("ol.results {"));
  EXPECT_TRUE(c.get(fresh("reddit") + "/static/site.css").has("ol.posts {"));
}

TEST_F(SitesVisual, EveryProductPhotographedListingAndSomePostsHaveAPictureThatAgreesWithTheirText) {
  std::string t;
  fresh("shopping", &t);
  auto products = sql(t, "shopping",
                      "SELECT p.id, p.name, x.main_colour, x.item_count, x.object, x.pattern, x.shape, x.label "
                      "FROM products p LEFT JOIN product_pictures x ON x.item_id = p.id ORDER BY p.id");
  ASSERT_EQ(products.size(), 352u);
  int coloured = 0, packs = 0;
  std::set<std::string> patterns, shapes, objects;
  for (const auto& r : products) {
    ASSERT_FALSE(r["main_colour"].is_null()) << r["name"];
    std::string name = r["name"], variant = name.substr(name.rfind(", ") + 2);
    std::string lower = variant;
    for (auto& ch : lower) ch = char(std::tolower(static_cast<unsigned char>(ch)));
    if (lower == "red" || lower == "black" || lower == "white" || lower == "midnight blue" || lower == "silver") {
      EXPECT_EQ(r["main_colour"], lower) << name;
      ++coloured;
    }
    if (variant == "2 Pack" || variant == "3 Piece") {
      EXPECT_EQ(r["item_count"].get<int64_t>(), variant[0] - '0') << name;
      ++packs;
    }
    EXPECT_GE(r["item_count"].get<int64_t>(), 1);
    EXPECT_LE(r["item_count"].get<int64_t>(), 4);
    EXPECT_TRUE(std::regex_match(r["label"].get<std::string>(), std::regex("[A-Z][0-9]"))) << r["label"];
    patterns.insert(r["pattern"]);
    shapes.insert(r["shape"]);
    objects.insert(r["object"]);
  }
  EXPECT_GT(coloured, 20);
  EXPECT_GT(packs, 5);
  EXPECT_EQ(patterns.size(), 4u);  // solid, striped, dotted, checked all occur
  EXPECT_EQ(shapes.size(), 5u);
  EXPECT_GE(objects.size(), 8u);

  fresh("classifieds", &t);
  auto listings = sql(t, "classifieds",
                      "SELECT l.id, l.image_alt, x.main_colour FROM listings l "
                      "LEFT JOIN listing_pictures x ON x.item_id = l.id ORDER BY l.id");
  int with_photo = 0;
  for (const auto& r : listings) {
    EXPECT_EQ(r["image_alt"].is_null(), r["main_colour"].is_null()) << r["id"];
    if (r["image_alt"].is_null()) continue;
    ++with_photo;
    // "Photo of a blue road bike": the picture's main colour is the one the alt text names.
    EXPECT_EQ(r["image_alt"].get<std::string>().rfind("Photo of a " + r["main_colour"].get<std::string>() + " ", 0), 0u)
        << r["image_alt"] << " vs " << r["main_colour"];
  }
  EXPECT_GT(with_photo, int(listings.size()) / 2);

  fresh("reddit", &t);
  auto posts = sql(t, "reddit",
                   "SELECT COUNT(*) AS n, SUM(x.item_id IS NOT NULL) AS img, SUM(x.item_id IS NOT NULL AND p.url IS NOT NULL) "
                   "AS link_img FROM posts p LEFT JOIN post_pictures x ON x.item_id = p.id");
  EXPECT_GT(posts[0]["img"].get<int64_t>(), posts[0]["n"].get<int64_t>() / 8);
  EXPECT_LT(posts[0]["img"].get<int64_t>(), posts[0]["n"].get<int64_t>() / 2);
  EXPECT_EQ(posts[0]["link_img"].get<int64_t>(), 0);  // image posts are not link posts
}

TEST_F(SitesVisual, PicturesArePngsOfTheTwoSizesInTheirMainColourDrawnOnce) {
  std::string t1, t2;
  std::string base = fresh("shopping", &t1);
  std::string other = fresh("shopping", &t2);
  auto row = sql(t1, "shopping", "SELECT item_id, main_colour FROM product_pictures WHERE item_id = 7")[0];
  const picture_colour* c = find_picture_colour(row["main_colour"].get<std::string>());
  ASSERT_NE(c, nullptr);
  site_client http;
  auto full = http.get(base + "/images/full/7.png");
  ASSERT_EQ(full.status, 200);
  EXPECT_EQ(full.header("Content-Type"), "image/png");
  rgb_image im = decode_png(full.body);
  EXPECT_EQ(im.width, 640);
  EXPECT_EQ(im.height, 480);
  EXPECT_GT(pixels_of(im, c->r, c->g, c->b), 640 * 480 / 100) << row["main_colour"];
  auto thumb = http.get(base + "/images/thumb/7.png");
  rgb_image th = decode_png(thumb.body);
  EXPECT_EQ(th.width, 240);
  EXPECT_EQ(th.height, 180);
  // Drawn once: the same picture again, and from another tenant, draws nothing new.
  int64_t drawn = pictures_drawn();
  EXPECT_EQ(http.get(base + "/images/full/7.png").body, full.body);
  EXPECT_EQ(http.get(other + "/images/full/7.png").body, full.body);
  EXPECT_EQ(pictures_drawn(), drawn);
  EXPECT_EQ(http.get(base + "/images/full/9999.png").status, 404);
  EXPECT_EQ(http.get(base + "/images/huge/7.png").status, 404);
  EXPECT_EQ(http.get(base + "/images/full/7.gif").status, 404);
}

// A task's input image: the object-only view at an opaque name (no id in the URL), square,
// without the badge, so it is not the listing's own picture byte for byte.
TEST_F(SitesVisual, TheQueryViewIsAnotherRenderingAtAnOpaqueUrl) {
  std::string base = fresh("classifieds");
  site_client http;
  std::string path = picture_path("query", 3);
  EXPECT_EQ(path.find("/3."), std::string::npos) << path;
  auto q = http.get(base + path);
  ASSERT_EQ(q.status, 200) << path;
  rgb_image qi = decode_png(q.body);
  EXPECT_EQ(qi.width, 400);
  EXPECT_EQ(qi.height, 400);
  // The badge is near-black (25, 25, 30) in the full picture; the query view has none of it.
  rgb_image full = decode_png(http.get(base + "/images/full/3.png").body);
  EXPECT_GT(pixels_of(full, 25, 25, 31), 100);
  EXPECT_EQ(pixels_of(qi, 25, 25, 31), 0);
  EXPECT_EQ(http.get(base + "/images/query/0123456789abcdef.png").status, 404);
}

TEST_F(SitesVisual, ItemPagesShowThePictureWithAltTextAndListsAddNoNode) {
  site_client http;
  std::string shop = fresh("shopping");
  auto product = http.get(shop + "/product/7");
  std::string path = shop.substr(shop.find('/', 8));
  std::smatch m;
  ASSERT_TRUE(std::regex_search(product.body, m, std::regex("<h1>([^<]*)</h1>")));
  EXPECT_TRUE(product.has("<img src=\"" + path + "/images/full/7.png\" alt=\"" + m[1].str() + "\"")) << product.body;
  auto list = http.get(shop + "/category/2");
  EXPECT_TRUE(list.has("style=\"--thumb:url(" + path + "/images/thumb/")) << list.body.substr(0, 2000);
  EXPECT_FALSE(list.has("<img"));
  std::string cls = fresh("classifieds");
  auto item = http.get(cls + "/item/2");
  if (item.has("alt=\"Photo of")) {
    EXPECT_TRUE(item.has("/images/full/2.png\" alt=\"Photo of")) << item.body;
  }
}

// The text browser numbers nodes in DOM preorder and a field's value text after the last
// node: the link must not add a node, or every id after it (and every filled field's
// value id) would move.
TEST(SitesStyle, TheStylesheetLinkLeavesTheTreeAndItsIdsUnchanged) {
  page_chrome c;
  c.site_title = "Shop";
  c.home_href = "/main/shopping/";
  c.nav = {{"Cart", "/main/shopping/cart"}};
  c.search_action = "/main/shopping/search";
  c.search_value = "mug";  // a filled field: its value text's id counts every node
  c.footer = "A footer.";
  html content = element("p", text("Hello")) + kvarena::sites::link("/main/shopping/product/1", "A product");
  std::string plain = render_page(c, "Home", content);
  c.stylesheet_href = "/main/shopping/static/site.css";
  std::string styled = render_page(c, "Home", content);
  ASSERT_NE(styled.find("<link rel=\"stylesheet\""), std::string::npos);
  ASSERT_NE(plain, styled);
  EXPECT_EQ(kvarena::html_document(plain).node_count(), kvarena::html_document(styled).node_count());
  std::string tree = tree_with_ids(plain);
  EXPECT_NE(tree.find("StaticText 'mug'"), std::string::npos) << tree;
  EXPECT_EQ(tree_with_ids(styled), tree);
}

}  // namespace
