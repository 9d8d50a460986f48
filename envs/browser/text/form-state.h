// form-state.h: the live state of a page's form controls (what the agent typed, checked and
// selected), kept beside the immutable parsed document, plus the HTML rules that say what
// a control is: its type, its form owner, whether it is disabled, a select's options and
// their default selection. Values start from the HTML defaults (value=, checked, selected,
// a textarea's text) and change only through the setters.
#pragma once
#include <gumbo.h>

#include <string>
#include <unordered_map>
#include <vector>

#include "html-document.h"

namespace kvarena {

// <input>'s type, lowercased, "text" when absent or unknown.
std::string input_type(const GumboNode* input);
// Controls that take typed text: <textarea> and text-like <input>s (text, search, email,
// password, tel, url, number, date-like types).
bool is_text_field(const GumboNode* n);
// Buttons that submit their form: <button> (type submit or absent) and <input type=submit|image>.
bool is_submit_button(const GumboNode* n);
// disabled, or inside a disabled <fieldset> (except within its first <legend>).
bool is_disabled(const GumboNode* n);
bool is_readonly(const GumboNode* n);
// The form a control belongs to: its form="id" attribute, else the nearest <form> ancestor.
const GumboNode* form_owner(const html_document& doc, const GumboNode* control);
// A <select>'s <option>s in document order (through <optgroup>s).
std::vector<const GumboNode*> select_options(const GumboNode* select);
// The <select> an <option> belongs to, or nullptr.
const GumboNode* option_select(const GumboNode* option);
bool is_multi_select(const GumboNode* select);
// An option's label as shown (label= or its text, whitespace collapsed) and its value.
std::string option_label(const GumboNode* option);
std::string option_value(const GumboNode* option);

class form_state {
 public:
  explicit form_state(const html_document& doc) : doc_(&doc) {}

  // <input>/<textarea> current value; for a checkbox or radio its value= (default "on").
  std::string value(const GumboNode* control) const;
  void set_value(const GumboNode* control, std::string value);

  bool checked(const GumboNode* input) const;
  // Checking a radio unchecks the others of its group (same name, same form).
  void set_checked(const GumboNode* input, bool on);

  bool selected(const GumboNode* option) const;
  // Single select: this option becomes the only selected one. Multiple: toggles it.
  void choose_option(const GumboNode* option);
  // The selected options of a select (single select: exactly one unless it has none).
  std::vector<const GumboNode*> selected_options(const GumboNode* select) const;

  // Back to the HTML defaults for every control owned by `form`.
  void reset(const GumboNode* form);

 private:
  int key(const GumboNode* n) const { return doc_->index_of(n); }
  bool default_selected(const GumboNode* option) const;

  const html_document* doc_;
  std::unordered_map<int, std::string> values_;   // by node index
  std::unordered_map<int, bool> checked_;
  std::unordered_map<int, bool> selected_;
};

}  // namespace kvarena
