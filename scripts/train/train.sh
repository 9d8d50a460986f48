#!/usr/bin/env bash
# train.sh: the whole recipe of models/kvarena-agent.gguf, resumable.
#   1. kvarena train-data (text)  -> DATA/corpus.txt           (skipped when present)
#   2. kvarena train-tokenizer    -> DATA/tokenizer.{gguf,json} (skipped when present)
#   3. kvarena train-data (tokens)-> DATA/tokens/*              (skipped when present)
#   4. train.py: resumes from CKPT (or models/kvarena-agent.gguf, or random), runs MINUTES
#   5. export -> OUT (default models/kvarena-agent.gguf), then the engine's logits are
#      compared with PyTorch's on the exported file (compare_engine.py); for the shipped
#      file, tests/fixtures/kvarena-agent-logits.json is made anew (make_fixture.py)
#
#   scripts/train/train.sh [--minutes 120] [--out FILE] [-- extra train.py flags]
#   scripts/train/train.sh --smoke     # tiny data + model, ~1 min: the pipeline end to end
#                                      # (ctest label `train`; exit 77 = skipped, no torch)
# Environment: KVARENA (the binary, default build/kvarena), DATA (~/.cache/kvarena-train/data),
# CKPT (~/.cache/kvarena-train/ckpt), THREADS (2), SITE_SEEDS (2-61), HELDOUT_SEEDS (900-903),
# EVAL_DATA (DATA-heldout).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
PY=/usr/bin/python3  # Debian's interpreter: the one that sees python3-torch
KVARENA="${KVARENA:-$ROOT/build/kvarena}"
THREADS="${THREADS:-2}"
SMOKE=0
MINUTES=120
OUT="$ROOT/models/kvarena-agent.gguf"
EXTRA=()
while [ $# -gt 0 ]; do
  case "$1" in
    --smoke) SMOKE=1 ;;
    --minutes) MINUTES="$2"; shift ;;
    --out) OUT="$2"; shift ;;
    --) shift; EXTRA=("$@"); break ;;
    *) echo "train.sh: unknown argument '$1' (see the header of $0)" >&2; exit 2 ;;
  esac
  shift
done

if ! "$PY" -c "import torch" 2>/dev/null; then
  echo "train.sh: skipped: $PY has no torch (apt-get install python3-torch libopenblas0-pthread)" >&2
  exit 77
fi
[ -x "$KVARENA" ] || { echo "train.sh: $KVARENA is not built (cmake --build build)" >&2; exit 2; }

if [ "$SMOKE" = 1 ]; then
  WORK="$(mktemp -d)"
  trap 'rm -rf "$WORK"' EXIT
  DATA="$WORK/data"; CKPT="$WORK/ckpt"; OUT="$WORK/smoke.gguf"
  SITE_SEEDS=2; VOCAB=600; DOCS=(--niah 20 --kv 10 --max-doc-tokens 512)
  OBS_TOKENS=768  # not the default: the export must carry the data's budget, not 1024
  MODEL=(--dim 64 --layers 2 --heads 2 --kv-heads 1 --ffn 192 --ctx-schedule 256:0 --tokens-per-step 2048
         --max-steps 12 --warmup 2 --log-every 4 --init-gguf "")  # random init, not the shipped model
  EXPORT=()
else
  DATA="${DATA:-$HOME/.cache/kvarena-train/data}"; CKPT="${CKPT:-$HOME/.cache/kvarena-train/ckpt}"
  # SITE_SEEDS: the first round's data is 2-61; another set (e.g. 62-301: new site content,
  # fewer chances to memorise one site's ids and names) goes in its own DATA folder, which
  # then uses the shipped file's vocabulary (see TOKENIZER below).
  SITE_SEEDS="${SITE_SEEDS:-2-61}"; HELDOUT_SEEDS="${HELDOUT_SEEDS:-900-903}"; VOCAB=4096; DOCS=(--niah 6000 --kv 3000 --max-doc-tokens 4096)
  # The observation budget pages are cut to; the export names it (kvarena.max_obs_tokens) and
  # `kvarena run` uses it.
  OBS_TOKENS="${OBS_TOKENS:-2048}"
  # The shipped model's recipe (models/README.md): sizes and schedule are read from the
  # checkpoint or the committed weights when training resumes.
  MODEL=(--dim 256 --layers 6 --heads 4 --kv-heads 2 --ffn 704 --rope-base 100000
         --ctx-schedule 1536:0,3072:0.4,4096:0.75 --tokens-per-step 8192 --max-steps 6000
         --lr 1e-3 --warmup 300 --ctx-weight 0.03 --init-gguf "$ROOT/models/kvarena-agent.gguf"
         --mix agent-last=0.45,agent-full=0.25,niah=0.15,kv=0.1,corpus=0.05)
  # Trained on windows of at most 4096 tokens; the file allows 16384 so that full-history
  # episodes run on (how well is what the long-horizon suite measures).
  EXPORT=(--n-ctx 16384)
fi
mkdir -p "$DATA"

