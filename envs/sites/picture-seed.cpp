// picture-seed.cpp: the pictures of the seeded products, listings and image posts (see
// picture.h), each site's from a stream of its own (seed_rng(seed, kPictureStream ^ site)),
// so the rows every other table had before pictures existed stay byte-identical.
#include "picture-seed.h"

#include <map>

namespace kvarena::sites {

namespace {
constexpr uint64_t kPictureStream = 0x70696374;  // "pict"
}

void seed_product_pictures(sqlite_db& db, uint64_t seed) {
  create_picture_table(db, "product_pictures");
  seed_rng rng(seed, kPictureStream ^ 0x73686f70);  // "shop"
  auto st = db.prepare(
      "SELECT p.id, p.name, c.slug FROM products p JOIN categories c ON c.id = p.category_id ORDER BY p.id");
  std::vector<std::tuple<int64_t, std::string, std::string>> rows;
  while (st.step()) rows.emplace_back(st.int64(0), st.text(1), st.text(2));
  for (const auto& [id, name, slug] : rows) {
    // The variant after the comma names the colour ("..., Midnight Blue") or the count
    // ("..., 2 Pack", "..., 3 Piece") where it can; the picture agrees with the name.
    std::string variant = name.substr(name.rfind(", ") == std::string::npos ? name.size() : name.rfind(", ") + 2);
    std::string colour = find_picture_colour(variant) ? variant : "";
    int64_t count = 0;
    if (variant.size() > 2 && variant[0] >= '2' && variant[0] <= '4' && variant[1] == ' ') count = variant[0] - '0';
    insert_picture(db, "product_pictures", id, draw_picture_attrs(rng, picture_object_for(slug), colour, count));
  }
}

void seed_listing_pictures(sqlite_db& db, uint64_t seed, const std::vector<listing_picture_source>& listings) {
  create_picture_table(db, "listing_pictures");
  seed_rng rng(seed, kPictureStream ^ 0x636c6173);  // "clas"
  for (const auto& l : listings) {
    picture_attrs a = draw_picture_attrs(rng, picture_object_for(l.category_slug), l.colour, 0);
    if (l.has_photo) insert_picture(db, "listing_pictures", l.id, a);
  }
}

void seed_post_pictures(sqlite_db& db, uint64_t seed) {
  create_picture_table(db, "post_pictures");
  seed_rng rng(seed, kPictureStream ^ 0x72656464);  // "redd"
  static const std::map<std::string, std::string> by_forum = {
      {"photography", "camera"}, {"gaming", "screen"}, {"books", "book"},      {"movies", "screen"},
      {"television", "screen"},  {"music", "headphones"}, {"sports", "ball"},  {"nba", "ball"},
      {"fitness", "ball"},       {"food", "mug"},      {"travel", "tent"},    {"DIY", "chair"},
      {"technology", "screen"},  {"pittsburgh", "car"}};
  auto st = db.prepare(
      "SELECT p.id, f.name FROM posts p JOIN forums f ON f.id = p.forum_id WHERE p.url IS NULL ORDER BY p.id");
  std::vector<std::pair<int64_t, std::string>> rows;
  while (st.step()) rows.emplace_back(st.int64(0), st.text(1));
  for (const auto& [id, forum] : rows) {
    // One draw per statement, the same draws for every post.
    bool image_post = rng.chance(0.35);
    const std::string& any = rng.pick(picture_objects());
    auto it = by_forum.find(forum);
    picture_attrs a = draw_picture_attrs(rng, it == by_forum.end() ? any : it->second, "", 0);
    if (image_post) insert_picture(db, "post_pictures", id, a);
  }
}

}  // namespace kvarena::sites
