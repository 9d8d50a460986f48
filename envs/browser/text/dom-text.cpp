// dom-text.cpp: textContent, an innerText approximation, and the not-rendered rule.
//
// innerText follows the shape of the HTML spec's algorithm: it collects text runs and
// "required line break counts" (1 around blocks, 2 around <p>), then joins them, turning
// runs of breaks into the largest count and dropping breaks at the ends. Whitespace
// collapsing is per run plus across run boundaries; CSS (display, white-space) is not read
// beyond the inline style tests of is_not_rendered.
#include "dom-text.h"

#include <algorithm>
#include <cctype>
#include <vector>

#include "html-document.h"
#include "browser/common/str-util.h"

namespace kvarena {
namespace {

std::string lower_no_spaces(std::string_view s) {
  std::string out;
  for (char c : s)
    if (!is_ascii_space(c)) out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

bool is_cell(const GumboNode* n) { return has_tag(n, GUMBO_TAG_TD) || has_tag(n, GUMBO_TAG_TH); }

bool is_last_cell(const GumboNode* cell) {
  const GumboNode* row = cell->parent;
  const GumboVector* kids = child_vector(row);
  if (!kids) return true;
  for (unsigned i = cell->index_within_parent + 1; i < kids->length; ++i)
    if (is_cell(static_cast<const GumboNode*>(kids->data[i]))) return false;
  return true;
}

// Text runs joined with the innerText break and whitespace rules.
class text_builder {
 public:
  void require_breaks(int n) { pending_ = std::max(pending_, n); }

  void collapsed(std::string_view raw) {
    std::string t = collapse_runs(raw);
    if (at_line_start() && !t.empty() && t[0] == ' ') t.erase(0, 1);
    if (t.empty()) return;
    flush_breaks();
    if (!out_.empty() && out_.back() == ' ' && t[0] == ' ') t.erase(0, 1);
    out_ += t;
  }

  void literal(std::string_view s) {  // <br>, cell tabs, <pre> text
    if (s.empty()) return;
    flush_breaks();
    if (s[0] == '\n' || s[0] == '\t') trim_trailing_spaces();
    out_ += s;
  }

  std::string finish() {
    trim_trailing_spaces();
    while (!out_.empty() && out_.back() == '\n') out_.pop_back();
    return out_;
  }

 private:
  static std::string collapse_runs(std::string_view s) {
    std::string t;
    for (char c : s) {
      if (is_ascii_space(c)) {
        if (t.empty() || t.back() != ' ') t += ' ';
      } else {
        t += c;
      }
    }
    return t;
  }
  bool at_line_start() const { return out_.empty() || out_.back() == '\n' || pending_ > 0; }
  void trim_trailing_spaces() {
    while (!out_.empty() && out_.back() == ' ') out_.pop_back();
  }
  void flush_breaks() {
    if (pending_ > 0 && !out_.empty()) {
      trim_trailing_spaces();
      int have = 0;
      for (size_t i = out_.size(); i-- > 0 && out_[i] == '\n';) ++have;
      for (int i = have; i < pending_; ++i) out_ += '\n';
    }
    pending_ = 0;
  }

  std::string out_;
  int pending_ = 0;
};

}  // namespace

bool in_preformatted(const GumboNode* n) {
  for (; n; n = n->parent)
    if (has_tag(n, GUMBO_TAG_PRE) || has_tag(n, GUMBO_TAG_TEXTAREA) ||
        has_tag(n, GUMBO_TAG_LISTING) || has_tag(n, GUMBO_TAG_PLAINTEXT))
      return true;
  return false;
}

std::string collapse_whitespace(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  bool space = false;
  for (char c : s) {
    if (is_ascii_space(c)) {
      space = !out.empty();
    } else {
      if (space) out += ' ';
      space = false;
      out += c;
    }
  }
  return out;
}

std::string text_content(const GumboNode* root) {
  if (!root) return "";
  std::string out;
  std::vector<const GumboNode*> stack{root};
  while (!stack.empty()) {
    const GumboNode* n = stack.back();
    stack.pop_back();
    if (is_text(n)) {
      out += n->v.text.text;
    } else if (const GumboVector* kids = child_vector(n)) {
      for (unsigned i = kids->length; i-- > 0;)
        stack.push_back(static_cast<const GumboNode*>(kids->data[i]));
    }
  }
  return out;
}

bool is_not_rendered(const GumboNode* n) {
  if (!is_element(n)) return false;
  switch (n->v.element.tag) {
    case GUMBO_TAG_HEAD: case GUMBO_TAG_SCRIPT: case GUMBO_TAG_STYLE: case GUMBO_TAG_TEMPLATE:
    case GUMBO_TAG_NOSCRIPT: case GUMBO_TAG_TITLE: case GUMBO_TAG_META: case GUMBO_TAG_LINK:
    case GUMBO_TAG_BASE:
      return true;
    default:
      break;
  }
  if (n->type == GUMBO_NODE_TEMPLATE) return true;
  if (has_attr(n, "hidden")) return true;
  if (n->v.element.tag == GUMBO_TAG_UNKNOWN && tag_name(n) == "dialog" && !has_attr(n, "open"))
    return true;
  if (has_tag(n, GUMBO_TAG_INPUT) && attr_equals(n, "type", "hidden")) return true;
  if (const char* style = attr(n, "style")) {
    std::string s = lower_no_spaces(style);
    if (s.find("display:none") != std::string::npos ||
        s.find("visibility:hidden") != std::string::npos)
      return true;
  }
  return false;
}

bool is_block_element(const GumboNode* n) {
  if (!is_element(n)) return false;
  switch (n->v.element.tag) {
    case GUMBO_TAG_ADDRESS: case GUMBO_TAG_ARTICLE: case GUMBO_TAG_ASIDE:
    case GUMBO_TAG_BLOCKQUOTE: case GUMBO_TAG_DETAILS: case GUMBO_TAG_DD:
    case GUMBO_TAG_DIV: case GUMBO_TAG_DL: case GUMBO_TAG_DT: case GUMBO_TAG_FIELDSET:
    case GUMBO_TAG_FIGCAPTION: case GUMBO_TAG_FIGURE: case GUMBO_TAG_FOOTER: case GUMBO_TAG_FORM:
    case GUMBO_TAG_H1: case GUMBO_TAG_H2: case GUMBO_TAG_H3: case GUMBO_TAG_H4: case GUMBO_TAG_H5:
    case GUMBO_TAG_H6: case GUMBO_TAG_HEADER: case GUMBO_TAG_HGROUP: case GUMBO_TAG_HR:
    case GUMBO_TAG_LI: case GUMBO_TAG_MAIN: case GUMBO_TAG_NAV: case GUMBO_TAG_OL: case GUMBO_TAG_P:
    case GUMBO_TAG_PRE: case GUMBO_TAG_SECTION: case GUMBO_TAG_TABLE: case GUMBO_TAG_UL:
    case GUMBO_TAG_TR: case GUMBO_TAG_SUMMARY: case GUMBO_TAG_LEGEND: case GUMBO_TAG_CAPTION:
    case GUMBO_TAG_CENTER: case GUMBO_TAG_BODY: case GUMBO_TAG_HTML: case GUMBO_TAG_MENU:
    case GUMBO_TAG_OPTION:
      return true;
    default:
      return tag_name(n) == "dialog";  // gumbo 0.10 has no GUMBO_TAG_DIALOG
  }
}

std::string inner_text(const GumboNode* root) {
  if (!root) return "";
  if (is_text(root)) return root->v.text.text;  // not an element: behave like textContent
  text_builder out;
  struct step { const GumboNode* node; bool leaving; };
  std::vector<step> stack{{root, false}};
  while (!stack.empty()) {
    step s = stack.back();
    stack.pop_back();
    const GumboNode* n = s.node;
    if (is_text(n)) {
      if (in_preformatted(n)) out.literal(n->v.text.text);
      else out.collapsed(n->v.text.text);
      continue;
    }
    if (!is_element(n) && n->type != GUMBO_NODE_DOCUMENT) continue;  // comments
    int breaks = has_tag(n, GUMBO_TAG_P) ? 2 : is_block_element(n) ? 1 : 0;
    if (s.leaving) {
      if (breaks) out.require_breaks(breaks);
      if (is_cell(n) && !is_last_cell(n)) out.literal("\t");
      continue;
    }
    if (n != root && is_not_rendered(n)) continue;
    if (has_tag(n, GUMBO_TAG_BR)) {
      out.literal("\n");
      continue;
    }
    // Replaced elements and form controls contribute no text.
    if (has_tag(n, GUMBO_TAG_TEXTAREA) || has_tag(n, GUMBO_TAG_SELECT) ||
        has_tag(n, GUMBO_TAG_INPUT) || has_tag(n, GUMBO_TAG_IMG) ||
        has_tag(n, GUMBO_TAG_IFRAME) || has_tag(n, GUMBO_TAG_SVG))
      continue;
    if (breaks) out.require_breaks(breaks);
    stack.push_back({n, true});
    if (const GumboVector* kids = child_vector(n))
      for (unsigned i = kids->length; i-- > 0;)
        stack.push_back({static_cast<const GumboNode*>(kids->data[i]), false});
  }
  return out.finish();
}

}  // namespace kvarena
