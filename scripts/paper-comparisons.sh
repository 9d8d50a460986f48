#!/usr/bin/env bash
# paper-comparisons.sh: the claims of the CONF-KV and FreeKV papers measured on one model, at
# equal logical KV bytes, into ONE SQLite file that `kvarena report` shows whole, and a
# markdown table (scripts/paper-table.py) of each claim | the paper's figure | ours:
#   ppl   perplexity over long generation: a held-out text teacher-forced as decode steps
#         (the paper: GPT-2, 2,048 generated tokens), every policy at the bytes of a
#         WINDOW-token FP16 window (so CONF-KV+INT8 keeps more tokens in the same bytes),
#         with confkv:random-rank=1 (the paper's random-eviction ablation);
#   niah  needle in a haystack: haystack with the needle, the question, the answer decoded
#         token by token; NIAH_LENGTHS x NIAH_DEPTHS x NEEDLES trials per policy, same bytes;
#   ckl   CONF-KV's mechanistic check: confidence vs the KL shift from ablating the recent
#         span (the paper's), and a distant span; Pearson and Spearman;
#   long  the agent setting: tasks/long-horizon in both history modes (`last`: a new prompt
#         each step; `full`: one growing sequence per episode), every policy at two byte
#         budgets (LONG_WINDOWS), with the oracle's row.
# Measurements only: nothing here is tuned toward a result. Where the binary is older and
# lacks an option (--needles, random-rank, --ablate-span), that part runs without it or is
# skipped with a line saying so, so the same script measures a build before a change:
#   KVARENA=/tmp/old/build/kvarena scripts/paper-comparisons.sh "" /tmp/paper-before
#   scripts/paper-table.py /tmp/paper-before/paper.sqlite /tmp/paper-after/paper.sqlite
#
#   scripts/paper-comparisons.sh [MODEL] [OUT_DIR]   (models/kvarena-agent.gguf, /tmp/kvarena-paper)
# Environment: KVARENA (build/kvarena), STAGES (ppl,niah,ckl,long), WINDOW (512: the byte
# budget is a WINDOW-token FP16 window's logical bytes), LONG_WINDOWS (1024,2048: at
# 512 the page digests of a 16K context leave FreeKV no room), HISTORIES
# (last,full), LIMIT (long-horizon tasks, 30 = the suite; ~1 min per task, policy, budget and
# history on 2 cores), JOBS (2), TEXT_SEED (900: site content neither training nor the
# suites use), PPL_TOKENS (2048), NIAH_LENGTHS (2048,4096), NIAH_DEPTHS (0,0.25,0.5,0.75,1),
# NEEDLES (3), CKL_GEN (1024).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
MODEL="${1:-}"
[ -n "$MODEL" ] || MODEL="$ROOT/models/kvarena-agent.gguf"
OUT="${2:-/tmp/kvarena-paper}"
KVARENA="${KVARENA:-$ROOT/build/kvarena}"
STAGES=",${STAGES:-ppl,niah,ckl,long},"
WINDOW="${WINDOW:-512}"
LONG_WINDOWS="${LONG_WINDOWS:-1024,2048}"
HISTORIES="${HISTORIES:-last,full}"
LIMIT="${LIMIT:-30}"
JOBS="${JOBS:-2}"
TEXT_SEED="${TEXT_SEED:-900}"
PPL_TOKENS="${PPL_TOKENS:-2048}"
NIAH_LENGTHS="${NIAH_LENGTHS:-2048,4096}"
NIAH_DEPTHS="${NIAH_DEPTHS:-0,0.25,0.5,0.75,1}"
NEEDLES="${NEEDLES:-3}"
CKL_GEN="${CKL_GEN:-1024}"
[ -x "$KVARENA" ] || { echo "paper-comparisons.sh: $KVARENA is not built" >&2; exit 2; }
[ -f "$MODEL" ] || { echo "paper-comparisons.sh: no model $MODEL" >&2; exit 2; }
mkdir -p "$OUT"
DB="$OUT/paper.sqlite"
stage() { [[ "$STAGES" == *",$1,"* ]]; }

# The byte budget of a W-token window: per layer and KV head, W FP16 tokens of keys and
# values (2 * head_dim * 2 bytes each), what kv-logical-bytes.h counts for `window`.
window_bytes() {
  "$KVARENA" model info "$MODEL" | python3 -c "
import json, sys
c = json.load(sys.stdin); c = c.get('config', c)
print(c['n_layers'] * c['n_kv_heads'] * $1 * 2 * c['head_dim'] * 2)"
}
BUDGET="$(window_bytes "$WINDOW")"
echo "[paper] byte budget: ${BUDGET} bytes = a ${WINDOW}-token FP16 window of $(basename "$MODEL")" >&2

