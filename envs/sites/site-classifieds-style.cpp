// site-classifieds-style.cpp: the classifieds board's layout, in the manner of the
// OSClass board VisualWebArena's classifieds site runs: dark header bar with a wide search
// box, filters in a left column, listings as a grid of photo cards (photo, title, green
// price, condition and place), and a listing page with a large photo. Written here; see
// site-style.h.
#include "site-classifieds.h"

namespace kvarena::sites {

std::string_view site_classifieds::stylesheet() const {
  return R"css(
:root { --page-bg: #eef1f4; --link: #2a6eb5; --header-bg: #26364a; --header-fg: #fff; --header-link: #fff;
  --header-muted: #c6d0db; --nav-bg: #1d2a3a; --nav-fg: #e8eef5; --button-bg: #f39c12; --button-border: #e08e0b; }
.site-title a::first-letter { color: #f39c12; }
body > header { border-bottom: 0; }
main > section[aria-label="Filters"] { float: left; width: 250px; margin: 0 24px 20px 0; padding: 12px 14px;
  background: #f7f9fb; border: 1px solid #e1e6ec; border-radius: 4px; }
main > section[aria-label="Filters"] h2 { margin-top: 0; }
main > section[aria-label="Filters"] .field { max-width: none; }
main > section[aria-label="Filters"] input, main > section[aria-label="Filters"] select { width: 100%; }
main > section[aria-label="Filters"] ~ section { overflow: hidden; }
ol.results { display: grid; grid-template-columns: repeat(auto-fill, minmax(200px, 1fr)); gap: 16px;
  list-style: none; padding: 0; margin: 10px 0 20px; }
ol.results > li > article { display: flex; flex-direction: column; height: 100%; background: #fff;
  border: 1px solid #dfe4ea; border-radius: 4px; overflow: hidden; }
ol.results > li > article::before { content: ""; order: -1; width: 100%; aspect-ratio: 4 / 3;
  background: var(--thumb, none) center / cover no-repeat #e9edf1; }
ol.results h3 { padding: 8px 10px 0; font-size: 14px; }
ol.results .meta { padding: 0 10px 10px; margin: 4px 0 0; font-size: 12px; color: #667; }
.price { font-size: 22px; font-weight: 700; color: #2e8b3a; margin: 4px 0 12px; }
main > figure { max-width: 640px; border: 1px solid #dfe4ea; border-radius: 4px; overflow: hidden; background: #f7f9fb; }
dl { display: grid; grid-template-columns: 140px 1fr; gap: 6px 12px; }
dt { font-weight: 600; color: #555; }
dd { margin: 0; }
)css";
}

}  // namespace kvarena::sites
