// site-eval-helpers.h: the `func:` helpers that tasks' program_html targets call for the
// local sites (eval/page-probe.h has the registry and the calling convention).
//
// They work through the page probe only (open a page, read its HTML), never through the
// site store, so they behave the same with in-process tenants and with external sites.
// A site's base URL comes in as an argument ('__CLASSIFIEDS__' is filled in with the
// task's other placeholders), since one task may span several sites.
//
//   get_query_text(__page__, 'S')                  text of the first element matching the
//                                                  CSS selector S ("" when none), as VWA
//   classifieds_get_latest_listing_url('__CLASSIFIEDS__')
//                                                  URL of the logged-in user's newest listing
//   shopping_get_latest_order_url('__SHOPPING__')  URL of the logged-in user's newest order
//   reddit_get_post_url('__last_url__')            the post page a post/comment URL belongs to
//   reddit_get_latest_post_url('__REDDIT__')       URL of the logged-in user's newest post
//   reddit_get_latest_comment_url('__REDDIT__')    URL of the logged-in user's newest comment
//   get_query_text_lowercase(__page__, 'S')        the same, lower-cased
// The "latest" helpers return nullopt (the page is wrong: score 0) when there is none.
// shopping_get_latest_order_url() without an argument asks the site's REST API, as VWA;
// the helpers of VisualWebArena and WebArena are in site-helpers-vwa.h.
#pragma once
#include <string>
#include <string_view>

#include "eval/page-probe.h"

namespace kvarena::sites {

// Adds every helper above to `r`.
void register_site_eval_helpers(eval_helper_registry& r);

// A registry holding them, built once (thread-safe; lives for the program).
const eval_helper_registry& site_eval_helpers();

// The absolute URL of `href` found on a page of the site whose base URL is `base`
// ("http://h:p/t-1/shopping"): absolute URLs kept, "/x" joined to the origin, "x" to base.
std::string resolve_site_href(std::string_view base, std::string_view href);

}  // namespace kvarena::sites
