#!/usr/bin/env bash
# demo.sh: the README's main command on a fresh machine. Installs what is missing (setup.sh's
# demo profile: only the build's packages), builds the kvarena binary, checks the task suites
# with the scripted oracle, then runs the agent over a subset of `tasks/vwa-local` and
# `tasks/long-horizon` with all five KV policies (full, window, h2o, confkv, freekv) plus the
# oracle's upper-bound row, prints the comparison table and writes an HTML report per suite.
#
# The model is the project's own trained agent model, models/kvarena-agent.gguf (its card:
# models/README.md), with its compact prompt style. Without that file the demo falls back
# to a random-weight model, whose success is 0 under every policy by construction (a banner
# says so); MODEL=... scripts/demo.sh runs another GGUF (e.g. a Qwen2 or Llama chat model).
#
# The policies are compared at equal memory: KV_BUDGET (512t: 512 tokens per layer and KV
# head, `kvarena run --kv-budget`) sizes each of them, full stays the reference; CTX (8192)
# is each session's context, which FreeKV's page digests are counted against. The history
# mode is the model's (kvarena.history; the shipped model: last, a new prompt of up to ~2.5K
# tokens each step, pages cut at its 2,048-token kvarena.max_obs_tokens); HISTORY=full keeps
# the whole episode in one sequence instead, which CTX then bounds (at 4096: about 2 steps).
# Knobs (environment): MODEL, TASKS (per suite, default 4), POLICIES, KV_BUDGET, CTX, HISTORY,
# MAX_STEPS (20: the first long-horizon tasks take the oracle 17 steps; 4 for the random
# model), MAX_NEW_TOKENS (32), THREADS (2), OUT (results/runs/demo), BUILD_DIR (build).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
BUILD_DIR="${BUILD_DIR:-build}"
TASKS="${TASKS:-4}"
POLICIES="${POLICIES:-full,window,h2o,confkv,freekv}"
KV_BUDGET="${KV_BUDGET:-512t}"
CTX="${CTX:-8192}"
MAX_STEPS="${MAX_STEPS:-}"
HISTORY="${HISTORY:-}"  # "": the model's
MAX_NEW_TOKENS="${MAX_NEW_TOKENS:-32}"
THREADS="${THREADS:-2}"
OUT="${OUT:-results/runs/demo}"
export CCACHE_DIR="${CCACHE_DIR:-$HOME/.cache/kvarena-ccache}"

# Only the demo's packages (compiler, CMake, the libraries kvarena links): no test frameworks,
# Chromium, Slurm or PyTorch (scripts/setup.sh; scripts/test.sh installs those).
bash scripts/setup.sh demo
# The demo builds the kvarena binary only: a new build folder is configured without the tests
# (GoogleTest is not among the demo's packages); one configured before keeps its setting.
tests_off=()
[ -f "$BUILD_DIR/CMakeCache.txt" ] || tests_off=(-DKVARENA_BUILD_TESTS=OFF)
cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release "${tests_off[@]}" >/dev/null
cmake --build "$BUILD_DIR" -j "$(nproc)" --target kvarena
BIN="$BUILD_DIR/kvarena"

for suite in tasks/vwa-local tasks/long-horizon; do
  echo "[demo] oracle agent over $suite (env server and sites in-process)" >&2
  "$BIN" tasks oracle --suite "$suite" -j 8 >/dev/null
done

random_model=0
if [ -z "${MODEL:-}" ] && [ -s models/kvarena-agent.gguf ]; then
  MODEL=models/kvarena-agent.gguf
fi
if [ -z "${MODEL:-}" ]; then
  random_model=1
  MAX_STEPS="${MAX_STEPS:-4}"
  MODEL="$BUILD_DIR/models/random-demo-60m-f16.gguf"
  if [ ! -s "$MODEL" ]; then
    mkdir -p "$(dirname "$MODEL")"
    echo "[demo] writing the default model: random weights, llama shape (dim 512, 8 layers, 8 heads, F16)" >&2
    # --output-scale 3 spreads the random logits so that CONF-KV's confidence crosses its
    # threshold on some steps (random weights at scale 1 are never confident).
    "$BIN" model random --arch llama --dim 512 --layers 8 --heads 8 --kv-heads 8 --ffn 1536 \
      --vocab 32000 --ctx 16384 --type f16 --seed 1 --output-scale 3 --out "$MODEL" >/dev/null
  fi
fi

banner() {
  echo "=================================================================================="
  echo "  NOTE: the model has RANDOM WEIGHTS ($MODEL)."
  echo "  Its agent cannot solve tasks: success is 0 for every policy by construction, and"
  echo "  only the oracle row (a scripted upper bound) succeeds. Memory and latency columns"
  echo "  are real measurements of each KV policy on this shape."
  echo "=================================================================================="
}
[ "$random_model" = 1 ] && banner
MAX_STEPS="${MAX_STEPS:-20}"
# The VWA prompt's worked example only for models that use that style (the shipped model's
# compact style has none).
EXAMPLES=1
[ "$MODEL" = models/kvarena-agent.gguf ] && EXAMPLES=0

mkdir -p "$OUT"
status=0
for suite in tasks/vwa-local tasks/long-horizon; do
  name="$(basename "$suite")"
  echo "[demo] $name: $TASKS tasks x {$POLICIES} at $KV_BUDGET + oracle, $MAX_STEPS steps of <= $MAX_NEW_TOKENS tokens" >&2
  # --resume finishes an interrupted demo; results from an older kvarena binary or other
  # knobs (which the run would refuse to resume) are moved aside instead, so they are
  # measured anew. The knobs of the results in OUT are kept beside them.
  knobs="$MODEL|$TASKS|$POLICIES|$KV_BUDGET|$CTX|${HISTORY:-}|$MAX_STEPS|$MAX_NEW_TOKENS|$EXAMPLES"
  if [ -f "$OUT/$name.sqlite" ]; then
    why=""
    [ "$BIN" -nt "$OUT/$name.sqlite" ] && why="an older build"
    [ "$(cat "$OUT/$name.knobs" 2>/dev/null)" != "$knobs" ] && why="${why:+$why and }other knobs"
    if [ -n "$why" ]; then
      mv "$OUT/$name.sqlite" "$OUT/$name.sqlite.prev"
      echo "[demo] $OUT/$name.sqlite came from $why: moved to $name.sqlite.prev" >&2
    fi
  fi
  echo "$knobs" > "$OUT/$name.knobs"
  "$BIN" run --suite "$suite" --limit "$TASKS" --policies "$POLICIES" --kv-budget "$KV_BUDGET" --ctx "$CTX" \
    --with-oracle --model "$MODEL" ${HISTORY:+--history "$HISTORY"} --max-steps "$MAX_STEPS" --max-new-tokens "$MAX_NEW_TOKENS" --examples "$EXAMPLES" --threads "$THREADS" \
    --out "$OUT/$name.sqlite" --name "demo-$name" --resume || status=$?
  "$BIN" report "$OUT/$name.sqlite" --html "$OUT/$name.html" >/dev/null
  echo "[demo] HTML report: $OUT/$name.html (every item's steps: $OUT/$name-items/)" >&2
done
[ "$random_model" = 1 ] && banner
exit "$status"
