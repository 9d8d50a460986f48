// site-classifieds.h: the classifieds site, in the image of VWA's OSClass classifieds:
// listings in two-level categories, search with filters and sorting, listing pages with a
// "contact seller" form, posting, editing and deleting one's own listings, messages.
//
// URLs (relative to the site base, e.g. /main/classifieds); tasks' reference URLs use them:
//   /                         home: categories and the latest listings
//   /category/{slug}          a category (a top category includes its subcategories)
//   /search?q=&category=&min_price=&max_price=&condition=&location=&sort=&page=
//                             sort: newest (default) | price_asc | price_desc
//   /item/{id}                a listing; POST /item/{id}/contact sends the seller a message
//   /item/{id}/edit, /item/{id}/delete   the seller's own listing (GET form, POST action)
//   /user/{username}          a seller's profile and listings
//   /post                     post a listing (login)
//   /my/listings, /my/messages  the logged-in user's listings and messages
//   /login, /logout           (site-auth.h); user "blake.sullivan" exists for every seed
//
// Tables (state for evaluators): users (site-auth.h), categories(id, parent_id, slug,
// name, position), listings(id, seller_id, category_id, title, description, price_cents,
// condition, location, posted_at, image_alt), messages(id, listing_id, listing_title,
// sender_id, recipient_id, body, sent_at). Files: -seed (schema, data), -query (SQL),
// -views (shared HTML), -browse (public pages), -account (pages that need a login).
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "site-text.h"
#include "site.h"

namespace kvarena::sites {

class site_classifieds : public site {
 public:
  std::string name() const override { return "classifieds"; }
  std::string title() const override { return "Classifieds"; }
  void seed(sqlite_db& db, uint64_t seed) const override;
  void add_routes(site_router& r) const override;
  page_chrome chrome(const page_context& ctx) const override;
  std::string_view stylesheet() const override;  // site-classifieds-style.cpp

 private:
  // Each file's route table, by concern, registered in this order (the router takes the
  // first matching pattern and lists a path's methods for 405 in this order).
  void add_browse_routes(site_router& r) const;  // -browse.cpp:
  void add_search_routes(site_router& r) const;
  void add_listing_routes(site_router& r) const;
  void add_account_routes(site_router& r) const;  // -account.cpp:
  void add_listing_form_routes(site_router& r) const;
  void add_listing_action_routes(site_router& r) const;
  void add_my_pages_routes(site_router& r) const;
};

namespace classifieds {

inline constexpr int kListingsPerPage = 20;
inline constexpr int kSeedListings = 240;
inline constexpr int kSeedUsers = 40;
inline constexpr const char* kFixedUsername = "blake.sullivan";  // user 1 for every seed

// Condition values as stored and as URL parameters, with their labels.
struct condition_def {
  const char* value;  // "like-new"
  const char* label;  // "Like new"
};
const std::vector<condition_def>& conditions();
std::string condition_label(std::string_view value);  // "" when unknown

struct category {
  int64_t id = 0;
  int64_t parent_id = 0;  // 0 for a top category
  std::string slug, name;
  int64_t listings = 0;   // active listings, subcategories included
};
std::vector<category> load_categories(sqlite_db& db);  // top categories first, each followed by its children
const category* find_category(const std::vector<category>& cats, std::string_view slug);

struct listing_row {
  int64_t id = 0;
  std::string title, description;
  int64_t price_cents = 0;
  std::string condition, location, posted_at;
  std::string image_alt;  // "" when the listing has no photo
  int64_t seller_id = 0;
  std::string seller_username, seller_name;
  int64_t category_id = 0;
  std::string category_slug, category_name;
  std::string parent_slug, parent_name;  // the top category
};
std::optional<listing_row> get_listing(sqlite_db& db, int64_t id);

// Search filters; every field optional. Words of `q` must each appear in the title or
// the description (case-insensitive). category: a slug, top categories include children.
struct listing_filter {
  std::string q, category, condition, location;
  std::optional<int64_t> min_cents, max_cents;
  std::optional<int64_t> seller_id;
  std::string sort = "newest";  // newest | price_asc | price_desc; ties: newest first
  int page = 1;
};
struct listing_page {
  std::vector<listing_row> rows;
  int64_t total = 0;
  int page = 1, pages = 1;
};
listing_page find_listings(sqlite_db& db, const listing_filter& f, int per_page = kListingsPerPage);
// Filters from query parameters; bad values are dropped with a message in `problems`.
listing_filter filter_from_query(sqlite_db& db, const param_list& q, std::vector<std::string>& problems);
// The canonical query string of `f`: "" or "?q=blue+bike&category=cars&sort=price_asc":
// non-default fields only, in the order q, category, min_price, max_price, condition,
// location, sort, page (when > 1); spaces as '+'. Search pages redirect other spellings
// here, so a task's reference URL and the agent's final URL compare exactly.
std::string filter_query_string(const listing_filter& f, bool include_category = true);

// "250", "19.99", "$1,200" -> cents; nullopt when not a non-negative amount.
std::optional<int64_t> parse_price_cents(std::string_view s);
// The inverse, as typed into forms and URLs: 25000 -> "250", 1999 -> "19.99", 1990 -> "19.90".
std::string price_input_text(int64_t cents);

// Shared HTML (site-classifieds-views.cpp).
html listing_list(const page_context& ctx, const std::vector<listing_row>& rows);
html pagination(const page_context& ctx, const listing_page& p, std::string_view path, const listing_filter& f,
                bool include_category);
html filter_form(const page_context& ctx, const std::vector<category>& cats, const listing_filter& f);
html result_summary(const listing_page& p);
std::vector<option_item> leaf_category_options(const std::vector<category>& cats);
std::vector<option_item> location_options();
std::vector<option_item> condition_options();

}  // namespace classifieds
}  // namespace kvarena::sites
