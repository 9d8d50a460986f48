#!/usr/bin/env bash
# gpu-check.sh: the CUDA backend's checks on a lent GPU machine, from binaries built HERE by
# scripts/build-gpu-bundle.sh (build-gpu-bundle/, carried to the device with the working
# tree): nothing is configured or built on the device, which has nvcc, CMake and ninja but
# none of our Debian dependencies.
#   scripts/gpu-check.sh OUTDIR            the real run (needs a GPU)
#   scripts/gpu-check.sh --dry-run OUTDIR  any machine, no GPU: the bundle and its ldd check,
#       every test binary run one test per process exactly as on the device (the GPU tests
#       skip: no device), the model files written (the 8B shape scaled down), every bench
#       invocation checked with `kvarena-cuda-bench latency --dry-run 1` (model, policy specs,
#       runs, roofline); the GPU steps' commands printed
#   scripts/gpu-check.sh --plan            the steps and their expected minutes
#   scripts/gpu-check.sh --source-hash     hash of the sources the binaries are built from
# The device tool call: run(command="bash scripts/gpu-check.sh $OUT", carry=["build-gpu-bundle"],
# timeout_s=540); a rerun of part of it: STEPS=gpu-tests TESTS='CudaForward\.' ... (below).
#
# Steps (expected minutes on an H100/H200: estimates from the work each does, not yet measured):
#   bundle       0.1  the manifest; the sources unchanged since the build (hash); every binary
#                     needs only CUDA (libcudart, libcublas, libcublasLt) and glibc libraries,
#                     and the CUDA ones resolve (LD_LIBRARY_PATH gets the toolkit's folder)
#   device       0.1  nvidia-smi; the driver's CUDA version                          [GPU]
#   cpu-tests    0.2  test-cuda (launch math, references, the attention emulated, the
#                     pinned ring's plan, the cast, INT8 blocking) and test-cuda-freekv-plan,
#                     one test per process
#   gpu-tests    2.0  the 30 GPU tests of test-cuda-kernels, -forward, -freekv, -gpt2, one
#                     test per process (a CUDA fault poisons its process only), 90 s each at
#                     most; a failure is rerun with CUDA_LAUNCH_BLOCKING=1, then under
#                     compute-sanitizer when there is time                             [GPU]
#   bench-small  1.0  a 125M-shaped random llama (F16): latency at 1K/8K, batch 1/8, every
#                     policy                                                           [GPU]
#   model-8b     0.7  an 8B-shaped random llama (dim 4096, 32 layers, 32/8 heads, ffn 14336,
#                     vocab 128256, F16, 16 GB) in /dev/shm; its roofline (--dry-run)
#   bench-8b-b1  1.5  batch-1 decode at 1K and 8K, every policy (INT8 for confkv/-l)   [GPU]
#   bench-8b-b8  1.0  batch 8 at 8K: full vs confkv INT8 (the paper: 2.06x)           [GPU]
#   bench-8b-budget 0.5  batch 1 at 8K, one device budget of 2048 tokens: window vs freekv [GPU]
#   (model-small 0.2: the 125M file, CPU, before bench-small)
#   total        ~7.3 minutes; DEADLINE_S (default 450) bounds it, each step also has a cap
#                and is skipped when less than its minimum is left. With a machine's start
#                (1-2 min) that leaves ~5 of the 15 device minutes for one rerun of what
#                failed (STEPS=..., TESTS=...), e.g. STEPS=gpu-tests TESTS='CudaFreekv\.'.
# Not here: the `kvarena` CLI's steps (run/generate/bench --backend cuda): the CLI links ~55
# shared libraries (curl, gumbo, SQLite, cairo, png, jpeg, ...) the device lacks, so it is not
# in the bundle; they wait for a session that carries a static build of it.
#
# OUTDIR gets at most 8 files (what the device tool brings back): summary.txt (one line per
# step: name, rc, seconds, and the tests' counts), tests.tsv (binary, test, result, seconds,
# skip reason), logs.tgz (every log), bench-small.json, bench-8b-plan.json, bench-8b-b1.json,
# bench-8b-b8.json, bench-8b-budget.json.
# Env: BUNDLE_DIR (build-gpu-bundle), DEADLINE_S (450), MODEL_DIR (/dev/shm when it has
# 20 GB free, else /tmp), STEPS (comma list: only these steps), TESTS (a grep -E pattern on
# Suite.Name: only these tests), TEST_TIMEOUT_S (90), KEEP_MODEL=1 (keep the 8B file: a
# rerun reuses it), SKIP_8B=1.
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

