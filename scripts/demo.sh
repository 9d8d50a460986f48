#!/usr/bin/env bash
# demo.sh: the main job as it stands today, on a fresh machine: install what is missing,
# build, run the scripted oracle over both task suites through the env HTTP API (local
# sites in-process), then write a random-weight llama model of a real shape (125M
# parameters, F16), generate from it, and benchmark decode against llama.cpp
# (tools/llamaref in ../shared) when present. The agent loop with a model is an open issue.
# The model has random weights: its text is gibberish by construction; the point is the
# engine's speed and memory on a real shape. A trained model ships later.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
BUILD_DIR="${BUILD_DIR:-build}"
MODEL="${MODEL:-$BUILD_DIR/models/random-125m-f16.gguf}"
export CCACHE_DIR="${CCACHE_DIR:-$HOME/.cache/kvarena-ccache}"

bash scripts/setup.sh
cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$BUILD_DIR" -j "$(nproc)" --target kvarena
BIN="$BUILD_DIR/kvarena"

for suite in tasks/vwa-local tasks/long-horizon; do
  echo "[demo] oracle agent over $suite (env server and sites in-process)" >&2
  "$BIN" tasks oracle --suite "$suite" -j 8
done

if [ ! -s "$MODEL" ]; then
  mkdir -p "$(dirname "$MODEL")"
  echo "[demo] writing a random-weight 125M llama model (F16) to $MODEL" >&2
  "$BIN" model random --arch llama --dim 768 --layers 12 --heads 12 --kv-heads 4 --ffn 2048 \
    --vocab 32000 --type f16 --seed 1 --out "$MODEL" >/dev/null
fi

echo "[demo] NOTE: random weights, so the generated text is meaningless." >&2
"$BIN" generate --model "$MODEL" --prompt "The quick brown fox" -n 32 --temp 0.8 --seed 7 -t 2

if [ -x ../shared/tools/llamaref/setup.sh ] || [ -f ../shared/tools/llamaref/setup.sh ]; then
  KVARENA_BIN="$BIN" bash scripts/bench-vs-llamacpp.sh "$MODEL" -t 2 --rounds 3
else
  "$BIN" bench decode --model "$MODEL" -p 512 -n 128 -t 2
fi
