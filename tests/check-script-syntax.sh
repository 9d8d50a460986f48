#!/usr/bin/env bash
# check-script-syntax.sh: every shell script the repository tracks parses (`bash -n`), so a
# script that only runs by hand (evaluate.sh, demo.sh, the Slurm scripts) cannot ship broken.
# Usage: tests/check-script-syntax.sh REPO_ROOT
set -uo pipefail
cd "$1" || exit 2
bad=0
n=0
while IFS= read -r f; do
  n=$((n + 1))
  bash -n "$f" || { echo "check-script-syntax: $f does not parse" >&2; bad=1; }
done < <(git ls-files '*.sh' .ci/run 2>/dev/null || find scripts tests .ci \( -name '*.sh' -o -path .ci/run \))
[ "$n" -gt 0 ] || { echo "check-script-syntax: no scripts found under $1" >&2; exit 1; }
echo "check-script-syntax: $n scripts, $([ $bad = 0 ] && echo 'all parse' || echo 'some do not parse')"
exit "$bad"
