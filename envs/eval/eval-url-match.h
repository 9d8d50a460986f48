// eval-url-match.h: the url_match evaluator (specs/web-envs.md §2). Both sides are made
// canonical (canonical_url), the reference is split on " |OR| ", and eval.url_note picks
// the rule: "EXACT" (the default, as VWA) -> the page URL equals one reference;
// "GOLD in PRED" -> one reference is a substring of the page URL. An empty reference
// alternative never matches (VWA's would match every URL under GOLD in PRED).
#pragma once
#include <string>
#include <string_view>

#include "task/task.h"

namespace kvarena {

// Trims spaces, maps the host `localhost` (any case) to 127.0.0.1, and strips one
// trailing '/': "http://localhost:7770/" -> "http://127.0.0.1:7770".
std::string canonical_url(std::string_view url);

// 1 or 0; *detail says what was compared.
double score_url_match(const task_eval& e, const std::string& page_url, std::string* detail);

}  // namespace kvarena
