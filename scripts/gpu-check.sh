#!/usr/bin/env bash
# gpu-check.sh OUTDIR: the GPU checks of the CUDA backend, as one script that finishes in
# about 8 minutes on an H200 whatever happens (each step has a timeout taken from one
# overall deadline; a step that fails or times out is reported and the rest still run).
#   1. configure + build (-DKVARENA_CUDA=ON, default architectures 80;90) of kvarena_cuda,
#      the GPU tests, kvarena-cuda-bench and the kvarena CLI (for --backend cuda), in one
#      parallel build
#   2. ctest -L gpu (kernel agreement tests, CUDA forward vs CPU forward for llama, qwen2 and
#      gpt2, policies and FreeKV vs the CPU session), then the CLI's --backend checks
#   3. a quick bench on a small random llama (a result even if the big one runs out of time),
#      and `kvarena bench latency --backend cuda` (full vs freekv) on a small model
#   4. a random-weight 8B-shaped llama (dim 4096, 32 layers, 32 heads, 8 KV heads, ffn 14336,
#      vocab 128256, F16: ~16 GB, written in ~1-2 minutes), then the latency bench at 1K and
#      8K contexts, batch 1 and 8, every policy (full, window, h2o, confkv and confkv-l with
#      INT8 on the device, freekv with its pinned host pool and overlapped recall)
#   (before 4) the agent on the device: `kvarena run --backend cuda` over six vwa-local tasks,
#      batch 1 and 4, beside the same run on the CPU; bench memory's logical KV bytes on both
#      backends
# Everything goes to OUTDIR: summary.txt (one line per step: name, exit code, seconds),
# <step>.log, bench-*.json, nvidia-smi.txt.
# Env: BUILD_DIR (build-gpu), JOBS (16), DEADLINE_S (470), MODEL_DIR (/tmp), SKIP_8B=1.
set -uo pipefail
OUT="${1:?usage: scripts/gpu-check.sh OUTDIR}"
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
mkdir -p "$OUT"
OUT="$(cd "$OUT" && pwd)"
BUILD="${BUILD_DIR:-build-gpu}"
JOBS="${JOBS:-16}"
DEADLINE_S="${DEADLINE_S:-470}"
MODEL_DIR="${MODEL_DIR:-/tmp}"
START=$(date +%s)
export PATH="$PATH:/usr/local/cuda/bin"
SUMMARY="$OUT/summary.txt"
: > "$SUMMARY"

left() { echo $(( DEADLINE_S - ($(date +%s) - START) )); }

# step NAME MAX_SECONDS MIN_SECONDS CMD...: runs CMD with stdout+stderr in OUT/NAME.log under
# min(MAX, time left); skipped when less than MIN seconds are left.
step() {
  local name=$1 max=$2 min=$3; shift 3
  local l; l=$(left)
  if [ "$l" -lt "$min" ]; then
    echo "$name skipped (only ${l}s left)" | tee -a "$SUMMARY" >&2
    return 125
  fi
  local lim=$(( max < l ? max : l ))
  local t0; t0=$(date +%s)
  timeout --kill-after=10 "$lim" "$@" > "$OUT/$name.log" 2>&1
  local rc=$?
  local note=""
  [ "$rc" = 124 ] || [ "$rc" = 137 ] && note=" (timed out after ${lim}s)"
  echo "$name rc=$rc seconds=$(( $(date +%s) - t0 ))$note" | tee -a "$SUMMARY" >&2
  return $rc
}

nvidia-smi > "$OUT/nvidia-smi.txt" 2>&1 || echo "nvidia-smi failed" >> "$OUT/nvidia-smi.txt"
BIN="$BUILD/kvarena-cuda-bench"

step configure 120 20 cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release -DKVARENA_CUDA=ON \
  -DKVARENA_BUILD_TESTS=ON
built=$?
if [ $built = 0 ]; then
  step build 300 30 cmake --build "$BUILD" -j "$JOBS" --target kvarena_cuda test-cuda test-cuda-kernels \
    test-cuda-forward test-cuda-freekv test-cuda-freekv-plan test-cuda-gpt2 kvarena-cuda-bench kvarena \
    test-cli-backend
  built=$?
fi

