// ax-semantics.h: HTML -> accessibility semantics, the part of Chromium's accessibility
// tree that can be derived from markup alone: an element's role (explicit role= first,
// then the HTML-AAM implicit role, with Chromium's names where the reference trees show
// them: RootWebArea, StaticText, LabelText, Legend, Section, DisclosureTriangle) and its
// accessible name (a simplified accname: aria-labelledby, aria-label, the native label
// (<label>, alt, value, legend, caption), name from content, placeholder, title).
// No CSS beyond inline display:none/visibility:hidden, no JavaScript.
#pragma once
#include <gumbo.h>

#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "browser/text/form-state.h"
#include "browser/text/html-document.h"

namespace kvarena {

// Whitespace collapsed as in accessible names, with no-break spaces counted as spaces.
std::string ax_collapse(std::string_view s);

// Out of the accessibility tree with its subtree: not rendered (dom-text.h) or aria-hidden.
bool is_ax_hidden(const GumboNode* n);

// The role of an element; "" when it contributes nothing (iframes, media, closed dialogs).
std::string ax_role(const GumboNode* element);

// Roles whose name comes from their content when nothing else names them.
bool role_names_from_content(const std::string& role);

// Text-entry roles (the agent may type into them).
bool is_text_role(const std::string& role);

class ax_namer {
 public:
  ax_namer(const html_document& doc, const form_state& state);

  // The accessible name, whitespace collapsed.
  std::string name(const GumboNode* element, const std::string& role) const;

  // The text an element's subtree contributes to a name: text, img alt, control values,
  // aria-label of descendants; hidden parts skipped; blocks separated by spaces.
  std::string content_text(const GumboNode* n) const;

  // The value shown inside a text field or textarea (passwords as bullets).
  std::string shown_value(const GumboNode* field) const;

 private:
  std::string label_text(const GumboNode* control) const;
  void append_content(const GumboNode* n, std::string* out, int depth,
                      const GumboNode* skip = nullptr) const;

  const html_document& doc_;
  const form_state& state_;
  std::unordered_map<std::string, std::vector<const GumboNode*>> labels_for_;  // label[for]
};

}  // namespace kvarena
