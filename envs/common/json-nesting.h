// json-nesting.h: a guard run on untrusted JSON text before a parser sees it. nlohmann's
// dump, compare and (in older releases) destructor recurse once per level of [ / {
// nesting, so a body of a million '[' could exhaust the stack; every reader of JSON that
// comes from a task file or a request (task files, the env API, `kvarena serve`) refuses
// text nested deeper than its limit first.
#pragma once
#include <cstddef>
#include <string_view>

namespace kvarena {

// True when no [ or { outside a JSON string opens a level deeper than max_depth (the top
// level is depth 1). When false, *at (if given) is the byte offset of the first bracket
// past the limit. Works on any text, valid JSON or not; O(n), no allocation.
bool json_nesting_within(std::string_view text, int max_depth, size_t* at = nullptr);

}  // namespace kvarena