if [ $built = 0 ]; then
  step ctest-gpu 240 30 ctest --test-dir "$BUILD" -L gpu --output-on-failure --timeout 200 -j 4
  # Passed / skipped / failed counts in one line (a skip here means no GPU was visible).
  { grep -E "tests passed" "$OUT/ctest-gpu.log"
    echo "  skipped: $(grep -c -- '\*\*\*Skipped' "$OUT/ctest-gpu.log")"
    grep -E -- "\*\*\*Failed|\*\*\*Timeout|\*\*\*Exception" "$OUT/ctest-gpu.log"; } >> "$SUMMARY" || true
  # FreeKV's host planning (CPU) and the CLI's --backend (generate on the GPU vs the CPU).
  step ctest-cli 60 15 ctest --test-dir "$BUILD" -R "FreekvPlan|CliBackend" --output-on-failure --timeout 50

  SMALL="$MODEL_DIR/kvarena-gpucheck-125m.gguf"
  step model-small 60 20 "$BIN" random --out "$SMALL" --dim 768 --layers 12 --heads 12 --kv-heads 4 \
      --ffn 2048 --vocab 32000 --type f16 && \
    step bench-small 90 20 sh -c "'$BIN' latency --model '$SMALL' --contexts 1024,8192 --batches 1,8 --steps 32 \
      --policies full,window,h2o,confkv:kv-int8=1,confkv-l:kv-int8=1,freekv > '$OUT/bench-small.json'"
  rm -f "$SMALL"
  # The CLI's own bench on the device: a small llama with a vocabulary, full vs freekv.
  CLI_MODEL="$MODEL_DIR/kvarena-gpucheck-cli.gguf"
  step model-cli 30 10 "$BUILD/kvarena" model random --arch llama --dim 512 --layers 8 --heads 8 --kv-heads 2 \
      --ffn 1536 --vocab 32000 --ctx 8192 --type f16 --out "$CLI_MODEL" && \
    step bench-cli 60 20 sh -c "'$BUILD/kvarena' bench latency --backend cuda --model '$CLI_MODEL' \
      --contexts 4096 --steps 16 --policies full,freekv:budget=1024:sinks=128:window=256 > '$OUT/bench-cli.json'"
  rm -f "$CLI_MODEL"

  # The agent on the device: the shipped model over a few vwa-local tasks, full and confkv at
  # equal memory, on the CPU and on CUDA (batch 1 and 4); the results files come back in
  # OUTDIR (compare the steps' actions: equal up to FP16 rounding). And the logical KV bytes
  # of bench memory on both backends (one definition: they must be equal).
  AGENT=(run --suite tasks/vwa-local --limit 6 --policies full,confkv --kv-budget 512t --ctx 4096 --max-steps 6
         --threads 4)
  step agent-cpu 150 30 "$BUILD/kvarena" "${AGENT[@]}" --out "$OUT/agent-cpu.sqlite"
  step agent-cuda 150 30 "$BUILD/kvarena" "${AGENT[@]}" --backend cuda --out "$OUT/agent-cuda.sqlite"
  step agent-cuda-batch4 150 30 "$BUILD/kvarena" "${AGENT[@]}" --backend cuda --batch 4 \
    --out "$OUT/agent-cuda-b4.sqlite"
  MEM_MODEL="$MODEL_DIR/kvarena-gpucheck-mem.gguf"
  MEM=(bench memory --model "$MEM_MODEL" --n-prompt 3000 --n-gen 16 --chunk 128 --kv-budget 512t
       --policies full,window,h2o,confkv,confkv-l,freekv)
  step model-mem 30 10 "$BUILD/kvarena" model random --arch llama --dim 256 --layers 2 --heads 4 --kv-heads 4 \
      --ffn 512 --vocab 512 --ctx 4096 --out "$MEM_MODEL" && \
    step memory-cpu 60 10 sh -c "'$BUILD/kvarena' ${MEM[*]} > '$OUT/bench-memory-cpu.json'" && \
    step memory-cuda 60 10 sh -c "'$BUILD/kvarena' ${MEM[*]} --backend cuda > '$OUT/bench-memory-cuda.json'"
  rm -f "$MEM_MODEL"

  if [ "${SKIP_8B:-0}" != 1 ]; then
    BIG="$MODEL_DIR/kvarena-gpucheck-8b-f16.gguf"
    ok=0
    if [ -s "$BIG" ]; then
      echo "model-8b reused $BIG" | tee -a "$SUMMARY" >&2
    else
      # ~16 GB written: about a minute on a fast disk; the bench needs ~1-2 more.
      step model-8b 200 150 "$BIN" random --out "$BIG" --dim 4096 --layers 32 --heads 32 --kv-heads 8 \
        --ffn 14336 --vocab 128256 --type f16 || ok=1
    fi
    if [ $ok = 0 ]; then
      step bench-8b 240 60 sh -c "'$BIN' latency --model '$BIG' --contexts 1024,8192 --batches 1,8 --steps 32 \
        --policies full,window,h2o,confkv:kv-int8=1,confkv-l:kv-int8=1,freekv > '$OUT/bench-8b.json'"
    fi
    [ "${KEEP_MODEL:-0}" = 1 ] || rm -f "$BIG"
  fi
fi

echo "total seconds=$(( $(date +%s) - START ))" | tee -a "$SUMMARY" >&2
ls -l "$OUT" >&2
