// test-sites-forum.cpp: the forum site "reddit" (envs/sites/site-forum*) end to end over
// loopback through libcurl: deterministic seed, hot/new/top listings against orders
// computed here from SQL rows (the hot rank re-derived with std::log10), submitting,
// commenting and replying, the reddit vote rules, editing and deleting one's own content
// (403 for others'), search, tenant isolation and reset.
#include <algorithm>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "sites/seed-data.h"
#include "sites/site-forum.h"
#include "test-sites-client.h"

using namespace kvarena::sites;
using namespace kvarena::test;
using json = nlohmann::json;

namespace {

constexpr const char* kMe = "MarvelsGrantMan136";

class ForumTest : public site_fixture {
 protected:
  static json sql(const std::string& tenant, const std::string& q, std::vector<sql_value> params = {}) {
    return store().query(tenant, "reddit", q, params);
  }
  static int64_t count(const std::string& tenant, const std::string& q, std::vector<sql_value> params = {}) {
    return sql(tenant, q, std::move(params))[0].begin()->get<int64_t>();
  }
  static std::vector<int64_t> post_ids(const std::string& page) {
    return ids_in(page, "<ol class=\"posts\">", "</ol>", "<h3><a href=\"[^\"]*/f/[^/\"]+/([0-9]+)/");
  }
  // Every post id of a listing, following "Next page" links.
  static std::vector<int64_t> all_pages(site_client& c, const std::string& url) {
    std::vector<int64_t> got;
    std::string next = url;
    for (int page = 1; page <= 40 && !next.empty(); ++page) {
      auto r = c.get(next);
      EXPECT_EQ(r.status, 200) << next;
      auto ids = post_ids(r.body);
      EXPECT_LE(ids.size(), size_t(forum::kPostsPerPage));
      got.insert(got.end(), ids.begin(), ids.end());
      next = next_page_url(r.body);
    }
    return got;
  }
  static std::string other_user(const std::string& tenant) {
    return sql(tenant, "SELECT username FROM users WHERE id = 2")[0]["username"];
  }
  static int64_t score_of(const std::string& t, const char* table, int64_t id) {
    return count(t, std::string("SELECT score FROM ") + table + " WHERE id = ?1", {id});
  }
};

// The documented hot rank, from its definition rather than from the site's SQL:
// created_min + 750 * sign(score) * (1000 * (digits - 1) + floor(1000 * log10(leading digit))) / 1000.
int64_t hot_rank(int64_t score, int64_t created_min) {
  int64_t mag = score < 0 ? -score : score;
  int64_t sign = score > 0 ? 1 : score < 0 ? -1 : 0;
  std::string digits = std::to_string(mag);
  int64_t lead = digits[0] - '0';
  int64_t milli_log =
      1000 * int64_t(digits.size() - 1) + (lead > 0 ? int64_t(std::floor(1000 * std::log10(double(lead)))) : 0);
  return created_min + sign * (750 * milli_log / 1000);
}

// Post ids in listing order for `sort` over the rows of `where`, ordered here in C++.
std::vector<int64_t> expected_order(const json& rows, const std::string& sort) {
  struct row {
    int64_t id, score, created_min;
  };
  std::vector<row> v;
  for (const auto& r : rows)
    v.push_back({r["id"].get<int64_t>(), r["score"].get<int64_t>(), r["created_min"].get<int64_t>()});
  std::sort(v.begin(), v.end(), [&](const row& a, const row& b) {
    if (sort == "new") return std::tie(a.created_min, a.id) > std::tie(b.created_min, b.id);
    if (sort == "top") return std::tie(a.score, a.created_min, a.id) > std::tie(b.score, b.created_min, b.id);
    int64_t ha = hot_rank(a.score, a.created_min), hb = hot_rank(b.score, b.created_min);
    return std::tie(ha, a.id) > std::tie(hb, b.id);
  });
  std::vector<int64_t> ids;
  for (const auto& r : v) ids.push_back(r.id);
  return ids;
}

}  // namespace

TEST(ForumText, SlugsAndRelativeTimes) {
  EXPECT_EQ(forum::slugify("Friendly reminder: bookshop.org exists!"), "friendly-reminder-bookshop-org-exists");
  EXPECT_EQ(forum::slugify("What's the story behind Baldur's Gate 3?"), "whats-the-story-behind-baldurs-gate-3");
  EXPECT_EQ(forum::slugify("<<<>>>"), "post");
  EXPECT_LE(forum::slugify(std::string(300, 'a') + " b").size(), 80u);
  EXPECT_EQ(forum::time_ago(kSeedNowMinutes), "just now");
  EXPECT_EQ(forum::time_ago(kSeedNowMinutes - 1), "1 minute ago");
  EXPECT_EQ(forum::time_ago(kSeedNowMinutes - 3 * 24 * 60), "3 days ago");
  EXPECT_EQ(forum::time_ago(kSeedNowMinutes - 61 * 24 * 60), "2 months ago");
  EXPECT_EQ(hot_rank(0, 100), 100);
  EXPECT_EQ(hot_rank(10, 100), 850);
  EXPECT_EQ(hot_rank(-100, 2000), 500);
}

