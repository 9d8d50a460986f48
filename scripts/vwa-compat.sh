#!/usr/bin/env bash
# vwa-compat.sh FILE...: the README's VisualWebArena/WebArena compatibility table, made anew
# from those projects' own task files (config_files/vwa/test_{classifieds,shopping,reddit}.raw.json
# of VisualWebArena, config_files/test.raw.json of WebArena; fetch them yourself: nothing is
# downloaded here). One markdown row per file from `kvarena tasks validate`, then the most
# frequent reasons per class. KVARENA: the binary (default build/kvarena).
set -euo pipefail
KVARENA="${KVARENA:-$(cd "$(dirname "$0")/.." && pwd)/build/kvarena}"
[ $# -gt 0 ] || { echo "usage: scripts/vwa-compat.sh FILE..." >&2; exit 2; }
echo "| file | tasks | run fully | degraded | cannot run | refused | warnings |"
echo "|---|---|---|---|---|---|---|"
for f in "$@"; do
  "$KVARENA" tasks validate "$f" 2>/dev/null | head -1 |
    sed -E 's#^(.*/)?([^/]*): ([0-9]+) tasks: ([0-9]+) run fully, ([0-9]+) degraded, ([0-9]+) cannot run, ([0-9]+) refused \(([0-9]+) warnings\)$#| \2 | \3 | \4 | \5 | \6 | \7 | \8 |#'
done
echo
echo "Most frequent reasons (all files):"
for f in "$@"; do "$KVARENA" tasks validate "$f" 2>/dev/null | tail -n +2; done |
  sed -E 's/^ +([a-z_]+) +([0-9]+)  (.*)$/\1\t\2\t\3/' |
  awk -F'\t' '{n[$1"\t"$3]+=$2} END {for (k in n) print n[k]"\t"k}' | sort -t$'\t' -k1,1nr | head -15 |
  awk -F'\t' '{printf "- %s, %d tasks: %s\n", $2, $1, $3}'
