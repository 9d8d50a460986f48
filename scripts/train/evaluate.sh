#!/usr/bin/env bash
# evaluate.sh: the agent model's acceptance measurements, in one go, full KV, temperature 0:
#   - kvarena run on tasks/vwa-local and tasks/long-horizon (site seed 1: never trained on)
#   - kvarena run on vwa-local generated and served with another unseen site seed (101)
#   - kvarena bench niah at 2K and 4K tokens
# and one JSON line per measurement (success with 95% Wilson intervals), then, per suite,
# the success on tasks whose objective never occurs word for word among the tasks of the
# training site seeds (seen_objectives.py: templated objectives repeat across seeds).
#   scripts/train/evaluate.sh [MODEL] [OUT_DIR]     (defaults: models/kvarena-agent.gguf, /tmp/kvarena-eval)
# Environment: KVARENA (build/kvarena), HISTORY (last or full; default: the model's
# kvarena.history, else full), JOBS (2), LIMIT (all tasks), SEED (101),
# TRAIN_SITE_SEEDS (150-249: the data's --site-seeds, A-B or a comma list), TRAIN_TASKS
# (OUT_DIR/train-tasks: their generated tasks, kept and reused when present), TRAIN_OBJECTIVES
# (space-separated text files of more trained objectives, one per line: train-data's
# retarget-objectives.txt).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
MODEL="${1:-$ROOT/models/kvarena-agent.gguf}"
OUT="${2:-/tmp/kvarena-eval}"
KVARENA="${KVARENA:-$ROOT/build/kvarena}"
HISTORY="${HISTORY:-}"
HISTORY_FLAG=()
[ -n "$HISTORY" ] && HISTORY_FLAG=(--history "$HISTORY")
JOBS="${JOBS:-2}"
SEED="${SEED:-101}"
TRAIN_SITE_SEEDS="${TRAIN_SITE_SEEDS:-150-249}"
TRAIN_TASKS="${TRAIN_TASKS:-$OUT/train-tasks}"
read -r -a OBJECTIVE_LISTS <<< "${TRAIN_OBJECTIVES:-}"
for f in "${OBJECTIVE_LISTS[@]}"; do
  [ -f "$f" ] || { echo "evaluate.sh: TRAIN_OBJECTIVES: no file $f" >&2; exit 2; }
done
LIMIT=()
[ -n "${LIMIT_TASKS:-}" ] && LIMIT=(--limit "$LIMIT_TASKS")
mkdir -p "$OUT"
rm -f "$OUT"/*.sqlite

wilson() {  # successes total -> "rate [lo, hi] (k/n)" (seen_objectives.py's)
  /usr/bin/python3 -c "import sys; sys.path.insert(0, sys.argv[1]); from seen_objectives import wilson; \
print(wilson(int(sys.argv[2]), int(sys.argv[3])))" "$ROOT/scripts/train" "$1" "$2"
}

suite_run() {  # name suite [extra run flags]
  local name="$1" suite="$2"; shift 2
  echo "[evaluate] $name: $suite (history: ${HISTORY:-as the model names it})" >&2
  "$KVARENA" run --suite "$suite" --model "$MODEL" --policies full "${HISTORY_FLAG[@]}" --jobs "$JOBS" --threads 1 \
    "${LIMIT[@]}" --out "$OUT/$name.sqlite" "$@" >/dev/null || true
  local k n
  k=$(sqlite3 "$OUT/$name.sqlite" "SELECT COALESCE(SUM(success),0) FROM task_results WHERE status='done'")
  n=$(sqlite3 "$OUT/$name.sqlite" "SELECT COUNT(*) FROM task_results")
  echo "{\"measure\":\"$name\",\"success\":\"$(wilson "$k" "$n")\"}"
}

suite_run vwa-local "$ROOT/tasks/vwa-local"
suite_run long-horizon "$ROOT/tasks/long-horizon"
"$KVARENA" tasks generate --seed "$SEED" --out "$OUT/seed-$SEED" >/dev/null 2>&1
suite_run "vwa-local-seed-$SEED" "$OUT/seed-$SEED/vwa-local" --site-seed "$SEED"

echo "[evaluate] niah 2K, 4K" >&2
"$KVARENA" bench niah --model "$MODEL" --lengths 2048,4096 --depths 0,0.1,0.2,0.3,0.4,0.5,0.6,0.7,0.8,0.9,1 \
  --policies full --threads 2 > "$OUT/niah.json"
python3 -c "
import json; r=json.load(open('$OUT/niah.json'))['results'][0]
by={}
for c in r['grid']: by.setdefault(c['length'],[]).append(c['correct'])
print(json.dumps({'measure':'niah','accuracy':{str(k):f'{sum(v)}/{len(v)}' for k,v in sorted(by.items())}}))"

if [ ! -d "$TRAIN_TASKS" ]; then
  echo "[evaluate] objectives of the training site seeds $TRAIN_SITE_SEEDS -> $TRAIN_TASKS" >&2
  mkdir -p "$TRAIN_TASKS.partial"
  for part in ${TRAIN_SITE_SEEDS//,/ }; do
    if [[ "$part" == *-* ]]; then seeds=$(seq "${part%-*}" "${part#*-}"); else seeds="$part"; fi
    for s in $seeds; do  # a seed that cannot instantiate every template adds what it has
      "$KVARENA" tasks generate --seed "$s" --out "$TRAIN_TASKS.partial/$s" >/dev/null 2>&1 || true
    done
  done
  if ! compgen -G "$TRAIN_TASKS.partial/*/vwa-local" >/dev/null; then
    echo "evaluate.sh: no tasks generated for site seeds '$TRAIN_SITE_SEEDS' (with $KVARENA)" >&2
    exit 1
  fi
  mv "$TRAIN_TASKS.partial" "$TRAIN_TASKS"
fi
seen_split() {  # name suite
  /usr/bin/python3 "$ROOT/scripts/train/seen_objectives.py" --name "$1-unseen-objectives" --suite "$2" \
    --db "$OUT/$1.sqlite" --train "$TRAIN_TASKS"/*/vwa-local "$TRAIN_TASKS"/*/long-horizon "${OBJECTIVE_LISTS[@]}"
}
seen_split vwa-local "$ROOT/tasks/vwa-local"
seen_split long-horizon "$ROOT/tasks/long-horizon"
seen_split "vwa-local-seed-$SEED" "$OUT/seed-$SEED/vwa-local"
