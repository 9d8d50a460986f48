// picture.h: the picture of a product, listing or image post. Its attributes are site data
// (a `<kind>_pictures` table per site, seeded from a stream of its own so no older field
// changes), its PNG is drawn from them (picture-draw.cpp, Cairo) at the two sizes the sites
// serve, once per distinct attribute set and size (a process-wide cache), never per request.
//
//   GET <base>/images/{thumb|full}/{id}.png   (picture-routes in each site's browse file)
//
// What is drawn: `count` copies of `object` (a drawing of the item's category: mug, bike,
// headphones, ...) filled with `main_colour` and a `pattern` in `second_colour`, on a light
// background, with a badge of `shape` carrying the printed `label`.
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "seed-data.h"
#include "sqlite-db.h"

namespace kvarena::sites {

struct picture_attrs {
  std::string object;        // picture_objects(): "mug", "bike", ...
  std::string main_colour;   // picture_colours() name: "red", "midnight blue"
  std::string second_colour; // another picture_colours() name
  std::string pattern;       // picture_patterns(): solid | striped | dotted | checked
  std::string shape;         // picture_shapes(): the badge: circle | square | triangle | diamond | star
  int64_t count = 1;         // copies of the object, 1..4
  std::string label;         // printed on the badge: a letter and a digit, "K7"
};

const std::vector<std::string>& picture_objects();
const std::vector<std::string>& picture_patterns();
const std::vector<std::string>& picture_shapes();
// Colour names the pictures use, with their RGB (0..255).
struct picture_colour {
  std::string name;
  int r, g, b;
};
const std::vector<picture_colour>& picture_colours();
// The colour whose name is `name` (case-insensitive), or nullptr.
const picture_colour* find_picture_colour(std::string_view name);

// The object drawn for a category slug ("headphones" -> "headphones", "bicycles" -> "bike",
// anything unknown -> "box").
std::string picture_object_for(std::string_view category_slug);

// Draws the attributes not given: main_colour when empty, count when 0; the second colour
// always differs from the main one.
picture_attrs draw_picture_attrs(seed_rng& rng, std::string object, std::string main_colour, int64_t count);

// CREATE TABLE `table` (item_id INTEGER PRIMARY KEY, object, main_colour, second_colour,
// pattern, shape, item_count, label).
void create_picture_table(sqlite_db& db, std::string_view table);
void insert_picture(sqlite_db& db, std::string_view table, int64_t item_id, const picture_attrs& a);
std::optional<picture_attrs> load_picture(sqlite_db& db, std::string_view table, int64_t item_id);

// Sizes the sites serve.
struct picture_size {
  std::string_view name;  // "thumb" | "full"
  int width, height;
};
inline constexpr picture_size kPictureThumb{"thumb", 240, 180};
inline constexpr picture_size kPictureFull{"full", 640, 480};
// A re-rendered view for a task's input image (VWA's `image` field): the objects alone,
// square, no badge, at an opaque URL (picture_query_token) that names no id.
inline constexpr picture_size kPictureQuery{"query", 400, 400};

// The PNG of `a` at `size`, from the process-wide cache (drawn on first use).
std::shared_ptr<const std::string> picture_png(const picture_attrs& a, const picture_size& size);
// How many PNGs have been drawn so far (tests: a second request draws nothing).
int64_t pictures_drawn();

// "/images/full/12.png" relative to a site's base; query views: "/images/query/TOKEN.png".
std::string picture_path(std::string_view size_name, int64_t id);
// 16 hex digits from the item id (splitmix64): the query view's name.
std::string picture_query_token(int64_t id);

}  // namespace kvarena::sites
