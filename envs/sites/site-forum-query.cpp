// site-forum-query.cpp: the forum SQL: forums, one post, sorted/filtered/paginated post
// listings (hot rank in integer SQL), a post's comments, and small text helpers (slugs,
// relative times).
#include <algorithm>
#include <cctype>

#include "seed-data.h"
#include "site-forum.h"

namespace kvarena::sites::forum {

std::vector<forum_row> load_forums(sqlite_db& db) {
  auto st = db.prepare(
      "SELECT f.id, f.name, f.title, f.description, f.created_at, "
      "(SELECT COUNT(*) FROM posts p WHERE p.forum_id = f.id) FROM forums f ORDER BY f.name COLLATE NOCASE, f.id");
  std::vector<forum_row> out;
  while (st.step()) out.push_back({st.int64(0), st.text(1), st.text(2), st.text(3), st.text(4), st.int64(5)});
  return out;
}

std::optional<forum_row> find_forum(sqlite_db& db, std::string_view name) {
  auto st = db.prepare(
      "SELECT f.id, f.name, f.title, f.description, f.created_at, "
      "(SELECT COUNT(*) FROM posts p WHERE p.forum_id = f.id) FROM forums f WHERE f.name = ?1 COLLATE NOCASE");
  st.bind(1, std::string(name));
  if (!st.step()) return std::nullopt;
  return forum_row{st.int64(0), st.text(1), st.text(2), st.text(3), st.text(4), st.int64(5)};
}

namespace {

// ?1 is the viewer's user id (0 when logged out), for the viewer's own vote.
const char* kPostColumns = R"sql(
  SELECT p.id, p.forum_id, p.user_id, f.name, u.username, p.title, COALESCE(p.url, ''), p.body, p.score,
         p.created_min, p.created_at, COALESCE(p.edited_at, ''),
         (SELECT COUNT(*) FROM comments c WHERE c.post_id = p.id AND c.deleted = 0),
         COALESCE((SELECT v.value FROM post_votes v WHERE v.post_id = p.id AND v.user_id = ?1), 0)
    FROM posts p
    JOIN forums f ON f.id = p.forum_id
    JOIN users u ON u.id = p.user_id)sql";

post_row post_from(sqlite_stmt& st) {
  return {st.int64(0), st.int64(1), st.int64(2), st.text(3),  st.text(4),  st.text(5),   st.text(6),
          st.text(7),  st.int64(8), st.int64(9), st.text(10), st.text(11), st.int64(12), int(st.int64(13))};
}

const char* kCommentColumns = R"sql(
  SELECT c.id, c.post_id, COALESCE(c.parent_id, 0), c.user_id, u.username, c.body, c.score, c.created_min,
         c.created_at, COALESCE(c.edited_at, ''), c.deleted,
         COALESCE((SELECT v.value FROM comment_votes v WHERE v.comment_id = c.id AND v.user_id = ?1), 0)
    FROM comments c
    JOIN users u ON u.id = c.user_id)sql";

comment_row comment_from(sqlite_stmt& st) {
  return {st.int64(0), st.int64(1), st.int64(2), st.int64(3), st.text(4),        st.text(5),
          st.int64(6), st.int64(7), st.text(8),  st.text(9),  st.int64(10) != 0, int(st.int64(11))};
}

}  // namespace

std::optional<post_row> get_post(sqlite_db& db, int64_t id, int64_t viewer_id) {
  auto st = db.prepare(std::string(kPostColumns) + " WHERE p.id = ?2");
  st.bind(1, viewer_id).bind(2, id);
  if (!st.step()) return std::nullopt;
  return post_from(st);
}

const std::vector<std::string>& post_sorts() {
  static const std::vector<std::string> v = {"hot", "new", "top"};
  return v;
}

std::string hot_rank_sql() {
  // floor(1000 * log10(n)) for n >= 1: 1000 per digit after the first, plus the leading
  // digit's share (log10 of 2..9 in thousandths); 0 for n = 0.
  return "(p.created_min + (CASE WHEN p.score > 0 THEN 1 WHEN p.score < 0 THEN -1 ELSE 0 END) * "
         "(750 * (1000 * (length(abs(p.score)) - 1) + "
         "CASE substr(abs(p.score), 1, 1) WHEN '2' THEN 301 WHEN '3' THEN 477 WHEN '4' THEN 602 WHEN '5' THEN 698 "
         "WHEN '6' THEN 778 WHEN '7' THEN 845 WHEN '8' THEN 903 WHEN '9' THEN 954 ELSE 0 END) / 1000))";
}

