// site-classifieds-query.cpp: the classifieds SQL: categories with counts, one listing,
// filtered/sorted/paginated search, and the mapping between filters and URL parameters.
#include <algorithm>
#include <cctype>

#include "seed-data.h"
#include "site-classifieds.h"

namespace kvarena::sites::classifieds {

std::vector<category> load_categories(sqlite_db& db) {
  auto st = db.prepare(R"sql(
    SELECT c.id, COALESCE(c.parent_id, 0), c.slug, c.name,
           (SELECT COUNT(*) FROM listings l JOIN categories lc ON lc.id = l.category_id
             WHERE lc.id = c.id OR lc.parent_id = c.id)
      FROM categories c LEFT JOIN categories p ON p.id = c.parent_id
     ORDER BY COALESCE(p.position, c.position), c.parent_id IS NOT NULL, c.position)sql");
  std::vector<category> out;
  while (st.step()) out.push_back({st.int64(0), st.int64(1), st.text(2), st.text(3), st.int64(4)});
  return out;
}

const category* find_category(const std::vector<category>& cats, std::string_view slug) {
  for (const auto& c : cats)
    if (c.slug == slug) return &c;
  return nullptr;
}

namespace {

const char* kListingColumns = R"sql(
  SELECT l.id, l.title, l.description, l.price_cents, l.condition, l.location, l.posted_at,
         COALESCE(l.image_alt, ''), l.seller_id, u.username, u.display_name, l.category_id, c.slug, c.name,
         COALESCE(p.slug, ''), COALESCE(p.name, '')
    FROM listings l
    JOIN users u ON u.id = l.seller_id
    JOIN categories c ON c.id = l.category_id
    LEFT JOIN categories p ON p.id = c.parent_id)sql";

listing_row row_from(sqlite_stmt& st) {
  return {st.int64(0),  st.text(1),  st.text(2),  st.int64(3),  st.text(4),  st.text(5),
          st.text(6),   st.text(7),  st.int64(8), st.text(9),   st.text(10), st.int64(11),
          st.text(12),  st.text(13), st.text(14), st.text(15)};
}

}  // namespace

std::optional<listing_row> get_listing(sqlite_db& db, int64_t id) {
  auto st = db.prepare(std::string(kListingColumns) + " WHERE l.id = ?1");
  st.bind(1, id);
  if (!st.step()) return std::nullopt;
  return row_from(st);
}

listing_page find_listings(sqlite_db& db, const listing_filter& f, int per_page) {
  std::string where = " WHERE 1";
  std::vector<sql_value> params;
  auto add = [&](std::string clause, sql_value v) {
    params.push_back(std::move(v));
    std::string n = "?";
    n += std::to_string(params.size());
    for (size_t p; (p = clause.find("?#")) != std::string::npos;) clause.replace(p, 2, n);
    where += " AND " + clause;
  };
  for (const auto& w : words_of(f.q))
    add("(l.title LIKE ?# ESCAPE '\\' OR l.description LIKE ?# ESCAPE '\\')", like_pattern(w));
  if (!f.category.empty())
    add("l.category_id IN (SELECT id FROM categories WHERE slug = ?# "
        "OR parent_id = (SELECT id FROM categories WHERE slug = ?#))",
        f.category);
  if (f.min_cents) add("l.price_cents >= ?#", *f.min_cents);
  if (f.max_cents) add("l.price_cents <= ?#", *f.max_cents);
  if (!f.condition.empty()) add("l.condition = ?#", f.condition);
  if (!f.location.empty()) add("l.location = ?#", f.location);
  if (f.seller_id) add("l.seller_id = ?#", *f.seller_id);

  listing_page out;
  out.total = db.query_int("SELECT COUNT(*) FROM listings l" + where, params);
  out.pages = std::max<int>(1, int((out.total + per_page - 1) / per_page));
  out.page = std::clamp(f.page, 1, out.pages);

  std::string order = " ORDER BY l.posted_at DESC, l.id DESC";
  if (f.sort == "price_asc") order = " ORDER BY l.price_cents ASC, l.posted_at DESC, l.id DESC";
  if (f.sort == "price_desc") order = " ORDER BY l.price_cents DESC, l.posted_at DESC, l.id DESC";
  auto st = db.prepare(std::string(kListingColumns) + where + order + " LIMIT " + std::to_string(per_page) +
                       " OFFSET " + std::to_string((out.page - 1) * per_page));
  st.bind_all(params);
  while (st.step()) out.rows.push_back(row_from(st));
  return out;
}

