// site-forum-style.cpp: the forum's layout, in the manner of the Postmill forum
// VisualWebArena's reddit site runs: blue header bar, a post list with a vote column
// (upvote, score, downvote) left of each post's thumbnail, title and meta line, and a
// post page with its image. Written here; see site-style.h.
#include "site-forum.h"

namespace kvarena::sites {

std::string_view site_forum::stylesheet() const {
  return R"css(
:root { --page-bg: #dae0e6; --link: #0f5ba7; --header-bg: #1565c0; --header-fg: #fff; --header-link: #fff;
  --header-muted: #d5e4f7; --nav-bg: #0d4f9c; --nav-fg: #fff; --button-bg: #1565c0; --button-border: #0d4f9c; }
body > header { border-bottom: 0; }
ol.posts { list-style: none; padding: 0; margin: 8px 0; }
ol.posts > li { margin: 0 0 8px; }
ol.posts > li > article { display: grid; grid-template-columns: 64px auto 1fr; column-gap: 12px; align-items: start;
  padding: 8px 10px; background: #fff; border: 1px solid #ccc; border-radius: 4px; }
ol.posts > li > article > * { grid-column: 3; margin: 2px 0; }
ol.posts > li > article > .vote { grid-column: 1; grid-row: 1 / span 4; }
ol.posts > li > article[style]::before { content: ""; grid-column: 2; grid-row: 1 / span 4; width: 96px; height: 72px;
  border-radius: 3px; background: var(--thumb, none) center / cover no-repeat #e4e9ef; }
ol.posts h3 { font-size: 16px; font-weight: 500; }
ol.posts h3 a { color: #222; }
.domain { font-size: 12px; color: #888 !important; }
.meta { font-size: 12px; color: #777; }
.vote { display: flex; flex-direction: column; align-items: center; gap: 2px; }
.vote form.inline { margin: 0; }
.vote button { background: #f2f4f6; border: 1px solid #c9d1d9; color: #556; font-size: 11px; font-weight: 600;
  padding: 2px 6px; width: 64px; }
.vote button[aria-pressed="true"] { background: #ff6a00; border-color: #e25e00; color: #fff; }
.vote form:last-child button[aria-pressed="true"] { background: #6a5cff; border-color: #5a4ce0; }
.score { font-weight: 700; font-size: 13px; color: #1a1a1b; padding: 2px 0; }
main > .vote { flex-direction: row; gap: 8px; margin: 10px 0; }
main:has(> figure.post-image) { display: flex; flex-direction: column; }
main:has(> figure.post-image) > .vote, main:has(> figure.post-image) > ul, main:has(> figure.post-image) > section { order: 2; }
figure.post-image { order: 1; max-width: 640px; margin: 12px 0; }
.forum-name { font-weight: 700; color: #1565c0; }
main > section[aria-label="Posts"] { overflow: hidden; }
nav[aria-label="Sort posts"] ul { display: flex; gap: 4px; list-style: none; padding: 0; margin: 8px 0; border-bottom: 2px solid #1565c0; }
nav[aria-label="Sort posts"] a { display: block; padding: 6px 16px; border-radius: 4px 4px 0 0; background: #eef2f7; font-weight: 600; }
nav[aria-label="Sort posts"] a[aria-current="page"] { background: #1565c0; color: #fff; }
)css";
}

}  // namespace kvarena::sites
