#!/usr/bin/env bash
# vwa-compat.sh FILE...: the README's VisualWebArena/WebArena compatibility tables, made anew
# from those projects' own task files (config_files/vwa/test_{classifieds,shopping,reddit}.raw.json
# of VisualWebArena, config_files/test.raw.json of WebArena; fetch them yourself: nothing is
# downloaded here). One table per configuration `kvarena tasks validate` is told about:
#   1. as is: the text browser, kvarena's local sites, no judge, no VQA endpoint
#   2. + a judge and every site by URL (--judge-url, --site NAME=URL for all eight names)
#   3. + Chromium (--browser chromium): what is left needs a vision-language model
#   4. + a VQA endpoint (--vqa-url): everything configured
# then the most frequent reasons of configuration 1. No URL is contacted (validate only
# reads the files). KVARENA: the binary (default build/kvarena).
set -euo pipefail
KVARENA="${KVARENA:-$(cd "$(dirname "$0")/.." && pwd)/build/kvarena}"
[ $# -gt 0 ] || { echo "usage: scripts/vwa-compat.sh FILE..." >&2; exit 2; }
SITES=()
for s in classifieds shopping shopping_admin reddit gitlab wikipedia map homepage; do
  SITES+=(--site "$s=http://127.0.0.1:1")
done
JUDGE=(--judge-url http://127.0.0.1:1/v1/chat/completions)
CHROMIUM=(--browser chromium)
VQA=(--vqa-url http://127.0.0.1:1/v1)

table() {  # title, then the validate flags
  local title=$1; shift
  echo "**$title**"
  echo
  echo "| file | tasks | run fully | degraded | cannot run | refused | warnings |"
  echo "|---|---|---|---|---|---|---|"
  for f in "${FILES[@]}"; do
    "$KVARENA" tasks validate "$@" "$f" 2>/dev/null | head -1 |
      sed -E 's#^(.*/)?([^/]*): ([0-9]+) tasks: ([0-9]+) run fully, ([0-9]+) degraded, ([0-9]+) cannot run, ([0-9]+) refused \(([0-9]+) warnings\)$#| \2 | \3 | \4 | \5 | \6 | \7 | \8 |#'
  done
  echo
}
FILES=("$@")
table "As is (text browser, local sites, no judge)"
table "With a judge and every site by URL (--judge-url, --site NAME=URL)" "${JUDGE[@]}" "${SITES[@]}"
table "+ Chromium (--browser chromium)" "${JUDGE[@]}" "${SITES[@]}" "${CHROMIUM[@]}"
table "Everything configured (+ --vqa-url)" "${JUDGE[@]}" "${SITES[@]}" "${CHROMIUM[@]}" "${VQA[@]}"

echo "Most frequent reasons as is (all files):"
for f in "$@"; do "$KVARENA" tasks validate "$f" 2>/dev/null | tail -n +2; done |
  sed -E 's/^ +([a-z_]+) +([0-9]+)  (.*)$/\1\t\2\t\3/' |
  awk -F'\t' '{n[$1"\t"$3]+=$2} END {for (k in n) print n[k]"\t"k}' | sort -t$'\t' -k1,1nr | head -15 |
  awk -F'\t' '{printf "- %s, %d tasks: %s\n", $2, $1, $3}'
