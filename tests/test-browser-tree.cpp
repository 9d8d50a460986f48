// test-browser-tree.cpp: the accessibility tree the browser builds from HTML (one golden
// case per construct, in VWA's printed format), its printing (Python repr, the nameless and
// StaticText rules, the viewport window) and the DOM text functions. No network.
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>

#include "browser/common/ax-print.h"
#include "browser/common/ax-tree.h"
#include "browser/text/dom-text.h"
#include "browser/text/form-state.h"
#include "browser/text/html-document.h"
#include "test-browser-util.h"

namespace kvarena {
namespace {

using namespace browser_test;

// Accessibility tree: one golden case per HTML construct (ids stripped; see ExactIds)

TEST(AxTree, ExactIdsArePreorderIndexes) {
  std::string html = "<html><head><title>T</title></head><body><a href=\"/x\">Go</a></body></html>";
  // document 0, html 1, head 2, title 3, "T" 4, body 5, a 6, "Go" 7; id = index + 1
  EXPECT_EQ(tree_of(html, true), "[1] RootWebArea 'T' focused: True\n\t[7] link 'Go'");
  html_document doc(html);
  EXPECT_EQ(doc.node_count(), 8);
  EXPECT_EQ(ax_value_text_id(doc, doc.node(6)), 8 + 1 + 6);
}

TEST(AxTree, Links) {
  EXPECT_EQ(body_tree("<a href=\"/x\">Home</a><a>plain anchor</a><a href=\"/i\"><img src=i.png alt=\"Logo\"></a>"),
            "\t[] link 'Home'\n\t[] StaticText 'plain anchor'\n\t[] link 'Logo'\n\t\t[] img 'Logo'");
}

TEST(AxTree, Buttons) {
  EXPECT_EQ(body_tree("<button>Go</button><input type=submit value=\"Send\"><input type=button value=\"B\">"
                      "<input type=submit><input type=reset><input type=image alt=\"Find\">"
                      "<button disabled>Off</button>"),
            "\t[] button 'Go'\n\t[] button 'Send'\n\t[] button 'B'\n\t[] button 'Submit'\n"
            "\t[] button 'Reset'\n\t[] button 'Find'\n\t[] button 'Off' disabled: True");
}

TEST(AxTree, Textboxes) {
  EXPECT_EQ(body_tree("<label for=\"a\">Name</label><input id=\"a\" required>"
                      "<input aria-label=\"Email\" type=\"email\" value=\"x@y.z\">"
                      "<input placeholder=\"e.g., a blue used car\">"
                      "<input title=\"Titled\">"
                      "<label>Wrapped <input name=w></label>"
                      "<span id=lb>By ref</span><input aria-labelledby=\"lb\">"
                      "<input type=\"search\" aria-label=\"Search query\">"
                      "<input type=\"number\" aria-label=\"Qty\">"
                      "<input type=\"password\" aria-label=\"Pw\" value=\"abc\">"
                      "<textarea aria-label=\"Notes\">hello</textarea>"),
            "\t[] StaticText 'Name'\n"
            "\t[] textbox 'Name' required: True\n"
            "\t[] textbox 'Email' required: False\n"
            "\t\t[] StaticText 'x@y.z'\n"
            "\t[] textbox 'e.g., a blue used car' required: False\n"
            "\t[] textbox 'Titled' required: False\n"
            "\t[] StaticText 'Wrapped'\n"
            "\t[] textbox 'Wrapped' required: False\n"
            "\t[] StaticText 'By ref'\n"
            "\t[] textbox 'By ref' required: False\n"
            "\t[] searchbox 'Search query' required: False\n"
            "\t[] spinbutton 'Qty' required: False\n"
            "\t[] textbox 'Pw' required: False\n"
            "\t\t[] StaticText '\xE2\x80\xA2\xE2\x80\xA2\xE2\x80\xA2'\n"
            "\t[] textbox 'Notes' required: False\n"
            "\t\t[] StaticText 'hello'");
}

TEST(AxTree, SelectIsAComboboxWithItsOptions) {
  EXPECT_EQ(body_tree("<label for=\"s\">Sort by</label><select id=\"s\"><option>Price</option>"
                      "<option selected>Name</option><optgroup label=\"More\"><option disabled>Date</option>"
                      "</optgroup></select><select multiple aria-label=\"Tags\"><option>t1</option></select>"),
            "\t[] StaticText 'Sort by'\n"
            "\t[] combobox 'Sort by' hasPopup: menu expanded: False\n"
            "\t\t[] option 'Price' selected: False\n"
            "\t\t[] option 'Name' selected: True\n"
            "\t\t[] group 'More'\n"
            "\t\t\t[] option 'Date' disabled: True selected: False\n"
            "\t[] listbox 'Tags' multiselectable: True\n"
            "\t\t[] option 't1' selected: False");
}

TEST(AxTree, CheckboxesAndRadios) {
  EXPECT_EQ(body_tree("<label><input type=\"checkbox\" checked> Remember me</label>"
                      "<input type=\"radio\" id=\"r1\" name=\"r\"><label for=\"r1\">Choice one</label>"
                      "<div role=\"checkbox\" aria-checked=\"mixed\">Partial</div>"),
            "\t[] checkbox 'Remember me' checked: true\n"
            "\t[] radio 'Choice one' checked: false\n"
            "\t[] checkbox 'Partial' checked: mixed");
}

TEST(AxTree, ImagesNeedAlt) {
  EXPECT_EQ(body_tree("<img src=a.png alt=\"A cat\"><img src=b.png><img src=c.png alt=\"\">"
                      "<img src=d.png title=\"Titled pic\">"),
            "\t[] img 'A cat'\n\t[] img 'Titled pic'");
}

TEST(AxTree, HeadingsLevelIsNotPrinted) {
  // VWA's IGNORED_ACTREE_PROPERTIES drops `level`; the tree still carries it.
  EXPECT_EQ(body_tree("<h1>Main title</h1><h3>Sub</h3>"), "\t[] heading 'Main title'\n\t[] heading 'Sub'");
  html_document doc(page("T", "<h3>Sub</h3>"));
  form_state st(doc);
  ax_node root = build_ax_tree(doc, st, nullptr);
  std::function<const ax_node*(const ax_node&)> find = [&](const ax_node& n) -> const ax_node* {
    if (n.role == "heading") return &n;
    for (const auto& c : n.children)
      if (auto* f = find(c)) return f;
    return nullptr;
  };
  const ax_node* h = find(root);
  ASSERT_NE(h, nullptr);
  ASSERT_EQ(h->props.size(), 1u);
  EXPECT_EQ(h->props[0].name, "level");
  EXPECT_EQ(h->props[0].value, "3");
}

TEST(AxTree, ListsAreTransparentUnlessNamed) {
  EXPECT_EQ(body_tree("<ul><li>One item</li><li><a href=\"/2\">Two</a></li></ul>"
                      "<ol aria-label=\"Steps\"><li>Step A</li></ol>"),
            "\t[] StaticText 'One item'\n\t[] link 'Two'\n\t[] list 'Steps'\n\t\t[] StaticText 'Step A'");
}

TEST(AxTree, Tables) {
  EXPECT_EQ(body_tree("<table><caption>Prices</caption><tr><th>Item</th><th>Cost</th></tr>"
                      "<tr><td>Tea</td><td>$2</td></tr></table>"),
            "\t[] table 'Prices'\n"
            "\t\t[] row 'Item Cost'\n"
            "\t\t\t[] columnheader 'Item'\n"
            "\t\t\t[] columnheader 'Cost'\n"
            "\t\t[] row 'Tea $2'\n"
            "\t\t\t[] cell 'Tea'\n"
            "\t\t\t[] cell '$2'");
}

TEST(AxTree, Landmarks) {
  EXPECT_EQ(body_tree("<header><a href=\"/\">Logo</a></header><nav><a href=\"/a\">About</a></nav>"
                      "<nav aria-label=\"Footer links\"><a href=\"/b\">Blog</a></nav>"
                      "<main><p>Body text</p></main>"
                      "<form aria-label=\"Search\"><input name=q aria-label=\"Query\"></form>"
                      "<form><input name=z aria-label=\"Zip\"></form>"
                      "<footer>Copyright</footer><aside>Sidebar</aside><section>Plain section</section>"
                      "<section aria-label=\"Named area\">Inside</section><article>Story</article>"),
            "\t[] link 'Logo'\n"
            "\t[] link 'About'\n"
            "\t[] navigation 'Footer links'\n"
            "\t\t[] link 'Blog'\n"
            "\t[] main ''\n"
            "\t\t[] StaticText 'Body text'\n"
            "\t[] form 'Search'\n"
            "\t\t[] textbox 'Query' required: False\n"
            "\t[] textbox 'Zip' required: False\n"
            "\t[] contentinfo ''\n"
            "\t\t[] StaticText 'Copyright'\n"
            "\t[] complementary ''\n"
            "\t\t[] StaticText 'Sidebar'\n"
            "\t[] StaticText 'Plain section'\n"
            "\t[] region 'Named area'\n"
            "\t\t[] StaticText 'Inside'\n"
            "\t[] article ''\n"
            "\t\t[] StaticText 'Story'");
}

TEST(AxTree, StructuralNodesAndText) {
  EXPECT_EQ(body_tree("<div><p>First paragraph <b>bold part</b> end</p><span>Span text</span></div>"
                      "<pre>a  b\n c</pre><p>no&nbsp;break</p>"),
            "\t[] StaticText 'First paragraph'\n"
            "\t[] StaticText 'bold part'\n"
            "\t[] StaticText 'end'\n"
            "\t[] StaticText 'Span text'\n"
            "\t[] StaticText 'a  b\\n c'\n"
            "\t[] StaticText 'no break'");
}

TEST(AxTree, AriaLabelsAndRoles) {
  EXPECT_EQ(body_tree("<div role=\"button\" aria-label=\"Close dialog\">inner x</div>"
                      "<span role=\"link\">Go there</span><div role=\"presentation\">Plain words</div>"
                      "<div role=\"navigation\" aria-label=\"Crumbs\">crumb trail</div>"
                      "<div aria-label=\"Labelled div\">inner words</div>"
                      "<a href=\"/h\" aria-expanded=\"false\" aria-haspopup=\"true\">Menu</a>"
                      "<button aria-pressed=\"true\">Bold</button>"
                      "<div role=\"tab\" aria-selected=\"true\">Tab A</div>"
                      "<div role=\"bogus heading\">Role list</div>"),
            "\t[] button 'Close dialog'\n"
            "\t\t[] StaticText 'inner x'\n"
            "\t[] link 'Go there'\n"
            "\t[] StaticText 'Plain words'\n"
            "\t[] navigation 'Crumbs'\n"
            "\t\t[] StaticText 'crumb trail'\n"
            "\t[] generic 'Labelled div'\n"
            "\t\t[] StaticText 'inner words'\n"
            "\t[] link 'Menu' hasPopup: menu expanded: False\n"
            "\t[] button 'Bold' pressed: true\n"
            "\t[] tab 'Tab A' selected: True\n"
            "\t[] heading 'Role list'");
}

TEST(AxTree, HiddenElementsAreSkipped) {
  EXPECT_EQ(body_tree("<p hidden>H1</p><p style=\"display: none\">H2</p><p style=\"VISIBILITY:hidden\">H3</p>"
                      "<div aria-hidden=\"true\"><a href=\"/x\">H4</a></div><script>var H5;</script>"
                      "<style>.H6{}</style><template><p>H7</p></template><noscript>H8</noscript>"
                      "<input type=\"hidden\" name=\"k\" value=\"H9\"><dialog>H10</dialog>"
                      "<dialog open>Open dialog</dialog><p>Shown</p>"),
            "\t[] dialog ''\n\t\t[] StaticText 'Open dialog'\n\t[] StaticText 'Shown'");
}

TEST(AxTree, FocusedElementAndRoot) {
  html_document doc(page("T", "<input aria-label=\"Q\">"));
  form_state st(doc);
  const GumboNode* input = nullptr;
  for (int i = 0; i < doc.node_count(); ++i)
    if (has_tag(doc.node(i), GUMBO_TAG_INPUT)) input = doc.node(i);
  st.set_value(input, "typed");
  std::string t = strip_ids(render_ax_tree(build_ax_tree(doc, st, input), 0, 100).text);
  EXPECT_EQ(t, "[] RootWebArea 'T'\n\t[] textbox 'Q' focused: True required: False\n\t\t[] StaticText 'typed'");
}

// Printing: repr, the nameless rule, the StaticText dedup rule, the viewport

TEST(AxPrint, PythonRepr) {
  EXPECT_EQ(py_repr("plain"), "'plain'");
  EXPECT_EQ(py_repr("it's"), "\"it's\"");
  EXPECT_EQ(py_repr("a'b\"c"), "'a\\'b\"c'");
  EXPECT_EQ(py_repr("back\\slash"), "'back\\\\slash'");
  EXPECT_EQ(py_repr("l1\nl2\tx"), "'l1\\nl2\\tx'");
  EXPECT_EQ(py_repr("caf\xC3\xA9 \xE2\x80\x8B"), "'caf\xC3\xA9 \\u200b'");
  EXPECT_EQ(py_repr("nb\xC2\xA0sp"), "'nb\\xa0sp'");
  EXPECT_EQ(py_repr(std::string("\x01\xFF", 2)), "'\\x01\\xff'");
}

ax_node text_node(int id, const std::string& text) {
  ax_node n;
  n.id = id;
  n.role = "StaticText";
  n.name = text;
  return n;
}

TEST(AxPrint, StaticTextRepeatingOneOfThreeLinesBeforeIsDropped) {
  ax_node root;
  root.id = 1;
  root.role = "RootWebArea";
  root.name = "R";
  ax_node link;
  link.id = 2;
  link.role = "link";
  link.name = "Alpha beta";
  link.children.push_back(text_node(3, "Alpha beta"));  // repeats its parent line
  root.children.push_back(link);
  root.children.push_back(text_node(4, "Alpha"));   // in the link line, 2 kept lines up
  root.children.push_back(text_node(5, "one"));
  root.children.push_back(text_node(6, "two"));
  root.children.push_back(text_node(7, "three"));
  root.children.push_back(text_node(8, "beta"));    // the link is now 4 kept lines up
  root.children.push_back(text_node(9, "thre"));    // substring of 2 lines up
  ax_rendering r = render_ax_tree(root, 0, 100);
  EXPECT_EQ(r.text,
            "[1] RootWebArea 'R'\n\t[2] link 'Alpha beta'\n\t[5] StaticText 'one'\n"
            "\t[6] StaticText 'two'\n\t[7] StaticText 'three'\n\t[8] StaticText 'beta'");
  // Dropped repeats keep valid ids.
  EXPECT_NE(std::find(r.ids_in_view.begin(), r.ids_in_view.end(), 3), r.ids_in_view.end());
  EXPECT_NE(std::find(r.ids_in_view.begin(), r.ids_in_view.end(), 9), r.ids_in_view.end());
}

TEST(AxPrint, NamelessRule) {
  auto node = [](const std::string& role, const std::string& name) {
    ax_node n;
    n.role = role;
    n.name = name;
    return n;
  };
  for (const char* r : {"generic", "img", "list", "strong", "paragraph", "banner", "navigation",
                        "Section", "LabelText", "Legend", "listitem"})
    EXPECT_FALSE(ax_node_is_printed(node(r, ""))) << r;
  for (const char* r : {"main", "table", "row", "form", "contentinfo", "article", "button"})
    EXPECT_TRUE(ax_node_is_printed(node(r, ""))) << r;
  ax_node li = node("listitem", "");
  li.props.push_back({"selected", "True"});
  EXPECT_FALSE(ax_node_is_printed(li));
  ax_node g = node("generic", "");
  g.props.push_back({"expanded", "False"});
  EXPECT_TRUE(ax_node_is_printed(g));
  ax_node level_only = node("generic", "");
  level_only.props.push_back({"level", "2"});  // ignored properties do not count
  EXPECT_FALSE(ax_node_is_printed(level_only));
}

TEST(AxPrint, ViewportWindowKeepsAncestorsAndIds) {
  std::string body = "<main>";
  for (int i = 0; i < 30; ++i) body += "<p>Line " + std::to_string(i) + "</p>";
  body += "</main>";
  html_document doc(page("T", body));
  form_state st(doc);
  ax_node tree = build_ax_tree(doc, st, nullptr);
  // lines: root 0, main 1, "Line i" at 2 + i
  ax_rendering top = render_ax_tree(tree, 0, 10);
  EXPECT_EQ(top.total_lines, 32);
  EXPECT_NE(top.text.find("'Line 7'"), std::string::npos);
  EXPECT_EQ(top.text.find("'Line 8'"), std::string::npos);
  ax_rendering next = render_ax_tree(tree, 10, 10);
  EXPECT_EQ(next.text.find("'Line 7'"), std::string::npos);
  EXPECT_NE(next.text.find("'Line 8'"), std::string::npos);
  EXPECT_NE(next.text.find("'Line 17'"), std::string::npos);
  EXPECT_EQ(next.text.find("'Line 18'"), std::string::npos);
  EXPECT_EQ(next.text.substr(0, next.text.find('\n')), top.text.substr(0, top.text.find('\n')));
  EXPECT_NE(next.text.find("\t[" + std::to_string(id_of(top.text, "main ''")) + "] main ''"), std::string::npos);
  // Re-rendering the same page gives the same ids.
  ax_rendering again = render_ax_tree(build_ax_tree(doc, st, nullptr), 10, 10);
  EXPECT_EQ(again.text, next.text);
  EXPECT_EQ(id_of(render_ax_tree(tree, 0, 100).text, "'Line 9'"), id_of(next.text, "'Line 9'"));
}

// DOM text

TEST(DomText, InnerTextAndTextContent) {
  html_document doc(page("T", "<div id=a>Hello <b>big</b>\n  world<p>Para one</p><p>Para two</p>"
                              "line<br>break<script>skip()</script><span hidden>gone</span>"
                              "<table><tr><td>c1</td><td>c2</td></tr><tr><td>c3</td></tr></table>"
                              "<pre>  keep\n  this</pre><ul><li>i1</li><li>i2</li></ul></div>"));
  const GumboNode* a = doc.element_by_id("a");
  EXPECT_EQ(inner_text(a), "Hello big world\n\nPara one\n\nPara two\n\nline\nbreak\nc1\tc2\nc3\n  keep\n  this\ni1\ni2");
  std::string tc = text_content(a);
  EXPECT_NE(tc.find("skip()"), std::string::npos);
  EXPECT_NE(tc.find("gone"), std::string::npos);
  EXPECT_EQ(collapse_whitespace("  a \n\t b  "), "a b");
}

}  // namespace
}  // namespace kvarena
