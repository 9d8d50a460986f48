// test-browser-tabs.cpp: what the browser keeps between pages: each tab's history (back,
// forward, typed values restored), opening, focusing and closing tabs, and the viewport
// (scrolling, ids outside it, fragments scrolled to the top).
#include <gtest/gtest.h>

#include "test-browser-server.h"

namespace kvarena {
namespace {

using namespace browser_test;

TEST_F(Browser, BackAndForward) {
  browser_result r = b_.go_back();
  EXPECT_EQ(r.error, "cannot go back: this tab has no earlier page");
  open("/dir/index.html");
  ASSERT_TRUE(b_.click(id("link 'Page two'")).ok());
  ASSERT_TRUE(b_.go_back().ok());
  EXPECT_EQ(b_.current_url(), url("/dir/index.html"));
  ASSERT_TRUE(b_.go_back().ok());
  EXPECT_EQ(b_.current_url(), "about:blank");
  EXPECT_FALSE(b_.go_back().ok());
  ASSERT_TRUE(b_.go_forward().ok());
  ASSERT_TRUE(b_.go_forward().ok());
  EXPECT_EQ(b_.current_url(), url("/dir/page2.html"));
  r = b_.go_forward();
  EXPECT_EQ(r.error, "cannot go forward: there is no later page in this tab (go_forward works after go_back)");
  // A new page drops the forward entries.
  ASSERT_TRUE(b_.go_back().ok());
  open("/up.html");
  EXPECT_FALSE(b_.go_forward().ok());
}

TEST_F(Browser, HistoryRestoresTypedValues) {
  open("/form-get");
  ASSERT_TRUE(b_.type(id("textbox 'Query'"), "kept", false).ok());
  open("/up.html");
  ASSERT_TRUE(b_.go_back().ok());
  EXPECT_NE(obs().find("StaticText 'kept'"), std::string::npos);
}

TEST_F(Browser, Tabs) {
  open("/dir/index.html");
  ASSERT_TRUE(b_.click(id("link 'New tab link'")).ok());
  EXPECT_EQ(b_.tab_count(), 2);
  EXPECT_EQ(b_.observe().text.substr(0, b_.observe().text.find("\n")), "Tab 0: Index | Tab 1 (current): Echo");
  ASSERT_TRUE(b_.new_tab().ok());
  browser_observation o = b_.observe();
  EXPECT_EQ(o.url, "about:blank");
  EXPECT_EQ(o.tabs, (std::vector<std::string>{"Index", "Echo", ""}));
  ASSERT_TRUE(b_.tab_focus(0).ok());
  EXPECT_EQ(b_.current_url(), url("/dir/index.html"));
  EXPECT_EQ(b_.tab_focus(3).error, "tab 3 does not exist (3 tabs open: use 0 to 2)");
  EXPECT_EQ(b_.tab_focus(-1).error, "tab -1 does not exist (3 tabs open: use 0 to 2)");
  ASSERT_TRUE(b_.close_tab().ok());  // closes tab 0; focus goes to the last tab
  EXPECT_EQ(b_.tab_count(), 2);
  EXPECT_EQ(b_.current_tab(), 1);
  EXPECT_EQ(b_.current_url(), "about:blank");
  ASSERT_TRUE(b_.close_tab().ok());
  ASSERT_TRUE(b_.close_tab().ok());  // the last tab: replaced by a blank one
  EXPECT_EQ(b_.tab_count(), 1);
  EXPECT_EQ(b_.current_url(), "about:blank");
  EXPECT_EQ(b_.tab_focus(1).error, "tab 1 does not exist (1 tab open: use tab_focus [0])");
  // Each tab has its own history.
  open("/up.html");
  ASSERT_TRUE(b_.new_tab().ok());
  EXPECT_FALSE(b_.go_back().ok());
}

TEST_F(Browser, ScrollMovesTheViewportAndKeepsIds) {
  text_browser_options small;
  small.viewport_height_px = 160;  // 10 lines of 16 px
  text_browser b(small);
  ASSERT_TRUE(b.go_to(url("/long")).ok());
  std::string first = b.observe().text;
  EXPECT_NE(first.find("'Line 7'"), std::string::npos);
  EXPECT_EQ(first.find("'Line 8'"), std::string::npos);
  EXPECT_EQ(b.scroll("up").note, "already at the top of the page");
  ASSERT_TRUE(b.scroll("down").ok());
  std::string second = b.observe().text;
  EXPECT_NE(second.find("RootWebArea 'Long'"), std::string::npos);
  EXPECT_NE(second.find("main ''"), std::string::npos);
  EXPECT_NE(second.find("'Line 8'"), std::string::npos);
  EXPECT_EQ(id_of(first, "main ''"), id_of(second, "main ''"));
  // An id above the viewport is refused with the direction to scroll.
  int64_t line0 = id_of(first, "'Line 0'");
  EXPECT_EQ(b.click(line0).error, "no matching element: [" + std::to_string(line0) +
                                      "] is on this page but not in the current viewport; scroll up to bring "
                                      "it into view, or use an id from the observation");
  for (int i = 0; i < 10; ++i) b.scroll("down");
  EXPECT_EQ(b.scroll("down").note, "already at the bottom of the page");
  std::string last = b.observe().text;
  int64_t bottom = id_of(last, "link 'Bottom link'");
  ASSERT_GE(bottom, 0) << last;
  ASSERT_TRUE(b.scroll("up").ok());
  EXPECT_EQ(b.click(bottom).error, "no matching element: [" + std::to_string(bottom) +
                                       "] is on this page but not in the current viewport; scroll down to "
                                       "bring it into view, or use an id from the observation");
  EXPECT_EQ(b.scroll("sideways").error, "cannot scroll 'sideways': the direction is up or down, e.g. scroll [down]");
  ASSERT_TRUE(b.press("PageDown").ok());
  // A fragment scrolls its anchor to the top of the viewport, on load and on the same page.
  ASSERT_TRUE(b.go_to(url("/long#l20")).ok());
  EXPECT_EQ(b.current_url(), url("/long#l20"));
  std::string anchored = b.observe().text;
  EXPECT_NE(anchored.find("'Line 20'"), std::string::npos) << anchored;
  EXPECT_EQ(anchored.find("'Line 19'"), std::string::npos) << anchored;
  ASSERT_TRUE(b.go_to(url("/long#l5")).ok());
  EXPECT_NE(b.observe().text.find("'Line 5'"), std::string::npos);
  EXPECT_EQ(b.observe().text.find("'Line 20'"), std::string::npos);
}

}  // namespace
}  // namespace kvarena
