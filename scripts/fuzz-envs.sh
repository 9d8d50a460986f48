#!/usr/bin/env bash
# fuzz-envs.sh SECONDS: builds the envs fuzz targets (tests/fuzz-envs: the action grammar,
# the task loader + evaluators, and the env API's request bodies through the whole env
# server) with clang under libFuzzer + ASan + UBSan in build-fuzz/ (shared with
# scripts/fuzz.sh), and runs them from the seed corpus in tests/fuzz-envs/seeds for
# 2 x SECONDS in all (default 60: the budget of the two targets it had before the third),
# split evenly between the targets. Exits non-zero when a target crashes or a sanitizer
# reports; the reproducer is left in build-fuzz/artifacts/ and its path printed.
#   scripts/fuzz-envs.sh 60
#   FUZZ_ENVS_BUILD_DIR=... JOBS=... scripts/fuzz-envs.sh 300
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
SECONDS_BUDGET=$(( ${1:-60} * 2 ))
BUILD_DIR="${FUZZ_ENVS_BUILD_DIR:-build-fuzz}"  # the tree scripts/fuzz.sh configures the same way
JOBS="${JOBS:-$(nproc)}"
export CCACHE_DIR="${CCACHE_DIR:-$HOME/.cache/kvarena-ccache}"

for tool in clang clang++ cmake ninja; do
  command -v "$tool" >/dev/null || { echo "[fuzz-envs] $tool not found: run scripts/setup.sh" >&2; exit 1; }
done

# Inside the whole project when tests/CMakeLists.txt adds fuzz-envs (KVARENA_FUZZ=ON);
# until then the folder configures on its own.
TARGETS=(action-parse:action task-load:task)
if grep -q 'add_subdirectory(fuzz-envs)' tests/CMakeLists.txt && [ -f tests/fuzz/CMakeLists.txt ]; then
  SRC=.
  EXTRA=(-DKVARENA_FUZZ=ON -DKVARENA_BUILD_TESTS=ON)
  BIN="$BUILD_DIR/tests/fuzz-envs"
  TARGETS+=(env-api:env-api)  # needs the envs library: only inside the project
else
  SRC=tests/fuzz-envs
  EXTRA=()
  BIN="$BUILD_DIR"
fi
SECONDS_EACH=$(( SECONDS_BUDGET / ${#TARGETS[@]} ))

echo "[fuzz-envs] configure $BUILD_DIR (clang, from $SRC)" >&2
CC=clang CXX=clang++ cmake -S "$SRC" -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  "${EXTRA[@]}" >/dev/null
echo "[fuzz-envs] build (-j$JOBS)" >&2
names=()
for target in "${TARGETS[@]}"; do names+=("fuzz-${target%%:*}"); done
cmake --build "$BUILD_DIR" --target "${names[@]}" -j "$JOBS"

mkdir -p "$BUILD_DIR/artifacts"
status=0
for target in "${TARGETS[@]}"; do
  name="fuzz-${target%%:*}"
  seeds="${target##*:}"
  corpus="$BUILD_DIR/corpus-$seeds"  # new inputs go here, never into the source tree
  mkdir -p "$corpus"
  echo "[fuzz-envs] $name for ${SECONDS_EACH}s" >&2
  log="$BUILD_DIR/$name.log"
  if "$BIN/$name" -max_total_time="$SECONDS_EACH" -timeout=10 -rss_limit_mb=2048 -max_len=8192 \
       -dict="tests/fuzz-envs/$seeds.dict" -artifact_prefix="$BUILD_DIR/artifacts/$name-" \
       -print_final_stats=1 "$corpus" "tests/fuzz-envs/seeds/$seeds" >"$log" 2>&1; then
    grep -E '^(Done|stat::number_of_executed_units)' "$log" | sed "s/^/[fuzz-envs] $name: /" >&2 || true
  else
    status=1
    echo "[fuzz-envs] $name FAILED; last lines of $log:" >&2
    tail -n 40 "$log" >&2
    ls "$BUILD_DIR/artifacts/$name-"* 2>/dev/null | sed 's/^/[fuzz-envs] reproducer: /' >&2 || true
  fi
done
[ "$status" = 0 ] && echo "[fuzz-envs] no crashes" >&2
exit "$status"