# The vocabulary: the one learnt from DATA's text (a new model), or, when training goes on
# from the shipped weights and DATA has none of its own, the shipped file's (token ids must
# stay those of its embeddings; then no corpus.txt / tokenizer step is needed).
TOKENIZER="$DATA/tokenizer.gguf"
if [ "$SMOKE" = 0 ] && [ ! -f "$TOKENIZER" ] && [ -f "$ROOT/models/kvarena-agent.gguf" ]; then
  TOKENIZER="$ROOT/models/kvarena-agent.gguf"
  echo "[train.sh] vocabulary of $TOKENIZER" >&2
fi
if [ ! -f "$TOKENIZER" ] && [ ! -f "$DATA/corpus.txt" ]; then
  echo "[train.sh] training text (site seeds $SITE_SEEDS)" >&2
  "$KVARENA" train-data --out "$DATA" --site-seeds "$SITE_SEEDS" "${DOCS[@]}" >/dev/null || [ $? = 4 ]
fi
if [ ! -f "$TOKENIZER" ]; then
  echo "[train.sh] tokenizer (vocab $VOCAB)" >&2
  "$KVARENA" train-tokenizer --input "$DATA/corpus.txt" --vocab "$VOCAB" --out "$DATA/tokenizer" -q >/dev/null
fi
if [ ! -f "$DATA/tokens/agent-last.idx" ]; then
  echo "[train.sh] token files" >&2
  "$KVARENA" train-data --out "$DATA" --site-seeds "$SITE_SEEDS" "${DOCS[@]}" --tokenizer "$TOKENIZER" \
    --max-obs-tokens "$OBS_TOKENS" >/dev/null || [ $? = 4 ]  # 4: the oracle failed a few tasks (left out)
fi
# Held-out replies (heldout.py): agent steps on site seeds neither training nor the
# committed suites (seed 1) use; the learning curve's measure between episode runs.
EVAL=()
if [ "$SMOKE" = 0 ]; then
  EVAL_DATA="${EVAL_DATA:-$DATA-heldout}"
  if [ ! -f "$EVAL_DATA/tokens/agent-last.idx" ]; then
    echo "[train.sh] held-out steps (site seeds $HELDOUT_SEEDS)" >&2
    "$KVARENA" train-data --out "$EVAL_DATA" --site-seeds "$HELDOUT_SEEDS" --niah 0 --kv 0 --tokenizer "$TOKENIZER" \
      --max-obs-tokens "$OBS_TOKENS" >/dev/null || [ $? = 4 ]
  fi
  EVAL=(--eval-data "$EVAL_DATA" --eval-every 150 --eval-n 150)
fi

echo "[train.sh] train ($MINUTES min budget, checkpoints in $CKPT)" >&2
"$PY" "$ROOT/scripts/train/train.py" --data "$DATA" --ckpt-dir "$CKPT" --threads "$THREADS" \
  --minutes "$MINUTES" "${MODEL[@]}" "${EVAL[@]}" "${EXTRA[@]}"
"$PY" "$ROOT/scripts/train/train.py" --export-only --ckpt-dir "$CKPT" --export "$OUT" --name kvarena-agent "${EXPORT[@]}"
# The export names the budget its data's pages were cut to and the history mode it is
# measured in (last), which `kvarena run` then uses.
PYTHONPATH="$ROOT/scripts/train" "$PY" - "$OUT" "$OBS_TOKENS" <<'PYEOF' || { echo "train.sh: $OUT does not name kvarena.max_obs_tokens $OBS_TOKENS and kvarena.history last" >&2; exit 1; }
import sys
from gguf_read import read_gguf
meta = read_gguf(sys.argv[1], want_tensors=False)[0]
budget, history = meta.get("kvarena.max_obs_tokens"), meta.get("kvarena.history")
print(f"[train.sh] kvarena.max_obs_tokens {budget}, kvarena.history {history}", file=sys.stderr)
sys.exit(0 if budget == int(sys.argv[2]) and history == "last" else 1)
PYEOF
echo "[train.sh] exported $OUT; engine vs PyTorch logits:" >&2
cmp="$("$PY" "$ROOT/scripts/train/compare_engine.py" "$OUT" --n 48 --kvarena "$KVARENA")"
echo "$cmp"
"$PY" -c "import json,sys; r=json.loads(sys.argv[1]); sys.exit(0 if r['max_rel_diff'] < 1e-3 and r['argmax_agree'] == 1 else 1)" "$cmp" \
  || { echo "train.sh: the engine and PyTorch disagree on $OUT" >&2; exit 1; }

# The shipped model's fixture (tests/test-agent-model.cpp): PyTorch's logits on a compact
# prompt, from the file just written.
if [ "$SMOKE" = 0 ] && [ "$OUT" -ef "$ROOT/models/kvarena-agent.gguf" ]; then
  ids="$("$KVARENA" tokenize --model "$OUT" --special --no-bos -f "$ROOT/tests/fixtures/kvarena-agent-prompt.txt" |
         "$PY" -c "import json,sys; print(','.join(map(str, json.load(sys.stdin)['tokens'])))")"
  "$PY" "$ROOT/scripts/train/make_fixture.py" "$OUT" "$ROOT/tests/fixtures/kvarena-agent-logits.json" --tokens "$ids"
fi
