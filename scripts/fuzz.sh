#!/usr/bin/env bash
# fuzz.sh [SECONDS]: builds the libFuzzer targets under ASan/UBSan with clang in
# build-fuzz/ (only the fuzz targets, which compile the few engine files they need), writes
# the seed corpus, and runs fuzz-gguf for SECONDS (default 60). Fails on any crash, leak,
# sanitizer report or uncaught exception; the input that caused it is left in
# build-fuzz/fuzz-artifacts/ (reproduce: build-fuzz/tests/fuzz/fuzz-gguf FILE).
# The corpus in build-fuzz/fuzz-corpus/gguf/ grows across runs.
#   FUZZ_BUILD_DIR=... JOBS=... scripts/fuzz.sh 300
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
SECONDS_TO_RUN="${1:-60}"
BUILD_DIR="${FUZZ_BUILD_DIR:-build-fuzz}"
JOBS="${JOBS:-$(nproc)}"
export CCACHE_DIR="${CCACHE_DIR:-$HOME/.cache/kvarena-ccache}"

command -v clang++ >/dev/null || { echo "[fuzz] clang++ not found: run scripts/setup.sh" >&2; exit 1; }

echo "[fuzz] configure $BUILD_DIR (clang, KVARENA_FUZZ=ON)" >&2
CC=clang CXX=clang++ cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DKVARENA_FUZZ=ON -DKVARENA_BUILD_TESTS=ON >/dev/null
echo "[fuzz] build fuzz-gguf (-j$JOBS)" >&2
cmake --build "$BUILD_DIR" --target fuzz-gguf fuzz-gguf-seeds -j "$JOBS"

CORPUS="$BUILD_DIR/fuzz-corpus/gguf"
ARTIFACTS="$BUILD_DIR/fuzz-artifacts"
mkdir -p "$CORPUS" "$ARTIFACTS"
"$BUILD_DIR/tests/fuzz/fuzz-gguf-seeds" "$CORPUS"

echo "[fuzz] fuzz-gguf for ${SECONDS_TO_RUN}s ($(ls "$CORPUS" | wc -l) corpus files)" >&2
"$BUILD_DIR/tests/fuzz/fuzz-gguf" -max_total_time="$SECONDS_TO_RUN" -rss_limit_mb=2048 -timeout=10 \
  -max_len=65536 -print_final_stats=1 -artifact_prefix="$ARTIFACTS/" "$CORPUS"
echo "[fuzz] no crashes" >&2
