// test-browser-actions.cpp: the agent's page actions in the browser (every action error
// message, keyboard editing, textarea Enter, label clicks, parsed actions through
// apply_action) and what the evaluators read from a page (selector properties, the probe
// for program_html).
#include <gtest/gtest.h>

#include "browser/common/ax-tree.h"
#include "browser/common/browser-act.h"
#include "browser/text/dom-text.h"
#include "browser/text/html-document.h"
#include "browser/text/text-browser-probe.h"
#include "eval/action-parse.h"
#include "test-browser-server.h"

namespace kvarena {
namespace {

using namespace browser_test;

TEST_F(Browser, ActionErrorMessages) {
  open("/form-get");
  EXPECT_EQ(b_.click(4242).error,
            "no matching element: [4242] is not on the current page; ids are listed in the observation");
  EXPECT_EQ(b_.hover(4242).error,
            "no matching element: [4242] is not on the current page; ids are listed in the observation");
  EXPECT_EQ(b_.type(-5, "x", false).error,
            "no matching element: [-5] is not on the current page; ids are listed in the observation");
  int64_t link = id("link 'Plain link'");
  EXPECT_EQ(b_.type(link, "x", false).error,
            "cannot type into [" + std::to_string(link) +
                "]: it is a link, not a textbox; type into a textbox, searchbox or combobox from the observation");
  int64_t text = id("StaticText 'Just text'");
  EXPECT_EQ(b_.type(text, "x", false).error,
            "cannot type into [" + std::to_string(text) +
                "]: it is text (StaticText), not a textbox; type into a textbox, searchbox or combobox from the observation");
  EXPECT_EQ(b_.clear(link).error, "cannot clear [" + std::to_string(link) + "]: it is a link, not a textbox");
  int64_t combo = id("combobox 'Sort'");
  EXPECT_EQ(b_.clear(combo).error,
            "cannot clear [" + std::to_string(combo) + "]: it is a combobox; click one of its options instead");
  EXPECT_EQ(b_.type(combo, "Zeta", false).error,
            "cannot select 'Zeta' in [" + std::to_string(combo) +
                "]: no option matches; its options are 'Alpha', 'Beta', 'Gamma'");
  int64_t dis = id("textbox 'Disabled field'");
  EXPECT_EQ(b_.type(dis, "x", false).error, "cannot type into [" + std::to_string(dis) + "]: the textbox is disabled");
  EXPECT_EQ(b_.click(dis).error, "cannot click [" + std::to_string(dis) + "]: it is disabled");
  int64_t ro = id("textbox 'Read only field'");
  EXPECT_EQ(b_.type(ro, "x", false).error, "cannot type into [" + std::to_string(ro) + "]: the textbox is read-only");
  int64_t rich = id("textbox 'Rich editor'");
  EXPECT_EQ(b_.type(rich, "x", false).error,
            "cannot type into [" + std::to_string(rich) +
                "]: this textbox is not a form field but a widget that needs JavaScript, which the text "
                "browser does not run");
  EXPECT_EQ(b_.press("").error, "press needs a key, e.g. press [Enter] or press [Control+a]");
  browser_result r = b_.press("Tab");
  EXPECT_TRUE(r.ok());
  EXPECT_EQ(r.note, "pressed Tab: it has no effect in the text browser");
  r = b_.click(text);
  EXPECT_TRUE(r.ok());
  EXPECT_NE(r.note.find("not a link, button or form control"), std::string::npos);
  EXPECT_TRUE(b_.hover(link).ok());
  // Nameless structural nodes have no visible id: refused like unknown ids.
  const html_document& doc = b_.document();
  int64_t body = ax_id(doc, doc.body());
  EXPECT_NE(b_.click(body).error.find("is not on the current page"), std::string::npos);
}

TEST_F(Browser, KeyboardEditing) {
  open("/form-get");
  int64_t q = id("textbox 'Query'");
  ASSERT_TRUE(b_.type(q, "abc", false).ok());
  ASSERT_TRUE(b_.type(q, "def", false).ok());  // appends
  EXPECT_NE(obs().find("StaticText 'abcdef'"), std::string::npos);
  EXPECT_NE(obs().find("textbox 'Query' focused: True required: False"), std::string::npos);
  EXPECT_EQ(obs().find("RootWebArea 'Form' focused: True"), std::string::npos);
  ASSERT_TRUE(b_.press("Backspace").ok());
  EXPECT_NE(obs().find("StaticText 'abcde'"), std::string::npos);
  browser_result r = b_.press("Meta+a");
  EXPECT_EQ(r.note, "selected all text in [" + std::to_string(q) + "]; the next type replaces it");
  ASSERT_TRUE(b_.type(q, "new", false).ok());
  EXPECT_NE(obs().find("StaticText 'new'"), std::string::npos);
  EXPECT_EQ(obs().find("abcde"), std::string::npos);
  ASSERT_TRUE(b_.press("Control+A").ok());
  ASSERT_TRUE(b_.press("Delete").ok());
  EXPECT_EQ(obs().find("StaticText 'new'"), std::string::npos);
  ASSERT_TRUE(b_.type(q, "zz", false).ok());
  ASSERT_TRUE(b_.clear(q).ok());
  EXPECT_EQ(obs().find("StaticText 'zz'"), std::string::npos);
  ASSERT_TRUE(b_.type(q, "enter test", false).ok());
  ASSERT_TRUE(b_.press("Enter").ok());  // submits the focused field's form
  EXPECT_NE(prop(b_, "#query").find("q=enter+test"), std::string::npos);
  r = b_.press("Enter");
  EXPECT_NE(r.note.find("no form field has focus"), std::string::npos);
}

TEST_F(Browser, TextareaEnterTypesANewline) {
  open("/form-get");
  int64_t t = id("textbox 'Notes'");
  ASSERT_TRUE(b_.type(t, "x", true).ok());
  EXPECT_EQ(b_.current_url(), url("/form-get"));
  EXPECT_NE(obs().find("StaticText 'initx\\n'"), std::string::npos) << obs();
}

TEST_F(Browser, LabelClickActsOnItsControl) {
  ASSERT_TRUE(b_.go_to(url("/form-get")).ok());
  html_document const& doc = b_.document();
  const GumboNode* label = nullptr;
  for (int i = 0; i < doc.node_count(); ++i)
    if (has_tag(doc.node(i), GUMBO_TAG_LABEL) && text_content(doc.node(i)).find("Remember") != std::string::npos)
      label = doc.node(i);
  ASSERT_NE(label, nullptr);
  std::string err;
  ASSERT_TRUE(b_.click_selector("label:nth-of-type(3)", &err)) << err;  // the checkbox's label
  EXPECT_NE(obs().find("checkbox 'Remember me' focused: True checked: true"), std::string::npos) << obs();
  EXPECT_FALSE(b_.click_selector("#nope", &err));
  EXPECT_EQ(err, "no element matches the selector '#nope' on " + url("/form-get"));
}

TEST_F(Browser, QuerySelectorPropertiesForTheEvaluators) {
  open("/form-get");
  ASSERT_TRUE(b_.type(id("textbox 'Query'"), "typed value", false).ok());
  std::string err;
  EXPECT_EQ(b_.query_selector_property("#q", "value", &err).value_or("?"), "typed value");
  EXPECT_EQ(b_.query_selector_property("select", "value", &err).value_or("?"), "b");
  EXPECT_EQ(b_.query_selector_property("textarea", "value", &err).value_or("?"), "init");
  EXPECT_EQ(b_.query_selector_property("input[name=c]", "value", &err).value_or("?"), "yes");
  EXPECT_EQ(b_.query_selector_property("p", "value", &err).value_or("?"), "");
  EXPECT_EQ(b_.query_selector_property("form", "outerText", &err).value_or("?").substr(0, 5), "Query");
  EXPECT_EQ(b_.query_selector_property("p", "innerText", &err).value_or("?"), "Just text");
  EXPECT_EQ(b_.query_selector_property("label[for=s]", "textContent", &err).value_or("?"), "Sort");
  EXPECT_FALSE(b_.query_selector_property("#none", "outerText", &err).has_value());
  EXPECT_EQ(err, "no element matches the selector '#none' on " + url("/form-get"));
  EXPECT_FALSE(b_.query_selector_property("p::after", "outerText", &err).has_value());
  EXPECT_NE(err.find("invalid CSS selector"), std::string::npos);
  EXPECT_FALSE(b_.query_selector_property("p", "innerHTML", &err).has_value());
  EXPECT_NE(err.find("unsupported property 'innerHTML'"), std::string::npos);
  EXPECT_NE(b_.page_html().find("<form action=\"/echo\" method=\"get\""), std::string::npos);
}

TEST_F(Browser, ProbeForProgramHtml) {
  open("/form-get");
  text_browser_probe probe(b_);
  EXPECT_EQ(probe.current_url(), url("/form-get"));
  EXPECT_EQ(probe.eval_locator("document.querySelector('label[for=\"q\"]').outerText").value_or("?"), "Query");
  EXPECT_EQ(probe.eval_locator("document.querySelector(\"#q\").value;").value_or("?"), "");
  EXPECT_NE(probe.eval_locator("").value_or("").find("<title>Form</title>"), std::string::npos);
  EXPECT_NE(probe.eval_locator("document.body.innerText").value_or("").find("Just text"), std::string::npos);
  EXPECT_FALSE(probe.eval_locator("document.querySelector('#nothing').outerText").has_value());
  EXPECT_FALSE(probe.eval_locator("[...document.querySelectorAll('p')].length").has_value());
  std::string err;
  EXPECT_TRUE(probe.run_prep_action("document.querySelector('input[name=\"c\"]').click();", &err)) << err;
  EXPECT_EQ(probe.eval_locator("document.querySelector('input[name=c]').value").value_or("?"), "yes");
  EXPECT_NE(obs().find("checkbox 'Remember me' focused: True checked: true"), std::string::npos) << obs();
  EXPECT_FALSE(probe.run_prep_action("window.scrollTo(0, 0)", &err));
  EXPECT_NE(err.find("runs no JavaScript"), std::string::npos);
  EXPECT_TRUE(probe.navigate(url("/up.html"), &err));
  EXPECT_EQ(probe.current_url(), url("/up.html"));
  EXPECT_FALSE(probe.navigate(url("/loop"), &err));
  EXPECT_NE(err.find("redirects"), std::string::npos);
}

TEST_F(Browser, ParsedActionsRunThroughApplyAction) {
  open("/dir/index.html");
  int64_t link = id("link 'Page two'");
  action_parse_result p = parse_action("click [" + std::to_string(link) + "]");
  ASSERT_TRUE(p.ok()) << p.error;
  ASSERT_TRUE(apply_action(b_, p.act).ok());
  EXPECT_EQ(b_.current_url(), url("/dir/page2.html"));
  ASSERT_TRUE(apply_action(b_, parse_action("go_back").act).ok());
  ASSERT_TRUE(apply_action(b_, parse_action("scroll [down]").act).ok());
  ASSERT_TRUE(apply_action(b_, parse_action("new_tab").act).ok());
  ASSERT_TRUE(apply_action(b_, parse_action("goto [" + url("/form-get") + "]").act).ok());
  int64_t q = id("textbox 'Query'");
  ASSERT_TRUE(apply_action(b_, parse_action("type [" + std::to_string(q) + "] [via parser] [1]").act).ok());
  EXPECT_NE(prop(b_, "#query").find("q=via+parser"), std::string::npos);
  ASSERT_TRUE(apply_action(b_, parse_action("tab_focus [0]").act).ok());
  EXPECT_EQ(b_.current_url(), url("/dir/index.html"));
  ASSERT_TRUE(apply_action(b_, parse_action("stop [done]").act).ok());
  EXPECT_FALSE(apply_action(b_, action{}).ok());
  EXPECT_EQ(apply_action(b_, parse_action("tab_focus [7]").act).error, "tab 7 does not exist (2 tabs open: use 0 to 1)");
}

}  // namespace
}  // namespace kvarena