TEST_F(ForumTest, SeedIsDeterministicAndComplete) {
  auto only_forum = [] { return std::vector<std::shared_ptr<const site>>{std::make_shared<site_forum>()}; };
  site_store a(only_forum(), 7), b(only_forum(), 7), c(only_forum(), 8);
  EXPECT_EQ(a.snapshot_hash("reddit"), b.snapshot_hash("reddit"));
  EXPECT_EQ(a.snapshot_hash("reddit"), store().snapshot_hash("reddit"));
  EXPECT_NE(a.snapshot_hash("reddit"), c.snapshot_hash("reddit"));
  auto n = [&](const char* q) { return a.query("main", "reddit", q)[0].begin()->get<int64_t>(); };
  std::printf(
      "reddit seed 7: %zu bytes; %lld forums, %lld posts, %lld comments (%lld replies), %lld users, %lld votes\n",
      a.snapshot_bytes("reddit"), (long long)n("SELECT COUNT(*) FROM forums"),
      (long long)n("SELECT COUNT(*) FROM posts"), (long long)n("SELECT COUNT(*) FROM comments"),
      (long long)n("SELECT COUNT(*) FROM comments WHERE parent_id IS NOT NULL"),
      (long long)n("SELECT COUNT(*) FROM users"),
      (long long)n("SELECT (SELECT COUNT(*) FROM post_votes) + (SELECT COUNT(*) FROM comment_votes)"));
  EXPECT_GE(n("SELECT COUNT(*) FROM forums"), 20);
  EXPECT_GE(n("SELECT COUNT(*) FROM posts"), 300);
  EXPECT_EQ(n("SELECT COUNT(*) FROM forums f WHERE NOT EXISTS (SELECT 1 FROM posts p WHERE p.forum_id = f.id)"), 0);
  EXPECT_GE(n("SELECT COUNT(*) FROM comments"), 1000);
  // Threads: replies whose parent is itself a reply, all within their post.
  EXPECT_GT(n("SELECT COUNT(*) FROM comments c JOIN comments p ON p.id = c.parent_id WHERE p.parent_id IS NOT NULL"),
            0);
  EXPECT_EQ(n("SELECT COUNT(*) FROM comments c JOIN comments p ON p.id = c.parent_id WHERE p.post_id <> c.post_id"), 0);
  EXPECT_GT(n("SELECT COUNT(*) FROM posts WHERE url IS NOT NULL"), 0);
  EXPECT_GT(n("SELECT COUNT(*) FROM posts WHERE score < 0"), 0);
  EXPECT_EQ(n("SELECT COUNT(*) FROM posts p WHERE NOT EXISTS (SELECT 1 FROM post_votes v WHERE v.post_id = p.id "
              "AND v.user_id = p.user_id AND v.value = 1)"),
            0);
  EXPECT_EQ(n("SELECT COUNT(DISTINCT title) FROM posts"), n("SELECT COUNT(*) FROM posts"));
  EXPECT_EQ(a.query("main", "reddit", "SELECT username FROM users WHERE id = 1")[0]["username"], kMe);
  EXPECT_GE(n("SELECT COUNT(*) FROM posts WHERE user_id = 1"), 5);
  EXPECT_GE(n("SELECT COUNT(*) FROM comments WHERE user_id = 1"), 5);
  EXPECT_EQ(n("SELECT COUNT(*) FROM users WHERE username LIKE 'wallstreetbets'"), 0);
  EXPECT_EQ(a.query("main", "reddit", "SELECT name FROM forums WHERE name = 'wallstreetbets'").size(), 1u);
}

