// picture-seed.h: seeding the pictures tables of the three sites (picture-seed.cpp):
// product_pictures (every product), listing_pictures (every seeded listing with a photo),
// post_pictures (about a third of the text posts: the image posts).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "picture.h"

namespace kvarena::sites {

void seed_product_pictures(sqlite_db& db, uint64_t seed);

struct listing_picture_source {
  int64_t id;
  std::string colour;         // the listing's colour, as its photo description says
  std::string category_slug;  // its leaf category
  bool has_photo;             // image_alt not NULL
};
void seed_listing_pictures(sqlite_db& db, uint64_t seed, const std::vector<listing_picture_source>& listings);

void seed_post_pictures(sqlite_db& db, uint64_t seed);

}  // namespace kvarena::sites
