// seed-data.h: what the sites' seed functions draw from, so that the same seed gives
// byte-identical content on every machine and compiler: a splitmix64 generator with its
// own integer ranges (std:: distributions differ between standard libraries), a fixed
// calendar (the seeded world runs from 2024-01-01 to kSeedNow; no wall clock anywhere),
// and shared name and place lists.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace kvarena::sites {

class sqlite_db;

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

}  // namespace kvarena::sites
