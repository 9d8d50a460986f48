#!/usr/bin/env bash
# train-gpu.sh: one training round of the agent model on a lent GPU machine, inside a fixed
# time budget: the data arrives packed (pack-data.sh), the round starts from the shipped
# model (or INIT), the cosine runs over the time budget (--lr-by-time), and the export, the
# loss/held-out curves and the log land in OUT. The recipe is train.py's CPU one with the
# GPU path (--device cuda: bf16 autocast, one attention call per layer) and a larger batch.
#   scripts/train/train-gpu.sh PACK.tar.xz OUT [MINUTES]
# Environment: PY (python3: the interpreter with a CUDA torch), INIT (models/kvarena-agent.gguf),
# LR (3e-4), ROWS (16 rows of 4096 tokens per step), WORK (/tmp/kvarena-gpu), SCRATCH (also
# train a model of this shape from random init: DIMxLAYERSxHEADSxKVHEADSxFFN), SCRATCH_LR (1e-3),
# DEVICE (cuda; cpu runs the same round on the CPU: a dry run of this script).
# Out: continued.gguf (and scratch.gguf, split in 15 MiB parts when larger), NAME.log, curves.tar.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
PACK="${1:?usage: train-gpu.sh PACK.tar.xz OUT [MINUTES]}"
OUT="${2:?usage: train-gpu.sh PACK.tar.xz OUT [MINUTES]}"
MINUTES="${3:-6}"
PY="${PY:-python3}"
INIT="${INIT:-$ROOT/models/kvarena-agent.gguf}"
LR="${LR:-3e-4}"
ROWS="${ROWS:-16}"
WORK="${WORK:-/tmp/kvarena-gpu}"
export PYTHONUNBUFFERED=1
mkdir -p "$OUT" "$WORK"

DEVICE="${DEVICE:-cuda}"   # cpu: the same round on the CPU (a dry run of this script)
if [ "$DEVICE" != cpu ]; then
  "$PY" -c "import torch, sys; sys.exit(0 if torch.cuda.is_available() else 3)" ||
    { echo "train-gpu.sh: $PY's torch sees no GPU" >&2; exit 3; }
fi
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader || true

t0=$(date +%s)
if command -v xz > /dev/null; then   # several threads where the archive has several blocks (xz -T0)
  xz -T0 -dc "$PACK" | tar -x -C "$WORK"
else
  "$PY" - "$PACK" "$WORK" <<'EOF'
import sys, tarfile
with tarfile.open(sys.argv[1]) as t:
    try:
        t.extractall(sys.argv[2], filter="data")
    except TypeError:  # Python before 3.12
        t.extractall(sys.argv[2])
EOF
fi
echo "[train-gpu] unpacked $PACK in $(( $(date +%s) - t0 )) s: $(du -sh "$WORK" | cut -f1)"
DATA="$WORK/data"
HELD="$WORK/heldout"

# The GPU path's attention against the reference path, with this torch's fused kernel.
"$PY" "$ROOT/scripts/train/test_packing.py"

TOKENS=$(( ROWS * 4096 ))
MIX=agent-last=0.25,agent-retarget=0.3,agent-renamed=0.1,agent-crop=0.08,agent-full=0.08,niah=0.07,kv=0.04,lookup=0.04,corpus=0.04
# round NAME LR WARMUP [train.py flags]: one run of the recipe, log OUT/NAME.log, export OUT/NAME.gguf
round() {
  local name="$1" lr="$2" warmup="$3"; shift 3
  "$PY" "$ROOT/scripts/train/train.py" --device "$DEVICE" --prefetch 6 --data "$DATA" --ckpt-dir "$WORK/ckpt-$name" \
    --ctx-schedule 4096:0 --tokens-per-step $TOKENS --micro-tokens $TOKENS \
    --lr "$lr" --warmup "$warmup" --lr-by-time --minutes "$MINUTES" --max-steps 1000000 --min-lr-frac 0.05 \
    --ctx-weight 0.02 --text-weight 2 --first-text-weight 8 --log-every 25 --ckpt-minutes 100 \
    --eval-data "$HELD" --eval-every 500 --eval-n 100 \
    --watch "$HELD:agent-retarget,$HELD:agent-renamed,$HELD:niah" --mix "$MIX" \
    --export "$OUT/$name.gguf" --n-ctx 16384 "$@" > "$OUT/$name.log" 2>&1
}
# The shipped model trained on; with SCRATCH=DIMxLAYERSxHEADSxKVHEADSxFFN a larger model from
# random init beside it on the same GPU (the small model leaves most of it idle).
round continued "$LR" 50 --init-gguf "$INIT" &
pids=($!)
if [ -n "${SCRATCH:-}" ]; then
  IFS=x read -r d l h kvh ffn <<< "$SCRATCH"
  round scratch "${SCRATCH_LR:-1e-3}" 200 --init-gguf "" --tokenizer "$INIT" --dim "$d" --layers "$l" \
    --heads "$h" --kv-heads "$kvh" --ffn "$ffn" --rope-base 100000 &
  pids+=($!)
fi
rc=0
for p in "${pids[@]}"; do wait "$p" || rc=$?; done
for f in "$OUT"/*.log; do echo "== $f"; tail -n 12 "$f"; done
tar -C "$WORK" -cf "$OUT/curves.tar" $(cd "$WORK" && ls ckpt-*/*.csv)
# files that come back from a lent machine are at most 16 MiB each
for g in "$OUT"/*.gguf; do
  if [ "$(stat -c %s "$g")" -gt $((15 * 1024 * 1024)) ]; then split -b 15M "$g" "$g.part-" && rm "$g"; fi
done
ls -la "$OUT"
echo "[train-gpu] done in $(( $(date +%s) - t0 )) s (rc $rc)"
exit $rc
