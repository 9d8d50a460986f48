#!/usr/bin/env bash
# pack-data.sh: a train-data folder and its held-out folder in one xz tarball for a machine
# that cannot run kvarena (train-gpu.sh unpacks it): data/ and heldout/, each with tokens/,
# tokenizer.json and manifest.json where present (the text files stay behind).
#   scripts/train/pack-data.sh DATA HELDOUT OUT.tar.xz
set -euo pipefail
DATA="${1:?usage: pack-data.sh DATA HELDOUT OUT.tar.xz}"
HELD="${2:?usage: pack-data.sh DATA HELDOUT OUT.tar.xz}"
OUT="${3:?usage: pack-data.sh DATA HELDOUT OUT.tar.xz}"
STAGE="$(mktemp -d)"
trap 'rm -rf "$STAGE"' EXIT
for pair in "data:$DATA" "heldout:$HELD"; do
  name="${pair%%:*}"; src="${pair#*:}"
  [ -d "$src/tokens" ] || { echo "pack-data.sh: $src has no tokens/ (a kvarena train-data folder?)" >&2; exit 2; }
  mkdir -p "$STAGE/$name"
  ln -s "$(realpath "$src/tokens")" "$STAGE/$name/tokens"
  for f in tokenizer.json manifest.json; do
    [ -f "$src/$f" ] && ln -s "$(realpath "$src/$f")" "$STAGE/$name/$f"
  done
done
tar -C "$STAGE" -chf - data heldout | xz -T0 -9 > "$OUT"
echo "[pack-data] $OUT: $(du -h "$OUT" | cut -f1) ($(du -shL "$STAGE" | cut -f1) unpacked)"