TEST_F(ForumTest, ListingsSortLikeSql) {
  std::string t;
  std::string base = fresh("reddit", &t);
  site_client c;
  auto all = sql(t, "SELECT id, score, created_min FROM posts");
  for (std::string sort : {"hot", "new", "top"}) {
    std::string url = base + (sort == "hot" ? "/" : "/" + sort);
    EXPECT_EQ(all_pages(c, url), expected_order(all, sort)) << url;
  }
  int64_t books = count(t, "SELECT id FROM forums WHERE name = 'books'");
  auto in_books = sql(t, "SELECT id, score, created_min FROM posts WHERE forum_id = ?1", {books});
  for (std::string sort : {"hot", "new", "top"}) {
    std::string url = base + "/f/books" + (sort == "hot" ? "" : "/" + sort);
    auto r = c.get(url);
    ASSERT_EQ(r.status, 200) << url;
    EXPECT_TRUE(r.has("aria-current=\"page\">" + std::string(sort == "hot" ? "Hot" : sort == "new" ? "New" : "Top")));
    EXPECT_EQ(all_pages(c, url), expected_order(in_books, sort)) << url;
  }
  // Page 2 of the front page by URL.
  auto second = c.get(base + "/new?page=2");
  auto newest = expected_order(all, "new");
  EXPECT_EQ(post_ids(second.body), std::vector<int64_t>(newest.begin() + 25, newest.begin() + 50));
  // Forum names are case-insensitive with one canonical spelling; unknown forums are 404.
  std::string path = site_base_path(t, "reddit");
  auto upper = c.get(base + "/f/BOOKS/top?page=1");
  EXPECT_EQ(upper.status, 302);
  EXPECT_EQ(upper.header("Location"), path + "/f/books/top?page=1");
  EXPECT_EQ(c.get(base + "/f/nosuchforum").status, 404);
  // The forum list shows every forum with its post count.
  auto forums = c.get(base + "/forums");
  for (const auto& f : sql(t, "SELECT name, (SELECT COUNT(*) FROM posts p WHERE p.forum_id = f.id) AS n FROM forums f"))
    EXPECT_TRUE(forums.has("f/" + f["name"].get<std::string>() + "</a></td>")) << f["name"];
}

TEST_F(ForumTest, PostPageShowsTheCommentTree) {
  std::string t;
  std::string base = fresh("reddit", &t);
  // A post with a reply to a reply.
  auto p = sql(t,
               "SELECT p.id, p.title, f.name FROM posts p JOIN forums f ON f.id = p.forum_id WHERE EXISTS (SELECT 1 "
               "FROM comments c JOIN comments q ON q.id = c.parent_id WHERE c.post_id = p.id AND q.parent_id IS NOT "
               "NULL) ORDER BY p.id LIMIT 1")[0];
  int64_t id = p["id"];
  site_client c;
  auto redirect = c.get(base + "/post/" + std::to_string(id));
  ASSERT_EQ(redirect.status, 302);
  std::string canonical = "/f/" + p["name"].get<std::string>() + "/" + std::to_string(id) + "/" +
                          forum::slugify(p["title"].get<std::string>());
  EXPECT_EQ(redirect.header("Location"), site_base_path(t, "reddit") + canonical);
  auto page = c.get(base + canonical);
  ASSERT_EQ(page.status, 200);
  EXPECT_TRUE(page.has("<h1>" + escape_html(p["title"].get<std::string>()) + "</h1>"));
  auto comments = sql(t, "SELECT id, parent_id FROM comments WHERE post_id = ?1", {id});
  EXPECT_TRUE(page.has(std::to_string(comments.size()) + " comments</h2>"));
  // Rebuild the tree from the markup: a comment's parent is the comment whose list item
  // encloses the <ul class="comments"> it sits in.
  std::map<int64_t, int64_t> parent_in_page;         // comment -> enclosing comment (0: top level)
  std::vector<std::pair<bool, int64_t>> open_lists;  // (is a comment list, comment that owns it)
  int64_t last_article = 0;
  std::regex token("<ul[ >]|</ul>|<ul class=\"comments\">|<article id=\"comment-([0-9]+)\"");
  for (std::sregex_iterator it(page.body.begin(), page.body.end(), token), e; it != e; ++it) {
    std::string tok = (*it)[0];
    if (tok == "</ul>") {
      open_lists.pop_back();
    } else if (tok.rfind("<article", 0) == 0) {
      last_article = std::stoll((*it)[1]);
      int64_t owner = 0;
      for (auto l = open_lists.rbegin(); l != open_lists.rend(); ++l)
        if (l->first) {
          owner = l->second;
          break;
        }
      parent_in_page[last_article] = owner;
    } else {
      bool comment_list = page.body.compare(size_t(it->position()), 21, "<ul class=\"comments\">") == 0;
      // A nested comment list belongs to the article just before it.
      bool nested = comment_list && !open_lists.empty() &&
                    std::any_of(open_lists.begin(), open_lists.end(), [](auto& l) { return l.first; });
      open_lists.push_back({comment_list, nested ? last_article : 0});
    }
  }
  ASSERT_EQ(parent_in_page.size(), comments.size());
  for (const auto& cm : comments) {
    int64_t parent = cm["parent_id"].is_null() ? 0 : cm["parent_id"].get<int64_t>();
    EXPECT_EQ(parent_in_page[cm["id"].get<int64_t>()], parent) << "comment " << cm["id"];
  }
  EXPECT_TRUE(page.has("Log in to comment"));
}

