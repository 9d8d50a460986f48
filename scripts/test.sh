#!/usr/bin/env bash
# test.sh: install what is missing, configure, build (ccache), run every test.
#   scripts/test.sh            -> build/ (Release), all tests; `model` tests skip without ../shared
#   BUILD_DIR=... JOBS=... scripts/test.sh
# Also builds the GGUF fuzz target under ASan/UBSan (clang, build-fuzz/) and runs it for a
# bounded time (FUZZ_SECONDS, default 60).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
BUILD_DIR="${BUILD_DIR:-build}"
JOBS="${JOBS:-$(nproc)}"
FUZZ_SECONDS="${FUZZ_SECONDS:-60}"
export CCACHE_DIR="${CCACHE_DIR:-$HOME/.cache/kvarena-ccache}"
export CCACHE_BASEDIR="$ROOT"  # absolute paths under the checkout hash as relative: clones share hits

bash scripts/setup.sh test  # every package its tests need (the default profile, all)

echo "[test] configure $BUILD_DIR" >&2
cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release -DKVARENA_BUILD_TESTS=ON >/dev/null
echo "[test] build (-j$JOBS)" >&2
cmake --build "$BUILD_DIR" -j "$JOBS"

echo "[test] ctest" >&2
ctest --test-dir "$BUILD_DIR" --output-on-failure -j "$JOBS" --timeout 600

# The CUDA backend compiles wherever nvcc is (no GPU needed): kvarena_cuda, its tests and a
# CUDA-enabled kvarena in their own build dir; the CPU-side tests run, the GPU tests skip
# without a device, and test-cli-backend checks `--backend cuda` fails cleanly without one.
if command -v nvcc >/dev/null 2>&1 || [ -x /usr/local/cuda/bin/nvcc ]; then
  echo "[test] CUDA backend: compile-only build in build-cuda (nvcc found; GPU tests skip without a device)" >&2
  PATH="$PATH:/usr/local/cuda/bin" cmake -S . -B build-cuda -G Ninja -DKVARENA_CUDA=ON -DCMAKE_BUILD_TYPE=Release >/dev/null
  cuda_tests="test-cuda test-cuda-kernels test-cuda-forward test-cuda-freekv test-cuda-gpt2 test-cli-backend"
  cmake --build build-cuda -j "$JOBS" --target kvarena_cuda $cuda_tests
  for t in $cuda_tests; do build-cuda/tests/$t --gtest_brief=1; done
else
  echo "[test] CUDA backend: skipped (no nvcc)" >&2
fi

if [ -f tests/fuzz/CMakeLists.txt ] && [ "$FUZZ_SECONDS" != "0" ]; then
  echo "[test] fuzz targets under ASan/UBSan (${FUZZ_SECONDS}s each)" >&2
  bash scripts/fuzz.sh "$FUZZ_SECONDS"
fi
if [ -f tests/fuzz-envs/CMakeLists.txt ] && [ "$FUZZ_SECONDS" != "0" ]; then
  bash scripts/fuzz-envs.sh "$FUZZ_SECONDS"
fi
echo "[test] all passed" >&2
