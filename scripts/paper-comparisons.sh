#!/usr/bin/env bash
# paper-comparisons.sh: the cache-policy comparisons of the CONF-KV / FreeKV papers on one
# model, at equal memory, into ONE SQLite file that `kvarena report` then shows whole:
#   1. long-horizon success retained vs full and the peak-KV ratio (kvarena run, full
#      history, every policy at each budget, plus the oracle's upper bound);
#   2. perplexity vs logical peak KV on text never trained on (bench ppl, a budget sweep);
#   3. NIAH accuracy per policy at 2K and 4K tokens (bench niah, the same sweep);
#   4. CONF-KV's confidence / KL Pearson r, teacher-forced on that text (bench confidence-kl).
# Every bench appends to the run's file (table bench_results), so the report and its HTML
# page carry all four. Measurements only: nothing here is tuned toward a result.
#
#   scripts/paper-comparisons.sh [MODEL] [OUT_DIR]   (models/kvarena-agent.gguf, /tmp/kvarena-paper)
# Environment: KVARENA (build/kvarena), BUDGETS (512t,1024t,2048t), POLICIES (all six, confkv
# also with INT8), LIMIT (long-horizon tasks; 30 = the suite, 0 = skip the run: it is the
# long part, ~1 min per task and policy on 2 cores), JOBS (2), TEXT_SEED (900: site content
# neither training nor the suites use), PPL_TOKENS (4096), NIAH_LENGTHS (2048,4096),
# NIAH_DEPTHS (0,0.25,0.5,0.75,1).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
MODEL="${1:-$ROOT/models/kvarena-agent.gguf}"
OUT="${2:-/tmp/kvarena-paper}"
KVARENA="${KVARENA:-$ROOT/build/kvarena}"
BUDGETS="${BUDGETS:-512t,1024t,2048t}"
POLICIES="${POLICIES:-full,window,h2o,confkv,confkv:kv-int8=1,confkv-l,freekv}"
LIMIT="${LIMIT:-30}"
JOBS="${JOBS:-2}"
TEXT_SEED="${TEXT_SEED:-900}"
PPL_TOKENS="${PPL_TOKENS:-4096}"
NIAH_DEPTHS="${NIAH_DEPTHS:-0,0.25,0.5,0.75,1}"
NIAH_LENGTHS="${NIAH_LENGTHS:-2048,4096}"
[ -x "$KVARENA" ] || { echo "paper-comparisons.sh: $KVARENA is not built" >&2; exit 2; }
[ -f "$MODEL" ] || { echo "paper-comparisons.sh: no model $MODEL" >&2; exit 2; }
mkdir -p "$OUT"
DB="$OUT/paper.sqlite"
rm -f "$DB"

if [ "$LIMIT" -gt 0 ]; then
  echo "[paper] long-horizon, $LIMIT tasks, full history, $POLICIES at $BUDGETS (+ oracle)" >&2
  "$KVARENA" run --suite "$ROOT/tasks/long-horizon" --model "$MODEL" --policies "$POLICIES" --kv-budget "$BUDGETS" \
    --history full --with-oracle --limit "$LIMIT" --jobs "$JOBS" --threads 1 --out "$DB" --name long-horizon \
    >/dev/null || [ $? = 4 ]  # 4: some items are error rows (counted as failures in the report)
fi

# Held-out text: the sites' pages and the agent's prompts on content seed TEXT_SEED.
if [ ! -s "$OUT/text-$TEXT_SEED/corpus.txt" ]; then
  echo "[paper] held-out text (site seed $TEXT_SEED)" >&2
  "$KVARENA" train-data --out "$OUT/text-$TEXT_SEED" --site-seeds "$TEXT_SEED" --niah 0 --kv 0 -j "$JOBS" \
    >/dev/null || [ $? = 4 ]
fi
TEXT="$OUT/text-$TEXT_SEED/corpus.txt"

echo "[paper] perplexity over $PPL_TOKENS tokens" >&2
"$KVARENA" bench ppl --model "$MODEL" --text "$TEXT" --max-tokens "$PPL_TOKENS" --policies "$POLICIES" \
  --kv-budget "$BUDGETS" --db "$DB" >/dev/null
echo "[paper] NIAH at $NIAH_LENGTHS tokens" >&2
"$KVARENA" bench niah --model "$MODEL" --lengths "$NIAH_LENGTHS" --depths "$NIAH_DEPTHS" --policies "$POLICIES" \
  --kv-budget "$BUDGETS" --db "$DB" >/dev/null
echo "[paper] confidence vs KL (teacher-forced on the held-out text)" >&2
"$KVARENA" bench confidence-kl --model "$MODEL" --text "$TEXT" --n-prompt 64 --n-gen 1024 --every 4 --ablate 32 \
  --policies full --db "$DB" >/dev/null

"$KVARENA" report "$DB" --html "$OUT/paper.html"
echo "[paper] wrote $DB and $OUT/paper.html" >&2