TEST_F(ForumTest, SubmitCommentAndReply) {
  std::string t;
  std::string base = fresh("reddit", &t);
  std::string path = site_base_path(t, "reddit");
  site_client c;
  auto anon = c.get(base + "/submit/books");
  EXPECT_EQ(anon.status, 303);
  EXPECT_EQ(anon.header("Location"), path + "/login?next=%2Fsubmit%2Fbooks");
  login(c, base, kMe);
  auto form = c.get(base + "/submit/books");
  ASSERT_EQ(form.status, 200);
  EXPECT_TRUE(unlabelled_controls(form.body).empty());
  EXPECT_TRUE(form.has("<option value=\"books\" selected=\"selected\">f/books</option>"));

  auto invalid = c.post(base + "/submit", {{"forum", "nope"}, {"title", "  "}, {"url", "ftp://x"}, {"body", ""}});
  EXPECT_EQ(invalid.status, 422);
  for (const char* msg : {"There is no forum named &#39;nope&#39;", "Enter a title.",
                          "Enter a web address that starts with http:// or https://"})
    EXPECT_TRUE(invalid.has(msg)) << msg;
  EXPECT_TRUE(invalid.has("value=\"ftp://x\"")) << "the form keeps what was typed";

  const std::string evil = "<script>alert('x')</script> & \"books\"";
  int64_t books = count(t, "SELECT id FROM forums WHERE name = 'books'");
  auto posted =
      c.post(base + "/submit", {{"forum", "books"}, {"title", evil}, {"url", ""}, {"body", "Line one.\n<b>bold</b>"}});
  ASSERT_EQ(posted.status, 303) << posted.body.substr(0, 1500);
  auto row = sql(t, "SELECT * FROM posts ORDER BY id DESC LIMIT 1")[0];
  int64_t id = row["id"];
  EXPECT_EQ(row["title"], evil);
  EXPECT_EQ(row["forum_id"], books);
  EXPECT_EQ(row["user_id"], 1);
  EXPECT_EQ(row["score"], 1);
  EXPECT_TRUE(row["url"].is_null());
  EXPECT_EQ(row["created_at"], seed_now());
  EXPECT_EQ(count(t, "SELECT value FROM post_votes WHERE post_id = ?1 AND user_id = 1", {id}), 1);
  std::string canonical = "/f/books/" + std::to_string(id) + "/" + forum::slugify(evil);
  EXPECT_EQ(posted.header("Location"), path + canonical);
  auto page = c.get(base + canonical);
  EXPECT_TRUE(page.has("Your submission was posted."));
  EXPECT_TRUE(page.has(escape_html(evil)));
  EXPECT_FALSE(page.has("<script>"));
  EXPECT_FALSE(page.has("<b>bold"));
  EXPECT_TRUE(page.has("<p>Line one.</p>"));
  EXPECT_EQ(post_ids(c.get(base + "/f/books/new").body).front(), id);
  EXPECT_EQ(post_ids(c.get(base + "/new").body).front(), id);

  auto link_post =
      c.post(base + "/submit", {{"forum", "technology"}, {"title", "A link"}, {"url", "https://example.org/a?b=1"}});
  ASSERT_EQ(link_post.status, 303);
  EXPECT_EQ(sql(t, "SELECT url FROM posts ORDER BY id DESC LIMIT 1")[0]["url"], "https://example.org/a?b=1");

  // Comment on the first post, then reply to that comment as another user.
  EXPECT_EQ(c.post(base + "/post/" + std::to_string(id) + "/comment", {{"body", "   "}}).status, 422);
  auto commented = c.post(base + "/post/" + std::to_string(id) + "/comment", {{"body", "First! <i>nice</i>"}});
  ASSERT_EQ(commented.status, 303);
  EXPECT_EQ(commented.header("Location"), path + canonical);
  auto cm = sql(t, "SELECT * FROM comments ORDER BY id DESC LIMIT 1")[0];
  EXPECT_EQ(cm["post_id"], id);
  EXPECT_TRUE(cm["parent_id"].is_null());
  EXPECT_EQ(cm["body"], "First! <i>nice</i>");
  EXPECT_EQ(cm["score"], 1);
  int64_t cid = cm["id"];
  site_client other;
  login(other, base, other_user(t));
  auto thread = other.get(base + "/comment/" + std::to_string(cid));
  ASSERT_EQ(thread.status, 200);
  EXPECT_TRUE(thread.has("<label for=\"reply-body\">Reply to " + std::string(kMe)));
  auto replied = other.post(base + "/comment/" + std::to_string(cid) + "/reply", {{"body", "Welcome!"}});
  ASSERT_EQ(replied.status, 303);
  auto reply = sql(t, "SELECT * FROM comments ORDER BY id DESC LIMIT 1")[0];
  EXPECT_EQ(reply["parent_id"], cid);
  EXPECT_EQ(reply["user_id"], 2);
  auto with_reply = c.get(base + canonical);
  EXPECT_TRUE(with_reply.has("First! &lt;i&gt;nice&lt;/i&gt;"));
  EXPECT_TRUE(with_reply.has("2 comments</h2>"));
  size_t parent_at = with_reply.body.find("id=\"comment-" + std::to_string(cid) + "\"");
  size_t reply_at = with_reply.body.find("id=\"comment-" + std::to_string(reply["id"].get<int64_t>()) + "\"");
  ASSERT_NE(reply_at, std::string::npos);
  EXPECT_LT(parent_at, reply_at);
  EXPECT_NE(with_reply.body.substr(parent_at, reply_at - parent_at).find("<ul class=\"comments\">"), std::string::npos);
  EXPECT_EQ(other.post(base + "/comment/999999/reply", {{"body", "x"}}).status, 404);
}

