// site-shopping-style.cpp: the shopping site's layout, in the manner of the Magento "Luma"
// storefront VisualWebArena's shopping site runs: white header with a grey category bar,
// a product grid of image cards (photo, name, price, rating stars, blue Add to Cart), and a
// product page with the photo left of the buy box. Written here; see site-style.h.
#include "site-shopping.h"

namespace kvarena::sites {

std::string_view site_shopping::stylesheet() const {
  return R"css(
:root { --page-bg: #fff; --link: #006bb4; --header-bg: #fff; --nav-bg: #f0f0f0; --button-bg: #1979c3; --button-border: #1979c3; }
.site-title a { color: #ff5501; }
main { box-shadow: none; }
ol.products { display: grid; grid-template-columns: repeat(auto-fill, minmax(220px, 1fr)); gap: 26px 20px;
  list-style: none; padding: 0; margin: 10px 0 20px; }
ol.products > li > article { display: flex; flex-direction: column; height: 100%; padding: 10px;
  border: 1px solid transparent; }
ol.products > li > article:hover { border-color: #ddd; box-shadow: 0 3px 8px rgba(0, 0, 0, 0.12); }
ol.products > li > article::before { content: ""; order: -1; width: 100%; aspect-ratio: 4 / 3; margin-bottom: 10px;
  background: var(--thumb, none) center / cover no-repeat #f5f5f5; }
ol.products h3 { font-weight: 400; font-size: 14px; min-height: 40px; }
ol.products h3 a { color: #333; }
.price { font-size: 18px; font-weight: 700; margin: 4px 0; color: #333; }
section[aria-label="Buy"] .price { font-size: 30px; font-weight: 600; }
.rating { font-size: 12px; color: #666; margin: 2px 0 10px; display: flex; align-items: center; gap: 6px; }
.rating::before { content: ""; display: inline-block; width: 76px; height: 14px; flex: none;
  background: linear-gradient(90deg, #ff5501 var(--fill, 0%), #d6d6d6 var(--fill, 0%));
  -webkit-mask: url("data:image/svg+xml,%3Csvg xmlns='http://www.w3.org/2000/svg' width='15.2' height='14'%3E%3Cpath d='M7 0l2 5h5l-4 3 1.6 5L7 10l-4.6 3L4 8 0 5h5z'/%3E%3C/svg%3E") repeat-x;
  mask: url("data:image/svg+xml,%3Csvg xmlns='http://www.w3.org/2000/svg' width='15.2' height='14'%3E%3Cpath d='M7 0l2 5h5l-4 3 1.6 5L7 10l-4.6 3L4 8 0 5h5z'/%3E%3C/svg%3E") repeat-x; }
ol.products form.inline { margin-top: 4px; }
ol.products form.inline + form.inline button, section[aria-label="Buy"] form.inline button {
  background: #eee; border-color: #cdcdcd; color: #333; font-weight: 400; }
.stock { color: #b30000; font-weight: 600; }
main:has(> figure.product-media) { display: grid; grid-template-columns: 440px 1fr; column-gap: 36px; align-content: start; }
main:has(> figure.product-media) > * { grid-column: 1 / -1; }
main > figure.product-media { grid-column: 1; grid-row: 3 / span 2; border: 1px solid #eee; }
main:has(> figure.product-media) > section[aria-label="Buy"] { grid-column: 2; grid-row: 3; }
section[aria-label="Buy"] { padding-top: 6px; }
section[aria-label="Buy"] form { margin: 12px 0; display: flex; align-items: end; gap: 10px; }
section[aria-label="Buy"] .field { margin: 0; width: 70px; }
section[aria-label="Buy"] button[type="submit"] { padding: 12px 28px; font-size: 16px; }
.sorter { display: flex; align-items: center; gap: 8px; justify-content: flex-end; margin: -36px 0 10px; }
.sorter .field { flex-direction: row; align-items: center; margin: 0; }
)css";
}

}  // namespace kvarena::sites
