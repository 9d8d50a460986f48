// form-submit.cpp: entry list, method/action/enctype resolution and body encodings.
#include "form-submit.h"

#include "browser/common/str-util.h"
#include "browser/common/url-util.h"

namespace kvarena {
namespace {

// Every element in document order, without recursion.
std::vector<const GumboNode*> all_elements(const html_document& doc) {
  std::vector<const GumboNode*> out;
  for (int i = 0; i < doc.node_count(); ++i)
    if (is_element(doc.node(i))) out.push_back(doc.node(i));
  return out;
}

// The submitter's override attribute (formaction...) if it has one, else the form's.
std::string form_attribute(const GumboNode* form, const GumboNode* submitter,
                           const char* submitter_attr, const char* form_attr) {
  if (submitter && has_attr(submitter, submitter_attr)) return attr(submitter, submitter_attr);
  return attr_or(form, form_attr);
}

std::string multipart_escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '"') out += "%22";
    else if (c == '\r') out += "%0D";
    else if (c == '\n') out += "%0A";
    else out += c;
  }
  return out;
}

const char* kBoundary = "----kvarenaFormBoundary7MA4YWxkTrZu0gW";

std::string multipart_body(const std::vector<form_entry>& entries) {
  std::string body;
  for (const form_entry& e : entries) {
    body += std::string("--") + kBoundary + "\r\n";
    body += "Content-Disposition: form-data; name=\"" + multipart_escape(e.name) + "\"";
    if (e.is_file) body += "; filename=\"\"\r\nContent-Type: application/octet-stream";
    body += "\r\n\r\n" + (e.is_file ? std::string() : e.value) + "\r\n";
  }
  body += std::string("--") + kBoundary + "--\r\n";
  return body;
}

}  // namespace

std::vector<form_entry> form_entries(const html_document& doc, const form_state& state,
                                     const GumboNode* form, const GumboNode* submitter) {
  std::vector<form_entry> out;
  for (const GumboNode* e : all_elements(doc)) {
    bool control = has_tag(e, GUMBO_TAG_INPUT) || has_tag(e, GUMBO_TAG_BUTTON) ||
                   has_tag(e, GUMBO_TAG_SELECT) || has_tag(e, GUMBO_TAG_TEXTAREA);
    if (!control || form_owner(doc, e) != form || is_disabled(e)) continue;
    if (closest(e, GUMBO_TAG_DATALIST)) continue;
    std::string name = attr_or(e, "name");
    if (has_tag(e, GUMBO_TAG_BUTTON)) {
      if (e == submitter && !name.empty()) out.push_back({name, attr_or(e, "value")});
      continue;
    }
    if (has_tag(e, GUMBO_TAG_INPUT)) {
      std::string type = input_type(e);
      if (type == "image") {
        if (e != submitter) continue;
        std::string prefix = name.empty() ? "" : name + ".";
        out.push_back({prefix + "x", "0"});
        out.push_back({prefix + "y", "0"});
        continue;
      }
      if (name.empty() || type == "reset" || type == "button") continue;
      if (type == "submit") {
        if (e == submitter) out.push_back({name, attr_or(e, "value", "Submit")});
      } else if (type == "checkbox" || type == "radio") {
        if (state.checked(e)) out.push_back({name, state.value(e)});
      } else if (type == "file") {
        out.push_back({name, "", true});
      } else if (type == "hidden" && lower_trim(name) == "_charset_") {
        out.push_back({name, "UTF-8"});
      } else {
        out.push_back({name, state.value(e)});
      }
      continue;
    }
    if (name.empty()) continue;
    if (has_tag(e, GUMBO_TAG_SELECT)) {
      for (const GumboNode* o : state.selected_options(e))
        if (!is_disabled(o)) out.push_back({name, option_value(o)});
    } else {  // textarea
      out.push_back({name, state.value(e)});
    }
  }
  return out;
}

const GumboNode* default_button(const html_document& doc, const GumboNode* form) {
  for (const GumboNode* e : all_elements(doc))
    if (is_submit_button(e) && form_owner(doc, e) == form) return e;
  return nullptr;
}

std::optional<http_request> build_form_submission(const html_document& doc, const form_state& state,
                                                  const GumboNode* form, const GumboNode* submitter,
                                                  const std::string& document_url, std::string* error) {
  std::string method = lower_trim(form_attribute(form, submitter, "formmethod", "method"));
  if (method == "dialog") {
    *error = "the form has method=dialog, which only closes a dialog; nothing was submitted";
    return std::nullopt;
  }
  std::string action = form_attribute(form, submitter, "formaction", "action");
  std::string base = doc.base_url(document_url);
  std::optional<std::string> target =
      lower_trim(action).empty() ? std::optional<std::string>(document_url) : resolve_url(base, action);
  std::string scheme = target ? url_scheme(*target) : "";
  if (!target || (scheme != "http" && scheme != "https" && scheme != "file")) {
    *error = "the form's action '" + action +
             "' is not an http(s) URL (a JavaScript or mailto: action?); the text browser "
             "cannot submit it";
    return std::nullopt;
  }
  std::vector<form_entry> entries = form_entries(doc, state, form, submitter);
  http_request req;
  req.referer = document_url;
  if (method != "post") {
    std::vector<std::pair<std::string, std::string>> pairs;
    for (const form_entry& e : entries) pairs.emplace_back(e.name, e.value);
    url_parts u = parse_url(*target);
    u.query = form_urlencode(pairs);
    u.has_query = true;
    req.method = "GET";
    req.url = format_url(u);
    return req;
  }
  req.method = "POST";
  req.url = url_without_fragment(*target);
  std::string enctype = lower_trim(form_attribute(form, submitter, "formenctype", "enctype"));
  if (enctype == "multipart/form-data") {
    req.content_type = std::string("multipart/form-data; boundary=") + kBoundary;
    req.body = multipart_body(entries);
  } else if (enctype == "text/plain") {
    req.content_type = "text/plain";
    for (const form_entry& e : entries) req.body += e.name + "=" + e.value + "\r\n";
  } else {
    std::vector<std::pair<std::string, std::string>> pairs;
    for (const form_entry& e : entries) pairs.emplace_back(e.name, e.value);
    req.content_type = "application/x-www-form-urlencoded";
    req.body = form_urlencode(pairs);
  }
  return req;
}

}  // namespace kvarena