source_hash() {  # the sources compiled into the bundle (git is not on the device: find)
  find engine tests cmake CMakeLists.txt -type f \( -name '*.cpp' -o -name '*.h' -o -name '*.cu' -o -name '*.cmake' \
    -o -name CMakeLists.txt \) 2>/dev/null | LC_ALL=C sort | xargs sha256sum | sha256sum | cut -c1-16
}

DRY=0
case "${1:-}" in
  --source-hash) source_hash; exit 0 ;;
  --plan) sed -n '/^# Steps/,/^# Not here/p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' | sed '$d'; exit 0 ;;
  --dry-run) DRY=1; shift ;;
esac
OUT="${1:?usage: scripts/gpu-check.sh [--dry-run] OUTDIR | --plan | --source-hash}"
mkdir -p "$OUT"
OUT="$(cd "$OUT" && pwd)"
BUNDLE="$(cd "${BUNDLE_DIR:-build-gpu-bundle}" 2>/dev/null && pwd || echo "$ROOT/${BUNDLE_DIR:-build-gpu-bundle}")"
BIN="$BUNDLE/bin"
DEADLINE_S="${DEADLINE_S:-450}"
TEST_TIMEOUT_S="${TEST_TIMEOUT_S:-90}"
LOGS="$OUT/logs"
TMPD="$(mktemp -d /tmp/kvarena-gpu-check.XXXXXX)"
export KVARENA_TEST_TMPDIR="$TMPD/test-tmp"  # tests' files (tests/test-util.h)
if [ -z "${MODEL_DIR:-}" ]; then
  MODEL_DIR=/tmp
  shm_kb=$(df -Pk /dev/shm 2>/dev/null | awk 'NR == 2 {print $4}')
  [ -w /dev/shm ] && [ "${shm_kb:-0}" -gt $((20 * 1024 * 1024)) ] && MODEL_DIR=/dev/shm
  [ $DRY = 1 ] && MODEL_DIR="$TMPD"
fi
mkdir -p "$LOGS" "$KVARENA_TEST_TMPDIR"
SUMMARY="$OUT/summary.txt"
TSV="$OUT/tests.tsv"
: > "$SUMMARY"
printf 'binary\ttest\tresult\tseconds\tnote\n' > "$TSV"
START=$(date +%s)
MODE=$([ $DRY = 1 ] && echo "dry run (no GPU needed)" || echo "GPU run")

say() { echo "$*" | tee -a "$SUMMARY"; }
left() { echo $(( DEADLINE_S - ($(date +%s) - START) )); }
want_step() { [ -z "${STEPS:-}" ] || [[ ",$STEPS," == *",$1,"* ]]; }

# step NAME MINUTES GPU(0/1) MAX_S MIN_S CMD...: CMD's stdout+stderr to logs/NAME.log under
# min(MAX, time left), skipped when less than MIN_S is left. In a dry run a GPU step only
# prints its command.
step() {
  local name=$1 minutes=$2 gpu=$3 max=$4 min=$5; shift 5
  case "$name" in model-*) ;; *) want_step "$name" || return 0 ;; esac  # a wanted bench needs its model
  if [ $DRY = 1 ] && [ "$gpu" = 1 ]; then
    say "$name [GPU, ~${minutes} min, cap ${max}s]: not run (dry run): $*"
    return 0
  fi
  local l; l=$(left)
  if [ "$l" -lt "$min" ]; then
    say "$name [~${minutes} min]: skipped (only ${l}s of the deadline left, needs ${min}s)"
    return 125
  fi
  local lim=$(( max < l ? max : l )) t0 rc note=""
  t0=$(date +%s)
  timeout --kill-after=10 "$lim" "$@" > "$LOGS/$name.log" 2>&1
  rc=$?
  { [ "$rc" = 124 ] || [ "$rc" = 137 ]; } && note=" (timed out after ${lim}s)"
  say "$name [$([ "$gpu" = 1 ] && echo GPU || echo CPU), ~${minutes} min, cap ${max}s]: rc=$rc seconds=$(( $(date +%s) - t0 ))$note"
  [ $rc = 0 ] || FAILED_STEPS="$FAILED_STEPS $name"
  return $rc
}
FAILED_STEPS=""

