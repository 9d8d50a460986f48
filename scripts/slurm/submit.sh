#!/usr/bin/env bash
# submit.sh: submits a sharded `kvarena run` as a Slurm job array plus the merge job that
# waits for it (afterany), and prints both job ids.
#   scripts/slurm/submit.sh --shards 4 --out results/runs/NAME -- --suite tasks/vwa-local \
#       --policies full,window,h2o,confkv,freekv --model m.gguf
# Options before `--`: --shards N (array size), --out DIR (shard files, merged.sqlite,
# report.html), --bin PATH (the kvarena binary; default: build/kvarena beside this repo),
# any other option is passed to both sbatch calls (e.g. --partition=gpu --gres=gpu:1).
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
SHARDS=""; OUT=""; BIN="$ROOT/build/kvarena"; SBATCH_ARGS=()
while [[ $# -gt 0 ]]; do
  case $1 in
    --shards) SHARDS=$2; shift 2 ;;
    --out) OUT=$2; shift 2 ;;
    --bin) BIN=$2; shift 2 ;;
    --) shift; break ;;
    *) SBATCH_ARGS+=("$1"); shift ;;
  esac
done
[[ $SHARDS =~ ^[1-9][0-9]*$ ]] || { echo "submit: --shards N (a positive integer) is required" >&2; exit 2; }
[[ -n $OUT ]] || { echo "submit: --out DIR is required" >&2; exit 2; }
[[ -x $BIN ]] || { echo "submit: $BIN is not an executable kvarena (build it or pass --bin)" >&2; exit 2; }
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
export KVARENA_BIN=$BIN
array=$(sbatch --parsable --array="0-$((SHARDS - 1))" --chdir="$ROOT" --output="$OUT/run-%A_%a.out" \
  --export=ALL "${SBATCH_ARGS[@]}" "$HERE/run-array.sbatch" "$OUT" "$@")
array=${array%%;*}
merge=$(sbatch --parsable --dependency="afterany:$array" --chdir="$ROOT" --output="$OUT/merge-%j.out" \
  --export=ALL "${SBATCH_ARGS[@]}" "$HERE/merge.sbatch" "$OUT")
merge=${merge%%;*}
echo "array job $array ($SHARDS shards), merge job $merge; results in $OUT" >&2
echo "$array $merge"