TEST_F(ForumTest, VotesFollowRedditRules) {
  std::string t;
  std::string base = fresh("reddit", &t);
  auto target = sql(t,
                    "SELECT id FROM posts p WHERE user_id NOT IN (1, 2) AND NOT EXISTS (SELECT 1 FROM post_votes v "
                    "WHERE v.post_id = p.id AND v.user_id IN (1, 2)) ORDER BY id LIMIT 1")[0]["id"]
                    .get<int64_t>();
  std::string vote = base + "/post/" + std::to_string(target) + "/vote";
  int64_t s0 = score_of(t, "posts", target);
  site_client anon;
  auto refused = anon.post(vote, {{"direction", "up"}, {"next", "/new"}});
  EXPECT_EQ(refused.status, 303);
  EXPECT_EQ(refused.header("Location"), site_base_path(t, "reddit") + "/login?next=%2Fnew");
  EXPECT_EQ(score_of(t, "posts", target), s0);

  site_client me, other;
  login(me, base, kMe);
  login(other, base, other_user(t));
  auto my_vote = [&] {
    return count(t, "SELECT COALESCE((SELECT value FROM post_votes WHERE post_id = ?1 AND user_id = 1), 0)", {target});
  };
  auto up = me.post(vote, {{"direction", "up"}, {"next", "/new"}});
  EXPECT_EQ(up.status, 303);
  EXPECT_EQ(up.header("Location"), site_base_path(t, "reddit") + "/new");
  EXPECT_EQ(score_of(t, "posts", target), s0 + 1);
  EXPECT_EQ(my_vote(), 1);
  std::string page = me.get(base + "/post/" + std::to_string(target)).header("Location");
  auto shown = me.get(server_->base_url() + page);
  EXPECT_TRUE(shown.has("aria-pressed=\"true\" aria-label=\"Upvote"));
  EXPECT_TRUE(shown.has(std::to_string(s0 + 1) + " point"));
  me.post(vote, {{"direction", "up"}});  // the same vote again takes it back
  EXPECT_EQ(score_of(t, "posts", target), s0);
  EXPECT_EQ(my_vote(), 0);
  me.post(vote, {{"direction", "down"}});
  EXPECT_EQ(score_of(t, "posts", target), s0 - 1);
  EXPECT_EQ(my_vote(), -1);
  me.post(vote, {{"direction", "up"}});  // switching moves the score by two
  EXPECT_EQ(score_of(t, "posts", target), s0 + 1);
  EXPECT_EQ(my_vote(), 1);
  other.post(vote, {{"direction", "up"}});  // one vote per user
  EXPECT_EQ(score_of(t, "posts", target), s0 + 2);
  EXPECT_EQ(count(t, "SELECT COUNT(*) FROM post_votes WHERE post_id = ?1 AND user_id IN (1, 2)", {target}), 2);
  EXPECT_EQ(me.post(vote, {{"direction", "sideways"}}).status, 422);
  EXPECT_EQ(score_of(t, "posts", target), s0 + 2);

  // Comments follow the same rules.
  int64_t cid = sql(t,
                    "SELECT id FROM comments c WHERE user_id NOT IN (1, 2) AND NOT EXISTS (SELECT 1 FROM "
                    "comment_votes v WHERE v.comment_id = c.id AND v.user_id IN (1, 2)) ORDER BY id LIMIT 1")[0]["id"];
  std::string cvote = base + "/comment/" + std::to_string(cid) + "/vote";
  int64_t c0 = score_of(t, "comments", cid);
  me.post(cvote, {{"direction", "down"}});
  EXPECT_EQ(score_of(t, "comments", cid), c0 - 1);
  me.post(cvote, {{"direction", "down"}});
  EXPECT_EQ(score_of(t, "comments", cid), c0);
  other.post(cvote, {{"direction", "up"}});
  me.post(cvote, {{"direction", "up"}});
  EXPECT_EQ(score_of(t, "comments", cid), c0 + 2);
  EXPECT_EQ(count(t, "SELECT SUM(value) FROM comment_votes WHERE comment_id = ?1 AND user_id IN (1, 2)", {cid}), 2);
}

