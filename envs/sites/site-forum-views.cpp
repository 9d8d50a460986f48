// site-forum-views.cpp: HTML pieces several forum pages share: the post list, vote
// buttons, the comment tree, the comment form, pagination and the hot/new/top tabs.
#include <map>

#include "picture-pages.h"
#include "site-forum.h"

namespace kvarena::sites::forum {

std::string points(int64_t score) { return std::to_string(score) + (score == 1 || score == -1 ? " point" : " points"); }

namespace {

std::string domain_of(std::string_view url) {
  size_t start = url.find("://");
  start = start == std::string_view::npos ? 0 : start + 3;
  size_t end = url.find_first_of("/?#", start);
  return std::string(url.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start));
}

html vote_button(std::string_view action, std::string_view next, std::string_view direction, bool pressed,
                 const std::string& aria_label, std::string_view label) {
  return element(
      "form", {{"method", "post"}, {"action", std::string(action)}, {"class", "inline"}},
      hidden_input("direction", direction) + hidden_input("next", next) +
          element("button",
                  {{"type", "submit"}, {"aria-pressed", pressed ? "true" : "false"}, {"aria-label", aria_label}},
                  text(label)));
}

}  // namespace

html vote_box(const page_context& ctx, std::string_view action, int64_t score, int my_vote, std::string_view what) {
  std::string next = ctx.relative_target();
  return element("div", {{"class", "vote"}},
                 vote_button(action, next, "up", my_vote > 0, "Upvote " + std::string(what), "Upvote") +
                     element("span", {{"class", "score"}}, text(points(score))) +
                     vote_button(action, next, "down", my_vote < 0, "Downvote " + std::string(what), "Downvote"));
}

html post_summary_line(const page_context& ctx, const post_row& p) {
  html line = text("Submitted " + time_ago(p.created_min) + " (" + p.created_at + ") by ") +
              link(ctx.url("/user/" + p.username), p.username) + text(" to ") +
              link(ctx.url("/f/" + p.forum_name), "f/" + p.forum_name);
  if (!p.edited_at.empty()) line += text(" (edited " + p.edited_at + ")");
  return element("p", {{"class", "meta"}}, line);
}

html post_list(const page_context& ctx, const std::vector<post_row>& rows) {
  if (rows.empty()) return element("p", {{"class", "empty"}}, text("There are no posts here yet."));
  std::vector<html> items;
  for (const auto& p : rows) {
    std::string path = post_path(p);
    html heading = link(ctx.url(path), p.title);
    if (!p.url.empty())
      heading += text(" ") + element("a", {{"href", p.url}, {"class", "domain"}}, text(std::string("(") + domain_of(p.url) + ")"));
    html card =
        element("h3", heading) + post_summary_line(ctx, p) +
        vote_box(ctx, ctx.url("/post/" + std::to_string(p.id) + "/vote"), p.score, p.my_vote, p.title) +
        element("p", link(ctx.url(path), std::to_string(p.comments) + (p.comments == 1 ? " comment" : " comments")));
    std::string thumb = thumb_style(ctx, "post_pictures", p.id);  // a CSS background: no node
    items.push_back(element("article", {{thumb.empty() ? "" : "style", thumb}}, card));
  }
  return list(items, "ol", "posts");
}

html comment_form(const page_context& ctx, std::string_view action, std::string_view id, std::string_view label,
                  std::string_view value, std::string_view error, std::string_view button) {
  return element("form", {{"method", "post"}, {"action", ctx.url(std::string(action))}},
                 labeled_textarea(id, label, "body", value,
                                  field_opts().mark_required().text_rows(4).show_error(std::string(error))) +
                     submit_button(button));
}

namespace {

constexpr int kMaxRenderDepth = 40;

void render_children(const page_context& ctx, const std::multimap<int64_t, const comment_row*>& children,
                     int64_t parent, int depth, html& out) {
  auto [begin, end] = children.equal_range(parent);
  if (begin == end) return;
  html items;
  for (auto it = begin; it != end; ++it) {
    const comment_row& c = *it->second;
    std::string id = std::to_string(c.id);
    html body;
    if (c.deleted) {
      body = element("p", {{"class", "meta"}}, text("[deleted] " + time_ago(c.created_min))) +
             element("p", text("[deleted]"));
    } else {
      html meta = link(ctx.url("/user/" + c.username), c.username) +
                  text(std::string(" ") + time_ago(c.created_min) + " (" + c.created_at + ")");
      if (!c.edited_at.empty()) meta += text(" (edited " + c.edited_at + ")");
      std::vector<html> actions = {link(ctx.url("/comment/" + id), "Reply")};
      if (ctx.user && ctx.user->id == c.user_id) {
        actions.push_back(link(ctx.url("/comment/" + id + "/edit"), "Edit"));
        actions.push_back(link(ctx.url("/comment/" + id + "/delete"), "Delete"));
      }
      body = element("p", {{"class", "meta"}}, meta) + text_paragraphs(c.body, true) +
             vote_box(ctx, ctx.url("/comment/" + id + "/vote"), c.score, c.my_vote, "comment by " + c.username) +
             list(actions, "ul", "actions");
    }
    html nested;
    if (depth + 1 < kMaxRenderDepth) {
      render_children(ctx, children, c.id, depth + 1, nested);
    } else if (children.count(c.id)) {
      nested = element("p", link(ctx.url("/comment/" + id), "Continue this thread"));
    }
    std::string who = c.deleted ? "[deleted]" : c.username;
    items += element("li",
                     element("article", {{"id", "comment-" + id}, {"aria-label", "Comment by " + who}}, body) + nested);
  }
  out += element("ul", {{"class", "comments"}}, items);
}

}  // namespace

html comment_tree(const page_context& ctx, const std::vector<comment_row>& comments, int64_t root_id) {
  std::multimap<int64_t, const comment_row*> children;  // parent id -> comments, in the given order
  for (const auto& c : comments) children.emplace(c.parent_id, &c);
  html out;
  render_children(ctx, children, root_id, 0, out);
  return out;
}

html pagination(const page_context& ctx, const post_page& p, const std::string& path, const std::string& extra_query) {
  auto href = [&](int page) {
    std::string q = extra_query;
    if (page > 1) {
      if (!q.empty()) q += '&';
      q.append("page=").append(std::to_string(page));
    }
    return ctx.url(path) + (q.empty() ? "" : std::string("?") + q);
  };
  return pagination_nav(p.page, p.pages, href);
}

html sort_nav(const page_context& ctx, const std::string& base_path, std::string_view current) {
  std::vector<html> items;
  for (const auto& s : post_sorts()) {
    std::string label = s == "hot" ? "Hot" : s == "new" ? "New" : "Top";
    std::string path = s == "hot" ? (base_path.empty() ? "/" : base_path) : base_path + "/" + s;
    items.push_back(element("a", {{"href", ctx.url(path)}, {s == current ? "aria-current" : "", "page"}}, text(label)));
  }
  return element("nav", {{"aria-label", "Sort posts"}}, list(items));
}

}  // namespace kvarena::sites::forum
