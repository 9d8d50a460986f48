// test-browser-odd-html.cpp: odd HTML never crashes the browser: empty, broken, binary and
// non-UTF-8 input, huge and deep pages through the parser, tree, text and selectors, and
// odd pages served over loopback.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>

#include "browser/common/ax-print.h"
#include "browser/common/ax-tree.h"
#include "browser/text/css-select.h"
#include "browser/text/dom-text.h"
#include "browser/text/form-state.h"
#include "browser/text/html-document.h"
#include "test-browser-server.h"

namespace kvarena {
namespace {

using namespace browser_test;

// Odd HTML never crashes

void exercise(const std::string& html) {
  html_document doc(html);
  form_state st(doc);
  ax_node tree = build_ax_tree(doc, st, nullptr);
  ax_rendering r = render_ax_tree(tree, 0, 128);
  EXPECT_EQ(r.text.rfind("[1] RootWebArea", 0), 0u);
  (void)inner_text(doc.document());
  (void)text_content(doc.document());
  auto all = css_selector_list::parse("*");
  (void)query_selector_all(doc.document(), *all);
}

TEST(BrowserOddHtml, EmptyAndBroken) {
  exercise("");
  exercise("<");
  exercise("<html");
  exercise("<a href=x><b><i>unclosed <p>para <table><tr><td>cell <ul><li>x");
  exercise("</div></div></p><p>stray end tags</span>");
  exercise("<select><option>no close<option>two</select><textarea>unclosed");
  exercise("<input type=checkbox><input type=radio name=><form><form><input></form>");
  exercise(std::string("nul\0bytes<p>\0</p>", 17));
  exercise("<!-- unterminated comment");
  exercise("<svg><foreignObject><p>inside svg</p></foreignObject></svg><math><mi>x</mi></math>");
  exercise("<my-widget role=button aria-label=\"Custom\">x</my-widget><dialog open>d</dialog>");
}

TEST(BrowserOddHtml, BinaryGarbageAndNonUtf8) {
  std::string g;
  for (int i = 0; i < 20000; ++i) g += static_cast<char>((i * 2654435761u) >> 13);
  exercise(g);
  exercise("<title>\xFF\xFE bad</title><p>\xC3\x28 \xE2\x82 \xF0\x9F</p>");
  html_document doc(page("T", "<p>caf\xE9</p>"));  // latin-1 byte in a UTF-8 page
  form_state st(doc);
  EXPECT_NE(render_ax_tree(build_ax_tree(doc, st, nullptr), 0, 10).text.find("StaticText 'caf"), std::string::npos);
  EXPECT_EQ(decode_to_utf8("caf\xE9", "text/html; charset=\"iso-8859-1\""), "caf\xC3\xA9");
  EXPECT_EQ(decode_to_utf8("caf\xE9", "text/html; charset=utf-8"), "caf\xE9");
}

TEST(BrowserOddHtml, HugeAndDeepPages) {
  std::string wide;
  for (int i = 0; i < 40000; ++i) wide += "<p>Paragraph " + std::to_string(i) + " <a href=\"/l" + std::to_string(i) + "\">link</a></p>";
  ASSERT_GT(wide.size(), 1u << 20);
  auto start = std::chrono::steady_clock::now();
  exercise(wide);
  std::printf("[ odd html ] 1.5 MB page: %lld ms\n", static_cast<long long>(std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start).count()));

  std::string deep;
  for (int i = 0; i < 3000; ++i) deep += "<div><span>";
  deep += "bottom text";
  exercise(deep);  // deeper than kMaxAxDepth: the tail is left out, nothing overflows
}

TEST(BrowserOddHtml, BrowserSurvivesOddPages) {
  test_server server([](const test_request& r) {
    test_response out;
    if (r.path == "/empty") out.body = "";
    else if (r.path == "/nul") out.body = std::string("<p>a\0b</p>", 10);
    else out.body = "<p>Unclosed<p><a href='/x'>link";
    return out;
  });
  text_browser b;
  for (const char* p : {"/empty", "/nul", "/unclosed"}) {
    ASSERT_TRUE(b.go_to(server.url(p)).ok()) << p;
    EXPECT_NE(b.observe().text.find("RootWebArea"), std::string::npos);
  }
  EXPECT_NE(b.observe().text.find("link 'link'"), std::string::npos) << b.observe().text;
}

}  // namespace
}  // namespace kvarena
