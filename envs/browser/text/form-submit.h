// form-submit.h: a form plus its live state -> the HTTP request a browser sends when it is
// submitted (HTML's "constructing the entry list" and "form submission algorithm"): the
// successful controls in document order, the submitter's name=value, method GET (entries
// replace the action's query) or POST (urlencoded, multipart/form-data or text/plain body),
// formaction/formmethod/formenctype overrides, action resolved against the document base.
#pragma once
#include <gumbo.h>

#include <optional>
#include <string>
#include <vector>

#include "form-state.h"
#include "html-document.h"
#include "http-fetch.h"

namespace kvarena {

struct form_entry {
  std::string name;
  std::string value;
  bool is_file = false;  // <input type=file>: sent as an empty file
};

// The entry list. `submitter` (a submit button, or nullptr) contributes its own entry.
std::vector<form_entry> form_entries(const html_document& doc, const form_state& state,
                                     const GumboNode* form, const GumboNode* submitter);

// The form's default button (its first submit button in document order), or nullptr.
const GumboNode* default_button(const html_document& doc, const GumboNode* form);

// The request to send; nullopt with *error when the form cannot be submitted by this
// browser (method=dialog, a javascript: or mailto: action).
std::optional<http_request> build_form_submission(const html_document& doc, const form_state& state,
                                                  const GumboNode* form, const GumboNode* submitter,
                                                  const std::string& document_url, std::string* error);

}  // namespace kvarena
