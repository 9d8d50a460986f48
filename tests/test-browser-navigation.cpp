// test-browser-navigation.cpp: the browser loading pages of the loopback site: the
// observation's header and tree, links (relative, fragment, <base>, javascript:/mailto:),
// a cookie login, redirects and error statuses, file:// URLs and non-HTML content.
#include <gtest/gtest.h>

#include <fstream>

#include "test-browser-server.h"
#include "test-util.h"

namespace kvarena {
namespace {

using namespace browser_test;

TEST_F(Browser, StartsOnABlankTab) {
  browser_observation o = b_.observe();
  EXPECT_EQ(o.text, "Tab 0 (current): \n\n[1] RootWebArea '' focused: True");
  EXPECT_EQ(o.url, "about:blank");
  EXPECT_EQ(o.tabs, std::vector<std::string>{""});
}

TEST_F(Browser, ObservationHeaderTreeAndUrl) {
  open("/dir/index.html");
  browser_observation o = b_.observe();
  EXPECT_EQ(o.url, url("/dir/index.html"));
  EXPECT_EQ(o.tabs, std::vector<std::string>{"Index"});
  EXPECT_EQ(o.text.substr(0, o.text.find("\n\n")), "Tab 0 (current): Index");
  EXPECT_NE(o.text.find("\n\n[1] RootWebArea 'Index' focused: True\n"), std::string::npos);
  EXPECT_NE(o.text.find("navigation 'Main'"), std::string::npos);
  EXPECT_NE(o.text.find("link 'Page two'"), std::string::npos);
  EXPECT_NE(o.text.find("heading 'Welcome'"), std::string::npos);
}

TEST_F(Browser, LinksResolveRelativeUrls) {
  open("/dir/index.html");
  ASSERT_TRUE(b_.click(id("link 'Page two'")).ok());
  EXPECT_EQ(b_.current_url(), url("/dir/page2.html"));
  EXPECT_EQ(b_.observe().tabs[0], "Page two");
  ASSERT_TRUE(b_.click(id("link 'Back home'")).ok());
  EXPECT_EQ(b_.current_url(), url("/dir/index.html"));
  ASSERT_TRUE(b_.click(id("link 'Up one'")).ok());
  EXPECT_EQ(b_.current_url(), url("/up.html"));
  open("/dir/index.html");
  ASSERT_TRUE(b_.click(id("link 'Query link'")).ok());
  EXPECT_EQ(b_.current_url(), url("/dir/index.html?q=1"));
  EXPECT_EQ(prop(b_, "#q"), "query is q=1");
  // The referer is the page the link was on.
  auto log = server_.log();
  EXPECT_EQ(log.back().referer, url("/dir/index.html"));
}

TEST_F(Browser, FragmentLinksStayOnThePage) {
  open("/dir/index.html");
  size_t requests = server_.log().size();
  ASSERT_TRUE(b_.click(id("link 'Jump'")).ok());
  EXPECT_EQ(b_.current_url(), url("/dir/index.html#sec"));
  EXPECT_EQ(server_.log().size(), requests);  // no fetch
}

TEST_F(Browser, BaseHrefIsRespected) {
  open("/base");
  ASSERT_TRUE(b_.click(id("link 'Based link'")).ok());
  EXPECT_EQ(b_.current_url(), url("/dir/page2.html"));
}

TEST_F(Browser, ScriptAndMailLinksDoNothingWithANote) {
  open("/dir/index.html");
  browser_result r = b_.click(id("link 'Script link'"));
  EXPECT_TRUE(r.ok());
  EXPECT_NE(r.note.find("JavaScript"), std::string::npos);
  r = b_.click(id("link 'Mail us'"));
  EXPECT_TRUE(r.ok());
  EXPECT_NE(r.note.find("mailto"), std::string::npos);
  EXPECT_EQ(b_.current_url(), url("/dir/index.html"));
}

TEST_F(Browser, CookieLoginFlow) {
  open("/account");
  EXPECT_EQ(b_.current_url(), url("/login"));  // not logged in: redirected
  ASSERT_TRUE(b_.type(id("textbox 'Username'"), "alice", false).ok());
  ASSERT_TRUE(b_.type(id("textbox 'Password'"), "secret", false).ok());
  EXPECT_NE(obs().find("StaticText '\xE2\x80\xA2\xE2\x80\xA2\xE2\x80\xA2\xE2\x80\xA2\xE2\x80\xA2\xE2\x80\xA2'"),
            std::string::npos);
  ASSERT_TRUE(b_.click(id("button 'Log in'")).ok());
  EXPECT_EQ(b_.current_url(), url("/account"));  // POST -> Set-Cookie -> 302 -> GET
  EXPECT_NE(obs().find("heading 'Welcome alice'"), std::string::npos);
  ASSERT_EQ(b_.http().cookies().size(), 1u);
  open("/echo");
  EXPECT_EQ(prop(b_, "#cookie"), "session=abc123");  // sent on the next GET
  ASSERT_TRUE(b_.new_tab().ok());
  open("/account");  // tabs share the jar
  EXPECT_EQ(b_.current_url(), url("/account"));
}

TEST_F(Browser, RedirectsErrorsAndStatuses) {
  open("/redirect");
  EXPECT_EQ(b_.current_url(), url("/echo?from=redirect"));
  browser_result r = b_.go_to(url("/missing"));
  EXPECT_TRUE(r.ok());
  EXPECT_EQ(r.note, "the server answered HTTP 404 for " + url("/missing"));
  EXPECT_NE(obs().find("heading 'No such page'"), std::string::npos);
  r = b_.go_to(url("/loop"));
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(b_.current_url(), url("/missing"));  // unchanged on failure
  r = b_.go_to("ftp://example.com/x");
  EXPECT_EQ(r.error, "cannot open 'ftp://example.com/x': only http:// and https:// URLs are opened (and about:blank)");
  r = b_.go_to("  ");
  EXPECT_NE(r.error.find("goto needs a URL"), std::string::npos);
  ASSERT_TRUE(b_.go_to("/up.html").ok());  // a path is relative to the current page
  EXPECT_EQ(b_.current_url(), url("/up.html"));
  ASSERT_TRUE(b_.go_to("about:blank").ok());
  EXPECT_EQ(b_.current_url(), "about:blank");
}

TEST(BrowserFiles, FileUrls) {  // with --allow-file-urls (test-env-hardening.cpp: without)
  text_browser_options allow;
  allow.http.allow_file_urls = true;
  text_browser b(allow);
  auto dir = test::temp_dir("browser-file");
  {
    std::ofstream f(dir / "page.html");
    f << page("Local file", "<a href=\"other.html\">Other</a>");
    std::ofstream g(dir / "other.html");
    g << page("Other file", "<p>here</p>");
  }
  ASSERT_TRUE(b.go_to("file://" + (dir / "page.html").string()).ok());
  EXPECT_EQ(b.observe().tabs[0], "Local file");
  ASSERT_TRUE(b.click(id_of(b.observe().text, "link 'Other'")).ok());
  EXPECT_EQ(b.observe().tabs[0], "Other file");
  browser_result r = b.go_to("file://" + (dir / "missing.html").string());
  EXPECT_NE(r.error.find("no such file"), std::string::npos) << r.error;
}

TEST_F(Browser, NonHtmlContent) {
  open("/plain.txt");
  EXPECT_EQ(b_.observe().tabs[0], "plain.txt");
  EXPECT_NE(obs().find("StaticText 'plain <b>text</b>\\nline two'"), std::string::npos) << obs();
  open("/pic.png");
  EXPECT_NE(obs().find("img 'pic.png'"), std::string::npos);
  open("/bin");
  EXPECT_NE(obs().find("application/octet-stream content (4 bytes)"), std::string::npos);
  open("/latin1");
  EXPECT_EQ(b_.observe().tabs[0], "Caf\xC3\xA9");
  EXPECT_NE(obs().find("StaticText 'na\xC3\xAFve \xE2\x82\xAC'"), std::string::npos) << obs();
  open("/garbage");
  EXPECT_NE(obs().find("RootWebArea"), std::string::npos);
}

}  // namespace
}  // namespace kvarena
