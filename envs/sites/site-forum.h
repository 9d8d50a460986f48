// site-forum.h: the forum site, in the image of VWA's reddit (a Postmill instance): forums
// of link and text posts, threaded comments, per-user up/down votes with scores, hot / new
// / top listings, submitting, editing and deleting one's own posts and comments, user
// pages and search. Its name is "reddit", so a task's __REDDIT__ maps to its base URL.
//
// URLs (relative to the site base, e.g. /main/reddit); tasks' reference URLs use them:
//   /, /new, /top                 every forum's posts: hot (default), newest, top score
//   /forums                       the list of forums
//   /f/{forum}, /f/{forum}/new, /f/{forum}/top      one forum's posts (?page=N, 25 a page)
//   /f/{forum}/{id}/{slug}        a post with its comment tree (other spellings redirect here)
//   /comment/{id}                 one comment with its replies and a reply form
//   /submit, /submit/{forum}      submit a post (login); POST /submit
//   POST /post/{id}/vote, /comment/{id}/vote     direction=up|down; the same vote again
//                                 takes it back (as on reddit); hidden `next` = where to return
//   POST /post/{id}/comment, /comment/{id}/reply  comment on a post, reply to a comment
//   /post/{id}/edit, /post/{id}/delete, /comment/{id}/edit, /comment/{id}/delete
//                                 the author's own content (GET form, POST action; 403 else)
//   /user/{username}              a user's posts and comments
//   /search?q=&page=              posts whose title or body has every word, newest first
//   /login, /logout               (site-auth.h); user "MarvelsGrantMan136" exists for every seed
//
// Hot rank (integers only, so every machine agrees): created_min + 750 * sign(score) *
// floor(1000 * log10|score|) / 1000, log10 from the digit count and a table of the leading
// digit (hot_rank_sql). Like reddit's: a tenfold score is worth 12.5 hours of age.
//
// Tables (state for evaluators): users (site-auth.h; display_name = username),
// forums(id, name, title, description, created_at), posts(id, forum_id, user_id, title,
// url, body, score, created_min, created_at, edited_at), comments(id, post_id, parent_id,
// user_id, body, score, created_min, created_at, edited_at, deleted), post_votes(post_id,
// user_id, value), comment_votes(comment_id, user_id, value); value is +1 or -1 and a
// score counts every vote. A deleted comment with replies stays as "[deleted]" (deleted =
// 1, body ''); otherwise deletes remove rows. Files: -content (word lists), -seed,
// -query (SQL), -views (shared HTML), -browse (pages), -actions (forms that change state).
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "site-text.h"
#include "site.h"

namespace kvarena::sites {

class site_forum : public site {
 public:
  std::string name() const override { return "reddit"; }
  std::string title() const override { return "Postmill"; }
  void seed(sqlite_db& db, uint64_t seed) const override;
  void add_routes(site_router& r) const override;
  page_chrome chrome(const page_context& ctx) const override;
  std::string_view stylesheet() const override;  // site-forum-style.cpp

 private:
  // Each file's route table, by concern, registered in this order (the router takes the
  // first matching pattern and lists a path's methods for 405 in this order).
  void add_browse_routes(site_router& r) const;  // -browse.cpp:
  void add_listing_routes(site_router& r) const;
  void add_post_page_routes(site_router& r) const;
  void add_comment_page_routes(site_router& r) const;
  void add_user_page_routes(site_router& r) const;
  void add_search_routes(site_router& r) const;
  void add_action_routes(site_router& r) const;  // -actions.cpp:
  void add_submit_routes(site_router& r) const;
  void add_vote_routes(site_router& r) const;
  void add_comment_routes(site_router& r) const;
  void add_post_owner_routes(site_router& r) const;
  void add_comment_owner_routes(site_router& r) const;
};

namespace forum {

inline constexpr int kPostsPerPage = 25;
inline constexpr int kSeedUsers = 60;
inline constexpr int kSeedPosts = 360;
inline constexpr int kMaxReplyDepth = 6;
inline constexpr const char* kFixedUsername = "MarvelsGrantMan136";  // user 1 for every seed

struct forum_row {
  int64_t id = 0;
  std::string name, title, description, created_at;
  int64_t posts = 0;
};
std::vector<forum_row> load_forums(sqlite_db& db);                          // by name, case-insensitive
std::optional<forum_row> find_forum(sqlite_db& db, std::string_view name);  // case-insensitive

struct post_row {
  int64_t id = 0, forum_id = 0, user_id = 0;
  std::string forum_name, username;
  std::string title, url, body;  // url "" for a text post
  int64_t score = 0, created_min = 0;
  std::string created_at, edited_at;
  int64_t comments = 0;  // not deleted
  int my_vote = 0;       // the viewer's vote: -1, 0, +1
};
std::optional<post_row> get_post(sqlite_db& db, int64_t id, int64_t viewer_id = 0);

// "hot" | "new" | "top": the ORDER BY of a post listing (alias p = posts).
const std::vector<std::string>& post_sorts();
std::string post_order_sql(std::string_view sort);
std::string hot_rank_sql();  // an integer SQL expression over p.score and p.created_min

struct post_filter {
  int64_t forum_id = 0;  // 0: every forum
  int64_t user_id = 0;   // 0: every author
  std::string q;         // words that must each be in the title or the body
  std::string sort = "hot";
  int page = 1;
};
struct post_page {
  std::vector<post_row> rows;
  int64_t total = 0;
  int page = 1, pages = 1;
};
post_page find_posts(sqlite_db& db, const post_filter& f, int64_t viewer_id, int per_page = kPostsPerPage);
int page_param(const param_list& q);  // ?page=N, 1 when absent or not a number

struct comment_row {
  int64_t id = 0, post_id = 0, parent_id = 0, user_id = 0;
  std::string username, body;
  int64_t score = 0, created_min = 0;
  std::string created_at, edited_at;
  bool deleted = false;
  int my_vote = 0;
};
// Every comment of a post; children of each comment in display order (score, then id).
std::vector<comment_row> post_comments(sqlite_db& db, int64_t post_id, int64_t viewer_id);
std::optional<comment_row> get_comment(sqlite_db& db, int64_t id, int64_t viewer_id = 0);

// "Friendly reminder: bookshop.org exists!" -> "friendly-reminder-bookshop-org-exists".
std::string slugify(std::string_view title);
// A score as the pages show it: "1 point", "-1 point", "0 points", "12 points" (task
// generators expect the same words).
std::string points(int64_t score);
std::string post_path(const post_row& p);  // "/f/books/12/the-slug"
// "3 days ago", relative to the seeded clock (kSeedNowMinutes).
std::string time_ago(int64_t created_min);
using sites::safe_return;  // site-text.h
using sites::trim;

// Shared HTML (site-forum-views.cpp).
html post_list(const page_context& ctx, const std::vector<post_row>& rows);
html post_summary_line(const page_context& ctx, const post_row& p);  // "Submitted ... by ... to f/..."
html vote_box(const page_context& ctx, std::string_view action, int64_t score, int my_vote, std::string_view what);
html comment_tree(const page_context& ctx, const std::vector<comment_row>& comments, int64_t root_id);
html comment_form(const page_context& ctx, std::string_view action, std::string_view id, std::string_view label,
                  std::string_view value, std::string_view error, std::string_view button);
html pagination(const page_context& ctx, const post_page& p, const std::string& path, const std::string& extra_query);
html sort_nav(const page_context& ctx, const std::string& base_path, std::string_view current);

}  // namespace forum
}  // namespace kvarena::sites