# ---- CUDA libraries: the toolkit's folder on LD_LIBRARY_PATH when the loader misses them ----
cuda_libs() {
  local probe="$BIN/kvarena-cuda-bench" d
  [ -x "$probe" ] || return 0
  if ldd "$probe" 2>/dev/null | grep -E 'libcu(dart|blas)' | grep -q 'not found'; then
    for d in /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib /usr/local/cuda/lib \
             $(ls -d /usr/local/cuda-*/lib64 /opt/*/.venv/lib/python3*/site-packages/nvidia/cu13/lib \
                     /usr/local/lib/python3*/dist-packages/nvidia/cu13/lib 2>/dev/null); do
      if [ -e "$d/libcublas.so.13" ] && [ -e "$d/libcudart.so.13" ]; then
        export LD_LIBRARY_PATH="$d${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
        break
      fi
    done
  fi
}

# ---- bundle: binaries, manifest, ldd ----
check_bundle() {
  local bad=0 f lib allowed
  allowed='^(linux-vdso\.so|/lib64/ld-linux-x86-64\.so|ld-linux-x86-64\.so|libc\.so|libm\.so|libpthread\.so|libdl\.so|librt\.so|libgcc_s\.so|libstdc\+\+\.so|libcudart\.so|libcublas\.so|libcublasLt\.so)'
  if [ ! -f "$BUNDLE/MANIFEST.txt" ]; then
    echo "no bundle at $BUNDLE: run scripts/build-gpu-bundle.sh first"
    return 1
  fi
  sed -n '1,4p' "$BUNDLE/MANIFEST.txt"
  local built now
  built=$(awk '/^source hash:/ {print $3}' "$BUNDLE/MANIFEST.txt")
  now=$(source_hash)
  if [ "$built" = "$now" ]; then
    echo "sources: unchanged since the build (hash $now)"
  else
    echo "sources: CHANGED since the build (built from $built, the tree is $now): rebuild the bundle"
    bad=1
  fi
  echo "LD_LIBRARY_PATH=${LD_LIBRARY_PATH:-}"
  for f in "$BIN"/*; do
    echo "$(basename "$f") ($(stat -c %s "$f") bytes):"
    ldd "$f" | sed 's/ (0x[0-9a-f]*)//; s/^[[:space:]]*/    /'
    while read -r lib _; do
      [ -z "$lib" ] && continue
      [[ "$lib" =~ $allowed ]] || { echo "  NEEDS $lib: not a CUDA or glibc library (the device lacks it)"; bad=1; }
    done < <(ldd "$f" | sed 's/^[[:space:]]*//')
    if ldd "$f" | grep -q 'not found'; then
      if [ $DRY = 1 ] && ! ldd "$f" | grep 'not found' | grep -q -v -E 'libcu(dart|blas)'; then
        echo "  (CUDA libraries not found here: the device's toolkit provides them)"
      else
        echo "  MISSING: $(ldd "$f" | grep 'not found' | awk '{print $1}' | tr '\n' ' ')"
        bad=1
      fi
    fi
  done
  echo "bundle: $(du -sk "$BUNDLE" | cut -f1) KiB in $BUNDLE"
  return $bad
}