TEST_F(ForumTest, EditAndDeleteOwnContentOnly) {
  std::string t;
  std::string base = fresh("reddit", &t);
  site_client me;
  login(me, base, kMe);
  int64_t mine = sql(t, "SELECT id FROM posts WHERE user_id = 1 ORDER BY id LIMIT 1")[0]["id"];
  int64_t theirs = sql(t, "SELECT id FROM posts WHERE user_id <> 1 ORDER BY id LIMIT 1")[0]["id"];
  std::string m = base + "/post/" + std::to_string(mine), o = base + "/post/" + std::to_string(theirs);

  auto form = me.get(m + "/edit");
  ASSERT_EQ(form.status, 200);
  EXPECT_TRUE(unlabelled_controls(form.body).empty());
  EXPECT_EQ(me.post(m + "/edit", {{"title", ""}, {"url", ""}, {"body", "x"}}).status, 422);
  auto saved = me.post(m + "/edit", {{"title", "Edited title"}, {"url", ""}, {"body", "New body."}});
  ASSERT_EQ(saved.status, 303);
  auto row = sql(t, "SELECT * FROM posts WHERE id = ?1", {mine})[0];
  EXPECT_EQ(row["title"], "Edited title");
  EXPECT_EQ(row["body"], "New body.");
  EXPECT_EQ(row["edited_at"], seed_now());
  EXPECT_NE(saved.header("Location").find("/edited-title"), std::string::npos);

  std::string before = store().content_hash(t, "reddit");
  auto forbidden = me.get(o + "/edit");
  EXPECT_EQ(forbidden.status, 403);
  EXPECT_TRUE(forbidden.has("You can only edit or delete your own posts."));
  EXPECT_TRUE(forbidden.has("<nav aria-label=\"Main\">")) << "403 in the site's frame";
  EXPECT_EQ(me.post(o + "/edit", {{"title", "Hijacked"}, {"url", ""}, {"body", ""}}).status, 403);
  EXPECT_EQ(me.post(o + "/delete", {}).status, 403);
  int64_t their_comment = sql(t, "SELECT id FROM comments WHERE user_id <> 1 AND deleted = 0 LIMIT 1")[0]["id"];
  std::string oc = base + "/comment/" + std::to_string(their_comment);
  EXPECT_EQ(me.get(oc + "/edit").status, 403);
  EXPECT_EQ(me.post(oc + "/edit", {{"body", "Hijacked"}}).status, 403);
  EXPECT_EQ(me.post(oc + "/delete", {}).status, 403);
  EXPECT_EQ(store().content_hash(t, "reddit"), before) << "refused changes leave no trace";

  // My comment with a reply becomes [deleted]; my comment without replies disappears.
  me.post(o + "/comment", {{"body", "Parent comment"}});
  int64_t parent = sql(t, "SELECT MAX(id) AS id FROM comments")[0]["id"];
  me.post(base + "/comment/" + std::to_string(parent) + "/reply", {{"body", "Child comment"}});
  int64_t child = sql(t, "SELECT MAX(id) AS id FROM comments")[0]["id"];
  EXPECT_EQ(me.post(base + "/comment/" + std::to_string(child) + "/edit", {{"body", "Child, edited"}}).status, 303);
  EXPECT_EQ(sql(t, "SELECT body FROM comments WHERE id = ?1", {child})[0]["body"], "Child, edited");
  EXPECT_EQ(me.get(base + "/comment/" + std::to_string(parent) + "/delete").status, 200);
  EXPECT_EQ(me.post(base + "/comment/" + std::to_string(parent) + "/delete", {}).status, 303);
  auto soft = sql(t, "SELECT deleted, body FROM comments WHERE id = ?1", {parent})[0];
  EXPECT_EQ(soft["deleted"], 1);
  EXPECT_EQ(soft["body"], "");
  auto page = me.get(server_->base_url() + me.get(o).header("Location"));
  EXPECT_TRUE(page.has("aria-label=\"Comment by [deleted]\""));
  EXPECT_FALSE(page.has("Parent comment"));
  EXPECT_TRUE(page.has("Child, edited"));
  EXPECT_EQ(me.post(base + "/comment/" + std::to_string(parent) + "/reply", {{"body", "x"}}).status, 422);
  EXPECT_EQ(me.post(base + "/comment/" + std::to_string(child) + "/delete", {}).status, 303);
  EXPECT_EQ(count(t, "SELECT COUNT(*) FROM comments WHERE id = ?1", {child}), 0);
  EXPECT_EQ(count(t, "SELECT COUNT(*) FROM comment_votes WHERE comment_id = ?1", {child}), 0);

  // Deleting my post removes it with its comments and votes.
  me.post(m + "/comment", {{"body", "On my own post"}});
  ASSERT_GT(count(t, "SELECT COUNT(*) FROM comments WHERE post_id = ?1", {mine}), 0);
  auto gone = me.post(m + "/delete", {});
  EXPECT_EQ(gone.status, 303);
  EXPECT_EQ(count(t, "SELECT COUNT(*) FROM posts WHERE id = ?1", {mine}), 0);
  EXPECT_EQ(count(t, "SELECT COUNT(*) FROM comments WHERE post_id = ?1", {mine}), 0);
  EXPECT_EQ(count(t, "SELECT COUNT(*) FROM post_votes WHERE post_id = ?1", {mine}), 0);
  EXPECT_TRUE(me.get(server_->base_url() + gone.header("Location")).has("was deleted."));
  EXPECT_EQ(me.get(m).status, 404);
}

