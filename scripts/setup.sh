#!/usr/bin/env bash
# setup.sh: install the Debian packages kvarena's build and tests need. Idempotent: does
# nothing when everything is present. Run as root (or with sudo available).
set -euo pipefail

PACKAGES=(
  build-essential cmake ninja-build ccache pkg-config git
  libgtest-dev libgmock-dev libbenchmark-dev libcli11-dev nlohmann-json3-dev
  libboost-dev libcurl4-openssl-dev libgumbo-dev libsqlite3-dev sqlite3 libcairo2-dev
  libpng-dev libjpeg-dev  # eval_fuzzy_image_match: PNG and JPEG decoding
  # the chromium browser backend (envs/browser/chromium-*) and its `chromium` tests
  chromium
  clang libclang-rt-14-dev
  # the single-node Slurm cluster of the `slurm` test (specs/cluster.md)
  slurmctld slurmd slurm-client munge
  # PyTorch for scripts/train/ (the `train` test; Debian's /usr/bin/python3 sees it) and
  # the pthread OpenBLAS that makes its matrix products fast
  python3-torch libopenblas0-pthread
)
# `--chromium` is still accepted (chromium is in the default list now).

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "[setup] all ${#PACKAGES[@]} packages present" >&2
  exit 0
fi

echo "[setup] installing: ${missing[*]}" >&2
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
echo "[setup] done" >&2
