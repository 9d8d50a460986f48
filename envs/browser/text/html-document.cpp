// html-document.cpp: gumbo ownership, the preorder numbering, node helpers, charset decoding.
#include "html-document.h"

#include "common/text-encode.h"
#include "dom-text.h"
#include "browser/common/str-util.h"
#include "browser/common/url-util.h"

namespace kvarena {
namespace {

// The first element with `tag` in preorder, or nullptr.
const GumboNode* find_first(const std::vector<const GumboNode*>& nodes, GumboTag tag) {
  for (const GumboNode* n : nodes)
    if (has_tag(n, tag)) return n;
  return nullptr;
}

// windows-1252 bytes 0x80..0x9F (0 = undefined, kept as the latin-1 code point).
const unsigned short kCp1252High[32] = {
    0x20AC, 0, 0x201A, 0x0192, 0x201E, 0x2026, 0x2020, 0x2021, 0x02C6, 0x2030, 0x0160,
    0x2039, 0x0152, 0, 0x017D, 0, 0, 0x2018, 0x2019, 0x201C, 0x201D, 0x2022, 0x2013,
    0x2014, 0x02DC, 0x2122, 0x0161, 0x203A, 0x0153, 0, 0x017E, 0x0178};

}  // namespace

html_document::html_document(std::string html) : html_(std::move(html)) {
  GumboOptions options = kGumboDefaultOptions;
  options.max_errors = 0;  // parse errors are of no use here; don't let garbage fill memory
  output_ = gumbo_parse_with_options(&options, html_.data(), html_.size());
  // Preorder walk with an explicit stack: pages may nest deeper than the C stack allows.
  std::vector<const GumboNode*> stack{output_->document};
  while (!stack.empty()) {
    const GumboNode* n = stack.back();
    stack.pop_back();
    index_.emplace(n, static_cast<int>(nodes_.size()));
    nodes_.push_back(n);
    if (is_element(n))
      if (const char* id = attr(n, "id"); id && *id) ids_.emplace(id, n);
    if (const GumboVector* kids = child_vector(n))
      for (unsigned i = kids->length; i-- > 0;)
        stack.push_back(static_cast<const GumboNode*>(kids->data[i]));
  }
}

html_document::~html_document() {
  if (output_) gumbo_destroy_output(&kGumboDefaultOptions, output_);
}

const GumboNode* html_document::document() const { return output_->document; }

const GumboNode* html_document::body() const { return find_first(nodes_, GUMBO_TAG_BODY); }

const GumboNode* html_document::node(int index) const {
  return index >= 0 && index < node_count() ? nodes_[index] : nullptr;
}

int html_document::index_of(const GumboNode* n) const {
  auto it = index_.find(n);
  return it == index_.end() ? -1 : it->second;
}

const GumboNode* html_document::element_by_id(std::string_view id) const {
  auto it = ids_.find(std::string(id));
  return it == ids_.end() ? nullptr : it->second;
}

std::string html_document::title() const {
  const GumboNode* t = find_first(nodes_, GUMBO_TAG_TITLE);
  return t ? collapse_whitespace(text_content(t)) : "";
}

std::string html_document::base_url(const std::string& document_url) const {
  for (const GumboNode* n : nodes_)
    if (has_tag(n, GUMBO_TAG_BASE) && has_attr(n, "href"))
      return resolve_url(document_url, attr(n, "href")).value_or(document_url);
  return document_url;
}

bool is_element(const GumboNode* n) {
  return n && (n->type == GUMBO_NODE_ELEMENT || n->type == GUMBO_NODE_TEMPLATE);
}

bool is_text(const GumboNode* n) {
  return n && (n->type == GUMBO_NODE_TEXT || n->type == GUMBO_NODE_CDATA ||
               n->type == GUMBO_NODE_WHITESPACE);
}

std::string tag_name(const GumboNode* n) {
  if (!is_element(n)) return "";
  if (n->v.element.tag != GUMBO_TAG_UNKNOWN) return gumbo_normalized_tagname(n->v.element.tag);
  GumboStringPiece piece = n->v.element.original_tag;
  if (!piece.data || piece.length == 0) return "";
  gumbo_tag_from_original_text(&piece);  // strips '<', '>' and attributes
  return ascii_lower(std::string_view(piece.data, piece.length));
}

bool has_tag(const GumboNode* n, GumboTag tag) {
  return is_element(n) && n->v.element.tag == tag;
}

const char* attr(const GumboNode* n, const char* name) {
  if (!is_element(n)) return nullptr;
  const GumboAttribute* a = gumbo_get_attribute(&n->v.element.attributes, name);
  return a ? a->value : nullptr;
}

bool has_attr(const GumboNode* n, const char* name) { return attr(n, name) != nullptr; }

std::string attr_or(const GumboNode* n, const char* name, std::string_view fallback) {
  const char* v = attr(n, name);
  return v ? std::string(v) : std::string(fallback);
}

bool attr_equals(const GumboNode* n, const char* name, std::string_view value) {
  const char* v = attr(n, name);
  return v && lower_trim(v) == ascii_lower(value);
}

const GumboVector* child_vector(const GumboNode* n) {
  if (!n) return nullptr;
  if (n->type == GUMBO_NODE_DOCUMENT) return &n->v.document.children;
  if (is_element(n)) return &n->v.element.children;
  return nullptr;
}

const GumboNode* parent_element(const GumboNode* n) {
  if (!n) return nullptr;
  const GumboNode* p = n->parent;
  return is_element(p) ? p : nullptr;
}

const GumboNode* closest(const GumboNode* n, GumboTag tag) {
  for (; n; n = n->parent)
    if (has_tag(n, tag)) return n;
  return nullptr;
}

std::string decode_to_utf8(std::string_view body, std::string_view content_type) {
  std::string type = ascii_lower(content_type);
  size_t cs = type.find("charset=");
  if (cs == std::string::npos) return std::string(body);
  std::string charset(trim_ascii(std::string_view(type).substr(cs + 8)));
  charset = charset.substr(0, charset.find_first_of("; "));
  if (!charset.empty() && (charset.front() == '"' || charset.front() == '\''))
    charset = charset.substr(1, charset.size() >= 2 ? charset.size() - 2 : 0);
  bool latin1 = charset == "iso-8859-1" || charset == "latin1" || charset == "latin-1" ||
                charset == "windows-1252" || charset == "cp1252" || charset == "us-ascii";
  if (!latin1) return std::string(body);
  std::string out;
  out.reserve(body.size() + body.size() / 8);
  for (char ch : body) {
    unsigned c = static_cast<unsigned char>(ch);
    if (c >= 0x80 && c < 0xA0 && kCp1252High[c - 0x80]) c = kCp1252High[c - 0x80];
    append_utf8(out, c);
  }
  return out;
}

}  // namespace kvarena
