// eval-locator.h: takes apart the locator strings of program_html targets and the
// `func:` calls of targets' urls and locators, without running anything.
//
// Locator forms (VWA/WA task files):
//   ""                                         the whole page's HTML
//   document.querySelector('S').outerText      also .textContent .innerText .value; the
//   document.querySelector("S").value          selector in '...', "..." or `...` (JS
//   document.body.innerText                    escapes such as \" undone); optional ';'
//   other "document." / "[...document." JS     kind javascript: JS backends only
//   lambda:...                                 kind lambda_js (VWA: a failure scores 0)
//   func:name(arg, 'text', 3, __page__)        kind func_helper
// Anything else is kind invalid with a message listing these forms.
#pragma once
#include <string>
#include <string_view>
#include <vector>

namespace kvarena {

enum class locator_kind { whole_page, query_selector, javascript, lambda_js, func_helper, invalid };
enum class element_property { outer_text, text_content, inner_text, value };

const char* element_property_name(element_property p);  // "outerText", ...

// name(args): string literals unquoted, numbers and identifiers (__page__, __last_url__,
// True, None) kept as written.
struct func_call {
  std::string name;
  std::vector<std::string> args;
};

struct parsed_locator {
  locator_kind kind = locator_kind::invalid;
  std::string selector;  // query_selector: the CSS selector ("body" for document.body)
  element_property property = element_property::outer_text;  // query_selector
  func_call call;        // func_helper
  std::string error;     // invalid: what is wrong and the valid forms
};

parsed_locator parse_locator(std::string_view locator);

// "name(args)" (without the "func:" prefix). On failure returns false and sets *err.
bool parse_func_call(std::string_view text, func_call* out, std::string* err);

}  // namespace kvarena
