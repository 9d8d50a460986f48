// site-forum-seed.cpp: the forum schema and its deterministic seed data: 24 fixed forums
// (site-forum-content.cpp), and from the seed: users, 360 posts (text and link posts
// with scores), threaded comments, and votes (authors upvote their own content, as on
// reddit; user 1 has voted on some posts and comments). Only seed_rng draws.
#include <algorithm>
#include <cctype>
#include <set>

#include "picture-seed.h"
#include "seed-data.h"
#include "site-auth.h"
#include "site-forum-content.h"
#include "site-forum.h"

namespace kvarena::sites {

namespace {

using forum::forum_def;

std::string fill(const char* tmpl, const std::string& topic) {
  std::string s = tmpl;
  for (size_t p; (p = s.find("{t}")) != std::string::npos;) s.replace(p, 3, topic);
  return s;
}

std::string capitalized(std::string s) {
  if (!s.empty()) s[0] = char(std::toupper(static_cast<unsigned char>(s[0])));
  return s;
}

void create_schema(sqlite_db& db) {
  create_users_table(db);
  db.exec(R"sql(
    CREATE TABLE forums (
      id INTEGER PRIMARY KEY,
      name TEXT NOT NULL UNIQUE COLLATE NOCASE,   -- URL segment: /f/books
      title TEXT NOT NULL,
      description TEXT NOT NULL,
      created_at TEXT NOT NULL
    );
    CREATE TABLE posts (
      id INTEGER PRIMARY KEY AUTOINCREMENT,
      forum_id INTEGER NOT NULL REFERENCES forums(id),
      user_id INTEGER NOT NULL REFERENCES users(id),
      title TEXT NOT NULL,
      url TEXT,                        -- NULL for a text post
      body TEXT NOT NULL DEFAULT '',
      score INTEGER NOT NULL,
      created_min INTEGER NOT NULL,    -- minutes since 2024-01-01 00:00 of the seeded world
      created_at TEXT NOT NULL,        -- the same time, "2024-03-05 14:07"
      edited_at TEXT
    );
    CREATE INDEX posts_forum ON posts(forum_id);
    CREATE INDEX posts_user ON posts(user_id);
    CREATE TABLE comments (
      id INTEGER PRIMARY KEY AUTOINCREMENT,
      post_id INTEGER NOT NULL REFERENCES posts(id),
      parent_id INTEGER REFERENCES comments(id),   -- NULL for a top-level comment
      user_id INTEGER NOT NULL REFERENCES users(id),
      body TEXT NOT NULL,
      score INTEGER NOT NULL,
      created_min INTEGER NOT NULL,
      created_at TEXT NOT NULL,
      edited_at TEXT,
      deleted INTEGER NOT NULL DEFAULT 0           -- 1: shown as [deleted] (it has replies)
    );
    CREATE INDEX comments_post ON comments(post_id);
    CREATE INDEX comments_user ON comments(user_id);
    CREATE TABLE post_votes (
      post_id INTEGER NOT NULL REFERENCES posts(id),
      user_id INTEGER NOT NULL REFERENCES users(id),
      value INTEGER NOT NULL CHECK (value IN (-1, 1)),
      PRIMARY KEY (post_id, user_id)
    );
    CREATE TABLE comment_votes (
      comment_id INTEGER NOT NULL REFERENCES comments(id),
      user_id INTEGER NOT NULL REFERENCES users(id),
      value INTEGER NOT NULL CHECK (value IN (-1, 1)),
      PRIMARY KEY (comment_id, user_id)
    );
  )sql");
}

int64_t seed_users(sqlite_db& db, seed_rng& rng) {
  auto ins = db.prepare(
      "INSERT INTO users (id, username, display_name, email, password, location, joined_at) "
      "VALUES (?1, ?2, ?2, ?3, ?4, '', ?5)");
  std::set<std::string> taken;
  auto add = [&](const std::string& username) {
    int64_t id = int64_t(taken.size()) + 1;
    taken.insert(username);
    std::string email = username;
    for (auto& c : email) c = char(std::tolower(static_cast<unsigned char>(c)));
    ins.bind_all({id, username, email + "@example.com", std::string(kSeededPassword),
                  seed_datetime(rng.uniform(0, 20 * 24 * 60))});
    ins.step();
    ins.reset();
  };
  add(forum::kFixedUsername);  // the account tasks log in as
  const auto& words = forum::username_words();
  while (int(taken.size()) < forum::kSeedUsers) {
    std::string a = rng.pick(words);
    std::string b = rng.pick(words);
    if (a == b) continue;
    int style = int(rng.uniform(0, 2));
    std::string name;
    if (style == 0)
      name = a + b + std::to_string(rng.uniform(1, 999));
    else if (style == 1)
      name = a + "_" + b;
    else
      name = "The" + a + b;
    if (style == 1)
      for (auto& c : name) c = char(std::tolower(static_cast<unsigned char>(c)));
    if (!taken.count(name)) add(name);
  }
  return int64_t(taken.size());
}

// A score with reddit's long tail: most posts a few points, a few thousands.
int64_t draw_score(seed_rng& rng, int64_t typical) {
  if (rng.chance(0.08)) return rng.uniform(-12, 0);
  if (rng.chance(0.04)) return rng.uniform(typical * 20, typical * 250);
  if (rng.chance(0.15)) return rng.uniform(typical * 2, typical * 20);
  return rng.uniform(1, typical * 2);
}

struct seeded_post {
  int64_t id, user_id, created_min;
  const forum_def* def;
  std::string topic;
};

std::vector<seeded_post> seed_posts(sqlite_db& db, seed_rng& rng, int64_t n_users) {
  const auto& defs = forum::forum_defs();
  auto fins = db.prepare("INSERT INTO forums (id, name, title, description, created_at) VALUES (?1, ?2, ?3, ?4, ?5)");
  int total_weight = 0;
  for (size_t i = 0; i < defs.size(); ++i) {
    fins.bind_all({int64_t(i) + 1, std::string(defs[i].name), std::string(defs[i].title),
                   std::string(defs[i].description), seed_datetime(int64_t(i) * 37)});
    fins.step();
    fins.reset();
    total_weight += defs[i].weight;
  }
  std::vector<int64_t> minutes(forum::kSeedPosts);
  for (auto& m : minutes) m = rng.uniform(24 * 60, kSeedNowMinutes - 30);
  std::sort(minutes.begin(), minutes.end());

  auto ins = db.prepare(
      "INSERT INTO posts (id, forum_id, user_id, title, url, body, score, created_min, created_at) "
      "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)");
  std::set<std::string> titles;
  std::vector<seeded_post> out;
  for (int i = 0; i < forum::kSeedPosts; ++i) {
    int64_t w = rng.uniform(0, total_weight - 1);
    size_t f = 0;
    while (w >= defs[f].weight) w -= defs[f++].weight;
    const forum_def& def = defs[f];
    std::string topic, title;
    for (int attempt = 0; attempt < 50; ++attempt) {
      topic = rng.pick(def.topics);
      title = capitalized(fill(rng.pick(def.titles), topic));
      if (!titles.count(title)) break;
    }
    if (titles.count(title)) title += " (part " + std::to_string(i) + ")";  // all combinations taken
    titles.insert(title);
    int64_t id = i + 1;
    int64_t user = i % 30 == 7 ? 1 : rng.uniform(2, n_users);  // user 1 posts every 30th
    sql_value url = nullptr;
    std::string body;
    if (rng.chance(0.25)) {
      std::string slug = forum::slugify(title).substr(0, 40);
      while (slug.size() > 1 && slug.back() == '-') slug.pop_back();
      url = "https://" + std::string(rng.pick(forum::link_domains())) + "/" + def.name + "/" + slug;
    } else {
      body = fill(rng.pick(def.bodies), topic);
      if (rng.chance(0.6)) body += "\n" + fill(rng.pick(def.comments), topic);
      if (rng.chance(0.3)) body += "\nEdit: thanks for all the replies!";
    }
    ins.bind_all({id, int64_t(f) + 1, user, title, url, body, draw_score(rng, 40), minutes[size_t(i)],
                  seed_datetime(minutes[size_t(i)])});
    ins.step();
    ins.reset();
    out.push_back({id, user, minutes[size_t(i)], &def, topic});
  }
  return out;
}

struct seeded_comment {
  int64_t id, post_id, user_id;
};

std::vector<seeded_comment> seed_comments(sqlite_db& db, seed_rng& rng, const std::vector<seeded_post>& posts,
                                          int64_t n_users) {
  auto ins = db.prepare(
      "INSERT INTO comments (id, post_id, parent_id, user_id, body, score, created_min, created_at) "
      "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)");
  std::vector<seeded_comment> out;
  for (const auto& p : posts) {
    int64_t n = rng.chance(0.1) ? 0 : rng.chance(0.06) ? rng.uniform(12, 24) : rng.uniform(1, 7);
    std::vector<int64_t> times(size_t(n), 0);
    int64_t room = std::max<int64_t>(2, std::min<int64_t>(3 * 24 * 60, kSeedNowMinutes - 1 - p.created_min));
    for (auto& t : times) t = p.created_min + rng.uniform(1, room);
    std::sort(times.begin(), times.end());
    std::vector<std::pair<int64_t, int>> mine;  // (comment id, depth) of this post, in time order
    for (int64_t k = 0; k < n; ++k) {
      int64_t id = int64_t(out.size()) + 1;
      int64_t parent = 0;
      int depth = 0;
      if (!mine.empty() && rng.chance(0.45)) {
        const auto& [pid, pdepth] = mine[rng.index(mine.size())];
        if (pdepth + 1 < forum::kMaxReplyDepth) {
          parent = pid;
          depth = pdepth + 1;
        }
      }
      int64_t user = id % 40 == 11 ? 1 : rng.uniform(2, n_users);  // user 1 comments now and then
      std::string body;
      if (parent != 0 && rng.chance(0.6))
        body = rng.pick(forum::reply_texts());
      else if (rng.chance(0.5))
        body = fill(rng.pick(p.def->comments), p.topic);
      else
        body = fill(rng.pick(forum::generic_comments()), p.topic);
      body = capitalized(body);
      ins.bind_all({id, p.id, parent ? sql_value(parent) : sql_value(nullptr), user, body, draw_score(rng, 6),
                    times[size_t(k)], seed_datetime(times[size_t(k)])});
      ins.step();
      ins.reset();
      mine.emplace_back(id, depth);
      out.push_back({id, p.id, user});
    }
  }
  return out;
}

void seed_votes(sqlite_db& db, seed_rng& rng, const std::vector<seeded_post>& posts,
                const std::vector<seeded_comment>& comments) {
  auto pv = db.prepare("INSERT OR IGNORE INTO post_votes (post_id, user_id, value) VALUES (?1, ?2, ?3)");
  auto cv = db.prepare("INSERT OR IGNORE INTO comment_votes (comment_id, user_id, value) VALUES (?1, ?2, ?3)");
  // Authors upvote what they write, as reddit does on submission (already in the score).
  for (const auto& p : posts) {
    pv.bind_all({p.id, p.user_id, int64_t(1)});
    pv.step();
    pv.reset();
  }
  for (const auto& c : comments) {
    cv.bind_all({c.id, c.user_id, int64_t(1)});
    cv.step();
    cv.reset();
  }
  // User 1's votes on others' content, so "my votes" are visible from the start.
  for (int i = 0; i < 20; ++i) {
    const auto& p = posts[rng.index(posts.size())];
    if (p.user_id == 1) continue;
    pv.bind_all({p.id, int64_t(1), rng.chance(0.8) ? int64_t(1) : int64_t(-1)});
    pv.step();
    pv.reset();
  }
  for (int i = 0; i < 20; ++i) {
    const auto& c = comments[rng.index(comments.size())];
    if (c.user_id == 1) continue;
    cv.bind_all({c.id, int64_t(1), rng.chance(0.8) ? int64_t(1) : int64_t(-1)});
    cv.step();
    cv.reset();
  }
}

}  // namespace

void site_forum::seed(sqlite_db& db, uint64_t seed) const {
  create_schema(db);
  seed_rng rng(seed, /*stream=*/0x72656464);  // "redd"
  int64_t n_users = seed_users(db, rng);
  auto posts = seed_posts(db, rng, n_users);
  auto comments = seed_comments(db, rng, posts, n_users);
  seed_votes(db, rng, posts, comments);
  seed_post_pictures(db, seed);  // a stream of its own: the rows above do not change
}

}  // namespace kvarena::sites
