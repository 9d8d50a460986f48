#!/usr/bin/env bash
# setup.sh: install the Debian packages kvarena needs, by profile. Idempotent: installs only
# what is missing, and does nothing (not even apt-get update) when everything is present. Run
# as root (or with sudo available).
#
#   scripts/setup.sh            everything (= test): what CI and scripts/test.sh need
#   scripts/setup.sh demo       what scripts/demo.sh needs: the compiler, CMake and the
#                               libraries the `kvarena` binary links; no test frameworks, no
#                               Chromium, clang, Slurm or PyTorch
#   scripts/setup.sh test       every test of scripts/test.sh: demo's packages, GoogleTest,
#                               Chromium, clang for the fuzzers, Slurm, PyTorch, node and the
#                               openai npm client (tests/serve)
#   scripts/setup.sh GROUP...   one or more of the groups below (build, tests, chromium, fuzz,
#                               slurm, train, node), e.g. `scripts/setup.sh build slurm`
# Old flags still accepted: --chromium (= chromium), --slurm (= slurm).
set -euo pipefail

# build: configure and build the `kvarena` binary (CMakeLists.txt; envs/, results/, cli/ find
# these libraries; Boost.Beast is header-only).
BUILD=(
  build-essential cmake ninja-build ccache pkg-config
  libcli11-dev nlohmann-json3-dev libboost-dev libcurl4-openssl-dev libgumbo-dev
  libsqlite3-dev libcairo2-dev
  libpng-dev libjpeg-dev  # eval_fuzzy_image_match: PNG and JPEG decoding
)
# tests: the GoogleTest executables (tests/), the optional kernel benchmark, the sqlite3
# shell and git the test scripts call; python3-jinja2, the reference renderer of chat
# templates (scripts/chat-template-ref.py, test-chat-template-llamacpp); numpy for
# llama.cpp's gguf-py (test-arch's files).
TESTS=(git libgtest-dev libgmock-dev libbenchmark-dev sqlite3 python3-jinja2 python3-numpy)
# chromium: the chromium browser backend (envs/browser/chromium/) and its `chromium` tests.
CHROMIUM=(chromium)
# fuzz: the libFuzzer targets under ASan/UBSan (scripts/fuzz.sh, scripts/fuzz-envs.sh).
FUZZ=(clang libclang-rt-14-dev)
# node: the official openai npm client of the `serve-e2e` test (tests/serve), installed with
# `npm ci` from the committed package-lock.json; Debian's nodejs and npm only where no node is
# installed already (a machine may have node from elsewhere, npm included).
NODE=(nodejs npm)
# slurm: the single-node Slurm cluster of the `slurm` test (scripts/slurm/local-cluster.sh).
SLURM=(slurmctld slurmd slurm-client munge)
# train: PyTorch for scripts/train/ (the `train` tests; Debian's /usr/bin/python3 sees it) and
# the pthread OpenBLAS that makes its matrix products fast.
TRAIN=(python3-torch libopenblas0-pthread)

PACKAGES=()
WANT_NODE=0
add_group() {
  case "$1" in
    demo|build) PACKAGES+=("${BUILD[@]}") ;;
    test|all) PACKAGES+=("${BUILD[@]}" "${TESTS[@]}" "${CHROMIUM[@]}" "${FUZZ[@]}" "${SLURM[@]}" "${TRAIN[@]}"); WANT_NODE=1 ;;
    tests) PACKAGES+=("${TESTS[@]}") ;;
    chromium|--chromium) PACKAGES+=("${CHROMIUM[@]}") ;;
    fuzz) PACKAGES+=("${FUZZ[@]}") ;;
    slurm|--slurm) PACKAGES+=("${SLURM[@]}") ;;
    train) PACKAGES+=("${TRAIN[@]}") ;;
    node) WANT_NODE=1 ;;
    -h|--help) sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "[setup] unknown profile or group '$1' (demo, test, all; build, tests, chromium, fuzz, slurm, train)" >&2
       exit 2 ;;
  esac
}
if [ $# -eq 0 ]; then
  add_group all
else
  for g in "$@"; do add_group "$g"; done
fi
if [ "$WANT_NODE" = 1 ] && ! { command -v node >/dev/null && command -v npm >/dev/null; }; then
  PACKAGES+=("${NODE[@]}")
fi
# The npm clients of the tests (tests/serve/package-lock.json): after the packages.
install_npm_clients() {
  [ "$WANT_NODE" = 1 ] || return 0
  local dir
  dir="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/tests/serve"
  if [ -d "$dir/node_modules/openai" ]; then echo "[setup] npm clients present ($dir)" >&2; return 0; fi
  echo "[setup] npm ci in $dir" >&2
  (cd "$dir" && npm ci --no-audit --no-fund >&2)
}

# Each package once, in the order first named.
mapfile -t PACKAGES < <(printf '%s\n' "${PACKAGES[@]}" | awk '!seen[$0]++')

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "[setup] all ${#PACKAGES[@]} packages present" >&2
  install_npm_clients
  exit 0
fi

echo "[setup] installing: ${missing[*]}" >&2
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
install_npm_clients
echo "[setup] done" >&2
