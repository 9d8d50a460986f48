// test-browser-forms.cpp: forms, first as the request a submission would send (no network:
// action and method, submitters, which controls count, encodings, state setters and reset),
// then filled in and submitted by the browser over the loopback site (GET, POST with Enter,
// reset, multipart, target=_blank, multiple selects, keys on checkboxes).
#include <gtest/gtest.h>

#include <memory>

#include "browser/text/css-select.h"
#include "browser/text/form-state.h"
#include "browser/text/form-submit.h"
#include "browser/text/html-document.h"
#include "test-browser-server.h"

namespace kvarena {
namespace {

using namespace browser_test;

// Form submission (no network: the request that would be sent)

class FormSubmit : public ::testing::Test {
 protected:
  void load(const std::string& body) {
    doc_ = std::make_unique<html_document>(page("T", body));
    state_ = std::make_unique<form_state>(*doc_);
  }
  const GumboNode* el(const std::string& selector) {
    auto s = css_selector_list::parse(selector);
    EXPECT_TRUE(s.has_value()) << selector;
    return s ? query_selector(doc_->document(), *s) : nullptr;
  }
  http_request submit(const std::string& submitter = "") {
    std::string err;
    auto req = build_form_submission(*doc_, *state_, el("form"), submitter.empty() ? nullptr : el(submitter),
                                     "http://h/dir/page?x=1", &err);
    EXPECT_TRUE(req.has_value()) << err;
    return req.value_or(http_request{});
  }
  std::string error() {
    std::string err;
    EXPECT_FALSE(build_form_submission(*doc_, *state_, el("form"), nullptr, "http://h/p", &err).has_value());
    return err;
  }
  std::unique_ptr<html_document> doc_;
  std::unique_ptr<form_state> state_;
};

TEST_F(FormSubmit, GetReplacesTheActionQueryAndKeepsItsFragment) {
  load("<form action=\"../search?old=1#top\"><input name=q value=\"a b\"></form>");
  http_request r = submit();
  EXPECT_EQ(r.method, "GET");
  EXPECT_EQ(r.url, "http://h/search?q=a+b#top");
  EXPECT_EQ(r.referer, "http://h/dir/page?x=1");
  load("<form><input name=q value=v></form>");  // no action: the document URL
  EXPECT_EQ(submit().url, "http://h/dir/page?q=v");
}

TEST_F(FormSubmit, SubmitterOverridesAndEntries) {
  load("<form action=/a method=get><input name=q value=1>"
       "<button name=b value=x formaction=/other formmethod=post>B</button>"
       "<input type=image name=pos alt=Go><input type=submit name=s value=S></form>");
  http_request r = submit("button");
  EXPECT_EQ(r.method, "POST");
  EXPECT_EQ(r.url, "http://h/other");
  EXPECT_EQ(r.body, "q=1&b=x");
  EXPECT_EQ(submit("input[type=image]").url, "http://h/a?q=1&pos.x=0&pos.y=0");
  EXPECT_EQ(submit("input[type=submit]").url, "http://h/a?q=1&s=S");
  EXPECT_EQ(submit().url, "http://h/a?q=1");  // no submitter: no button entry
  EXPECT_EQ(default_button(*doc_, el("form")), el("button"));
}

TEST_F(FormSubmit, WhichControlsAreSuccessful) {
  load("<form action=/a><input name=on type=checkbox checked><input name=off type=checkbox>"
       "<input name=noname2><input value=unnamed><input name=d disabled value=1>"
       "<fieldset disabled><legend><input name=inlegend value=L></legend><input name=infs value=F></fieldset>"
       "<select name=s1><option>first</option><option>second</option></select>"
       "<select name=s2 multiple><option>m1</option></select>"
       "<select name=s3><option disabled>skip</option><option value=v>shown</option></select>"
       "<textarea name=t>\nline</textarea><input type=file name=f><input type=hidden name=_charset_>"
       "<datalist><input name=indatalist value=x></datalist></form>"
       "<input name=outside form=nope value=o><input name=linked form=f1 value=l>");
  EXPECT_EQ(submit().url, "http://h/a?on=on&noname2=&inlegend=L&s1=first&s3=v&t=line&f=&_charset_=UTF-8");
  load("<form id=f1 action=/a></form><input name=linked form=f1 value=l>");
  EXPECT_EQ(submit().url, "http://h/a?linked=l");
}

TEST_F(FormSubmit, EncodingsAndRefusals) {
  load("<form action=/a method=post enctype=text/plain><input name=a value=\"1 2\"></form>");
  EXPECT_EQ(submit().body, "a=1 2\r\n");
  EXPECT_EQ(submit().content_type, "text/plain");
  load("<form action=\"javascript:go()\"><input name=a></form>");
  EXPECT_NE(error().find("not an http(s) URL"), std::string::npos);
  load("<form method=dialog><input name=a></form>");
  EXPECT_NE(error().find("method=dialog"), std::string::npos);
}

TEST_F(FormSubmit, StateSettersAndReset) {
  load("<form><input type=radio name=r value=1 checked><input type=radio name=r value=2>"
       "<input name=t value=orig><select name=s><option>a</option><option selected>b</option></select></form>"
       "<input type=radio name=r value=3 checked>");
  const GumboNode* r2 = el("input[value='2']");
  state_->set_checked(r2, true);
  EXPECT_FALSE(state_->checked(el("input[value='1']")));
  EXPECT_TRUE(state_->checked(el("input[value='3']")));  // another form owner: another group
  state_->set_value(el("input[name=t]"), "changed");
  state_->choose_option(el("option"));
  EXPECT_EQ(submit().url, "http://h/dir/page?r=2&t=changed&s=a");
  state_->reset(el("form"));
  EXPECT_EQ(submit().url, "http://h/dir/page?r=1&t=orig&s=b");
}

// Forms in the browser over the loopback site

TEST_F(Browser, FormGetWithTypedCheckedSelectedAndHiddenValues) {
  open("/form-get");
  ASSERT_TRUE(b_.type(id("textbox 'Query'"), "hello world", false).ok());
  EXPECT_EQ(b_.current_url(), url("/form-get"));  // flag 0: no submit
  ASSERT_TRUE(b_.click(id("checkbox 'Remember me'")).ok());
  ASSERT_TRUE(b_.click(id("option 'Gamma'")).ok());
  ASSERT_TRUE(b_.click(id("radio 'Choice two'")).ok());
  std::string o = obs();
  EXPECT_NE(o.find("checkbox 'Remember me' checked: true"), std::string::npos) << o;
  EXPECT_NE(o.find("radio 'Choice one' checked: false"), std::string::npos) << o;
  EXPECT_NE(o.find("radio 'Choice two' focused: True checked: true"), std::string::npos) << o;
  EXPECT_NE(o.find("option 'Gamma' selected: True"), std::string::npos) << o;
  EXPECT_NE(o.find("option 'Beta' selected: False"), std::string::npos) << o;
  ASSERT_TRUE(b_.click(id("button 'Submit form'")).ok());
  EXPECT_EQ(prop(b_, "#method"), "GET");
  EXPECT_EQ(prop(b_, "#query"), "q=hello+world&h=hv&s=c&c=yes&r=r2&t=init&ro=fixed&go=Go");
  EXPECT_EQ(b_.current_url(), url("/echo?q=hello+world&h=hv&s=c&c=yes&r=r2&t=init&ro=fixed&go=Go"));
}

TEST_F(Browser, FormPostWithEnterSubmission) {
  open("/form-post");
  ASSERT_TRUE(b_.type(id("combobox 'Sort'"), "alp", false).ok());  // prefix of Alpha
  ASSERT_TRUE(b_.type(id("textbox 'Notes'"), " more", false).ok());
  ASSERT_TRUE(b_.type(id("textbox 'Query'"), "q&a", true).ok());  // Enter submits
  EXPECT_EQ(prop(b_, "#method"), "POST");
  EXPECT_EQ(prop(b_, "#body"), "q=q%26a&h=hv&s=a&r=r1&t=init+more&ro=fixed&go=Go");
  EXPECT_EQ(prop(b_, "#ctype"), "application/x-www-form-urlencoded");
  EXPECT_EQ(b_.current_url(), url("/echo"));
}

TEST_F(Browser, ResetButtonAndNoJsButton) {
  open("/form-get");
  ASSERT_TRUE(b_.type(id("textbox 'Query'"), "temp", false).ok());
  browser_result r = b_.click(id("button 'Reset all'"));
  EXPECT_TRUE(r.ok());
  EXPECT_EQ(obs().find("StaticText 'temp'"), std::string::npos);
  r = b_.click(id("button 'Does nothing'"));
  EXPECT_TRUE(r.ok());
  EXPECT_NE(r.note.find("does nothing without JavaScript"), std::string::npos);
  EXPECT_EQ(b_.current_url(), url("/form-get"));
}

TEST_F(Browser, MultipartAndBlankTargetForms) {
  open("/multi");
  ASSERT_TRUE(b_.click(id("button 'Send'")).ok());
  EXPECT_NE(prop(b_, "#ctype").find("multipart/form-data; boundary="), std::string::npos);
  EXPECT_NE(server_.log().back().body.find("name=\"a\"\r\n\r\n1\r\n"), std::string::npos);
  open("/blank-target-form");
  ASSERT_TRUE(b_.click(id("button 'Open'")).ok());
  EXPECT_EQ(b_.tab_count(), 2);
  EXPECT_EQ(b_.current_tab(), 1);
  EXPECT_EQ(prop(b_, "#query"), "a=1");
}

TEST_F(Browser, MultipleSelectTogglesOptions) {
  open("/select-only");
  ASSERT_TRUE(b_.click(id("option 'x'")).ok());
  ASSERT_TRUE(b_.click(id("option 'y'")).ok());  // was selected: now off
  ASSERT_TRUE(b_.click(id("button 'Send'")).ok());
  EXPECT_EQ(prop(b_, "#query"), "m=x");
}

TEST_F(Browser, EnterOnACheckboxSubmitsSpaceToggles) {
  open("/form-get");
  ASSERT_TRUE(b_.click(id("checkbox 'Remember me'")).ok());
  ASSERT_TRUE(b_.press("Space").ok());
  EXPECT_NE(obs().find("checkbox 'Remember me' focused: True checked: false"), std::string::npos) << obs();
  ASSERT_TRUE(b_.click(id("option 'Alpha'")).ok());
  EXPECT_NE(b_.press("Enter").note.find("does not submit a form from a combobox"), std::string::npos);
  ASSERT_TRUE(b_.click(id("checkbox 'Remember me'")).ok());
  ASSERT_TRUE(b_.press("Enter").ok());
  EXPECT_EQ(prop(b_, "#query"), "q=&h=hv&s=a&c=yes&r=r1&t=init&ro=fixed&go=Go");
}

}  // namespace
}  // namespace kvarena
