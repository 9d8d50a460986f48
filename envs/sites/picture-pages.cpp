// picture-pages.cpp: the picture route and the page pieces that show pictures (see
// picture-pages.h).
#include "picture-pages.h"

#include <charconv>

namespace kvarena::sites {

namespace {
bool has_picture(sqlite_db& db, std::string_view table, int64_t id) {
  auto st = db.prepare("SELECT 1 FROM " + std::string(table) + " WHERE item_id = ?1");
  st.bind_all({id});
  return st.step();
}
}  // namespace

void add_picture_routes(site_router& r, std::string table) {
  r.add("GET", "/images/{size}/{file}", [table](page_context& ctx) {
    const std::string& size = ctx.params["size"];
    const std::string& file = ctx.params["file"];
    int64_t id = 0;
    bool ok = file.size() > 4 && file.compare(file.size() - 4, 4, ".png") == 0;
    if (ok && size == kPictureQuery.name) {  // an opaque token: find the item it names
      std::string token = file.substr(0, file.size() - 4);
      auto st = ctx.db.prepare("SELECT item_id FROM " + table + " ORDER BY item_id");
      ok = false;
      while (!ok && st.step())
        if (picture_query_token(st.int64(0)) == token) id = st.int64(0), ok = true;
    } else if (ok) {
      auto [end, ec] = std::from_chars(file.data(), file.data() + file.size() - 4, id);
      ok = ec == std::errc() && end == file.data() + file.size() - 4 && id > 0;
    }
    const picture_size* ps = size == kPictureThumb.name  ? &kPictureThumb
                             : size == kPictureFull.name ? &kPictureFull
                             : size == kPictureQuery.name ? &kPictureQuery
                                                          : nullptr;
    auto attrs = ok && ps ? load_picture(ctx.db, table, id) : std::nullopt;
    if (!attrs) return http_response::error(404, "there is no such picture");
    http_response res;
    res.content_type = "image/png";
    res.body = *picture_png(*attrs, *ps);
    res.add_header("Cache-Control", "public, max-age=86400");
    return res;
  });
}

std::string thumb_style(const page_context& ctx, std::string_view table, int64_t id) {
  if (!has_picture(ctx.db, table, id)) return "";
  return "--thumb:url(" + ctx.url(picture_path(kPictureThumb.name, id)) + ")";
}

std::string picture_url(const page_context& ctx, std::string_view table, int64_t id) {
  return has_picture(ctx.db, table, id) ? ctx.url(picture_path(kPictureFull.name, id)) : "";
}

html picture_figure(const page_context& ctx, std::string_view table, int64_t id, std::string_view alt,
                    std::string_view cls) {
  std::string src = picture_url(ctx, table, id);
  if (src.empty()) return {};
  return element("figure", {{"class", std::string(cls)}},
                 void_element("img", {{"src", src},
                                      {"alt", std::string(alt)},
                                      {"width", std::to_string(kPictureFull.width)},
                                      {"height", std::to_string(kPictureFull.height)}}));
}

}  // namespace kvarena::sites
