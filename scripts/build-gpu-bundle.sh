#!/usr/bin/env bash
# build-gpu-bundle.sh: builds HERE (no GPU needed) everything scripts/gpu-check.sh runs on a
# lent GPU machine, so the device spends its minutes on tests and benches, not on configure
# and build (it has nvcc, CMake and ninja, but none of our Debian dependencies).
#   scripts/build-gpu-bundle.sh            -> build-gpu-bundle/ (carried to the device)
# What it holds (bin/): the GPU test binaries (test-cuda, test-cuda-kernels, test-cuda-forward,
# test-cuda-freekv, test-cuda-gpt2), the CPU FreeKV planning test (test-cuda-freekv-plan) and
# kvarena-cuda-bench, built for sm_90 only (H100/H200), Release, stripped; GoogleTest linked
# statically; dynamic: libcudart and libcublas(+Lt) from the device's CUDA 13 toolkit, and
# the system's libc/libm/libpthread/libdl/librt/libstdc++/libgcc_s. libstdc++ stays dynamic
# on purpose: linked statically on this Debian 12 (glibc 2.36) it pulls in arc4random
# (GLIBC_2.36, std::random_device), which a glibc 2.35 device (Ubuntu 22.04) lacks; dynamic,
# the binaries need GLIBC_2.34 and GLIBCXX_3.4.30 (GCC 12), which 22.04 and 24.04 have.
# MANIFEST.txt: the commit, the dirty source files, build flags, each binary's size, sha256,
# the newest glibc/libstdc++ symbol versions it needs, and its test count.
# The full `kvarena` CLI is NOT bundled: it links ~55 shared libraries (curl, gumbo, SQLite,
# cairo, png, jpeg, ...) that the device lacks, so the CLI's --backend cuda steps wait for a
# session that can build it there or carry a static build (see gpu-check.sh).
# The check at the end fails (exit 1) when any binary needs another shared library, when
# ldd cannot resolve one (outside the CUDA ones), or when the bundle exceeds BUNDLE_MAX_MB.
# Env: BUILD_DIR (build-gpu-bundle-cmake: the CMake tree, not carried), BUNDLE_DIR
# (build-gpu-bundle), JOBS (2), CUDA_ARCH (90), BUNDLE_MAX_MB (40: the device tool carries
# 64 MiB with the working tree, ~20 MiB).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
BUILD="${BUILD_DIR:-build-gpu-bundle-cmake}"
BUNDLE="${BUNDLE_DIR:-build-gpu-bundle}"
JOBS="${JOBS:-2}"
ARCH="${CUDA_ARCH:-90}"
MAX_MB="${BUNDLE_MAX_MB:-40}"
export PATH="$PATH:/usr/local/cuda/bin"
export CCACHE_DIR="${CCACHE_DIR:-$HOME/.cache/kvarena-ccache}"
export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$ROOT}"

TESTS=(test-cuda test-cuda-kernels test-cuda-forward test-cuda-freekv test-cuda-gpt2 test-cuda-freekv-plan)
TOOLS=(kvarena-cuda-bench)

echo "[bundle] configure $BUILD (sm_$ARCH, Release, static GoogleTest)" >&2
cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release -DKVARENA_CUDA=ON -DKVARENA_BUILD_TESTS=ON \
  -DCMAKE_CUDA_ARCHITECTURES="$ARCH" -DCMAKE_EXE_LINKER_FLAGS="" >/dev/null
echo "[bundle] build (-j$JOBS): ${TESTS[*]} ${TOOLS[*]}" >&2
cmake --build "$BUILD" -j "$JOBS" --target "${TESTS[@]}" "${TOOLS[@]}"

rm -rf "$BUNDLE"
mkdir -p "$BUNDLE/bin"
for t in "${TESTS[@]}"; do cp "$BUILD/tests/$t" "$BUNDLE/bin/"; done
for t in "${TOOLS[@]}"; do cp "$BUILD/$t" "$BUNDLE/bin/"; done
strip --strip-unneeded "$BUNDLE"/bin/*

# The shared libraries a bundled binary may need: the CUDA runtime and cuBLAS (the device's
# toolkit provides them) and glibc's own; anything else would be missing on the device.
ALLOWED='^(linux-vdso\.so|/lib64/ld-linux-x86-64\.so|ld-linux-x86-64\.so|libc\.so|libm\.so|libpthread\.so|libdl\.so|librt\.so|libgcc_s\.so|libstdc\+\+\.so|libcudart\.so|libcublas\.so|libcublasLt\.so)'
bad=0
{
  echo "kvarena GPU bundle (scripts/build-gpu-bundle.sh)"
  echo "commit: $(git rev-parse HEAD)"
  echo "built: $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(uname -m), $(nvcc --version | tail -1)"
  echo "flags: -DKVARENA_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=$ARCH -DCMAKE_BUILD_TYPE=Release, GTest static ($(ls /usr/lib/x86_64-linux-gnu/libgtest.a 2>/dev/null))"
  echo "dirty sources at build time (uncommitted changes compiled in):"
  git status --porcelain -- engine tests cmake CMakeLists.txt | sed 's/^/  /'
  echo "source hash: $(bash "$ROOT/scripts/gpu-check.sh" --source-hash)"
  for f in "$BUNDLE"/bin/*; do
    b=$(basename "$f")
    echo "binary: $b $(stat -c %s "$f") bytes sha256 $(sha256sum "$f" | cut -c1-16)"
    echo "  needs: $(objdump -p "$f" | awk '/NEEDED/ {print $2}' | tr '\n' ' ')"
    echo "  newest symbol versions: $(objdump -T "$f" | grep -o 'GLIBC_[0-9.]*' | sort -V -u | tail -1)" \
         "$(objdump -T "$f" | grep -o 'GLIBCXX_[0-9.]*' | sort -V -u | tail -1)"
    case "$b" in test-*) echo "  tests: $("$f" --gtest_list_tests | awk '/^[^ ]/ {s=$1} /^  / {n++} END {print n}')";; esac
  done
} > "$BUNDLE/MANIFEST.txt"
for f in "$BUNDLE"/bin/*; do
  while read -r lib _; do
    [ -z "$lib" ] && continue
    if ! [[ "$lib" =~ $ALLOWED ]]; then
      echo "[bundle] $(basename "$f") needs $lib (not CUDA or glibc): the device would lack it" >&2
      bad=1
    fi
  done < <(ldd "$f" | sed 's/^[[:space:]]*//')
  if ldd "$f" | grep -v -E 'libcudart|libcublas' | grep -q 'not found'; then
    echo "[bundle] $(basename "$f"): ldd finds a library missing" >&2
    bad=1
  fi
done
size_kb=$(du -sk "$BUNDLE" | cut -f1)
echo "size: ${size_kb} KiB" >> "$BUNDLE/MANIFEST.txt"
if [ "$size_kb" -gt $((MAX_MB * 1024)) ]; then
  echo "[bundle] $BUNDLE is ${size_kb} KiB, over ${MAX_MB} MiB" >&2
  bad=1
fi
cat "$BUNDLE/MANIFEST.txt" >&2
[ $bad = 0 ] && echo "[bundle] ready: $BUNDLE (${size_kb} KiB); carry it to the device (run's carry: [\"$BUNDLE\"])" >&2
exit $bad