# Policies: every one, CONF-KV with INT8 and the random-eviction ablation where the binary has it.
POLICIES="full,window,h2o,confkv,confkv:kv-int8=1,confkv-l,freekv"
LONG_POLICIES="$POLICIES"  # the ablation is a perplexity claim: the agent runs every policy without it
if "$KVARENA" bench ppl --help 2>/dev/null | grep -q -- "--random-rank"; then
  POLICIES="$POLICIES,confkv:random-rank=1"
else
  echo "[paper] this build has no confkv random-rank: the ablation is skipped" >&2
fi

# Held-out text: the sites' pages and the agent's prompts on content seed TEXT_SEED.
if stage ppl || stage ckl; then
  if [ ! -s "$OUT/text-$TEXT_SEED/corpus.txt" ]; then
    echo "[paper] held-out text (site seed $TEXT_SEED)" >&2
    "$KVARENA" train-data --out "$OUT/text-$TEXT_SEED" --site-seeds "$TEXT_SEED" --niah 0 --kv 0 -j "$JOBS" \
      >/dev/null || [ $? = 4 ]
  fi
fi
TEXT="$OUT/text-$TEXT_SEED/corpus.txt"

if stage ppl; then
  echo "[paper] perplexity: $PPL_TOKENS tokens teacher-forced as decode steps, $POLICIES at $BUDGET bytes" >&2
  "$KVARENA" bench ppl --model "$MODEL" --text "$TEXT" --max-tokens "$PPL_TOKENS" --policies "$POLICIES" \
    --kv-budget "$BUDGET" --db "$DB" >/dev/null
fi

if stage niah; then
  needles=()
  if "$KVARENA" bench niah --help 2>/dev/null | grep -q -- "--needles"; then
    needles=(--needles "$NEEDLES")
  else
    echo "[paper] this build has no --needles: one needle per (length, depth)" >&2
  fi
  echo "[paper] NIAH at $NIAH_LENGTHS tokens, depths $NIAH_DEPTHS, ${needles[1]:-1} needles, at $BUDGET bytes" >&2
  "$KVARENA" bench niah --model "$MODEL" --lengths "$NIAH_LENGTHS" --depths "$NIAH_DEPTHS" "${needles[@]}" \
    --policies "$POLICIES" --kv-budget "$BUDGET" --db "$DB" >/dev/null
fi

if stage ckl; then
  if "$KVARENA" bench confidence-kl --help 2>/dev/null | grep -q -- "--ablate-span"; then
    spans=(recent distant)
  else
    spans=(old)
    echo "[paper] this build has no --ablate-span: the recent span only" >&2
  fi
  for span in "${spans[@]}"; do
    echo "[paper] confidence vs KL, $span span (teacher-forced on the held-out text)" >&2
    extra=()
    [ "$span" = old ] || extra=(--ablate-span "$span")
    "$KVARENA" bench confidence-kl --model "$MODEL" --text "$TEXT" --n-prompt 256 --n-gen "$CKL_GEN" --every 4 \
      --ablate 32 "${extra[@]}" --policies full --db "$DB" >/dev/null
  done
fi

if stage long && [ "$LIMIT" -gt 0 ]; then
  budgets=""
  for w in ${LONG_WINDOWS//,/ }; do budgets="$budgets${budgets:+,}$(window_bytes "$w")"; done
  for h in ${HISTORIES//,/ }; do
    echo "[paper] long-horizon, $LIMIT tasks, history $h, every policy at $budgets bytes (+ oracle)" >&2
    "$KVARENA" run --suite "$ROOT/tasks/long-horizon" --model "$MODEL" --policies "$LONG_POLICIES" --kv-budget "$budgets" \
      --history "$h" --with-oracle --limit "$LIMIT" --jobs "$JOBS" --threads 1 --out "$OUT/long-$h.sqlite" \
      --name "long-horizon-$h" --resume >/dev/null || [ $? = 4 ]  # 4: some items are error rows (failures)
  done
fi

"$KVARENA" report "$DB" --html "$OUT/paper.html" >/dev/null
echo "[paper] wrote $DB (benches), $OUT/long-*.sqlite (long-horizon) and $OUT/paper.html" >&2
