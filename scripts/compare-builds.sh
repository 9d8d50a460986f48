#!/usr/bin/env bash
# compare-builds.sh: are two kvarena builds' numbers the same? For a fixed random llama (GQA)
# and text, at fixed threads, prints per KV policy the mean NLL of `bench ppl` (every
# position's log-softmax, teacher-forced: any change in any logit shows) and the greedy
# tokens of `generate`, from OLD and NEW side by side, and SAME or DIFF. Exit 0 when all are
# the same, 1 otherwise.
#   scripts/compare-builds.sh OLD_KVARENA NEW_KVARENA [POLICY ...]
# Build an old commit with: git worktree add /tmp/old REV && cmake -S /tmp/old -B /tmp/old/build
# -G Ninja -DCMAKE_BUILD_TYPE=Release && cmake --build /tmp/old/build --target kvarena
set -euo pipefail
OLD="$1"; NEW="$2"; shift 2
POLICIES=("$@")
if [ ${#POLICIES[@]} -eq 0 ]; then
  POLICIES=(full window:window=64 window:window=48:sinks=4 h2o:heavy=32:recent=32
            confkv:n-high=32:n-low=96:protect=8:tau=1 confkv:n-high=32:n-low=96:protect=8
            confkv-l:n-high=32:n-low=96:protect=8:tau=1 confkv:n-high=32:n-low=96:protect=8:kv-int8=1:int8-window=32:tau=1
            freekv:budget=192:sinks=32:window=64:page=32)
fi
W="$(mktemp -d)"
trap 'rm -rf "$W"' EXIT
"$NEW" model random --arch llama --dim 128 --layers 3 --heads 4 --kv-heads 2 --ffn 256 --vocab 512 --ctx 1024 \
  --seed 11 --output-scale 3 --out "$W/m.gguf" >/dev/null
head -c 3000 "$(dirname "$0")/../README.md" > "$W/text.txt"
status=0
printf '%-58s %-24s %-24s %s\n' policy "nll old" "nll new" verdict
for p in "${POLICIES[@]}"; do
  nll() { "$1" bench ppl --model "$W/m.gguf" --text "$W/text.txt" --max-tokens 400 -t 2 --policies "$p" 2>/dev/null |
          python3 -c "import json,sys; print(repr(json.load(sys.stdin)['results'][0]['nll_mean']))"; }
  gen() { "$1" generate --model "$W/m.gguf" --prompt "The sites and the agent" -n 48 -t 2 --policy "${p}" --json 2>/dev/null |
          python3 -c "import json,sys; print(json.load(sys.stdin)['tokens'])"; }
  a="$(nll "$OLD")"; b="$(nll "$NEW")"; ga="$(gen "$OLD")"; gb="$(gen "$NEW")"
  v=SAME
  if [ "$a" != "$b" ] || [ "$ga" != "$gb" ]; then v=DIFF; status=1; fi
  printf '%-58s %-24s %-24s %s\n' "$p" "$a" "$b" "$v"
done
exit $status
