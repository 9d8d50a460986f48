#!/usr/bin/env bash
# site-screenshots.sh: headless-Chromium screenshots of the home, list, item and search
# pages of each local site (classifieds, shopping, reddit), served by `kvarena sites`.
# Usage: scripts/site-screenshots.sh [KVARENA_BINARY] [OUT_DIR] [PREFIX]
#   defaults: build/kvarena, docs/images, "" (files OUT_DIR/PREFIX<site>-<page>.png)
# PNGs are written at SIZE (default 1280,900) and, when pngquant or optipng is installed, compressed.
# ONLY="shopping-list reddit-item" limits the pages (names as in PAGES below).
set -euo pipefail
BIN=${1:-build/kvarena}
OUT=${2:-docs/images}
PREFIX=${3:-}
CHROMIUM=${CHROMIUM:-/usr/bin/chromium}
PORT=${PORT:-$((20000 + RANDOM % 20000))}
mkdir -p "$OUT"
"$BIN" sites --port "$PORT" --seed 1 >/dev/null 2>&1 &
SERVER=$!
trap 'kill "$SERVER" 2>/dev/null || true' EXIT
for _ in $(seq 50); do curl -sf "http://127.0.0.1:$PORT/" >/dev/null && break; sleep 0.1; done
B="http://127.0.0.1:$PORT/main"
PAGES=(
  "classifieds-home $B/classifieds/"
  "classifieds-list $B/classifieds/category/bicycles"
  "classifieds-item $B/classifieds/item/3"
  "classifieds-search $B/classifieds/search?q=chair"
  "shopping-home $B/shopping/"
  "shopping-list $B/shopping/category/2"
  "shopping-item $B/shopping/product/3"
  "shopping-search $B/shopping/search?q=kettle"
  "reddit-home $B/reddit/"
  "reddit-list $B/reddit/f/photography"
  "reddit-item $B/reddit/post/7"
  "reddit-search $B/reddit/search?q=camera"
)
PROFILE=$(mktemp -d /tmp/kvarena-shots-XXXXXX)
for entry in "${PAGES[@]}"; do
  name=${entry%% *}
  url=${entry#* }
  if [ -n "${ONLY:-}" ] && [[ " $ONLY " != *" $name "* ]]; then continue; fi
  file="$OUT/$PREFIX$name.png"
  "$CHROMIUM" --headless --no-sandbox --disable-gpu --hide-scrollbars --user-data-dir="$PROFILE" \
    --window-size="${SIZE:-1280,900}" --screenshot="$file" "$url" >/dev/null 2>&1
  if command -v pngquant >/dev/null; then pngquant --force --skip-if-larger --output "$file" 64 "$file" || true
  elif command -v optipng >/dev/null; then optipng -quiet -o2 "$file" || true; fi
  echo "$file $(stat -c %s "$file") bytes"
done
rm -rf "$PROFILE"
