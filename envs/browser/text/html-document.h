// html-document.h: one parsed HTML page. Owns gumbo's output (and the source text that
// gumbo points into), numbers every node in document (preorder) order so that ids derived
// from the numbering are stable for the life of the page, and wraps gumbo's C structs in
// small typed helpers (tag names, attributes, children). Parsing never fails: gumbo turns
// any byte string into a tree (invalid UTF-8 becomes U+FFFD).
#pragma once
#include <gumbo.h>

#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace kvarena {

class html_document {
 public:
  explicit html_document(std::string html);
  ~html_document();
  html_document(const html_document&) = delete;
  html_document& operator=(const html_document&) = delete;

  const std::string& html() const { return html_; }
  const GumboNode* document() const;  // the document node (index 0)
  const GumboNode* body() const;      // <body>; gumbo always makes one

  // Every node (document, elements, text, comments, whitespace) in preorder.
  int node_count() const { return static_cast<int>(nodes_.size()); }
  const GumboNode* node(int index) const;    // nullptr when out of range
  int index_of(const GumboNode* node) const;  // -1 when not in this document
  const GumboNode* element_by_id(std::string_view id) const;  // first with that id

  std::string title() const;  // <title> text, whitespace collapsed; "" when absent
  // The <base href> resolved against the document URL, or the document URL.
  std::string base_url(const std::string& document_url) const;

 private:
  std::string html_;
  GumboOutput* output_ = nullptr;
  std::vector<const GumboNode*> nodes_;  // (node_count) preorder
  std::unordered_map<const GumboNode*, int> index_;
  std::unordered_map<std::string, const GumboNode*> ids_;
};

// Helpers over gumbo nodes; all accept nullptr.
bool is_element(const GumboNode* n);  // an element or a <template>
bool is_text(const GumboNode* n);     // text, CDATA or whitespace
std::string tag_name(const GumboNode* n);  // lowercase; custom tags by their source name; "" for non-elements
bool has_tag(const GumboNode* n, GumboTag tag);
const char* attr(const GumboNode* n, const char* name);  // nullptr when absent
bool has_attr(const GumboNode* n, const char* name);
std::string attr_or(const GumboNode* n, const char* name, std::string_view fallback = "");
// Attribute value compared case-insensitively after trimming ("TRUE" == "true").
bool attr_equals(const GumboNode* n, const char* name, std::string_view value);
const GumboVector* child_vector(const GumboNode* n);  // nullptr for leaves
const GumboNode* parent_element(const GumboNode* n);
// The nearest ancestor (or n itself) with this tag, or nullptr.
const GumboNode* closest(const GumboNode* n, GumboTag tag);

// The page body as UTF-8: converts ISO-8859-1 / windows-1252 (as named by the Content-Type
// charset) to UTF-8; anything else passes unchanged (gumbo replaces invalid UTF-8).
std::string decode_to_utf8(std::string_view body, std::string_view content_type);

}  // namespace kvarena
