#!/usr/bin/env bash
# bench-vs-llamacpp.sh: prompt-processing and decode speed of kvarena against llama.cpp on
# the same GGUF, same threads, same method (one untimed warm-up, -r timed repetitions of a
# -p token prefill from an empty cache, then -n single-token decodes after those -p tokens;
# medians). Runs drift by up to ~30% over minutes on small VMs, so the two engines alternate
# for --rounds rounds (the order flips each round) and the summary uses medians over rounds.
# Builds nothing of kvarena: needs build/kvarena (or build/cli/kvarena, or $KVARENA_BIN).
#
#   scripts/bench-vs-llamacpp.sh MODEL.gguf [-t 2] [-p 512] [-n 128] [-r 3] [--rounds 3]
#                                [--peer llamaref|native|native-noamx]
#
# The peer (llama.cpp):
#   llamaref      (default) ../shared/tools/llamaref's bench: llama.cpp's prebuilt CPU
#                 libraries (node-llama-cpp's build, not -march=native). Ready in seconds.
#   native        llama.cpp's own llama-bench built with -march=native by
#                 ../shared/tools/llamaref/build-native.sh (about 10 minutes the first time):
#                 the same SIMD as kvarena, the fair peer. Runs `-p P -n 0` and
#                 `-p 0 -n N -d P` (decode after P tokens, as kvarena's) with -t, -r and
#                 `-o json`; per run the medians of its samples become pp_tok_s / tg_tok_s.
#   native-noamx  the same llama-bench with ggml's CPU backend rebuilt without AMX
#                 (scripts/llama-bench-noamx.sh, ~3 minutes the first time): for VMs whose
#                 CPU reports AMX but faults on it (the native llama-bench then dies with
#                 SIGSEGV in ggml_backend_amx_mul_mat).
# The default stays llamaref: native needs a 10-minute build and does not run on every
# machine that reports AMX, and earlier figures were taken against llamaref. Pass
# --peer native (or native-noamx) for the comparison issue 43 asks for.
#
# stdout: one JSON line per run ({"engine", "round", pp_tok_s, tg_tok_s, ...}), then one
# JSON summary line: "peer" (its name), medians per engine (keys "kvarena" and the peer's
# name), "pp_ratio" and "tg_ratio" (kvarena / peer), each engine's tg bandwidth efficiency
# (kvarena's bytes per decode step x tok/s / kvarena's measured read bandwidth), and the
# load average before and after.
# Other busy processes ruin both engines' spinning thread pools: run on an idle machine.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

usage() {
  echo "usage: $0 MODEL.gguf [-t 2] [-p 512] [-n 128] [-r 3] [--rounds 3] [--peer llamaref|native|native-noamx]" >&2
  exit 2
}
[ $# -ge 1 ] || usage
MODEL="$1"
shift
THREADS=2 NP=512 NG=128 REPS=3 ROUNDS=3 PEER=llamaref
while [ $# -gt 0 ]; do
  case "$1" in
    -t) THREADS="$2"; shift 2 ;;
    -p) NP="$2"; shift 2 ;;
    -n) NG="$2"; shift 2 ;;
    -r) REPS="$2"; shift 2 ;;
    --rounds) ROUNDS="$2"; shift 2 ;;
    --peer) PEER="$2"; shift 2 ;;
    *) usage ;;
  esac
done
[ -f "$MODEL" ] || { echo "bench-vs-llamacpp: no such model: $MODEL" >&2; exit 1; }

KVARENA="${KVARENA_BIN:-}"
if [ -z "$KVARENA" ]; then
  for c in build/kvarena build/cli/kvarena; do [ -x "$c" ] && KVARENA="$c" && break; done
fi
[ -n "$KVARENA" ] && [ -x "$KVARENA" ] || { echo "bench-vs-llamacpp: build kvarena first (or set KVARENA_BIN)" >&2; exit 1; }
PEER_LIBS=""
case "$PEER" in
  llamaref) LLAMAREF="$(bash ../shared/tools/llamaref/setup.sh)" ;;
  native) LLAMA_BENCH="$(bash ../shared/tools/llamaref/build-native.sh)" ;;
  native-noamx)
    LLAMA_BENCH="$(bash ../shared/tools/llamaref/build-native.sh)"
    PEER_LIBS="$(bash scripts/llama-bench-noamx.sh)" ;;
  *) usage ;;
esac

LOAD_BEFORE="$(cut -d' ' -f1 /proc/loadavg)"
echo "bench-vs-llamacpp: $MODEL vs $PEER, -t $THREADS -p $NP -n $NG -r $REPS, $ROUNDS rounds (load average $LOAD_BEFORE)" >&2
RUNS="$(mktemp)"
NJ="$(mktemp)"
trap 'rm -f "$RUNS" "$NJ"' EXIT