# ---- tests, one per process ----
# run_tests BINARY...: every test (or those matching $TESTS) of each binary in its own
# process; a failure or timeout is rerun with CUDA_LAUNCH_BLOCKING=1 (GPU run), then under
# compute-sanitizer when it exists and time is left. Results in tests.tsv, counts on stdout.
run_tests() {
  local max=$1; shift
  local b t log rc secs t0 result note n=0 pass=0 fail=0 tout=0 notrun=0 skip_nodev=0 skip_other=0 other_names="" failed_names=""
  local s0; s0=$(date +%s)
  for b in "$@"; do
    local exe="$BIN/$b"
    if [ ! -x "$exe" ]; then
      echo "  missing          $b: not in the bundle (counted as a failure)"
      printf '%s\t%s\t%s\t%s\t%s\n' "$b" "*" missing 0 "not in the bundle" >> "$TSV"
      fail=$((fail + 1)); failed_names="$failed_names $b"; continue
    fi
    local tests
    tests=$("$exe" --gtest_list_tests 2>/dev/null | awk '/^[^ ]/ {s=$1} /^  [^ ]/ {print s $1}')
    [ -n "${TESTS:-}" ] && tests=$(echo "$tests" | grep -E "$TESTS" || true)
    for t in $tests; do
      n=$((n + 1))
      log="$LOGS/$b.$t.log"
      if [ "$(left)" -lt $((TEST_TIMEOUT_S / 3 + 10)) ] || [ $(( $(date +%s) - s0 )) -ge "$max" ]; then
        notrun=$((notrun + 1))
        printf '%s\t%s\t%s\t%s\t%s\n' "$b" "$t" not-run 0 "the step's time ran out" >> "$TSV"
        continue
      fi
      t0=$(date +%s)
      timeout --kill-after=5 "$TEST_TIMEOUT_S" "$exe" --gtest_filter="$t" --gtest_color=no > "$log" 2>&1
      rc=$?
      secs=$(( $(date +%s) - t0 ))
      note=""
      if [ $rc = 0 ] && grep -q '^\[  SKIPPED \] 1 test' "$log"; then
        note=$(grep -A1 ': Skipped$' "$log" | tail -1 | cut -c1-150)
        if echo "$note" | grep -q -i 'no CUDA device'; then
          result=skip-no-device; skip_nodev=$((skip_nodev + 1))
        else
          result=skip-other; skip_other=$((skip_other + 1)); other_names="$other_names $t"
        fi
      elif [ $rc = 0 ] && grep -q '^\[  PASSED  \] 1 test' "$log"; then
        result=pass; pass=$((pass + 1))
      else
        if [ $rc = 124 ] || [ $rc = 137 ]; then result=timeout; tout=$((tout + 1)); else result=fail; fail=$((fail + 1)); fi
        failed_names="$failed_names $t"
        note=$(grep -m1 -E 'Failure|failed|error' "$log" | cut -c1-150)
        if [ $DRY = 0 ] && [ "$(left)" -gt $((TEST_TIMEOUT_S + 30)) ]; then
          CUDA_LAUNCH_BLOCKING=1 timeout --kill-after=5 "$TEST_TIMEOUT_S" "$exe" --gtest_filter="$t" --gtest_color=no \
            > "$LOGS/$b.$t.blocking.log" 2>&1
          note="${note:+$note; }CUDA_LAUNCH_BLOCKING=1 rerun rc=$?"
          if command -v compute-sanitizer >/dev/null 2>&1 && [ "$(left)" -gt $((2 * TEST_TIMEOUT_S + 60)) ]; then
            timeout --kill-after=5 $((2 * TEST_TIMEOUT_S)) compute-sanitizer --tool memcheck --print-limit 20 \
              "$exe" --gtest_filter="$t" --gtest_color=no > "$LOGS/$b.$t.memcheck.log" 2>&1
            note="$note; memcheck rc=$? ($(grep -c -E '^========= (Invalid|Program hit)' "$LOGS/$b.$t.memcheck.log") errors)"
          fi
        fi
      fi
      printf '%s\t%s\t%s\t%s\t%s\n' "$b" "$t" "$result" "$secs" "$note" >> "$TSV"
      printf '  %-16s %-70s %3ss %s\n' "$result" "$b $t" "$secs" "$note"
    done
  done
  echo "TESTS $n tests: $pass passed, $fail failed, $tout timed out, $notrun not run," \
       "$((skip_nodev + skip_other)) skipped (no device: $skip_nodev; other: $skip_other${other_names:+:$other_names})" \
       "${failed_names:+; failing:$failed_names}"
  # A GPU run fails on any failure, timeout, test not run or no-device skip (the GPU was
  # not seen); a dry run only on failures and timeouts (every GPU test skips there).
  [ $fail = 0 ] && [ $tout = 0 ] && [ $notrun = 0 ] && { [ $DRY = 1 ] || [ $skip_nodev = 0 ]; }
}
# tests_step NAME MINUTES GPU MAX_S BINARY...: run_tests into logs/NAME.log, its counts in the summary.
tests_step() {
  local name=$1 minutes=$2 gpu=$3 max=$4; shift 4
  want_step "$name" || return 0
  local rc t0; t0=$(date +%s)
  run_tests "$max" "$@" > "$LOGS/$name.log" 2>&1
  rc=$?
  say "$name [$([ "$gpu" = 1 ] && echo "GPU, one process per test" || echo CPU), ~${minutes} min, cap ${max}s]: rc=$rc seconds=$(( $(date +%s) - t0 ))"
  grep '^  ' "$LOGS/$name.log"  # one line per test (stdout only; all of them in tests.tsv)
  grep '^TESTS ' "$LOGS/$name.log" | sed "s/^TESTS /  $name: /" | tee -a "$SUMMARY"
  [ $DRY = 1 ] && [ "$gpu" = 1 ] && say "  ($name without a GPU: every test must skip with 'no CUDA device', counted as no-device; on the GPU a no-device skip fails the step)"
  [ $rc = 0 ] || FAILED_STEPS="$FAILED_STEPS $name"
  return $rc
}