TEST_F(ForumTest, UserPagesAndSearch) {
  std::string t;
  std::string base = fresh("reddit", &t);
  site_client c;
  auto profile = c.get(base + "/user/" + std::string(kMe));
  ASSERT_EQ(profile.status, 200);
  int64_t posts = count(t, "SELECT COUNT(*) FROM posts WHERE user_id = 1");
  EXPECT_TRUE(profile.has("Submissions (" + std::to_string(posts) + ")"));
  int64_t karma = count(t,
                        "SELECT (SELECT SUM(score) FROM posts WHERE user_id = 1) + "
                        "(SELECT SUM(score) FROM comments WHERE user_id = 1 AND deleted = 0)");
  EXPECT_TRUE(profile.has("Karma: " + std::to_string(karma) + "."));
  auto newest_first = ids_in(profile.body, "<ol class=\"posts\">", "</ol>", "<h3><a href=\"[^\"]*/f/[^/\"]+/([0-9]+)/");
  std::vector<int64_t> expected;
  for (const auto& r : sql(t, "SELECT id FROM posts WHERE user_id = 1 ORDER BY created_min DESC, id DESC LIMIT 25"))
    expected.push_back(r["id"]);
  EXPECT_EQ(newest_first, expected);
  EXPECT_EQ(
      int64_t(ids_in(profile.body, "<ol class=\"user-comments\">", "</ol>", "/comment/([0-9]+)\">Permalink").size()),
      std::min<int64_t>(100, count(t, "SELECT COUNT(*) FROM comments WHERE user_id = 1")));
  EXPECT_EQ(c.get(base + "/user/nobody-here").status, 404);

  // Two words of a seeded title, in another case.
  std::string title = sql(t, "SELECT title FROM posts WHERE id = 50")[0]["title"];
  std::istringstream words(title);
  std::string w1, w2;
  words >> w1 >> w2;
  for (auto& ch : w2) ch = char(std::toupper(static_cast<unsigned char>(ch)));
  for (std::string q : {std::string("Dune"), std::string("worth learning"), w1 + "  " + w2}) {
    std::vector<sql_value> params;
    std::string where = "1";
    std::istringstream in(q);
    for (std::string w; in >> w;) {
      params.push_back("%" + w + "%");
      std::string n = "?";
      n += std::to_string(params.size());
      where += " AND (title LIKE " + n + " OR body LIKE " + n + ")";
    }
    std::vector<int64_t> want;
    for (const auto& r : sql(t, "SELECT id FROM posts WHERE " + where + " ORDER BY created_min DESC, id DESC", params))
      want.push_back(r["id"]);
    ASSERT_FALSE(want.empty()) << q;
    auto r = c.get(base + "/search?q=" + url_encode(q, true));
    ASSERT_EQ(r.status, 200);
    EXPECT_TRUE(r.has(std::to_string(want.size()) + (want.size() == 1 ? " post" : " posts") + " found."));
    EXPECT_EQ(all_pages(c, base + "/search?q=" + url_encode(q, true)), want) << q;
  }
  EXPECT_TRUE(c.get(base + "/search?q=zzznothing").has("0 posts found."));
}

