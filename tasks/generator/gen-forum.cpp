// gen-forum.cpp: forum ("reddit", VWA's Postmill) task templates: sorted forum pages and
// searches (url_match), questions about posts, forums and users (string_match), submitting,
// commenting, replying, voting and editing (program_html, with func: helpers for the
// user's newest post and comment), and infeasible requests (N/A).
#include <stdexcept>

#include "generator/gen-templates.h"
#include "sites/site-forum.h"

namespace kvarena::tasks::gen {
namespace {

namespace fo = sites::forum;

const char* const k_site = "reddit";
const char* const k_home = "__REDDIT__";

draft base(const std::string& name, int template_id, const std::string& intent_template) {
  return site_draft(k_site, k_home, name, template_id, intent_template);
}

std::string url(const std::string& rel) { return std::string(k_home) + rel; }

}  // namespace

const char* const k_reddit_post_sql =
    "SELECT p.id, p.title, p.body, p.url, p.score, p.user_id, u.username, f.name AS forum, f.title AS forum_title, "
    "(SELECT COUNT(*) FROM comments c WHERE c.post_id = p.id AND c.deleted = 0) AS comments, "
    "(SELECT COUNT(*) FROM post_votes v WHERE v.post_id = p.id AND v.user_id = 1) AS my_votes "
    "FROM posts p JOIN users u ON u.id = p.user_id JOIN forums f ON f.id = p.forum_id ";

std::string reddit_post_path(const json& p) {
  fo::post_row r;
  r.id = num(p, "id");
  r.forum_name = str(p, "forum");
  r.title = str(p, "title");
  return fo::post_path(r);
}

// The forum search's result count for `q` (every word in the title or the body).
int64_t reddit_search_count(const site_data& data, const std::string& q) {
  return site_search_count(data, k_site, "posts", {"title", "body"}, q);
}

std::vector<json> reddit_nameable_posts(const site_data& data, const std::string& extra_where) {
  json rows = data.rows(k_site, std::string(k_reddit_post_sql) + "WHERE (SELECT COUNT(*) FROM posts o WHERE o.title = "
                                    "p.title) = 1 AND " + extra_where + " ORDER BY p.id");
  std::vector<json> out;
  for (const json& r : rows)
    if (reddit_search_count(data, str(r, "title")) <= fo::kPostsPerPage) out.push_back(r);
  if (out.empty()) throw std::runtime_error("generator: no forum post fits: " + extra_where);
  return out;
}

void reddit_find_post(plan_builder& p, const std::string& title) {
  search_and_open(p, title);
}

void reddit_open_forum(plan_builder& p, const std::string& forum) {
  p.click("link", "Forums").click("link", "f/" + forum);
}

namespace {

// Forums whose top post (by score) is unique.
std::vector<json> forums_with_clear_top(const site_data& data) {
  json forums = data.rows(k_site, "SELECT id, name, title FROM forums ORDER BY name COLLATE NOCASE, id");
  std::vector<json> out;
  for (const json& f : forums) {
    json top = data.rows(k_site, std::string(k_reddit_post_sql) + "WHERE p.forum_id = " + std::to_string(num(f, "id")) +
                                     " ORDER BY p.score DESC, p.created_min DESC, p.id DESC LIMIT 2");
    if (top.size() == 2 && num(top[0], "score") > num(top[1], "score")) out.push_back({f, top[0]});
  }
  if (out.size() < 4) throw std::runtime_error("generator: too few forums with a clear top post");
  return out;
}

// -------------------------------------------------------------------------------------------

void navigation(const site_data& data, std::vector<draft>& out) {
  json forums = data.rows(k_site, "SELECT id, name, title FROM forums ORDER BY name COLLATE NOCASE, id");
  const struct {
    size_t index;
    const char* sort;
    const char* link;
    const char* words;
  } sorted[] = {{3, "top", "Top", "with the highest-scoring posts first"}, {11, "new", "New", "with the newest posts first"}};
  for (const auto& s : sorted) {
    const json& f = forums.at(s.index);
    draft d = base("forum_sorted", 301, "Show me the {forum} forum {order}.");
    d.instantiation = {{"forum", str(f, "title")}, {"order", s.words}};
    expect_url(d, url("/f/" + str(f, "name") + "/" + s.sort));
    reddit_open_forum(d.plan, str(f, "name"));
    d.plan.click("link", s.link).stop();
    out.push_back(d);
  }
  {
    draft d = base("search", 302, "Search the forum for posts about \"{q}\".");
    d.instantiation = {{"q", "space telescope"}};
    expect_url(d, url("/search?q=space+telescope"), /*gold_in_pred=*/true);
    d.plan.type("searchbox", "Search", "space telescope", true).stop();
    out.push_back(d);
  }
}

void questions(const site_data& data, std::vector<draft>& out) {
  std::vector<json> tops = forums_with_clear_top(data);
  for (size_t k = 0; k < 3; ++k) {
    const json& f = spread(tops, k * 2 + 1, 6)[0];
    const json& p = spread(tops, k * 2 + 1, 6)[1];
    draft d = base("most_upvoted", 303, "Which post in f/{forum} has the most upvotes? Give its title.");
    d.instantiation = {{"forum", str(f, "name")}};
    expect_must_include(d, {str(p, "title")});
    reddit_open_forum(d.plan, str(f, "name"));
    d.plan.click("link", "Top").expect(str(p, "title")).stop(str(p, "title"));
    d.reasoning = "medium";
    out.push_back(d);
  }
  std::vector<json> posts = reddit_nameable_posts(data, "p.user_id != 1");
  for (size_t k = 0; k < 2; ++k) {
    const json& p = spread(posts, k * 5 + 2, 10);
    draft d = base("post_author", 304, "Who submitted the post \"{title}\"? Give the username.");
    d.instantiation = {{"title", str(p, "title")}};
    expect_must_include(d, {str(p, "username")});
    reddit_find_post(d.plan, str(p, "title"));
    d.plan.expect(str(p, "username")).stop(str(p, "username"));
    out.push_back(d);
  }
  {
    const json& p = spread(posts, 4, 10);
    draft d = base("comment_count", 305, "How many comments does the post \"{title}\" have?");
    d.instantiation = {{"title", str(p, "title")}};
    std::string n = std::to_string(num(p, "comments"));
    expect_required_values(d, {"== " + n});
    reddit_find_post(d.plan, str(p, "title"));
    d.plan.expect(n + (num(p, "comments") == 1 ? " comment" : " comments")).stop(n);
    out.push_back(d);
  }
  {
    const json& p = spread(posts, 6, 10);
    draft d = base("post_score", 306, "How many points does the post \"{title}\" have?");
    d.instantiation = {{"title", str(p, "title")}};
    std::string n = std::to_string(num(p, "score"));
    expect_required_values(d, {"== " + n});
    reddit_find_post(d.plan, str(p, "title"));
    const std::string shown = sites::forum::points(num(p, "score"));  // "1 point", "7 points"
    d.plan.expect(shown).stop(shown);
    out.push_back(d);
  }
  {
    json f = data.row(k_site, "SELECT f.name, COUNT(*) AS n FROM forums f JOIN posts p ON p.forum_id = f.id GROUP BY "
                              "f.id ORDER BY f.name COLLATE NOCASE LIMIT 1 OFFSET 7");
    draft d = base("forum_post_count", 307, "How many posts are there in f/{forum}?");
    d.instantiation = {{"forum", str(f, "name")}};
    std::string n = std::to_string(num(f, "n"));
    expect_required_values(d, {"== " + n});
    reddit_open_forum(d.plan, str(f, "name"));
    d.plan.expect(n + " posts.").stop(n);
    out.push_back(d);
  }
  {
    json u = data.row(k_site, "SELECT u.username, COUNT(*) AS n FROM users u JOIN posts p ON p.user_id = u.id WHERE "
                              "u.id != 1 GROUP BY u.id ORDER BY n DESC, u.id LIMIT 1");
    draft d = base("user_submissions", 308, "How many submissions has the user {user} made?");
    d.instantiation = {{"user", str(u, "username")}};
    std::string n = std::to_string(num(u, "n"));
    expect_required_values(d, {"== " + n});
    d.plan.go(url("/user/" + str(u, "username"))).expect("Submissions (" + n + ")").stop(n);
    d.reasoning = "medium";
    out.push_back(d);
  }
}

void submissions(const site_data& data, std::vector<draft>& out) {
  const struct {
    const char* forum;
    const char* title;
    const char* link;
    const char* body;
    int form;  // 0: Submit in the nav + forum select; 1: the forum's own submit link
  } k_posts[] = {
      {"books", "Looking for novels like Project Hail Mary", "",
       "I loved the science and the humour. What should I read next?", 0},
      {"pittsburgh", "Best coffee near the Strip District?", "",
       "Visiting next week and would like a quiet place to work in the mornings.", 1},
      {"technology", "A readable history of the transistor", "https://www.example-news.com/tech/transistor-history",
       "", 0},
  };
  for (size_t k = 0; k < 3; ++k) {
    const auto& s = k_posts[k];
    bool link_post = *s.link;
    draft d = base(link_post ? "submit_link" : "submit_text", 309,
                   link_post ? "Submit a link post to f/{forum} titled \"{title}\" that links to {url}."
                             : "Post in f/{forum} a text post titled \"{title}\" with the body \"{body}\".");
    d.instantiation = {{"forum", s.forum}, {"title", s.title}};
    if (link_post) d.instantiation["url"] = s.link;
    else d.instantiation["body"] = s.body;
    std::string page = k == 1 ? "last" : "func:reddit_get_latest_post_url('__REDDIT__')";
    auto title = html_target(page, qs("main h1"));
    auto rest = html_target("last", qs("main", "innerText"));
    expect_html(d, {with_exact(title, s.title),
                    with_must_include(rest, {std::string("f/") + s.forum, link_post ? s.link : s.body})});
    if (s.form == 0) {
      d.plan.click("link", "Submit").type("combobox", "Forum (required)", std::string("f/") + s.forum);
    } else {
      reddit_open_forum(d.plan, s.forum);
      d.plan.click("link", "Submit a new post");
    }
    d.plan.type("textbox", "Title (required)", s.title);
    if (link_post) d.plan.type("textbox", "URL (optional, for a link post)", s.link);
    else d.plan.type("textbox", "Body (optional)", s.body);
    d.plan.click("button", "Submit").expect("Your submission was posted.").stop();
    d.overall = "medium";
    out.push_back(d);
  }
  (void)data;
}

void comments_and_votes(const site_data& data, std::vector<draft>& out) {
  std::vector<json> posts = reddit_nameable_posts(data, "p.user_id != 1");
  const char* const texts[] = {"Thanks for sharing, this was a great read.", "I had the same experience last year."};
  for (size_t k = 0; k < 2; ++k) {
    const json& p = spread(posts, k * 3 + 1, 9);
    draft d = base("comment", 310, "Comment \"{text}\" on the post \"{title}\".");
    d.instantiation = {{"text", texts[k]}, {"title", str(p, "title")}};
    auto mine = html_target("func:reddit_get_latest_comment_url('__REDDIT__')", qs("main", "innerText"));
    auto thread = html_target(url(reddit_post_path(p)), "");
    expect_html(d, {with_must_include(mine, {texts[k], str(p, "title")}), with_must_include(thread, {texts[k]})});
    reddit_find_post(d.plan, str(p, "title"));
    d.plan.type("textbox", "Comment (required)", texts[k]).click("button", "Post comment").stop();
    d.overall = "medium";
    out.push_back(d);
  }
  {
    // Reply to the first top-level comment shown (comments are shown by score, then id).
    std::vector<json> with_comments;
    for (const json& p : posts) {
      json c = data.rows(k_site, "SELECT c.id, c.deleted, u.username FROM comments c JOIN users u ON u.id = c.user_id "
                                 "WHERE c.post_id = " + std::to_string(num(p, "id")) +
                                     " AND c.parent_id IS NULL ORDER BY c.score DESC, c.id ASC LIMIT 1");
      if (!c.empty() && num(c[0], "deleted") == 0) with_comments.push_back({p, c[0]});
    }
    const json& p = spread(with_comments, 3, 7)[0];
    const json& c = spread(with_comments, 3, 7)[1];
    std::string text = "Agreed, well put.";
    draft d = base("reply", 311, "Reply \"{text}\" to the top comment, by {user}, on the post \"{title}\".");
    d.instantiation = {{"text", text}, {"user", str(c, "username")}, {"title", str(p, "title")}};
    auto mine = html_target("func:reddit_get_latest_comment_url('__REDDIT__')", qs("main", "innerText"));
    auto parent = html_target(url("/comment/" + std::to_string(num(c, "id"))), qs("main", "innerText"));
    expect_html(d, {with_must_include(mine, {text, "Parent comment"}), with_must_include(parent, {text})});
    reddit_find_post(d.plan, str(p, "title"));
    d.plan.click("link", "Reply")
        .type("textbox", "Reply to " + str(c, "username") + " (required)", text)
        .click("button", "Post reply")
        .stop();
    d.reasoning = "medium";
    d.overall = "medium";
    out.push_back(d);
  }
  std::vector<json> unvoted = reddit_nameable_posts(data, "p.user_id != 1 AND p.id NOT IN (SELECT post_id FROM post_votes "
                                                   "WHERE user_id = 1)");
  const struct {
    const char* verb;
    const char* button;
    int delta;
  } votes[] = {{"Upvote", "Upvote", 1}, {"Downvote", "Downvote", -1}, {"Upvote", "Upvote", 1}};
  for (size_t k = 0; k < 3; ++k) {
    const json& p = spread(unvoted, k * 4 + 1, 12);
    draft d = base(std::string(votes[k].verb) == "Upvote" ? "upvote" : "downvote", 312, "{verb} the post \"{title}\".");
    d.instantiation = {{"verb", votes[k].verb}, {"title", str(p, "title")}};
    auto score = html_target(url(reddit_post_path(p)), qs("main > .vote .score"));
    expect_html(d, {with_exact(score, sites::forum::points(num(p, "score") + votes[k].delta))});
    if (k == 2) {  // from the list of search results instead of the post page
      d.intent_template = "{verb} the post \"{title}\" in f/{forum}.";
      d.instantiation["forum"] = str(p, "forum");
      d.plan.type("searchbox", "Search", str(p, "title"), true);
    } else {
      reddit_find_post(d.plan, str(p, "title"));
    }
    d.plan.click("button", std::string(votes[k].button) + " " + str(p, "title")).stop();
    out.push_back(d);
  }
  {
    json mine = data.rows(k_site, std::string(k_reddit_post_sql) + "WHERE p.user_id = 1 AND (SELECT COUNT(*) FROM posts o "
                                                          "WHERE o.user_id = 1 AND o.title = p.title) = 1 "
                                                          "ORDER BY p.created_min DESC, p.id DESC");
    if (mine.size() < 3) throw std::runtime_error("generator: the forum user has fewer than 3 posts");
    const json& p = mine.at(2);
    std::string title = "[Update] " + str(p, "title");
    draft d = base("edit_title", 313, "Change the title of my post \"{title}\" to \"{new_title}\".");
    d.instantiation = {{"title", str(p, "title")}, {"new_title", title}};
    auto h1 = html_target(url("/post/" + std::to_string(num(p, "id"))), qs("main h1"));
    expect_html(d, {with_exact(h1, title)});
    d.plan.click("link", "Profile")
        .click("link", str(p, "title"))
        .click("link", "Edit post")
        .clear("textbox", "Title (required)")
        .type("textbox", "Title (required)", title)
        .click("button", "Save")
        .stop();
    d.overall = "medium";
    out.push_back(d);
  }
}

void infeasible(const site_data& data, std::vector<draft>& out) {
  {
    if (!data.rows(k_site, "SELECT id FROM forums WHERE name = 'knitting'").empty())
      throw std::runtime_error("generator: a knitting forum exists");
    draft d = base("missing_forum", 314, "Post \"{title}\" in f/{forum}.");
    d.instantiation = {{"title", "Favourite sock patterns?"}, {"forum", "knitting"}};
    expect_na(d, "There is no f/knitting forum on the site.");
    d.plan.click("link", "Forums").stop("N/A");
    d.reasoning = "medium";
    out.push_back(d);
  }
  {
    std::vector<json> posts = reddit_nameable_posts(data, "p.user_id != 1");
    const json& p = spread(posts, 8, 10);
    draft d = base("edit_others_post", 315, "Edit the post \"{title}\" so that its title ends with \" (solved)\".");
    d.instantiation = {{"title", str(p, "title")}};
    expect_na(d, "The post was submitted by " + str(p, "username") + "; only its author can edit it.");
    reddit_find_post(d.plan, str(p, "title"));
    d.plan.stop("N/A");
    d.reasoning = "hard";
    out.push_back(d);
  }
}

}  // namespace

void reddit_templates(const site_data& data, std::vector<draft>& out) {
  navigation(data, out);
  questions(data, out);
  submissions(data, out);
  comments_and_votes(data, out);
  infeasible(data, out);
}

}  // namespace kvarena::tasks::gen
