// test-sites-visual.cpp: what the sites look like without changing what a text agent
// reads: the stylesheet route of every site, the stylesheet link on every page, and that
// the link leaves the text browser's accessibility tree (ids included) exactly as it was
// without it.
#include <gtest/gtest.h>

#include "browser/ax-print.h"
#include "browser/ax-tree.h"
#include "browser/form-state.h"
#include "browser/html-document.h"
#include "sites/html.h"
#include "test-sites-client.h"

using namespace kvarena::sites;
using namespace kvarena::test;

namespace {

std::string tree_with_ids(const std::string& page) {
  kvarena::html_document doc(page);
  kvarena::form_state state(doc);
  return kvarena::render_ax_tree(kvarena::build_ax_tree(doc, state, nullptr), 0, 1 << 30).text;
}

class SitesVisual : public site_fixture {};

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
