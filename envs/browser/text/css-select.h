// css-select.h: a CSS selector engine over gumbo trees, for document.querySelector(S) in
// the evaluators' locators. Supported (Selectors Level 3 plus :not of a list):
//   type and *, #id, .class, [attr], [attr=v] [attr~=v] [attr|=v] [attr^=v] [attr$=v]
//   [attr*=v] (v an identifier or a quoted string, optional " i" flag), the descendant
//   (space), child (>), next-sibling (+) and subsequent-sibling (~) combinators, comma
//   lists, and the pseudo-classes :first-child :last-child :only-child :nth-child(an+b)
//   :nth-last-child(an+b) :first-of-type :last-of-type :only-of-type :nth-of-type(an+b)
//   :nth-last-of-type(an+b) :root :empty :not(list).
// Anything else (pseudo-elements, :hover, :checked, namespaces) is a parse error whose
// message names the position. Type selectors are case-insensitive, ids and classes are not.
#pragma once
#include <gumbo.h>

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kvarena {

struct css_complex_selector;  // defined in css-select.cpp

class css_selector_list {
 public:
  // nullopt on a syntax error or an unsupported feature; *error then says what and where.
  static std::optional<css_selector_list> parse(std::string_view text, std::string* error = nullptr);

  bool matches(const GumboNode* element) const;  // false for non-elements
  const std::string& text() const { return text_; }

 private:
  std::string text_;
  std::vector<std::shared_ptr<const css_complex_selector>> alternatives_;
  friend struct css_parser;
};

// The first matching element among the descendants of `scope` (a document or an element)
// in document order, or nullptr. <template> contents are not searched (as in the DOM).
const GumboNode* query_selector(const GumboNode* scope, const css_selector_list& selector);
std::vector<const GumboNode*> query_selector_all(const GumboNode* scope,
                                                 const css_selector_list& selector);

}  // namespace kvarena