TEST_F(ForumTest, TenantsAreIsolatedAndResetRestoresTheSeed) {
  std::string main_hash = store().content_hash("main", "reddit");
  std::string ta, tb;
  std::string base_a = fresh("reddit", &ta), base_b = fresh("reddit", &tb);
  auto writer = [](std::string base, std::string tag) {
    site_client c;
    login(c, base, kMe);
    for (int i = 0; i < 5; ++i) {
      auto r =
          c.post(base + "/submit", {{"forum", "books"}, {"title", tag + " post " + std::to_string(i)}, {"body", "b"}});
      EXPECT_EQ(r.status, 303);
    }
  };
  std::thread x(writer, base_a, "alpha"), y(writer, base_b, "beta");
  x.join();
  y.join();
  EXPECT_EQ(count(ta, "SELECT COUNT(*) FROM posts WHERE title LIKE 'alpha%'"), 5);
  EXPECT_EQ(count(ta, "SELECT COUNT(*) FROM posts WHERE title LIKE 'beta%'"), 0);
  EXPECT_EQ(count(tb, "SELECT COUNT(*) FROM posts WHERE title LIKE 'beta%'"), 5);
  EXPECT_EQ(count(tb, "SELECT COUNT(*) FROM posts WHERE title LIKE 'alpha%'"), 0);
  EXPECT_EQ(store().content_hash("main", "reddit"), main_hash);
  site_client c;
  login(c, base_a, kMe);
  EXPECT_EQ(c.get(base_a + "/submit").status, 200);
  EXPECT_EQ(c.get(base_b + "/submit").status, 303) << "a login belongs to one tenant";

  c.post(base_a + "/post/3/vote", {{"direction", "down"}});
  c.post(base_a + "/post/3/comment", {{"body", "hello"}});
  ASSERT_NE(store().content_hash(ta, "reddit"), store().snapshot_hash("reddit"));
  store().reset_tenant(ta);
  EXPECT_EQ(store().content_hash(ta, "reddit"), store().snapshot_hash("reddit"));
  EXPECT_EQ(c.get(base_a + "/submit").status, 303) << "reset logs everyone out";
}

TEST_F(ForumTest, PagesRenderWithSemanticMarkup) {
  std::string t;
  std::string base = fresh("reddit", &t);
  site_client c;
  login(c, base, kMe);
  int64_t mine = sql(t, "SELECT id FROM posts WHERE user_id = 1 ORDER BY id LIMIT 1")[0]["id"];
  int64_t my_comment = sql(t, "SELECT id FROM comments WHERE user_id = 1 ORDER BY id LIMIT 1")[0]["id"];
  std::string post_page = c.get(base + "/post/" + std::to_string(mine)).header("Location");
  std::string rel = post_page.substr(site_base_path(t, "reddit").size());
  for (std::string p : std::vector<std::string>{"/", "/new", "/top", "/forums", "/f/books", "/f/gaming/top", rel,
                                                "/comment/" + std::to_string(my_comment), "/user/" + std::string(kMe),
                                                "/submit", "/search?q=dune", "/post/" + std::to_string(mine) + "/edit",
                                                "/comment/" + std::to_string(my_comment) + "/edit", "/login"}) {
    auto r = c.get(base + p);
    EXPECT_EQ(r.status, 200) << p;
    for (const char* tag : {"<nav aria-label=\"Main\">", "<main>", "<h1>", "<form role=\"search\"", "<footer>"})
      EXPECT_TRUE(r.has(tag)) << p << " lacks " << tag;
    EXPECT_FALSE(r.has("<script")) << p;
    EXPECT_TRUE(unlabelled_controls(r.body).empty()) << p;
  }
  auto home = c.get(base + "/");
  EXPECT_TRUE(home.has("Signed in as " + std::string(kMe)));
  EXPECT_TRUE(home.has("/user/" + std::string(kMe) + "\">Profile</a>"));
}
