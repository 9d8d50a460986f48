// test-url-view.cpp: agent/url-view.h: the env's per-session URL prefix shown as one fixed
// origin, and mapped back in actions.
#include <gtest/gtest.h>

#include "url-view.h"

namespace kvarena {
namespace {

// The env's per-session prefix is shown as one fixed origin and mapped back in actions.
TEST(UrlView, ShowsOneOriginAndMapsActionsBack) {
  const url_view v("http://127.0.0.1:36763/t-63bfbdd1/classifieds/item/4");
  EXPECT_EQ(v.prefix(), "http://127.0.0.1:36763/t-63bfbdd1/");
  EXPECT_EQ(v.show("Tab 0: http://127.0.0.1:36763/t-63bfbdd1/shopping/cart"), "Tab 0: http://localhost/shopping/cart");
  EXPECT_EQ(v.real("goto [http://localhost/forum/f/3]"), "goto [http://127.0.0.1:36763/t-63bfbdd1/forum/f/3]");
  const url_view plain("http://example.test:8080/classifieds");
  EXPECT_EQ(plain.show("http://example.test:8080/classifieds"), "http://localhost/classifieds");
  const url_view none("about:blank");
  EXPECT_EQ(none.show("about:blank"), "about:blank");
  EXPECT_EQ(none.real("goto [http://localhost/x]"), "goto [http://localhost/x]");
}

}  // namespace
}  // namespace kvarena
