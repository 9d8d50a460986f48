// site-forum-browse.cpp: the public forum pages (front page, forum list, a forum, a post
// with its comment tree, one comment's thread, a user's page, search), the route table
// and the page frame.
#include "site-auth.h"
#include "picture-pages.h"
#include "site-forum.h"

namespace kvarena::sites {

using namespace forum;

void site_forum::add_routes(site_router& r) const {
  add_browse_routes(r);
  add_action_routes(r);
  add_picture_routes(r, "post_pictures");
}

page_chrome site_forum::chrome(const page_context& ctx) const {
  page_chrome c;
  c.site_title = title();
  c.nav = {{"Home", ctx.url("/")}, {"Forums", ctx.url("/forums")}, {"Submit", ctx.url("/submit")}};
  if (ctx.user) c.nav.push_back({"Profile", ctx.url("/user/" + ctx.user->username)});
  c.search_action = ctx.url("/search");
  c.search_placeholder = "Search posts";
  if (ctx.req.path == ctx.url("/search")) c.search_value = ctx.req.query.get("q");
  c.footer = "Postmill: a local test forum of kvarena.";
  return c;
}

namespace {

int64_t viewer(const page_context& ctx) { return ctx.user ? ctx.user->id : 0; }

html listing(const page_context& ctx, const post_filter& f, const std::string& base_path) {
  auto page = find_posts(ctx.db, f, viewer(ctx));
  std::string path = f.sort == "hot" ? (base_path.empty() ? "/" : base_path) : base_path + "/" + f.sort;
  return sort_nav(ctx, base_path, f.sort) + post_list(ctx, page.rows) + pagination(ctx, page, path, "");
}

html forum_sidebar(const page_context& ctx, const forum_row& f) {
  return element("aside", {{"aria-label", "About this forum"}},
                 element("h2", text("About f/" + f.name)) + element("p", text(f.description)) +
                     element("p", text(std::to_string(f.posts) + (f.posts == 1 ? " post" : " posts") + ". Created " +
                                       f.created_at.substr(0, 10) + ".")) +
                     element("p", link(ctx.url("/submit/" + f.name), "Submit a new post")));
}

}  // namespace

void site_forum::add_browse_routes(site_router& r) const {
  add_listing_routes(r);
  add_post_page_routes(r);
  add_comment_page_routes(r);
  add_user_page_routes(r);
  add_search_routes(r);
}

// Post listings: the front page's sort tabs, the forum list, each forum's tabs.
void site_forum::add_listing_routes(site_router& r) const {
  for (const auto& sort : post_sorts()) {
    std::string path = sort == "hot" ? "/" : "/" + sort;
    r.add("GET", path, [this, sort](page_context& ctx) {
      post_filter f;
      f.sort = sort;
      f.page = page_param(ctx.req.query);
      std::string label = sort == "hot" ? "Hot" : sort == "new" ? "New" : "Top";
      return render(ctx, label + " posts in all forums", listing(ctx, f, ""));
    });
  }

  r.add("GET", "/forums", [this](page_context& ctx) {
    html body;
    for (const auto& f : load_forums(ctx.db))
      body += element("tr", element("td", link(ctx.url("/f/" + f.name), "f/" + f.name)) + element("td", text(f.title)) +
                                element("td", text(f.description)) + element("td", text(std::to_string(f.posts))));
    html head = element("tr", element("th", {{"scope", "col"}}, text("Forum")) +
                                  element("th", {{"scope", "col"}}, text("Title")) +
                                  element("th", {{"scope", "col"}}, text("Description")) +
                                  element("th", {{"scope", "col"}}, text("Posts")));
    return render(ctx, "List of forums", element("table", element("thead", head) + element("tbody", body)));
  });

  // Listing tabs before the post pattern: "/f/books/new" is not post "new".
  for (const auto& sort : post_sorts()) {
    std::string pattern = sort == "hot" ? "/f/{forum}" : "/f/{forum}/" + sort;
    r.add("GET", pattern, [this, sort](page_context& ctx) {
      auto f = find_forum(ctx.db, ctx.params["forum"]);
      if (!f)
        return error_page(ctx, 404, "There is no forum named '" + ctx.params["forum"] + "'. See the list of forums.");
      std::string base = "/f/" + f->name;
      if (f->name != ctx.params["forum"]) {  // another capitalisation: one canonical URL
        size_t q = ctx.req.target.find('?');
        return http_response::redirect(ctx.url(sort == "hot" ? base : base + "/" + sort) +
                                           (q == std::string::npos ? "" : ctx.req.target.substr(q)),
                                       302);
      }
      post_filter pf;
      pf.forum_id = f->id;
      pf.sort = sort;
      pf.page = page_param(ctx.req.query);
      html content = element("p", {{"class", "forum-name"}}, text("f/" + f->name)) + forum_sidebar(ctx, *f) +
                     element("section", {{"aria-label", "Posts"}}, listing(ctx, pf, base));
      return render(ctx, f->title, content);
    });
  }
}

// One post with its comment tree, under each of its URLs.
void site_forum::add_post_page_routes(site_router& r) const {
  // A post: /f/{forum}/{id}/{slug}; any other spelling redirects to it.
  auto post_page = [this](page_context& ctx) {
    auto id = ctx.param_id("id");
    auto p = id ? get_post(ctx.db, *id, viewer(ctx)) : std::nullopt;
    if (!p) return error_page(ctx, 404, "There is no post with this number; it may have been deleted.");
    std::string canonical = post_path(*p);
    if (ctx.req.path != ctx.url(canonical)) return http_response::redirect(ctx.url(canonical), 302);
    std::string here = "/post/" + std::to_string(p->id);
    html content = post_summary_line(ctx, *p);
    if (!p->url.empty())
      content += element("p", {{"class", "link"}}, text("Link: ") + element("a", {{"href", p->url}}, text(p->url)));
    content += text_paragraphs(p->body, true);
    content += vote_box(ctx, ctx.url(here + "/vote"), p->score, p->my_vote, p->title);
    if (ctx.user && ctx.user->id == p->user_id)
      content += list({link(ctx.url(here + "/edit"), "Edit post"), link(ctx.url(here + "/delete"), "Delete post")},
                      "ul", "actions");
    html add = ctx.user ? comment_form(ctx, here + "/comment", "comment-body", "Comment", "", "", "Post comment")
                        : element("p", link(ctx.url("/login?next=" + url_encode(canonical)), "Log in to comment"));
    auto comments = post_comments(ctx.db, p->id, viewer(ctx));
    content += element("section", {{"aria-labelledby", "comments-heading"}},
                       element("h2", {{"id", "comments-heading"}},
                               text(std::to_string(p->comments) + (p->comments == 1 ? " comment" : " comments"))) +
                           add + comment_tree(ctx, comments, 0));
    // An image post's picture, last in <main> (the stylesheet shows it under the body) with
    // an empty alt, as image submissions often have: only the nodes after it get new ids.
    content += picture_figure(ctx, "post_pictures", p->id, "", "post-image");
    return render(ctx, p->title, content);
  };
  r.add("GET", "/f/{forum}/{id}", post_page);
  r.add("GET", "/f/{forum}/{id}/{slug}", post_page);
  r.add("GET", "/post/{id}", post_page);
}

// One comment's thread, with the reply form.
void site_forum::add_comment_page_routes(site_router& r) const {
  r.add("GET", "/comment/{id}", [this](page_context& ctx) {
    auto id = ctx.param_id("id");
    auto c = id ? get_comment(ctx.db, *id, viewer(ctx)) : std::nullopt;
    if (!c) return error_page(ctx, 404, "There is no comment with this number; it may have been deleted.");
    auto p = get_post(ctx.db, c->post_id, viewer(ctx));
    std::vector<comment_row> thread;
    auto all = post_comments(ctx.db, c->post_id, viewer(ctx));
    // The comment itself as the root of its subtree.
    comment_row root = *c;
    root.parent_id = -1;
    thread.push_back(root);
    for (const auto& x : all)
      if (x.id != c->id) thread.push_back(x);
    html content = element("p", text("Comment on ") + link(ctx.url(post_path(*p)), p->title) + text(" in ") +
                                    link(ctx.url("/f/" + p->forum_name), "f/" + p->forum_name));
    if (c->parent_id != 0)
      content += element("p", link(ctx.url("/comment/" + std::to_string(c->parent_id)), "Parent comment"));
    content += comment_tree(ctx, thread, -1);
    std::string here = "/comment/" + std::to_string(c->id);
    if (c->deleted)
      content += element("p", text("This comment was deleted; it cannot be replied to."));
    else if (ctx.user)
      content += element("section",
                         element("h2", text("Reply")) + comment_form(ctx, here + "/reply", "reply-body",
                                                                     "Reply to " + c->username, "", "", "Post reply"));
    else
      content += element("p", link(ctx.url("/login?next=" + url_encode(here)), "Log in to reply"));
    std::string who = c->deleted ? "[deleted]" : c->username;
    return render(ctx, "Comment by " + who + " on " + p->title, content);
  });
}

// A user's page: karma, submissions, comments.
void site_forum::add_user_page_routes(site_router& r) const {
  r.add("GET", "/user/{username}", [this](page_context& ctx) {
    auto user = find_user(ctx.db, ctx.params["username"]);
    if (!user) return error_page(ctx, 404, "There is no user named '" + ctx.params["username"] + "'.");
    auto joined = ctx.db.query("SELECT joined_at FROM users WHERE id = ?1", {user->id});
    int64_t karma =
        ctx.db.query_int("SELECT COALESCE(SUM(score), 0) FROM posts WHERE user_id = ?1", {user->id}) +
        ctx.db.query_int("SELECT COALESCE(SUM(score), 0) FROM comments WHERE user_id = ?1 AND deleted = 0", {user->id});
    post_filter f;
    f.user_id = user->id;
    f.sort = "new";
    f.page = page_param(ctx.req.query);
    auto posts = find_posts(ctx.db, f, viewer(ctx));
    auto st = ctx.db.prepare(
        "SELECT c.id, c.body, c.score, c.created_at, p.id, p.title, f.name FROM comments c "
        "JOIN posts p ON p.id = c.post_id JOIN forums f ON f.id = p.forum_id "
        "WHERE c.user_id = ?1 AND c.deleted = 0 ORDER BY c.created_min DESC, c.id DESC LIMIT 100");
    st.bind(1, user->id);
    std::vector<html> comments;
    while (st.step()) {
      post_row p;
      p.id = st.int64(4);
      p.title = st.text(5);
      p.forum_name = st.text(6);
      comments.push_back(element(
          "article",
          element("p", {{"class", "meta"}},
                  text("On ") + link(ctx.url(post_path(p)), p.title) +
                      text(" in f/" + p.forum_name + ", " + std::to_string(st.int64(2)) + " points, " + st.text(3))) +
              text_paragraphs(st.text(1), true) +
              element("p", link(ctx.url("/comment/" + std::to_string(st.int64(0))), "Permalink"))));
    }
    html content =
        element("p", text("Joined " + std::get<std::string>(joined[0][0]).substr(0, 10) +
                          ". Karma: " + std::to_string(karma) + ".")) +
        element("section", {{"aria-labelledby", "posts-heading"}},
                element("h2", {{"id", "posts-heading"}}, text("Submissions (" + std::to_string(posts.total) + ")")) +
                    post_list(ctx, posts.rows) + pagination(ctx, posts, "/user/" + user->username, "")) +
        element(
            "section", {{"aria-labelledby", "comments-heading"}},
            element("h2", {{"id", "comments-heading"}}, text("Comments")) +
                (comments.empty() ? element("p", text("No comments yet.")) : list(comments, "ol", "user-comments")));
    return render(ctx, user->username, content);
  });
}

// Search in post titles and bodies.
void site_forum::add_search_routes(site_router& r) const {
  r.add("GET", "/search", [this](page_context& ctx) {
    post_filter f;
    f.q = trim(ctx.req.query.get("q"));
    f.sort = "new";
    f.page = page_param(ctx.req.query);
    if (f.q.empty())
      return render(ctx, "Search", element("p", text("Type words to search for in post titles and bodies.")));
    auto page = find_posts(ctx.db, f, viewer(ctx));
    html content = element("p", {{"class", "summary"}},
                           text(std::to_string(page.total) + (page.total == 1 ? " post" : " posts") + " found.")) +
                   post_list(ctx, page.rows) + pagination(ctx, page, "/search", "q=" + url_encode(f.q, true));
    return render(ctx, "Search results for \"" + f.q + "\"", content);
  });
}

}  // namespace kvarena::sites
