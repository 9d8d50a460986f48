// site-style.h: the stylesheet route every site gets (GET <base>/static/site.css): the
// shared base rules (site-style.cpp: page frame, header, nav, forms, tables) followed by
// the site's own layout (site::stylesheet(), in site-<name>-style.cpp). Served with a
// long max-age; no page depends on it for content.
#pragma once
#include <string>
#include <string_view>

#include "site.h"

namespace kvarena::sites {

std::string_view base_stylesheet();
// base_stylesheet() + s.stylesheet().
std::string full_stylesheet(const site& s);
void add_style_routes(site_router& r, const site& s);

}  // namespace kvarena::sites
