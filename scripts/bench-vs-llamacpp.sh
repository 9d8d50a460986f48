#!/usr/bin/env bash
# bench-vs-llamacpp.sh: prompt-processing and decode speed of kvarena against llama.cpp
# (tools/llamaref) on the same GGUF, same threads, same method (one untimed warm-up, -r
# timed repetitions of a -p token prefill from an empty cache followed by -n single-token
# decodes, medians). Runs drift by up to ~30% over minutes on small VMs, so the two
# engines alternate for --rounds rounds (the order flips each round) and the summary uses
# medians over rounds. Builds nothing: needs build/kvarena (or build/cli/kvarena, or
# $KVARENA_BIN); sets up llamaref with ../shared/tools/llamaref/setup.sh.
#
#   scripts/bench-vs-llamacpp.sh MODEL.gguf [-t 2] [-p 512] [-n 128] [-r 3] [--rounds 3]
#
# stdout: one JSON line per run ({"engine", "round", ...the engine's own bench JSON}), then
# one JSON summary line: medians per engine, "pp_ratio" and "tg_ratio" (kvarena /
# llama.cpp), kvarena's "tg_bandwidth_efficiency", and the load average before and after.
# Other busy processes ruin both engines' spinning thread pools: run on an idle machine.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

usage() { echo "usage: $0 MODEL.gguf [-t 2] [-p 512] [-n 128] [-r 3] [--rounds 3]" >&2; exit 2; }
[ $# -ge 1 ] || usage
MODEL="$1"
shift
THREADS=2 NP=512 NG=128 REPS=3 ROUNDS=3
while [ $# -gt 0 ]; do
  case "$1" in
    -t) THREADS="$2"; shift 2 ;;
    -p) NP="$2"; shift 2 ;;
    -n) NG="$2"; shift 2 ;;
    -r) REPS="$2"; shift 2 ;;
    --rounds) ROUNDS="$2"; shift 2 ;;
    *) usage ;;
  esac
done
[ -f "$MODEL" ] || { echo "bench-vs-llamacpp: no such model: $MODEL" >&2; exit 1; }

KVARENA="${KVARENA_BIN:-}"
if [ -z "$KVARENA" ]; then
  for c in build/kvarena build/cli/kvarena; do [ -x "$c" ] && KVARENA="$c" && break; done
fi
[ -n "$KVARENA" ] && [ -x "$KVARENA" ] || { echo "bench-vs-llamacpp: build kvarena first (or set KVARENA_BIN)" >&2; exit 1; }
LLAMAREF="$(bash ../shared/tools/llamaref/setup.sh)"

LOAD_BEFORE="$(cut -d' ' -f1 /proc/loadavg)"
echo "bench-vs-llamacpp: $MODEL, -t $THREADS -p $NP -n $NG -r $REPS, $ROUNDS rounds (load average $LOAD_BEFORE)" >&2
RUNS="$(mktemp)"
trap 'rm -f "$RUNS"' EXIT

run_one() {  # ENGINE ROUND
  local out
  if [ "$1" = kvarena ]; then
    out="$("$KVARENA" bench decode --model "$MODEL" -p "$NP" -n "$NG" -t "$THREADS" -r "$REPS" 2>/dev/null)"
  else
    out="$("$LLAMAREF" bench "$MODEL" -p "$NP" -n "$NG" -t "$THREADS" -r "$REPS")"
  fi
  # {"engine": E, "round": R, ...the engine's JSON}
  local line="{\"engine\":\"$1\",\"round\":$2,${out#\{}"
  echo "$line" | tee -a "$RUNS"
}

for round in $(seq 1 "$ROUNDS"); do
  if [ $((round % 2)) -eq 1 ]; then
    run_one kvarena "$round"
    run_one llamaref "$round"
  else
    run_one llamaref "$round"
    run_one kvarena "$round"
  fi
done

LOAD_AFTER="$(cut -d' ' -f1 /proc/loadavg)"
python3 - "$RUNS" "$MODEL" "$THREADS" "$NP" "$NG" "$REPS" "$ROUNDS" "$LOAD_BEFORE" "$LOAD_AFTER" <<'PY'
import json, statistics, sys
runs_file, model, threads, np_, ng, reps, rounds, load_before, load_after = sys.argv[1:]
runs = [json.loads(l) for l in open(runs_file) if l.strip()]
def med(engine, key):
    v = [r[key] for r in runs if r["engine"] == engine and r.get(key) is not None]
    return statistics.median(v) if v else None
def per_round(engine, key):
    return [r[key] for r in runs if r["engine"] == engine]
summary = {
    "model": model, "threads": int(threads), "n_prompt": int(np_), "n_gen": int(ng),
    "reps": int(reps), "rounds": int(rounds),
    "kvarena": {"pp_tok_s": med("kvarena", "pp_tok_s"), "tg_tok_s": med("kvarena", "tg_tok_s"),
                "pp_rounds": per_round("kvarena", "pp_tok_s"), "tg_rounds": per_round("kvarena", "tg_tok_s")},
    "llamaref": {"pp_tok_s": med("llamaref", "pp_tok_s"), "tg_tok_s": med("llamaref", "tg_tok_s"),
                 "pp_rounds": per_round("llamaref", "pp_tok_s"), "tg_rounds": per_round("llamaref", "tg_tok_s")},
}
def ratio(key):
    a, b = summary["kvarena"][key], summary["llamaref"][key]
    return round(a / b, 4) if a and b else None
summary["pp_ratio"] = ratio("pp_tok_s")
summary["tg_ratio"] = ratio("tg_tok_s")
summary["tg_bandwidth_efficiency"] = med("kvarena", "tg_bandwidth_efficiency")
summary["read_bandwidth_gbs"] = med("kvarena", "read_bandwidth_gbs")
summary["load_average_before"] = float(load_before)
summary["load_average_after"] = float(load_after)
print(json.dumps(summary))
PY