std::optional<int64_t> parse_price_cents(std::string_view s) {
  std::string t;
  for (char c : s)
    if (c != ' ' && c != ',' && c != '$') t += c;
  if (t.empty() || t.size() > 12) return std::nullopt;
  size_t dot = t.find('.');
  std::string whole = t.substr(0, dot), frac = dot == std::string::npos ? "" : t.substr(dot + 1);
  if (whole.empty() && frac.empty()) return std::nullopt;
  if (frac.size() > 2) return std::nullopt;
  for (char c : whole + frac)
    if (!std::isdigit(static_cast<unsigned char>(c))) return std::nullopt;
  while (frac.size() < 2) frac += '0';
  return (whole.empty() ? 0 : std::stoll(whole)) * 100 + std::stoll(frac);
}

std::string price_input_text(int64_t cents) {
  std::string d = std::to_string(cents / 100);
  if (cents % 100) d.append(1, '.').append(std::to_string(100 + cents % 100).substr(1));
  return d;
}

listing_filter filter_from_query(sqlite_db& db, const param_list& q, std::vector<std::string>& problems) {
  listing_filter f;
  f.q = q.get("q");
  f.category = q.get("category");
  if (!f.category.empty() && !find_category(load_categories(db), f.category)) {
    problems.push_back("There is no category '" + f.category + "'; showing all categories.");
    f.category.clear();
  }
  auto price = [&](const char* name, const char* label, std::optional<int64_t>& out) {
    std::string v = q.get(name);
    if (v.empty()) return;
    out = parse_price_cents(v);
    if (!out) problems.push_back(std::string(label) + " price must be an amount in dollars, e.g. 250 or 19.99.");
  };
  price("min_price", "Minimum", f.min_cents);
  price("max_price", "Maximum", f.max_cents);
  f.condition = q.get("condition");
  if (!f.condition.empty() && condition_label(f.condition).empty()) {
    problems.push_back("Unknown condition '" + f.condition + "'; showing every condition.");
    f.condition.clear();
  }
  f.location = q.get("location");
  if (!f.location.empty()) {
    bool known = std::any_of(us_cities().begin(), us_cities().end(),
                             [&](const us_city& c) { return c.label() == f.location; });
    if (!known) {
      problems.push_back("Unknown location '" + f.location + "'; showing every location.");
      f.location.clear();
    }
  }
  std::string sort = q.get("sort", "newest");
  if (sort == "newest" || sort == "price_asc" || sort == "price_desc" || sort.empty()) {
    f.sort = sort.empty() ? "newest" : sort;
  } else {
    problems.push_back("Unknown sort order '" + sort + "'; showing the newest first.");
  }
  std::string page = q.get("page", "1");
  f.page = 1;
  if (!page.empty() && page.size() < 6 && std::all_of(page.begin(), page.end(), [](char c) { return c >= '0' && c <= '9'; })) f.page = std::stoi(page);
  return f;
}

std::string filter_query_string(const listing_filter& f, bool include_category) {
  std::string s;
  auto add = [&](const char* name, const std::string& v) {
    if (v.empty()) return;
    s += s.empty() ? '?' : '&';
    s += std::string(name) + "=" + url_encode(v, /*space_as_plus=*/true);
  };
  auto dollars = [](const std::optional<int64_t>& cents) { return cents ? price_input_text(*cents) : std::string(); };
  add("q", f.q);
  if (include_category) add("category", f.category);
  add("min_price", dollars(f.min_cents));
  add("max_price", dollars(f.max_cents));
  add("condition", f.condition);
  add("location", f.location);
  if (f.sort != "newest") add("sort", f.sort);
  if (f.page > 1) add("page", std::to_string(f.page));
  return s;
}

}  // namespace kvarena::sites::classifieds
