// seed-data.h: what the sites' seed functions draw from, so that the same seed gives
// byte-identical content on every machine and compiler: a splitmix64 generator with its
// own integer ranges (std:: distributions differ between standard libraries), a fixed
// calendar (the seeded world runs from 2024-01-01 to kSeedNow; no wall clock anywhere),
// and shared name and place lists.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "sqlite-db.h"

namespace kvarena::sites {

class seed_rng {
 public:
  // `stream` separates independent draws (one per table, say) from the same seed.
  explicit seed_rng(uint64_t seed, uint64_t stream = 0);
  uint64_t next();
  int64_t uniform(int64_t lo, int64_t hi);  // inclusive; lo <= hi
  size_t index(size_t n);                   // [0, n); n > 0
  bool chance(double p);                    // true with probability p
  template <class T>
  const T& pick(const std::vector<T>& v) {
    return v[index(v.size())];
  }

 private:
  uint64_t state_;
};

// Minutes since 2024-01-01 00:00 of the seeded world -> "2024-03-05 14:07".
std::string seed_datetime(int64_t minutes);
// The seeded world's "now": seeded content is older; content made during an episode is
// stamped with this time (so state after a task is reproducible too).
inline constexpr int64_t kSeedNowMinutes = 182 * 24 * 60 + 9 * 60;  // 2024-07-01 09:00
std::string seed_now();

const std::vector<std::string>& first_names();
const std::vector<std::string>& last_names();

struct us_city {
  std::string name;   // "Pittsburgh"
  std::string state;  // "PA"
  std::string label() const { return name + ", " + state; }
};
const std::vector<us_city>& us_cities();

// ASCII lower case: "Emma" -> "emma".
std::string lower_ascii(std::string s);
// `tmpl` with its first "%s" replaced by `value`.
std::string replace_s(const char* tmpl, const std::string& value);

// The two-level category tree table of the classifieds and shopping sites.
void create_categories_table(sqlite_db& db);

// Inserts rows into `categories` with ids 1, 2, ... in the order added; positions count
// from 1 among the tops and among each top's leaves.
class category_writer {
 public:
  explicit category_writer(sqlite_db& db);
  int64_t add_top(const std::string& slug, const std::string& name);
  int64_t add_leaf(const std::string& slug, const std::string& name);  // under the last top

 private:
  sqlite_stmt ins_;
  int64_t id_ = 0, top_id_ = 0, top_pos_ = 0, pos_ = 0;
};

// Writes a catalogue (tops with .slug, .name and .leaves, leaves with .slug and .name) into
// `categories`; returns each leaf's id with its definition, in catalogue order.
template <class Top>
auto seed_category_tree(sqlite_db& db, const std::vector<Top>& tops) {
  using leaf = typename decltype(Top::leaves)::value_type;
  std::vector<std::pair<int64_t, const leaf*>> leaves;
  category_writer w(db);
  for (const auto& top : tops) {
    w.add_top(top.slug, top.name);
    for (const auto& l : top.leaves) leaves.emplace_back(w.add_leaf(l.slug, l.name), &l);
  }
  return leaves;
}

}  // namespace kvarena::sites
