// picture.cpp: picture attributes (word lists, the draw, the table) and the process-wide
// PNG cache (see picture.h). The drawing itself is in picture-draw.cpp.
#include "picture.h"

#include <map>
#include <mutex>

#include "picture-draw.h"
#include "splitmix64.h"

namespace kvarena::sites {

const std::vector<std::string>& picture_objects() {
  static const std::vector<std::string> v = {"box",  "mug",   "bottle", "shoe", "car",    "bike", "screen",
                                             "headphones", "camera", "book", "ball", "chair", "tent"};
  return v;
}
const std::vector<std::string>& picture_patterns() {
  static const std::vector<std::string> v = {"solid", "striped", "dotted", "checked"};
  return v;
}
const std::vector<std::string>& picture_shapes() {
  static const std::vector<std::string> v = {"circle", "square", "triangle", "diamond", "star"};
  return v;
}
const std::vector<picture_colour>& picture_colours() {
  // The first eight are the classifieds' listing colours; the rest name shopping variants.
  static const std::vector<picture_colour> v = {
      {"black", 34, 34, 34},     {"white", 245, 245, 245},   {"silver", 192, 192, 200}, {"gray", 128, 128, 128},
      {"red", 210, 40, 40},      {"blue", 40, 90, 210},      {"green", 40, 150, 60},    {"brown", 130, 80, 40},
      {"yellow", 240, 200, 30},  {"orange", 245, 130, 20},   {"purple", 130, 60, 170},  {"pink", 240, 130, 180},
      {"midnight blue", 25, 35, 90}, {"rose gold", 220, 150, 140}, {"graphite", 70, 70, 75}};
  return v;
}
const picture_colour* find_picture_colour(std::string_view name) {
  std::string n = lower_ascii(std::string(name));
  for (const auto& c : picture_colours())
    if (c.name == n) return &c;
  return nullptr;
}

std::string picture_object_for(std::string_view slug) {
  static const std::map<std::string, std::string, std::less<>> m = {
      {"headphones", "headphones"}, {"tv-audio", "headphones"},    {"musical-instruments", "headphones"},
      {"cameras-photo", "camera"},  {"cameras", "camera"},         {"tv-video", "screen"},
      {"computers", "screen"},      {"phones", "screen"},          {"consoles", "screen"},
      {"video-games", "screen"},    {"games", "screen"},           {"gaming-accessories", "screen"},
      {"kitchen-dining", "mug"},    {"coffee-tea", "mug"},         {"kitchen", "mug"},
      {"skin-care", "bottle"},      {"hair-care", "bottle"},       {"fragrance", "bottle"},
      {"makeup", "bottle"},         {"beverages", "bottle"},       {"pantry", "bottle"},
      {"vitamins", "bottle"},       {"household-supplies", "bottle"}, {"medical-supplies", "bottle"},
      {"shoes", "shoe"},            {"cars", "car"},               {"motorcycles", "car"},
      {"bicycles", "bike"},         {"cycling", "bike"},           {"furniture", "chair"},
      {"sofas-chairs", "chair"},    {"tables-desks", "chair"},     {"books", "book"},
      {"writing", "book"},          {"paper-notebooks", "book"},   {"desk-accessories", "book"},
      {"team-sports", "ball"},      {"exercise-fitness", "ball"},  {"fitness", "ball"},
      {"toys-games", "ball"},       {"camping-hiking", "tent"},    {"garden-outdoor", "tent"},
      {"winter-sports", "tent"}};
  auto it = m.find(slug);
  return it == m.end() ? "box" : it->second;
}

picture_attrs draw_picture_attrs(seed_rng& rng, std::string object, std::string main_colour, int64_t count) {
  picture_attrs a;
  a.object = std::move(object);
  const auto& colours = picture_colours();
  // One draw per statement, always the same number of draws, so the stream stays aligned.
  size_t main_i = rng.index(colours.size());
  size_t second_i = rng.index(colours.size() - 1);
  a.main_colour = main_colour.empty() ? colours[main_i].name : lower_ascii(main_colour);
  const picture_colour* mc = find_picture_colour(a.main_colour);
  size_t mi = mc ? size_t(mc - colours.data()) : colours.size();
  a.second_colour = colours[second_i >= mi ? second_i + 1 : second_i].name;
  a.pattern = rng.pick(picture_patterns());
  a.shape = rng.pick(picture_shapes());
  int64_t drawn_count = rng.chance(0.5) ? 1 : rng.uniform(2, 4);
  a.count = count > 0 ? count : drawn_count;
  std::string label(1, char('A' + rng.index(26)));
  label += char('0' + rng.index(10));
  a.label = label;
  return a;
}

void create_picture_table(sqlite_db& db, std::string_view table) {
  db.exec("CREATE TABLE " + std::string(table) +
          " (item_id INTEGER PRIMARY KEY, object TEXT NOT NULL, main_colour TEXT NOT NULL, "
          "second_colour TEXT NOT NULL, pattern TEXT NOT NULL, shape TEXT NOT NULL, item_count INTEGER NOT NULL, "
          "label TEXT NOT NULL)");
}

void insert_picture(sqlite_db& db, std::string_view table, int64_t item_id, const picture_attrs& a) {
  auto st = db.prepare("INSERT INTO " + std::string(table) +
                       " (item_id, object, main_colour, second_colour, pattern, shape, item_count, label) "
                       "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)");
  st.bind_all({item_id, a.object, a.main_colour, a.second_colour, a.pattern, a.shape, a.count, a.label});
  st.step();
}

std::optional<picture_attrs> load_picture(sqlite_db& db, std::string_view table, int64_t item_id) {
  auto st = db.prepare("SELECT object, main_colour, second_colour, pattern, shape, item_count, label FROM " +
                       std::string(table) + " WHERE item_id = ?1");
  st.bind_all({item_id});
  if (!st.step()) return std::nullopt;
  return picture_attrs{st.text(0), st.text(1), st.text(2), st.text(3), st.text(4), st.int64(5), st.text(6)};
}

namespace {
std::mutex g_cache_mu;
std::map<std::string, std::shared_ptr<const std::string>> g_cache;  // attrs + size -> PNG
int64_t g_drawn = 0;
}  // namespace

std::shared_ptr<const std::string> picture_png(const picture_attrs& a, const picture_size& size) {
  std::string key = a.object + '|' + a.main_colour + '|' + a.second_colour + '|' + a.pattern + '|' + a.shape + '|' +
                    std::to_string(a.count) + '|' + a.label + '|' + std::string(size.name) + '|' +
                    std::to_string(size.width) + 'x' + std::to_string(size.height);
  std::lock_guard lock(g_cache_mu);
  auto& slot = g_cache[key];
  if (!slot) {
    picture_spec spec{a.object, a.pattern, a.shape, a.label, a.count};
    spec.object_only = size.name == kPictureQuery.name;
    for (auto [name, rgb] : {std::pair{&a.main_colour, spec.main_rgb}, std::pair{&a.second_colour, spec.second_rgb}})
      if (const picture_colour* c = find_picture_colour(*name)) {
        rgb[0] = c->r / 255.0;
        rgb[1] = c->g / 255.0;
        rgb[2] = c->b / 255.0;
      }
    slot = std::make_shared<const std::string>(draw_picture_png(spec, size.width, size.height));
    ++g_drawn;
  }
  return slot;
}

int64_t pictures_drawn() {
  std::lock_guard lock(g_cache_mu);
  return g_drawn;
}

std::string picture_query_token(int64_t id) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx",
                static_cast<unsigned long long>(kvarena::splitmix64(uint64_t(id) ^ 0x7175657279ull)));  // "query"
  return buf;
}

std::string picture_path(std::string_view size_name, int64_t id) {
  if (size_name == kPictureQuery.name) return "/images/query/" + picture_query_token(id) + ".png";
  return "/images/" + std::string(size_name) + "/" + std::to_string(id) + ".png";
}

}  // namespace kvarena::sites
