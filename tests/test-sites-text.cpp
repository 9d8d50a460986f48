// test-sites-text.cpp: the local sites' text helpers, no server needed: URL percent
// decoding, query and cookie parsing, request-target normalisation, the HTML builder's
// escaping, envs/common/'s UTF-8 encoder and HTML escaper (which the browser shares), the
// router's patterns and 405s, and the classifieds price format.
#include "common/text-encode.h"
#include "sites/html.h"
#include "sites/http-message.h"
#include "sites/http-router.h"
#include "sites/site-classifieds.h"
#include "test-util.h"

using namespace kvarena::sites;

// ---- URL and HTML helpers -------------------------------------------------------------

TEST(SitesUrl, PercentDecodingAndQueries) {
  EXPECT_EQ(percent_decode("a%20b+c", true), "a b c");
  EXPECT_EQ(percent_decode("a+b", false), "a+b");
  EXPECT_FALSE(percent_decode("%zz", false));
  EXPECT_FALSE(percent_decode("abc%4", false));
  param_list p;
  ASSERT_TRUE(parse_urlencoded("q=blue+bike&x=%26%3D&q=2&flag", p));
  EXPECT_EQ(p.get("q"), "blue bike");
  EXPECT_EQ(p.get_all("q").size(), 2u);
  EXPECT_EQ(p.get("x"), "&=");
  EXPECT_TRUE(p.has("flag"));
  EXPECT_EQ(url_encode("a b&c/é"), "a%20b%26c%2F%C3%A9");
  param_list c;
  parse_cookie_header("a=1; b=\"two\";  c = 3", c);
  EXPECT_EQ(c.get("b"), "two");
  EXPECT_EQ(c.get("c"), "3");
}

TEST(SitesUrl, TargetsAreNormalisedOrRejected) {
  parsed_target t;
  ASSERT_FALSE(parse_target("/main/classifieds/search?q=a%20b", t));
  EXPECT_EQ(t.path, "/main/classifieds/search");
  EXPECT_EQ(t.query.get("q"), "a b");
  parsed_target t2;
  ASSERT_FALSE(parse_target("/main//classifieds/", t2));
  EXPECT_EQ(t2.path, "/main/classifieds/");
  for (const char* bad : {"/../../etc/passwd", "/main/%2e%2e/%2E%2E/etc/passwd", "/a/./b", "/a/..%2fb", "/a%5cb",
                          "/a%00b", "relative", "http://evil.example/", "/a?q=%zz", "/%"}) {
    parsed_target x;
    EXPECT_TRUE(parse_target(bad, x)) << bad;
  }
}

TEST(SitesHtml, EscapesEveryUserString) {
  EXPECT_EQ(escape_html("<a href=\"x\">'&'</a>"), "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;");
  html h = element("a", {{"href", "/x?a=1&b=\"2\""}, {"", "dropped"}}, text("<b>"));
  EXPECT_EQ(h.str(), "<a href=\"/x?a=1&amp;b=&quot;2&quot;\">&lt;b&gt;</a>");
  html f = labeled_input("f-id", "Name <required>", "name", "\"><script>", field_opts().mark_required().show_error("Bad & wrong"));
  EXPECT_NE(f.str().find("<label for=\"f-id\">Name &lt;required&gt; (required)</label>"), std::string::npos);
  EXPECT_NE(f.str().find("value=\"&quot;&gt;&lt;script&gt;\""), std::string::npos);
  EXPECT_NE(f.str().find("aria-invalid=\"true\""), std::string::npos);
  EXPECT_EQ(f.str().find("<script>"), std::string::npos);
  EXPECT_EQ(format_money(125000), "$1,250.00");
  EXPECT_EQ(format_money(99), "$0.99");
  EXPECT_EQ(format_money(0), "Free");
}

TEST(EnvsText, Utf8OfOneToFourByteCodePoints) {
  auto utf8 = [](unsigned cp) {
    std::string s;
    kvarena::append_utf8(s, cp);
    return s;
  };
  EXPECT_EQ(utf8(0x41), "\x41");
  EXPECT_EQ(utf8(0x7F), "\x7F");
  EXPECT_EQ(utf8(0xE9), "\xC3\xA9");
  EXPECT_EQ(utf8(0x7FF), "\xDF\xBF");
  EXPECT_EQ(utf8(0x20AC), "\xE2\x82\xAC");
  EXPECT_EQ(utf8(0xFFFD), "\xEF\xBF\xBD");
  EXPECT_EQ(utf8(0x10000), "\xF0\x90\x80\x80");
  EXPECT_EQ(utf8(0x1F600), "\xF0\x9F\x98\x80");
  EXPECT_EQ(utf8(0x10FFFF), "\xF4\x8F\xBF\xBF");
  std::string appended = "a";
  kvarena::append_utf8(appended, 0xE9);
  EXPECT_EQ(appended, "a\xC3\xA9");
}

TEST(EnvsText, EscapesHtmlSpecialCharacters) {
  EXPECT_EQ(kvarena::escape_html("Tom's \"<b>\" & Jerry's"),
            "Tom&#39;s &quot;&lt;b&gt;&quot; &amp; Jerry&#39;s");
  EXPECT_EQ(kvarena::escape_html("plain caf\xC3\xA9 text"), "plain caf\xC3\xA9 text");
  EXPECT_EQ(kvarena::escape_html(""), "");
  EXPECT_EQ(kvarena::escape_html("&amp;"), "&amp;amp;");
}

TEST(SitesRouter, PatternsCapturesAnd405) {
  router<int> r;
  r.add("GET", "/item/{id}", 1);
  r.add("POST", "/item/{id}/edit", 2);
  r.add("GET", "/item/{id}/edit", 3);
  r.add("GET", "/", 4);
  auto m = r.find("GET", "/item/42");
  ASSERT_EQ(m.kind, router<int>::match_result::found);
  EXPECT_EQ(*m.handler, 1);
  EXPECT_EQ(m.params["id"], "42");
  EXPECT_EQ(*r.find("GET", "/").handler, 4);
  EXPECT_EQ(*r.find("POST", "/item/7/edit/").handler, 2);
  auto bad = r.find("DELETE", "/item/7/edit");
  EXPECT_EQ(bad.kind, router<int>::match_result::method_not_allowed);
  EXPECT_EQ(bad.allow, "POST, GET");
  EXPECT_EQ(r.find("GET", "/item").kind, router<int>::match_result::not_found);
}

TEST(SitesClassifieds, PricesParseAndPrint) {
  using namespace kvarena::sites::classifieds;
  EXPECT_EQ(parse_price_cents("250"), 25000);
  EXPECT_EQ(parse_price_cents("$1,200.5"), 120050);
  EXPECT_EQ(parse_price_cents(".99"), 99);
  EXPECT_EQ(parse_price_cents("0"), 0);
  for (const char* bad : {"", "ten", "-5", "1.234", "1e3", "$", "."}) EXPECT_FALSE(parse_price_cents(bad)) << bad;
  EXPECT_EQ(price_input_text(25000), "250");
  EXPECT_EQ(price_input_text(1990), "19.90");
  EXPECT_EQ(price_input_text(5), "0.05");
}
