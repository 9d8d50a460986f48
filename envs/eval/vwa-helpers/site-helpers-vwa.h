// site-helpers-vwa.h: the func: helpers of VisualWebArena's and WebArena's
// evaluation_harness/helper_functions.py, written anew for kvarena, by site. Each reads
// the same page or API endpoint as the original and returns what it returns, as text
// (numbers as Python prints them, see helper-dom.h). Registered with the local sites'
// helpers by register_site_eval_helpers() (site-eval-helpers.h).
//
// On the current page (no JavaScript needed: the page HTML is parsed):
//   shopping_get_order_product_name_list(__page__)          names on an order page, " |OR| "
//   shopping_get_order_product_quantity(__page__, 'SKU')     its "Ordered N" quantity, or 0
//   shopping_get_order_product_option(__page__, 'SKU', 'O') its option O, or ""
//   shopping_get_product_attributes(__page__, 'a |OR| b')   matching detail rows, ", "
//   shopping_get_product_price(__page__)                    the final price, or 0
//   shopping_get_num_reviews(__page__)                      "Reviews N" tab, or 0
//   shopping_get_rating_as_percentage(__page__)             .rating-result title, or 0
//   reddit_get_latest_comment_content_by_username(__page__, 'U')
//   reddit_get_parent_comment_username_of_latest_comment_by_username(__page__, 'U')
//                                                           from the post's comment tree
//   gitlab_get_project_memeber_role(__page__, 'U')          the member's max role, or ""
//   get_query_text_lowercase(__page__, 'S')                 get_query_text, lower-cased
//   shopping_get_all_product_order(__page__), reddit_get_post_comment_tree(__page__),
//   reddit_get_latest_comment_obj_by_username(__page__, 'U'),
//   reddit_get_parent_comment_obj_of_latest_comment_by_username(__page__, 'U')
//                                                           VWA's dicts and lists, as JSON
// Through the shopping site's REST API (Magento's; the local shopping site answers it
// too), the site's URL from the episode's site map ("shopping"):
//   shopping_get_auth_token()                       the admin token itself
//   shopping_get_latest_order_url()                 newest order's admin view URL
//   shopping_get_sku_latest_review_author('SKU')    newest review's nickname, or ""
//   shopping_get_sku_latest_review_rating('SKU')    its rating in percent, or ""
//   shopping_get_sku_latest_review_text('SKU')      its text, or ""
//   shopping_get_sku_latest_review_title('SKU')     its title, or ""
//   shopping_get_sku_product_page_url('SKU')        the product page URL, or ""
// The API is entered as VisualWebArena's shopping_site_admin account (admin /
// admin1234), the account its Magento images and the local site have. llm_fuzzy_match and
// llm_ua_match are the fuzzy judge (eval/eval-judge.h), not func: helpers.
#pragma once
#include "eval/page-probe.h"

namespace kvarena::sites {

void register_shopping_page_helpers(eval_helper_registry& r);  // helpers-shopping-page.cpp
void register_shopping_rest_helpers(eval_helper_registry& r);  // helpers-shopping-rest.cpp
void register_reddit_helpers(eval_helper_registry& r);         // helpers-forum.cpp
void register_gitlab_helpers(eval_helper_registry& r);         // helpers-forum.cpp (one helper)

inline constexpr const char* k_shopping_admin_user = "admin";
inline constexpr const char* k_shopping_admin_password = "admin1234";

}  // namespace kvarena::sites
