// site-style.cpp: the base stylesheet the three sites share (page frame, header bar,
// horizontal navigation, search box, forms, buttons, tables, pagination) and the
// /static/site.css route (see site-style.h). Written for this project; each site's own
// layout (product grid, listing grid, post list) is in site-<name>-style.cpp.
#include "site-style.h"

namespace kvarena::sites {

std::string_view base_stylesheet() {
  return R"css(
*, *::before, *::after { box-sizing: border-box; }
html { background: var(--page-bg, #f4f4f4); }
body { margin: 0; font: 14px/1.45 "DejaVu Sans", "Helvetica Neue", Arial, sans-serif; color: #333; }
a { color: var(--link, #1979c3); text-decoration: none; }
a:hover { text-decoration: underline; }
body > header { display: flex; flex-wrap: wrap; align-items: center; gap: 8px 20px; padding: 10px 24px;
  background: var(--header-bg, #fff); color: var(--header-fg, #333); border-bottom: 1px solid #d6d6d6; }
body > header a { color: var(--header-link, inherit); }
.site-title { margin: 0; font-size: 24px; font-weight: 700; letter-spacing: -0.5px; }
body > header nav { order: 5; flex-basis: calc(100% + 48px); margin: 0 -24px -10px; padding: 0 24px;
  background: var(--nav-bg, #f0f0f0); border-top: 1px solid #e3e3e3; }
body > header nav ul { display: flex; flex-wrap: wrap; margin: 0; padding: 0; list-style: none; }
body > header nav li a { display: block; padding: 9px 12px; color: var(--nav-fg, #333); font-weight: 600; font-size: 13px; }
body > header nav li a:hover { background: rgba(0, 0, 0, 0.06); text-decoration: none; }
form[role="search"] { display: flex; align-items: center; gap: 6px; margin-left: auto; }
form[role="search"] label { font-size: 13px; color: var(--header-muted, #666); }
form[role="search"] input { width: 340px; padding: 7px 10px; border: 1px solid #c2c2c2; border-radius: 3px; font: inherit; }
.account { font-size: 13px; display: flex; align-items: center; gap: 6px; }
main { display: flow-root; max-width: 1240px; margin: 18px auto; padding: 18px 24px 28px; background: var(--main-bg, #fff);
  border-radius: 4px; box-shadow: 0 1px 3px rgba(0, 0, 0, 0.08); }
main h1 { margin: 0 0 14px; font-size: 28px; font-weight: 400; }
main h2 { font-size: 18px; font-weight: 600; margin: 18px 0 10px; }
main h3 { font-size: 15px; margin: 6px 0; }
footer { max-width: 1240px; margin: 0 auto 24px; padding: 0 24px; color: #777; font-size: 12px; }
button, input[type="submit"] { font: inherit; font-size: 13px; padding: 6px 14px; border-radius: 3px; cursor: pointer;
  border: 1px solid var(--button-border, #1979c3); background: var(--button-bg, #1979c3); color: #fff; font-weight: 600; }
button:hover { filter: brightness(1.08); }
input, select, textarea { font: inherit; padding: 6px 8px; border: 1px solid #c2c2c2; border-radius: 3px; background: #fff; }
form.inline { display: inline-block; margin: 0 4px 0 0; }
.field { margin: 0 0 12px; display: flex; flex-direction: column; gap: 4px; max-width: 520px; }
.field label { font-weight: 600; }
.field-error, .errors { color: #b30000; }
.notice { padding: 10px 14px; background: #e5efe5; color: #006400; border-radius: 3px; }
table { border-collapse: collapse; width: 100%; margin: 10px 0; }
th, td { text-align: left; padding: 8px 10px; border-bottom: 1px solid #e4e4e4; vertical-align: top; }
th { background: #f7f7f7; font-weight: 600; }
nav[aria-label="Breadcrumb"] ol, nav[aria-label="Breadcrumbs"] ol { display: flex; gap: 6px; list-style: none; padding: 0; margin: 0 0 10px; font-size: 12px; }
nav[aria-label="Breadcrumb"] li + li, nav[aria-label="Breadcrumbs"] li + li { padding-left: 8px; border-left: 1px solid #ccc; }
nav[aria-label="Pagination"] ul, nav[aria-label="Pages"] ul { display: flex; gap: 4px; list-style: none; padding: 0; }
nav[aria-label="Pagination"] a, nav[aria-label="Pages"] a { display: block; padding: 4px 10px; border: 1px solid #d6d6d6; border-radius: 3px; }
.summary { color: #666; }
.empty { color: #777; font-style: italic; }
figure { margin: 0 0 16px; }
img { max-width: 100%; height: auto; display: block; }
)css";
}

std::string full_stylesheet(const site& s) {
  std::string css(base_stylesheet());
  css += s.stylesheet();
  return css;
}

void add_style_routes(site_router& r, const site& s) {
  std::string css = full_stylesheet(s);
  r.add("GET", std::string(kStylesheetPath), [css](page_context&) {
    http_response res;
    res.content_type = "text/css; charset=utf-8";
    res.body = css;
    res.add_header("Cache-Control", "public, max-age=86400");
    return res;
  });
}

}  // namespace kvarena::sites
