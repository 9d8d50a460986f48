// site-forum-actions.cpp: the forum forms that change state (all need a login): submit a
// post, comment and reply, vote on posts and comments, edit and delete one's own posts
// and comments (403 for anyone else's). Changes are stamped with the seeded clock.
#include "seed-data.h"
#include "site-auth.h"
#include "site-forum.h"

namespace kvarena::sites {

using namespace forum;

namespace {

struct post_input {
  std::string forum, title, url, body;
};

// Field name -> what to fix; empty when valid. check_forum: the forum field is part of it.
std::map<std::string, std::string> validate_post(sqlite_db& db, const post_input& in, bool check_forum) {
  std::map<std::string, std::string> e;
  if (check_forum && in.forum.empty())
    e["forum"] = "Choose a forum to post in.";
  else if (check_forum && !find_forum(db, in.forum))
    e["forum"] = "There is no forum named '" + in.forum + "'; choose one from the list.";
  if (in.title.empty())
    e["title"] = "Enter a title.";
  else if (in.title.size() > 300)
    e["title"] = "The title must be at most 300 characters (it has " + std::to_string(in.title.size()) + ").";
  if (!in.url.empty()) {
    bool scheme = in.url.rfind("http://", 0) == 0 || in.url.rfind("https://", 0) == 0;
    bool clean = in.url.find_first_of(" \t\r\n<>\"") == std::string::npos;
    if (!scheme || !clean || in.url.size() < 11 || in.url.size() > 2000)
      e["url"] = "Enter a web address that starts with http:// or https:// (or leave it empty for a text post).";
  }
  if (in.body.size() > 20000)
    e["body"] = "The body must be at most 20000 characters (it has " + std::to_string(in.body.size()) + ").";
  return e;
}

html post_form(const page_context& ctx, std::string_view action, const post_input& in,
               const std::map<std::string, std::string>& errors, bool choose_forum, std::string_view button) {
  auto err = [&](const char* f) {
    auto it = errors.find(f);
    return it == errors.end() ? std::string() : it->second;
  };
  std::vector<std::string> summary;
  for (const char* f : {"forum", "title", "url", "body"})
    if (!err(f).empty()) summary.push_back(err(f));
  html fields;
  if (choose_forum) {
    std::vector<option_item> forums = {{"", "Choose a forum", ""}};
    for (const auto& f : load_forums(ctx.db)) forums.push_back({f.name, "f/" + f.name, ""});
    fields += labeled_select("post-forum", "Forum", "forum", forums, in.forum,
                             field_opts().mark_required().show_error(err("forum")));
  }
  fields +=
      labeled_input("post-title", "Title", "title", in.title, field_opts().mark_required().show_error(err("title")));
  fields += labeled_input("post-url", "URL (optional, for a link post)", "url", in.url,
                          field_opts().input_type("url").show_error(err("url")).placeholder_text("https://"));
  fields += labeled_textarea("post-body", "Body (optional)", "body", in.body, field_opts().show_error(err("body")));
  fields += submit_button(button);
  return error_summary(summary) +
         element("form", {{"method", "post"}, {"action", ctx.url(std::string(action))}}, fields);
}

std::string comment_error(const std::string& body) {
  if (body.empty()) return "Write something before posting.";
  if (body.size() > 10000)
    return "A comment must be at most 10000 characters (it has " + std::to_string(body.size()) + ").";
  return "";
}

// Inserts a comment and its author's upvote (score 1); returns its id.
int64_t add_comment(sqlite_db& db, int64_t post_id, int64_t parent_id, int64_t user_id, const std::string& body) {
  sqlite_transaction tx(db);
  db.query(
      "INSERT INTO comments (post_id, parent_id, user_id, body, score, created_min, created_at) "
      "VALUES (?1, ?2, ?3, ?4, 1, ?5, ?6)",
      {post_id, parent_id ? sql_value(parent_id) : sql_value(nullptr), user_id, body, kSeedNowMinutes, seed_now()});
  int64_t id = db.last_insert_rowid();
  db.query("INSERT INTO comment_votes (comment_id, user_id, value) VALUES (?1, ?2, 1)", {id, user_id});
  tx.commit();
  return id;
}

// The reddit rule: the same vote again takes it back; the other direction replaces it.
// The target's score moves by the difference. Table names are constants of this file.
void apply_vote(sqlite_db& db, const std::string& votes, const std::string& key, const std::string& target, int64_t id,
                int64_t user_id, int requested) {
  int64_t old =
      db.query_int("SELECT value FROM " + votes + " WHERE " + key + " = ?1 AND user_id = ?2", {id, user_id}, 0);
  int64_t now = old == requested ? 0 : requested;
  sqlite_transaction tx(db);
  if (now == 0)
    db.query("DELETE FROM " + votes + " WHERE " + key + " = ?1 AND user_id = ?2", {id, user_id});
  else
    db.query("INSERT INTO " + votes + " (" + key + ", user_id, value) VALUES (?1, ?2, ?3) ON CONFLICT (" + key +
                 ", user_id) DO UPDATE SET value = excluded.value",
             {id, user_id, now});
  db.query("UPDATE " + target + " SET score = score + ?2 WHERE id = ?1", {id, now - old});
  tx.commit();
}

int direction_of(const param_list& form) {
  std::string d = form.get("direction");
  return d == "up" ? 1 : d == "down" ? -1 : 0;
}

// The post or comment when it exists and the user wrote it; else the page to send.
template <class Row>
struct owned {
  std::optional<Row> row;
  std::optional<http_response> response;
};

owned<post_row> own_post(page_context& ctx, const site& s, std::string_view action) {
  auto id = ctx.param_id("id");
  std::string here = id ? "/post/" + std::to_string(*id) : "/";
  if (auto login = require_login(ctx, here + std::string(action))) return {std::nullopt, std::move(login)};
  auto p = id ? get_post(ctx.db, *id, ctx.user->id) : std::nullopt;
  if (!p) return {std::nullopt, s.error_page(ctx, 404, "There is no post with this number; it may have been deleted.")};
  if (p->user_id != ctx.user->id)
    return {std::nullopt, s.error_page(ctx, 403, "You can only edit or delete your own posts.")};
  return {std::move(p), std::nullopt};
}

owned<comment_row> own_comment(page_context& ctx, const site& s, std::string_view action) {
  auto id = ctx.param_id("id");
  std::string here = id ? "/comment/" + std::to_string(*id) : "/";
  if (auto login = require_login(ctx, here + std::string(action))) return {std::nullopt, std::move(login)};
  auto c = id ? get_comment(ctx.db, *id, ctx.user->id) : std::nullopt;
  if (!c || c->deleted)
    return {std::nullopt, s.error_page(ctx, 404, "There is no comment with this number; it may have been deleted.")};
  if (c->user_id != ctx.user->id)
    return {std::nullopt, s.error_page(ctx, 403, "You can only edit or delete your own comments.")};
  return {std::move(c), std::nullopt};
}

std::string post_path_of(sqlite_db& db, int64_t post_id) {
  auto p = get_post(db, post_id);
  return p ? post_path(*p) : "/";
}

}  // namespace

void site_forum::add_action_routes(site_router& r) const {
  add_submit_routes(r);
  add_vote_routes(r);
  add_comment_routes(r);
  add_post_owner_routes(r);
  add_comment_owner_routes(r);
}

// Creating a post (optionally in a given forum).
void site_forum::add_submit_routes(site_router& r) const {
  auto submit_form = [this](page_context& ctx) {
    if (auto login = require_login(ctx)) return *login;
    post_input in;
    if (auto it = ctx.params.find("forum"); it != ctx.params.end())
      if (auto f = find_forum(ctx.db, it->second)) in.forum = f->name;
    return render(ctx, "Create submission", post_form(ctx, "/submit", in, {}, true, "Submit"));
  };
  r.add("GET", "/submit", submit_form);
  r.add("GET", "/submit/{forum}", submit_form);

  r.add("POST", "/submit", [this](page_context& ctx) {
    if (auto login = require_login(ctx, "/submit")) return *login;
    const auto& f = ctx.req.form;
    post_input in{f.get("forum"), trim(f.get("title")), trim(f.get("url")), trim(f.get("body"))};
    auto errors = validate_post(ctx.db, in, true);
    if (!errors.empty())
      return render(ctx, "Create submission", post_form(ctx, "/submit", in, errors, true, "Submit"), 422);
    auto forum = find_forum(ctx.db, in.forum);
    sqlite_transaction tx(ctx.db);
    ctx.db.query(
        "INSERT INTO posts (forum_id, user_id, title, url, body, score, created_min, created_at) "
        "VALUES (?1, ?2, ?3, ?4, ?5, 1, ?6, ?7)",
        {forum->id, ctx.user->id, in.title, in.url.empty() ? sql_value(nullptr) : sql_value(in.url), in.body,
         kSeedNowMinutes, seed_now()});
    int64_t id = ctx.db.last_insert_rowid();
    ctx.db.query("INSERT INTO post_votes (post_id, user_id, value) VALUES (?1, ?2, 1)", {id, ctx.user->id});
    tx.commit();
    ctx.flash("Your submission was posted.");
    return http_response::redirect(ctx.url(post_path_of(ctx.db, id)));
  });
}

// Up/down votes on posts and comments.
void site_forum::add_vote_routes(site_router& r) const {
  r.add("POST", "/post/{id}/vote", [this](page_context& ctx) {
    auto id = ctx.param_id("id");
    auto p = id ? get_post(ctx.db, *id) : std::nullopt;
    std::string back = safe_return(ctx.req.form.get("next"), p ? post_path(*p) : "/");
    if (auto login = require_login(ctx, back)) return *login;
    if (!p) return error_page(ctx, 404, "There is no post with this number; it may have been deleted.");
    int dir = direction_of(ctx.req.form);
    if (dir == 0) return error_page(ctx, 422, "A vote needs direction=up or direction=down.");
    apply_vote(ctx.db, "post_votes", "post_id", "posts", p->id, ctx.user->id, dir);
    return http_response::redirect(ctx.url(back));
  });

  r.add("POST", "/comment/{id}/vote", [this](page_context& ctx) {
    auto id = ctx.param_id("id");
    auto c = id ? get_comment(ctx.db, *id) : std::nullopt;
    std::string back = safe_return(ctx.req.form.get("next"), c ? post_path_of(ctx.db, c->post_id) : "/");
    if (auto login = require_login(ctx, back)) return *login;
    if (!c || c->deleted)
      return error_page(ctx, 404, "There is no comment with this number; it may have been deleted.");
    int dir = direction_of(ctx.req.form);
    if (dir == 0) return error_page(ctx, 422, "A vote needs direction=up or direction=down.");
    apply_vote(ctx.db, "comment_votes", "comment_id", "comments", c->id, ctx.user->id, dir);
    return http_response::redirect(ctx.url(back));
  });
}

// Commenting on a post, replying to a comment.
void site_forum::add_comment_routes(site_router& r) const {
  r.add("POST", "/post/{id}/comment", [this](page_context& ctx) {
    auto id = ctx.param_id("id");
    auto p = id ? get_post(ctx.db, *id) : std::nullopt;
    std::string path = p ? post_path(*p) : "/";
    if (auto login = require_login(ctx, path)) return *login;
    if (!p) return error_page(ctx, 404, "There is no post with this number; it may have been deleted.");
    std::string body = trim(ctx.req.form.get("body"));
    if (std::string e = comment_error(body); !e.empty()) {
      html content = element("p", text("Commenting on ") + link(ctx.url(path), p->title)) +
                     comment_form(ctx, "/post/" + std::to_string(p->id) + "/comment", "comment-body", "Comment", body,
                                  e, "Post comment");
      return render(ctx, "Post a comment", content, 422);
    }
    add_comment(ctx.db, p->id, 0, ctx.user->id, body);
    ctx.flash("Your comment was posted.");
    return http_response::redirect(ctx.url(path));
  });

  r.add("POST", "/comment/{id}/reply", [this](page_context& ctx) {
    auto id = ctx.param_id("id");
    std::string here = id ? "/comment/" + std::to_string(*id) : "/";
    if (auto login = require_login(ctx, here)) return *login;
    auto c = id ? get_comment(ctx.db, *id) : std::nullopt;
    if (!c) return error_page(ctx, 404, "There is no comment with this number; it may have been deleted.");
    if (c->deleted) return error_page(ctx, 422, "This comment was deleted; it cannot be replied to.");
    std::string body = trim(ctx.req.form.get("body"));
    if (std::string e = comment_error(body); !e.empty()) {
      html content = element("p", text("Replying to ") + link(ctx.url(here), "the comment by " + c->username)) +
                     comment_form(ctx, here + "/reply", "reply-body", "Reply to " + c->username, body, e, "Post reply");
      return render(ctx, "Reply", content, 422);
    }
    add_comment(ctx.db, c->post_id, c->id, ctx.user->id, body);
    ctx.flash("Your reply was posted.");
    return http_response::redirect(ctx.url(post_path_of(ctx.db, c->post_id)));
  });
}

// Editing and deleting one's own post.
void site_forum::add_post_owner_routes(site_router& r) const {
  r.add("GET", "/post/{id}/edit", [this](page_context& ctx) {
    auto own = own_post(ctx, *this, "/edit");
    if (own.response) return *own.response;
    const post_row& p = *own.row;
    post_input in{p.forum_name, p.title, p.url, p.body};
    return render(ctx, "Edit post",
                  element("p", text("In f/" + p.forum_name)) +
                      post_form(ctx, "/post/" + std::to_string(p.id) + "/edit", in, {}, false, "Save"));
  });

  r.add("POST", "/post/{id}/edit", [this](page_context& ctx) {
    auto own = own_post(ctx, *this, "/edit");
    if (own.response) return *own.response;
    const post_row& p = *own.row;
    const auto& f = ctx.req.form;
    post_input in{p.forum_name, trim(f.get("title")), trim(f.get("url")), trim(f.get("body"))};
    auto errors = validate_post(ctx.db, in, false);
    std::string action = "/post/" + std::to_string(p.id) + "/edit";
    if (!errors.empty()) return render(ctx, "Edit post", post_form(ctx, action, in, errors, false, "Save"), 422);
    ctx.db.query("UPDATE posts SET title = ?2, url = ?3, body = ?4, edited_at = ?5 WHERE id = ?1",
                 {p.id, in.title, in.url.empty() ? sql_value(nullptr) : sql_value(in.url), in.body, seed_now()});
    ctx.flash("Your post was updated.");
    return http_response::redirect(ctx.url(post_path_of(ctx.db, p.id)));
  });

  r.add("GET", "/post/{id}/delete", [this](page_context& ctx) {
    auto own = own_post(ctx, *this, "/delete");
    if (own.response) return *own.response;
    std::string here = "/post/" + std::to_string(own.row->id);
    html content =
        element("p", text("Delete \"" + own.row->title + "\" and all its comments? This cannot be undone.")) +
        post_button(ctx.url(here + "/delete"), "Yes, delete this post") +
        element("p", link(ctx.url(post_path(*own.row)), "No, keep it"));
    return render(ctx, "Delete post", content);
  });

  r.add("POST", "/post/{id}/delete", [this](page_context& ctx) {
    auto own = own_post(ctx, *this, "/delete");
    if (own.response) return *own.response;
    int64_t id = own.row->id;
    sqlite_transaction tx(ctx.db);
    ctx.db.query("DELETE FROM comment_votes WHERE comment_id IN (SELECT id FROM comments WHERE post_id = ?1)", {id});
    ctx.db.query("DELETE FROM comments WHERE post_id = ?1", {id});
    ctx.db.query("DELETE FROM post_votes WHERE post_id = ?1", {id});
    ctx.db.query("DELETE FROM posts WHERE id = ?1", {id});
    tx.commit();
    ctx.flash("Your post \"" + own.row->title + "\" was deleted.");
    return http_response::redirect(ctx.url("/f/" + own.row->forum_name));
  });
}

// Editing and deleting one's own comment.
void site_forum::add_comment_owner_routes(site_router& r) const {
  r.add("GET", "/comment/{id}/edit", [this](page_context& ctx) {
    auto own = own_comment(ctx, *this, "/edit");
    if (own.response) return *own.response;
    std::string here = "/comment/" + std::to_string(own.row->id);
    return render(ctx, "Edit comment",
                  comment_form(ctx, here + "/edit", "comment-body", "Comment", own.row->body, "", "Save"));
  });

  r.add("POST", "/comment/{id}/edit", [this](page_context& ctx) {
    auto own = own_comment(ctx, *this, "/edit");
    if (own.response) return *own.response;
    std::string here = "/comment/" + std::to_string(own.row->id);
    std::string body = trim(ctx.req.form.get("body"));
    if (std::string e = comment_error(body); !e.empty())
      return render(ctx, "Edit comment", comment_form(ctx, here + "/edit", "comment-body", "Comment", body, e, "Save"),
                    422);
    ctx.db.query("UPDATE comments SET body = ?2, edited_at = ?3 WHERE id = ?1", {own.row->id, body, seed_now()});
    ctx.flash("Your comment was updated.");
    return http_response::redirect(ctx.url(post_path_of(ctx.db, own.row->post_id)));
  });

  r.add("GET", "/comment/{id}/delete", [this](page_context& ctx) {
    auto own = own_comment(ctx, *this, "/delete");
    if (own.response) return *own.response;
    std::string here = "/comment/" + std::to_string(own.row->id);
    html content =
        element("p", text("Delete your comment \"" + own.row->body.substr(0, 80) + "\"? This cannot be undone.")) +
        post_button(ctx.url(here + "/delete"), "Yes, delete this comment") +
        element("p", link(ctx.url(here), "No, keep it"));
    return render(ctx, "Delete comment", content);
  });

  r.add("POST", "/comment/{id}/delete", [this](page_context& ctx) {
    auto own = own_comment(ctx, *this, "/delete");
    if (own.response) return *own.response;
    int64_t id = own.row->id;
    bool has_replies = ctx.db.query_int("SELECT COUNT(*) FROM comments WHERE parent_id = ?1", {id}) > 0;
    sqlite_transaction tx(ctx.db);
    if (has_replies) {  // keep the thread together: "[deleted]" in its place
      ctx.db.query("UPDATE comments SET deleted = 1, body = '' WHERE id = ?1", {id});
    } else {
      ctx.db.query("DELETE FROM comment_votes WHERE comment_id = ?1", {id});
      ctx.db.query("DELETE FROM comments WHERE id = ?1", {id});
    }
    tx.commit();
    ctx.flash("Your comment was deleted.");
    return http_response::redirect(ctx.url(post_path_of(ctx.db, own.row->post_id)));
  });
}

}  // namespace kvarena::sites
