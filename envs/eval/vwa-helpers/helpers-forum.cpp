// helpers-forum.cpp: the helpers that read a forum post's comment tree (Postmill's HTML,
// as VisualWebArena's reddit runs it) and GitLab's project members page
// (site-helpers-vwa.h). The tree is built as VWA's JavaScript builds it: from #main, each
// node's first .fg-inherit (user), .vote__net-score, .comment__content and
// `.comment__main > header > h1 > span > time`, its children the .comment elements below
// it with data-level one more than its own. Where that JavaScript throws (a part missing)
// the helpers give "" as VWA's catch does.
#include <cctype>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "browser/text/html-document.h"
#include "helper-dom.h"
#include "site-helpers-vwa.h"

namespace kvarena::sites {
namespace {

struct comment_node {
  std::string username, content;
  double time_s = std::numeric_limits<double>::quiet_NaN();  // NaN: an invalid date
  std::vector<comment_node> children;
};

// An ISO 8601 date-time ("2023-04-01T10:20:30+00:00", "...Z", fractions allowed) as
// seconds since the epoch; NaN when it does not parse (JavaScript's Invalid Date, which
// compares false with everything).
double parse_iso_time(const std::string& s) {
  int y, mo, d, h = 0, mi = 0, sec = 0, used = 0;
  if (std::sscanf(s.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d%n", &y, &mo, &d, &h, &mi, &sec, &used) < 6)
    return std::numeric_limits<double>::quiet_NaN();
  std::tm tm{};
  tm.tm_year = y - 1900;
  tm.tm_mon = mo - 1;
  tm.tm_mday = d;
  tm.tm_hour = h;
  tm.tm_min = mi;
  tm.tm_sec = sec;
  double t = static_cast<double>(timegm(&tm));
  std::string rest = s.substr(static_cast<size_t>(used));
  size_t i = 0;
  if (i < rest.size() && rest[i] == '.') {
    size_t b = ++i;
    while (i < rest.size() && std::isdigit(static_cast<unsigned char>(rest[i]))) ++i;
    if (i > b) t += std::stod("0." + rest.substr(b, i - b));
  }
  int oh = 0, om = 0;
  if (i < rest.size() && (rest[i] == '+' || rest[i] == '-') && std::sscanf(rest.c_str() + i + 1, "%2d:%2d", &oh, &om) == 2)
    t -= (rest[i] == '+' ? 1 : -1) * (oh * 3600 + om * 60);
  return t;
}

const GumboNode* required(const helper_dom& dom, const char* css, const GumboNode* scope) {
  const GumboNode* n = dom.first(css, scope);
  if (!n) throw std::runtime_error(std::string("no ") + css);
  return n;
}

comment_node build_tree(const helper_dom& dom, const GumboNode* node, long level) {
  comment_node t;
  t.username = outer_text(required(dom, ".fg-inherit", node));
  outer_text(required(dom, ".vote__net-score", node));
  t.content = outer_text(required(dom, ".comment__content", node));
  t.time_s = parse_iso_time(attr_or(required(dom, ".comment__main > header > h1 > span > time", node), "datetime"));
  for (const GumboNode* child : dom.all(".comment", node))
    if (attr_or(child, "data-level") == std::to_string(level + 1)) t.children.push_back(build_tree(dom, child, level + 1));
  return t;
}

comment_node comment_tree(page_probe& page) {
  helper_dom dom(page);
  return build_tree(dom, required(dom, "#main", nullptr), 0);
}

std::string arg(const eval_helper_call& c, size_t i) { return i < c.args.size() ? c.args[i] : std::string(); }

// The newest node written by `user`, anywhere in the tree (the root included).
void latest_by(const comment_node& n, const std::string& user, const comment_node** best, double* best_t) {
  if (n.username == user && n.time_s > *best_t) {
    *best = &n;
    *best_t = n.time_s;
  }
  for (const comment_node& c : n.children) latest_by(c, user, best, best_t);
}

// The parent of the newest comment by `user`: VWA's walk does not descend below a
// comment written by the user itself.
void parent_of_latest(const comment_node& n, const std::string& user, const comment_node** best, double* best_t) {
  for (const comment_node& c : n.children) {
    if (c.username == user) {
      if (c.time_s > *best_t) {
        *best = &n;
        *best_t = c.time_s;
      }
    } else {
      parent_of_latest(c, user, best, best_t);
    }
  }
}

// The comment `walk` picks for the user arg(c, 1) in the page's comment tree, as `field`;
// "" when none or when the page has no tree (VWA's catch).
using comment_walk = void (*)(const comment_node&, const std::string&, const comment_node**, double*);
std::optional<std::string> picked_comment(const eval_helper_call& c, comment_walk walk,
                                          std::string comment_node::*field) {
  try {
    comment_node tree = comment_tree(c.page);
    const comment_node* best = nullptr;
    double t = -std::numeric_limits<double>::infinity();
    walk(tree, arg(c, 1), &best, &t);
    return best ? best->*field : "";
  } catch (const std::exception&) {
    return "";
  }
}

std::optional<std::string> latest_comment_content(const eval_helper_call& c) {
  return picked_comment(c, latest_by, &comment_node::content);
}

std::optional<std::string> parent_username(const eval_helper_call& c) {
  return picked_comment(c, parent_of_latest, &comment_node::username);
}

// GitLab's members table: the row whose account sublabel is "@name", its max role.
std::optional<std::string> gitlab_member_role(const eval_helper_call& c) {
  try {
    helper_dom dom(c.page);
    std::vector<const GumboNode*> accounts = dom.all("td[data-label='Account'] span.gl-avatar-labeled-sublabel");
    std::vector<const GumboNode*> roles = dom.all("td.col-max-role span");
    for (size_t i = 0; i < accounts.size(); ++i)
      if (outer_text(accounts[i]) == "@" + arg(c, 1)) return i < roles.size() ? outer_text(roles[i]) : "";
  } catch (const std::exception&) {
  }
  return "";
}

nlohmann::json node_json(const comment_node& n, bool children) {
  nlohmann::json j = {{"username", n.username}, {"content", n.content}, {"time", n.time_s}};
  if (children) {
    j["children"] = nlohmann::json::array();
    for (const comment_node& c : n.children) j["children"].push_back(node_json(c, true));
  }
  return j;
}

// The tree and the two comment objects as JSON ({} where VWA gives {}); time in seconds.
std::optional<std::string> tree_json(const eval_helper_call& c) {
  try {
    return node_json(comment_tree(c.page), true).dump();
  } catch (const std::exception&) {
    return "{}";
  }
}

std::optional<std::string> comment_obj(const eval_helper_call& c, bool parent) {
  try {
    comment_node tree = comment_tree(c.page);
    const comment_node* best = nullptr;
    double t = -std::numeric_limits<double>::infinity();
    if (parent) parent_of_latest(tree, arg(c, 1), &best, &t);
    else latest_by(tree, arg(c, 1), &best, &t);
    return best ? node_json(*best, false).dump() : "{}";
  } catch (const std::exception&) {
    return "{}";
  }
}

}  // namespace

void register_reddit_helpers(eval_helper_registry& r) {
  r.add("reddit_get_post_comment_tree", tree_json);
  r.add("reddit_get_latest_comment_obj_by_username", [](const eval_helper_call& c) { return comment_obj(c, false); });
  r.add("reddit_get_parent_comment_obj_of_latest_comment_by_username",
        [](const eval_helper_call& c) { return comment_obj(c, true); });
  r.add("reddit_get_latest_comment_content_by_username", latest_comment_content);
  r.add("reddit_get_parent_comment_username_of_latest_comment_by_username", parent_username);
}

void register_gitlab_helpers(eval_helper_registry& r) { r.add("gitlab_get_project_memeber_role", gitlab_member_role); }

}  // namespace kvarena::sites
