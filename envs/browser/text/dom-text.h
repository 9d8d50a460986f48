// dom-text.h: the text of DOM subtrees as scripts see it, without layout: textContent (every
// text descendant, verbatim), innerText/outerText (the rendered text approximated from HTML
// semantics: hidden subtrees skipped, block boundaries as line breaks, table cells as tabs,
// whitespace collapsed outside <pre>), and the hidden-element rule shared with the
// accessibility tree. All walks are iterative: pages may nest deeper than the C stack.
#pragma once
#include <gumbo.h>

#include <string>
#include <string_view>

namespace kvarena {

// Runs of ASCII whitespace -> one space, trimmed.
std::string collapse_whitespace(std::string_view s);

// Node.textContent: all text descendants concatenated (script and style text included).
std::string text_content(const GumboNode* n);

// HTMLElement.innerText (== outerText when read): see the header comment for the rules.
std::string inner_text(const GumboNode* n);

// Not rendered at all: <head>, <script>, <style>, <template>, <noscript> (scripts are
// assumed on, as in the reference harness), the hidden attribute, an inline style with
// display:none or visibility:hidden, and <input type=hidden>. aria-hidden is not included:
// it hides from the accessibility tree only (see ax-tree.cpp).
bool is_not_rendered(const GumboNode* n);

// Inside <pre>, <textarea>, <listing> or <plaintext>: whitespace is kept as written.
bool in_preformatted(const GumboNode* n);

// Block-level for text purposes: its contents start and end on their own line.
bool is_block_element(const GumboNode* n);

}  // namespace kvarena
