#!/usr/bin/env bash
# llama-bench-noamx.sh: the library folder of a ggml CPU backend built like
# ../shared/tools/llamaref/build-native.sh's (-march=native) but without AMX, for CPUs that
# report AMX while the VM does not let programs use it: there the native llama-bench dies
# with SIGSEGV on its first AMX tile load (tileloadd in ggml_backend_amx_mul_mat). Run the
# native llama-bench with this folder first on LD_LIBRARY_PATH (its RUNPATH yields to it):
#
#   L=$(bash scripts/llama-bench-noamx.sh)
#   LD_LIBRARY_PATH=$L $(bash ../shared/tools/llamaref/build-native.sh) -m M.gguf -o json
#
# Builds only ggml-base, ggml-cpu and ggml (about 3 minutes on 2 cores) from the llama.cpp
# source llamaref unpacked, into build-native-noamx beside build-native; idempotent.
# Prints the folder on stdout.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
NATIVE="$(bash "$ROOT/../shared/tools/llamaref/build-native.sh")"   # .../build-native/bin/llama-bench
SRC="$(cd "$(dirname "$NATIVE")/../.." && pwd)"
OUT="$SRC/build-native-noamx"
NOAMX="-mno-amx-tile -mno-amx-int8 -mno-amx-bf16"
if [ ! -f "$OUT/bin/libggml-cpu.so" ]; then
  echo "[llama-bench-noamx] building ggml's CPU backend with -march=native $NOAMX" >&2
  cmake -S "$SRC" -B "$OUT" -G Ninja -DCMAKE_BUILD_TYPE=Release -DGGML_NATIVE=ON \
    -DCMAKE_C_FLAGS="$NOAMX" -DCMAKE_CXX_FLAGS="$NOAMX" -DLLAMA_CURL=OFF -DLLAMA_BUILD_TESTS=OFF >&2
  cmake --build "$OUT" -j "$(nproc)" --target ggml-base ggml-cpu ggml >&2
fi
echo "$OUT/bin"
