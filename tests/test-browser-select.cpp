// test-browser-select.cpp: the CSS selector engine the evaluators' locators use (types,
// ids, classes, attributes, combinators, pseudo-classes, document order, escapes) and its
// error messages. No network.
#include <gtest/gtest.h>

#include "browser/text/css-select.h"
#include "browser/text/dom-text.h"
#include "browser/text/html-document.h"
#include "test-browser-util.h"

namespace kvarena {
namespace {

using namespace browser_test;

// CSS selectors

class CssSelect : public ::testing::Test {
 protected:
  CssSelect()
      : doc_(page("T", "<div id=\"main\" class=\"box big\"><p class=\"a\">one</p><p class=\"b\">two</p>"
                       "<span lang=\"en-US\" data-x=\"hello world\">three</span>"
                       "<ul><li>i1</li><li>i2</li><li>i3</li><li>i4</li></ul></div><p id=\"last\">four</p>"
                       "<template><p>tpl</p></template>")) {}

  // Texts of all matches in document order, joined by ','; "ERR" on a parse error.
  std::string all(const std::string& sel) {
    std::string err;
    auto s = css_selector_list::parse(sel, &err);
    if (!s) return "ERR";
    std::string out;
    for (const GumboNode* n : query_selector_all(doc_.document(), *s)) {
      if (!out.empty()) out.push_back(',');
      out.append(has_tag(n, GUMBO_TAG_UL) || has_tag(n, GUMBO_TAG_DIV) ? tag_name(n) : text_content(n));
    }
    return out;
  }
  std::string error(const std::string& sel) {
    std::string err;
    EXPECT_FALSE(css_selector_list::parse(sel, &err).has_value()) << sel;
    return err;
  }
  html_document doc_;
};

TEST_F(CssSelect, TypeIdClass) {
  EXPECT_EQ(all("p"), "one,two,four");
  EXPECT_EQ(all("P"), "one,two,four");
  EXPECT_EQ(all("#main"), "div");
  EXPECT_EQ(all("div#main.box.big"), "div");
  EXPECT_EQ(all(".box.small"), "");
  EXPECT_EQ(all(".a"), "one");
  EXPECT_EQ(all("*#last"), "four");
}

TEST_F(CssSelect, Attributes) {
  EXPECT_EQ(all("[data-x]"), "three");
  EXPECT_EQ(all("[data-x='hello world']"), "three");
  EXPECT_EQ(all("[data-x=\"hello\"]"), "");
  EXPECT_EQ(all("[data-x^=hel]"), "three");
  EXPECT_EQ(all("[data-x$=rld]"), "three");
  EXPECT_EQ(all("[data-x*='o w']"), "three");
  EXPECT_EQ(all("[data-x~=world]"), "three");
  EXPECT_EQ(all("[lang|=en]"), "three");
  EXPECT_EQ(all("[data-x='HELLO WORLD' i]"), "three");
  EXPECT_EQ(all("[data-x^='']"), "");
  EXPECT_EQ(all("p[class=a]"), "one");
}

TEST_F(CssSelect, Combinators) {
  EXPECT_EQ(all("div > p"), "one,two");
  EXPECT_EQ(all("div p"), "one,two");
  EXPECT_EQ(all("body > p"), "four");
  EXPECT_EQ(all("html p"), "one,two,four");  // not the template's
  EXPECT_EQ(all("p + p"), "two");
  EXPECT_EQ(all("p.a ~ ul"), "ul");
  EXPECT_EQ(all("#main li"), "i1,i2,i3,i4");
  EXPECT_EQ(all("div>ul>li"), "i1,i2,i3,i4");
  EXPECT_EQ(all("p.a, #last"), "one,four");
  EXPECT_EQ(all("#last, p.a"), "one,four");  // document order, not list order
}

TEST_F(CssSelect, PseudoClasses) {
  EXPECT_EQ(all("li:nth-child(2)"), "i2");
  EXPECT_EQ(all("li:nth-child(odd)"), "i1,i3");
  EXPECT_EQ(all("li:nth-child(even)"), "i2,i4");
  EXPECT_EQ(all("li:nth-child(2n+1)"), "i1,i3");
  EXPECT_EQ(all("li:nth-child(-n+2)"), "i1,i2");
  EXPECT_EQ(all("li:nth-child( 3n )"), "i3");
  EXPECT_EQ(all("li:nth-last-child(1)"), "i4");
  EXPECT_EQ(all("li:first-child"), "i1");
  EXPECT_EQ(all("li:last-child"), "i4");
  EXPECT_EQ(all("p:first-child"), "one");
  EXPECT_EQ(all("p:first-of-type"), "one,four");
  EXPECT_EQ(all("p:nth-of-type(2)"), "two");
  EXPECT_EQ(all("span:only-of-type"), "three");
  EXPECT_EQ(all("li:not(:first-child):not(:last-child)"), "i2,i3");
  EXPECT_EQ(all("div :not(li, ul)"), "one,two,three");
}

TEST_F(CssSelect, QuerySelectorReturnsFirstInDocumentOrder) {
  auto s = css_selector_list::parse("p");
  ASSERT_TRUE(s);
  EXPECT_EQ(text_content(query_selector(doc_.document(), *s)), "one");
  auto none = css_selector_list::parse("table");
  EXPECT_EQ(query_selector(doc_.document(), *none), nullptr);
  // An element scope searches only below it.
  auto li = css_selector_list::parse("li");
  EXPECT_EQ(query_selector_all(doc_.element_by_id("last"), *li).size(), 0u);
  EXPECT_EQ(query_selector_all(doc_.element_by_id("main"), *li).size(), 4u);
}

TEST_F(CssSelect, ErrorsNameWhatAndWhere) {
  EXPECT_NE(error("p::before").find("pseudo-elements"), std::string::npos);
  EXPECT_NE(error("a:hover").find("unsupported pseudo-class ':hover'"), std::string::npos);
  EXPECT_NE(error("[").find("position"), std::string::npos);
  EXPECT_NE(error("p >").find("expected a selector"), std::string::npos);
  EXPECT_EQ(error("   "), "empty selector");
  EXPECT_NE(error("a[b=").find("attribute value"), std::string::npos);
  EXPECT_NE(error(":nth-child(x)").find("an+b"), std::string::npos);
  EXPECT_NE(error("p, ").find("expected"), std::string::npos);
  EXPECT_NE(error("p $").find("unexpected '$'"), std::string::npos);
  EXPECT_NE(error("[a='x]").find("unterminated"), std::string::npos);
}

TEST(CssSelectEscapes, EscapedIdentifiers) {
  html_document doc(page("T", "<p id=\"a:b\">colon</p><p class=\"1x\">digit</p>"));
  auto s = css_selector_list::parse("#a\\:b");
  ASSERT_TRUE(s);
  EXPECT_EQ(text_content(query_selector(doc.document(), *s)), "colon");
  auto d = css_selector_list::parse(".\\31 x");
  ASSERT_TRUE(d);
  EXPECT_EQ(text_content(query_selector(doc.document(), *d)), "digit");
}

}  // namespace
}  // namespace kvarena