std::string post_order_sql(std::string_view sort) {
  if (sort == "new") return "p.created_min DESC, p.id DESC";
  if (sort == "top") return "p.score DESC, p.created_min DESC, p.id DESC";
  return hot_rank_sql() + " DESC, p.id DESC";
}

post_page find_posts(sqlite_db& db, const post_filter& f, int64_t viewer_id, int per_page) {
  std::vector<sql_value> params = {viewer_id};
  std::string where = " WHERE 1";
  auto next = [&](sql_value v) {
    params.push_back(std::move(v));
    std::string n = "?";
    n += std::to_string(params.size());
    return n;
  };
  if (f.forum_id) where += " AND p.forum_id = " + next(f.forum_id);
  if (f.user_id) where += " AND p.user_id = " + next(f.user_id);
  for (const auto& w : words_of(f.q)) {
    std::string n = next(like_pattern(w));
    where += " AND (p.title LIKE " + n + " ESCAPE '\\' OR p.body LIKE " + n + " ESCAPE '\\')";
  }
  post_page out;
  // ?1 (the viewer) is unused by the count; bind it anyway so the numbering holds.
  out.total = db.query_int("SELECT COUNT(*) FROM posts p" + where + " AND ?1 = ?1", params);
  out.pages = std::max<int>(1, int((out.total + per_page - 1) / per_page));
  out.page = std::clamp(f.page, 1, out.pages);
  auto st = db.prepare(std::string(kPostColumns) + where + " ORDER BY " + post_order_sql(f.sort) + " LIMIT " +
                       std::to_string(per_page) + " OFFSET " + std::to_string((out.page - 1) * per_page));
  st.bind_all(params);
  while (st.step()) out.rows.push_back(post_from(st));
  return out;
}

int page_param(const param_list& q) {
  std::string page = q.get("page", "1");
  if (page.empty() || page.size() > 5 ||
      !std::all_of(page.begin(), page.end(), [](char c) { return c >= '0' && c <= '9'; }))
    return 1;
  return std::max(1, std::stoi(page));
}

std::vector<comment_row> post_comments(sqlite_db& db, int64_t post_id, int64_t viewer_id) {
  auto st = db.prepare(std::string(kCommentColumns) + " WHERE c.post_id = ?2 ORDER BY c.score DESC, c.id ASC");
  st.bind(1, viewer_id).bind(2, post_id);
  std::vector<comment_row> out;
  while (st.step()) out.push_back(comment_from(st));
  return out;
}

std::optional<comment_row> get_comment(sqlite_db& db, int64_t id, int64_t viewer_id) {
  auto st = db.prepare(std::string(kCommentColumns) + " WHERE c.id = ?2");
  st.bind(1, viewer_id).bind(2, id);
  if (!st.step()) return std::nullopt;
  return comment_from(st);
}

std::string slugify(std::string_view title) {
  std::string s;
  for (char ch : title) {
    unsigned char c = static_cast<unsigned char>(ch);
    if (std::isalnum(c) && c < 128)
      s += char(std::tolower(c));
    else if (ch == '\'')
      continue;  // "what's" -> "whats"
    else if (!s.empty() && s.back() != '-')
      s += '-';
  }
  while (!s.empty() && s.back() == '-') s.pop_back();
  if (s.size() > 80) {
    s.resize(80);
    if (size_t dash = s.rfind('-'); dash != std::string::npos && dash > 40) s.resize(dash);
  }
  return s.empty() ? "post" : s;
}

std::string post_path(const post_row& p) {
  return "/f/" + p.forum_name + "/" + std::to_string(p.id) + "/" + slugify(p.title);
}

std::string time_ago(int64_t created_min) {
  int64_t d = std::max<int64_t>(0, kSeedNowMinutes - created_min);
  auto unit = [](int64_t n, const char* one) { return std::to_string(n) + " " + one + (n == 1 ? "" : "s") + " ago"; };
  if (d < 1) return "just now";
  if (d < 60) return unit(d, "minute");
  if (d < 24 * 60) return unit(d / 60, "hour");
  if (d < 30 * 24 * 60) return unit(d / (24 * 60), "day");
  if (d < 365 * 24 * 60) return unit(d / (30 * 24 * 60), "month");
  return unit(d / (365 * 24 * 60), "year");
}


}  // namespace kvarena::sites::forum
