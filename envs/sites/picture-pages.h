// picture-pages.h: pictures on the sites' pages and their route (picture-pages.cpp).
//   GET <base>/images/{thumb|full}/{id}.png  the PNG of the item's row in `table` (404 when none)
//   GET <base>/images/query/{token}.png      its object-only view, for tasks' input images
// In result lists the thumbnail is the card's CSS background (`--thumb` on the existing
// <article>): no node is added, so the text browser's tree and ids of list pages stay as
// they were. Item pages show the full picture as an <img> with its alt text.
#pragma once
#include <string>
#include <string_view>

#include "picture.h"
#include "site.h"

namespace kvarena::sites {

void add_picture_routes(site_router& r, std::string table);

// "--thumb:url(<base>/images/thumb/ID.png)" when the item has a picture, else "".
std::string thumb_style(const page_context& ctx, std::string_view table, int64_t id);
// The URL of the item's full picture, or "" when it has none.
std::string picture_url(const page_context& ctx, std::string_view table, int64_t id);
// <figure class=cls><img src=full alt=alt></figure>, or nothing when the item has no picture.
html picture_figure(const page_context& ctx, std::string_view table, int64_t id, std::string_view alt,
                    std::string_view cls);

}  // namespace kvarena::sites