echo "gpu-check: $MODE, OUT=$OUT, bundle $BUNDLE, deadline ${DEADLINE_S}s, models in $MODEL_DIR" | tee -a "$SUMMARY"
cuda_libs
if want_step bundle; then
  check_bundle > "$LOGS/bundle.log" 2>&1
  rc=$?
  say "bundle [CPU, ~0.1 min]: rc=$rc"
  [ $rc = 0 ] || FAILED_STEPS="$FAILED_STEPS bundle"
  sed 's/^/  /' "$LOGS/bundle.log" | tee -a "$SUMMARY"
fi
if want_step device; then
  if [ $DRY = 1 ]; then
    say "device [GPU, ~0.1 min]: not run (dry run): nvidia-smi; $(command -v nvidia-smi >/dev/null && echo 'nvidia-smi is here' || echo 'no nvidia-smi here')"
  else
    step device 0.1 1 30 5 sh -c 'nvidia-smi; nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv'
    grep -m1 -E 'CUDA Version' "$LOGS/device.log" | sed 's/^/  /' | tee -a "$SUMMARY"
  fi
fi
tests_step cpu-tests 0.2 0 90 test-cuda test-cuda-freekv-plan
tests_step gpu-tests 2.0 1 300 test-cuda-kernels test-cuda-forward test-cuda-freekv test-cuda-gpt2

CB="$BIN/kvarena-cuda-bench"
POLICIES="full,window,h2o,confkv:kv-int8=1,confkv-l:kv-int8=1,freekv"
# bench NAME MINUTES MAX MIN MODEL ARGS...: the latency bench into OUT/NAME.json; a dry run
# checks the same invocation with --dry-run 1 (no device) instead.
bench() {
  local name=$1 minutes=$2 max=$3 min=$4 model=$5; shift 5
  want_step "$name" || return 0
  if [ $DRY = 1 ]; then
    say "$name [GPU, ~${minutes} min, cap ${max}s]: not run (dry run): $(basename "$CB") latency --model $(basename "$model") $*"
    STEPS="" step "$name-plan" 0.0 0 30 5 sh -c "'$CB' latency --model '$model' $* --dry-run 1 > '$LOGS/$name.plan.json'"
    grep -o '"runs": [0-9]*, "policies": .*], "roofline"' "$LOGS/$name.plan.json" | sed 's/, "roofline"$//' \
      | sed 's/^/  checked: /' | tee -a "$SUMMARY"
  else
    step "$name" "$minutes" 1 "$max" "$min" sh -c "'$CB' latency --model '$model' $* > '$OUT/$name.json'"
    grep -h '\[cuda-bench\] [^r]' "$LOGS/$name.log" | sed 's/^/  /' | tee -a "$SUMMARY"
  fi
}

