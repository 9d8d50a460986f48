// gen-templates.h: the template families of the generator, one function per file
// (gen-<family>.cpp). Each appends its drafts in a fixed order; generate.cpp numbers them.
#pragma once
#include <string>
#include <vector>

#include "generator/gen-builder.h"

namespace kvarena::tasks::gen {

void classifieds_templates(const site_data& data, std::vector<draft>& out);  // gen-classifieds.cpp
void shopping_templates(const site_data& data, std::vector<draft>& out);     // gen-shopping.cpp
void reddit_templates(const site_data& data, std::vector<draft>& out);       // gen-forum.cpp
void multisite_templates(const site_data& data, std::vector<draft>& out);    // gen-multisite.cpp
void long_horizon_templates(const site_data& data, std::vector<draft>& out); // gen-long-horizon.cpp
void visual_templates(const site_data& data, std::vector<draft>& out);       // gen-visual.cpp

// Data pickers and plan snippets the families share (defined in their site's file).
// "Nameable": a unique title/name that the site's own search lists on its first page.
extern const char* const k_classifieds_listing_sql;  // SELECT ... FROM listings l ... (then WHERE)
int64_t classifieds_search_count(const site_data& data, const std::string& q);
std::vector<json> classifieds_nameable_listings(const site_data& data);  // other sellers' listings
void classifieds_find_listing(plan_builder& p, const std::string& title);  // search, open

extern const char* const k_shopping_product_sql;  // SELECT ... FROM products p ... (then WHERE)
int64_t shopping_search_count(const site_data& data, const std::string& q);
std::vector<json> shopping_nameable_products(const site_data& data, const std::string& extra_where = "1");
void shopping_find_product(plan_builder& p, const std::string& name);  // search, open
std::string shopping_rating(const json& product_row);                  // "4.3"

extern const char* const k_reddit_post_sql;  // SELECT ... FROM posts p ... (then WHERE)
int64_t reddit_search_count(const site_data& data, const std::string& q);
std::vector<json> reddit_nameable_posts(const site_data& data, const std::string& extra_where = "1");
std::string reddit_post_path(const json& post_row);  // "/f/books/12/the-slug"
void reddit_find_post(plan_builder& p, const std::string& title);      // search, open
void reddit_open_forum(plan_builder& p, const std::string& forum);     // Forums, f/name

}  // namespace kvarena::tasks::gen