# The native llama-bench, twice (prompt; decode at depth P); its JSON arrays -> one object
# with the fields the summary reads.
native_bench() {
  : >"$NJ"
  local env_args=()
  [ -n "$PEER_LIBS" ] && env_args=("LD_LIBRARY_PATH=$PEER_LIBS${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}")
  local lb=(env "${env_args[@]}" "$LLAMA_BENCH" -m "$MODEL" -t "$THREADS" -r "$REPS" -o json)
  local rc=0
  if [ "$NP" -gt 0 ]; then "${lb[@]}" -p "$NP" -n 0 2>/dev/null >>"$NJ" || rc=$?; fi
  if [ "$rc" -eq 0 ] && [ "$NG" -gt 0 ]; then "${lb[@]}" -p 0 -n "$NG" -d "$NP" 2>/dev/null >>"$NJ" || rc=$?; fi
  if [ "$rc" -ne 0 ]; then
    local hint=""
    [ "$rc" -eq 139 ] && hint=" (SIGSEGV: if in ggml_backend_amx_mul_mat, use --peer native-noamx)"
    echo "bench-vs-llamacpp: $LLAMA_BENCH failed with exit $rc$hint" >&2
    return 1
  fi
  python3 -c '
import json, statistics, sys
text, tests, dec, i = open(sys.argv[1]).read(), [], json.JSONDecoder(), 0
while i < len(text):  # one JSON array per llama-bench call, concatenated
    if text[i].isspace():
        i += 1
        continue
    v, i = dec.raw_decode(text, i)
    tests += v
out = {"pp_tok_s": None, "tg_tok_s": None}
for t in tests:
    k = "pp" if t["n_gen"] == 0 else "tg"
    out[k + "_tok_s"] = statistics.median(t["samples_ts"])
    out[k + "_samples"] = t["samples_ts"]
    out["threads"], out["model_bytes"] = t["n_threads"], t["model_size"]
    out["build_commit"], out["cpu_info"] = t.get("build_commit"), t.get("cpu_info")
print(json.dumps(out))' "$NJ"
}

run_one() {  # ENGINE ROUND
  local out
  case "$1" in
    kvarena) out="$("$KVARENA" bench decode --model "$MODEL" -p "$NP" -n "$NG" -t "$THREADS" -r "$REPS" 2>/dev/null)" ;;
    llamaref) out="$("$LLAMAREF" bench "$MODEL" -p "$NP" -n "$NG" -t "$THREADS" -r "$REPS")" ;;
    *) out="$(native_bench)" ;;
  esac
  # {"engine": E, "round": R, ...the engine's JSON}
  local line="{\"engine\":\"$1\",\"round\":$2,${out#\{}"
  echo "$line" | tee -a "$RUNS"
}

for round in $(seq 1 "$ROUNDS"); do
  if [ $((round % 2)) -eq 1 ]; then
    run_one kvarena "$round"
    run_one "$PEER" "$round"
  else
    run_one "$PEER" "$round"
    run_one kvarena "$round"
  fi
done

LOAD_AFTER="$(cut -d' ' -f1 /proc/loadavg)"
python3 - "$RUNS" "$MODEL" "$THREADS" "$NP" "$NG" "$REPS" "$ROUNDS" "$LOAD_BEFORE" "$LOAD_AFTER" "$PEER" <<'PY'
import json, statistics, sys
runs_file, model, threads, np_, ng, reps, rounds, load_before, load_after, peer = sys.argv[1:]
runs = [json.loads(l) for l in open(runs_file) if l.strip()]
def med(engine, key):
    v = [r[key] for r in runs if r["engine"] == engine and r.get(key) is not None]
    return statistics.median(v) if v else None
def per_round(engine, key):
    return [r.get(key) for r in runs if r["engine"] == engine]
summary = {"model": model, "peer": peer, "threads": int(threads), "n_prompt": int(np_),
           "n_gen": int(ng), "reps": int(reps), "rounds": int(rounds)}
for e in ("kvarena", peer):
    summary[e] = {"pp_tok_s": med(e, "pp_tok_s"), "tg_tok_s": med(e, "tg_tok_s"),
                  "pp_rounds": per_round(e, "pp_tok_s"), "tg_rounds": per_round(e, "tg_tok_s")}
def ratio(key):
    a, b = summary["kvarena"][key], summary[peer][key]
    return round(a / b, 4) if a and b else None
summary["pp_ratio"] = ratio("pp_tok_s")
summary["tg_ratio"] = ratio("tg_tok_s")
bw, bpt = med("kvarena", "read_bandwidth_gbs"), med("kvarena", "bytes_per_token")
summary["read_bandwidth_gbs"] = bw
summary["bytes_per_token"] = bpt
for e in ("kvarena", peer):
    tg = summary[e]["tg_tok_s"]
    summary[e]["tg_bandwidth_efficiency"] = round(bpt * tg / (bw * 1e9), 4) if bw and bpt and tg else None
summary["tg_bandwidth_efficiency"] = summary["kvarena"]["tg_bandwidth_efficiency"]
summary["load_average_before"] = float(load_before)
summary["load_average_after"] = float(load_after)
print(json.dumps(summary))
PY
