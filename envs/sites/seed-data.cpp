// seed-data.cpp: deterministic generator, calendar and name lists (see seed-data.h).
#include "seed-data.h"

#include <cctype>
#include <cstdio>

#include "splitmix64.h"

namespace kvarena::sites {

seed_rng::seed_rng(uint64_t seed, uint64_t stream) : state_(seed * k_splitmix64_gamma ^ (stream + 1) * 0xD1B54A32D192ED03ull) {
  next();
}

uint64_t seed_rng::next() {  // splitmix64: the mix of the state before this step's increment
  const uint64_t out = splitmix64(state_);
  state_ += k_splitmix64_gamma;
  return out;
}

size_t seed_rng::index(size_t n) {
  // Lemire's multiply-shift: bias below 2^-40 for the sizes used here.
  return size_t((static_cast<unsigned __int128>(next()) * n) >> 64);
}

int64_t seed_rng::uniform(int64_t lo, int64_t hi) { return lo + int64_t(index(size_t(hi - lo) + 1)); }

bool seed_rng::chance(double p) { return double(next() >> 11) * 0x1.0p-53 < p; }

std::string seed_datetime(int64_t minutes) {
  // civil_from_days (H. Hinnant), days counted from 1970-01-01; 2024-01-01 is day 19723.
  int64_t z = 19723 + minutes / (24 * 60) + 719468;
  int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  int64_t doe = z - era * 146097;
  int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  int64_t mp = (5 * doy + 2) / 153;
  int64_t d = doy - (153 * mp + 2) / 5 + 1;
  int64_t m = mp < 10 ? mp + 3 : mp - 9;
  int64_t y = yoe + era * 400 + (m <= 2);
  int64_t in_day = minutes % (24 * 60);
  char buf[64];
  std::snprintf(buf, sizeof buf, "%04lld-%02lld-%02lld %02lld:%02lld", (long long)y, (long long)m, (long long)d,
                (long long)(in_day / 60), (long long)(in_day % 60));
  return buf;
}

std::string seed_now() { return seed_datetime(kSeedNowMinutes); }

const std::vector<std::string>& first_names() {
  static const std::vector<std::string> v = {
      "Olivia", "Liam",   "Emma",    "Noah",   "Ava",     "Mateo",  "Sophia", "Elijah", "Mia",    "Lucas",
      "Amelia", "James",  "Harper",  "Ethan",  "Evelyn",  "Daniel", "Aria",   "Henry",  "Chloe",  "Jack",
      "Priya",  "Wei",    "Fatima",  "Diego",  "Hannah",  "Omar",   "Grace",  "Kenji",  "Zoe",    "Samuel",
      "Nora",   "Isaac",  "Leila",   "Marcus", "Rosa",    "Tariq",  "Elena",  "Jonah",  "Maya",   "Felix"};
  return v;
}

const std::vector<std::string>& last_names() {
  static const std::vector<std::string> v = {
      "Garcia",  "Smith",   "Johnson", "Nguyen",  "Patel",   "Kim",     "Brown",  "Martinez", "Lee",
      "Walker",  "Chen",    "Lopez",   "Wilson",  "Clark",   "Rivera",  "Young",  "Hall",     "Allen",
      "Wright",  "Scott",   "Torres",  "Hill",    "Adams",   "Baker",   "Nelson", "Carter",   "Mitchell",
      "Roberts", "Turner",  "Phillips", "Campbell", "Parker", "Evans",  "Edwards", "Collins", "Stewart"};
  return v;
}

const std::vector<us_city>& us_cities() {
  static const std::vector<us_city> v = {
      {"Pittsburgh", "PA"}, {"Philadelphia", "PA"}, {"Columbus", "OH"},  {"Cleveland", "OH"},
      {"Chicago", "IL"},    {"Detroit", "MI"},      {"Boston", "MA"},    {"New York", "NY"},
      {"Baltimore", "MD"},  {"Richmond", "VA"},     {"Atlanta", "GA"},   {"Nashville", "TN"},
      {"Austin", "TX"},     {"Denver", "CO"},       {"Seattle", "WA"},   {"Portland", "OR"},
      {"San Diego", "CA"},  {"Sacramento", "CA"},   {"Phoenix", "AZ"},   {"Minneapolis", "MN"}};
  return v;
}

std::string lower_ascii(std::string s) {
  for (auto& c : s) c = char(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::string replace_s(const char* tmpl, const std::string& value) {
  std::string s = tmpl;
  if (size_t p = s.find("%s"); p != std::string::npos) s.replace(p, 2, value);
  return s;
}

void create_categories_table(sqlite_db& db) {
  db.exec(R"sql(
    CREATE TABLE categories (
      id INTEGER PRIMARY KEY,
      parent_id INTEGER REFERENCES categories(id),  -- NULL for a top category
      slug TEXT NOT NULL UNIQUE,
      name TEXT NOT NULL,
      position INTEGER NOT NULL
    ))sql");
}

category_writer::category_writer(sqlite_db& db)
    : ins_(db.prepare("INSERT INTO categories (id, parent_id, slug, name, position) VALUES (?1, ?2, ?3, ?4, ?5)")) {}

int64_t category_writer::add_top(const std::string& slug, const std::string& name) {
  top_id_ = ++id_;
  pos_ = 0;
  ins_.bind_all({top_id_, nullptr, slug, name, ++top_pos_});
  ins_.step();
  ins_.reset();
  return top_id_;
}

int64_t category_writer::add_leaf(const std::string& slug, const std::string& name) {
  ins_.bind_all({++id_, top_id_, slug, name, ++pos_});
  ins_.step();
  ins_.reset();
  return id_;
}

}  // namespace kvarena::sites