SMALL="$MODEL_DIR/kvarena-gpucheck-125m.gguf"
if want_step bench-small; then
  step model-small 0.2 0 60 10 "$CB" random --out "$SMALL" --dim 768 --layers 12 --heads 12 --kv-heads 4 \
      --ffn 2048 --vocab 32000 --type f16 && \
    bench bench-small 1.0 120 30 "$SMALL" --contexts 1024,8192 --batches 1,8 --steps 32 --policies "$POLICIES"
  rm -f "$SMALL"
fi

if [ "${SKIP_8B:-0}" != 1 ] && { want_step model-8b || want_step bench-8b-b1 || want_step bench-8b-b8 || want_step bench-8b-budget; }; then
  BIG="$MODEL_DIR/kvarena-gpucheck-8b-f16.gguf"
  SHAPE=(--dim 4096 --layers 32 --heads 32 --kv-heads 8 --ffn 14336 --vocab 128256 --type f16)
  if [ $DRY = 1 ]; then  # the same flags, 2 layers and a small vocabulary (16 GB would take minutes here)
    BIG="$MODEL_DIR/kvarena-gpucheck-8b-scaled.gguf"
    SHAPE=(--dim 4096 --layers 2 --heads 32 --kv-heads 8 --ffn 14336 --vocab 4096 --type f16)
    say "model-8b (dry run): the 8B shape with 2 layers and vocab 4096 instead of 32 and 128256; the real shape's roofline:"
    "$CB" roofline --dim 4096 --layers 32 --heads 32 --kv-heads 8 --ffn 14336 --vocab 128256 --contexts 1024,8192 \
      --batches 1,8 | sed 's/}, {/},\n  {/g' | sed 's/^/  8B /' | tee -a "$SUMMARY"
  fi
  ok=0
  if [ -s "$BIG" ]; then
    say "model-8b: reusing $BIG"
  else
    step model-8b 0.7 0 200 90 "$CB" random --out "$BIG" "${SHAPE[@]}" || ok=1
    grep -h '"bytes"' "$LOGS/model-8b.log" | sed 's/^/  /' | tee -a "$SUMMARY"
  fi
  if [ $ok = 0 ]; then
    # The roofline of the real shape (bytes a decode step reads), from the plan: no device.
    if "$CB" latency --model "$BIG" --contexts 1024,8192 --batches 1,8 --policies full --dry-run 1 \
         > "$OUT/bench-8b-plan.json" 2> "$LOGS/bench-8b-plan.log"; then
      [ $DRY = 1 ] || grep -o '"roofline": .*' "$OUT/bench-8b-plan.json" | sed 's/}, {/},\n  {/g' | sed 's/^/  8B /' \
        | tee -a "$SUMMARY"
    else
      say "bench-8b-plan: rc=1 ($(tail -1 "$LOGS/bench-8b-plan.log"))"; FAILED_STEPS="$FAILED_STEPS bench-8b-plan"
    fi
    bench bench-8b-b1 1.5 180 60 "$BIG" --contexts 1024,8192 --batches 1 --steps 32 --policies "$POLICIES"
    bench bench-8b-b8 1.0 150 60 "$BIG" --contexts 8192 --batches 8 --steps 16 --policies "full,confkv:kv-int8=1"
    bench bench-8b-budget 0.5 90 40 "$BIG" --contexts 8192 --batches 1 --steps 32 \
      --policies "window:window=1984+sinks=64,freekv:budget=2048"
  fi
  [ "${KEEP_MODEL:-0}" = 1 ] || rm -f "$BIG"
fi

say "not in this bundle: the kvarena CLI's steps (run/generate/bench --backend cuda on 20+20 tasks): the CLI needs ~55 shared libraries the device lacks; a second session carries a static build"
say "total seconds=$(( $(date +%s) - START )) ($MODE); $([ -z "$FAILED_STEPS" ] && echo "every step that ran passed" || echo "FAILED:$FAILED_STEPS")"
tar -C "$OUT" -czf "$OUT/logs.tgz" logs && rm -rf "$LOGS"
rm -rf "$TMPD"
ls -l "$OUT" | sed 's/^/  /'
[ -z "$FAILED_STEPS" ]
