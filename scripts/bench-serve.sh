#!/usr/bin/env bash
# bench-serve.sh: serving throughput of `kvarena serve` against llama.cpp's llama-server on
# the same model file, threads and parallel slots: K concurrent streamed chat completions of
# agent-prompt size (scripts/bench-serve.mjs), requests/s and median time to first token,
# side by side. The two servers run one at a time (never both loaded), alternating for
# --rounds rounds; the summary takes medians over rounds. Prompts are unique per request and
# llama-server gets "cache_prompt": false, so neither reuses a cached prefix.
#
#   scripts/bench-serve.sh [MODEL.gguf] [-t 2] [-k 4] [-r 16] [-n 32] [--lines 50] [--rounds 3]
#     -k: concurrent requests (= --parallel / -np), -r: requests per round, -n: tokens each
#
# Needs build/kvarena (or $KVARENA_BIN), node, and llama-server: $LLAMA_SERVER, else
# `bash ../shared/tools/llamaref/build-native.sh llama-server` (builds it, ~10 min once).
# stdout: one JSON line per server and round, then a summary line with the ratios
# (kvarena / llama.cpp; > 1 = kvarena ahead for req/s, < 1 = kvarena ahead for TTFT).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
MODEL="models/kvarena-agent.gguf"
if [ $# -gt 0 ] && [ "${1#-}" = "$1" ]; then MODEL="$1"; shift; fi
THREADS=2 K=4 REQS=16 NGEN=32 LINES=50 ROUNDS=3
while [ $# -gt 0 ]; do
  case "$1" in
    -t) THREADS="$2"; shift 2 ;;
    -k) K="$2"; shift 2 ;;
    -r) REQS="$2"; shift 2 ;;
    -n) NGEN="$2"; shift 2 ;;
    --lines) LINES="$2"; shift 2 ;;
    --rounds) ROUNDS="$2"; shift 2 ;;
    *) echo "usage: $0 [MODEL.gguf] [-t 2] [-k 4] [-r 16] [-n 32] [--lines 50] [--rounds 3]" >&2; exit 2 ;;
  esac
done
KVARENA="${KVARENA_BIN:-build/kvarena}"
[ -x "$KVARENA" ] || { echo "bench-serve: build kvarena first (or set KVARENA_BIN)" >&2; exit 1; }
LLAMA_SERVER="${LLAMA_SERVER:-$(bash ../shared/tools/llamaref/build-native.sh llama-server)}"
[ -x "$LLAMA_SERVER" ] || { echo "bench-serve: no llama-server at '$LLAMA_SERVER'" >&2; exit 1; }
CTX=4096  # per request; llama-server divides -c among its slots

TMP="$(mktemp -d)"
PID=""
stop_server() { [ -n "$PID" ] && kill "$PID" 2>/dev/null && wait "$PID" 2>/dev/null; PID=""; }
trap 'stop_server; rm -rf "$TMP"' EXIT

wait_health() {  # URL: until /health answers 200 (bounded: 120 s)
  for _ in $(seq 1 1200); do
    [ "$(curl -s -o /dev/null -w '%{http_code}' "$1/health")" = 200 ] && return 0
    kill -0 "$PID" 2>/dev/null || { echo "bench-serve: the server exited" >&2; cat "$TMP/server.err" >&2; exit 1; }
    sleep 0.1
  done
  echo "bench-serve: $1 never became healthy" >&2; exit 1
}

run_round() {  # SERVER ROUND
  local port=$((18400 + RANDOM % 1000)) extra='{}'
  if [ "$1" = kvarena ]; then
    "$KVARENA" serve --model "$MODEL" --port "$port" -t "$THREADS" --parallel "$K" --queue "$REQS" --ctx "$CTX" \
      >/dev/null 2>"$TMP/server.err" &
  else
    "$LLAMA_SERVER" -m "$MODEL" --host 127.0.0.1 --port "$port" -t "$THREADS" -tb "$THREADS" -np "$K" \
      -c $((CTX * K)) >/dev/null 2>"$TMP/server.err" &
    extra='{"cache_prompt": false}'
  fi
  PID=$!
  wait_health "http://127.0.0.1:$port"
  # One untimed warm-up request, then the measured round.
  node scripts/bench-serve.mjs --url "http://127.0.0.1:$port" --label warmup --requests 1 --concurrency 1 \
    --max-tokens 4 --lines "$LINES" --extra "$extra" >/dev/null
  node scripts/bench-serve.mjs --url "http://127.0.0.1:$port" --label "$1" --requests "$REQS" --concurrency "$K" \
    --max-tokens "$NGEN" --lines "$LINES" --extra "$extra" | sed "s/^{/{\"round\":$2,/" | tee -a "$TMP/runs.jsonl"
  stop_server
}

echo "bench-serve: $MODEL, -t $THREADS, $K at once, $REQS requests of $NGEN tokens per round, $ROUNDS rounds (load $(cut -d' ' -f1 /proc/loadavg))" >&2
for r in $(seq 1 "$ROUNDS"); do
  if [ $((r % 2)) -eq 1 ]; then run_round kvarena "$r"; run_round llama.cpp "$r"; else run_round llama.cpp "$r"; run_round kvarena "$r"; fi
done
node -e '
const runs = require("fs").readFileSync(process.argv[1], "utf8").trim().split("\n").map(JSON.parse);
const med = (xs) => { const s = [...xs].sort((a, b) => a - b), m = s.length >> 1; return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2; };
const by = (srv, k) => med(runs.filter((r) => r.server === srv).map((r) => r[k]));
const out = { summary: true, load_after: +require("fs").readFileSync("/proc/loadavg", "utf8").split(" ")[0] };
for (const srv of ["kvarena", "llama.cpp"]) out[srv] = { req_per_s: by(srv, "req_per_s"), ttft_ms_median: by(srv, "ttft_ms_median"),
  latency_ms_median: by(srv, "latency_ms_median"), gen_tok_per_s: by(srv, "gen_tok_per_s"), prompt_tokens: by(srv, "prompt_tokens") };
out.req_per_s_ratio = +(out.kvarena.req_per_s / out["llama.cpp"].req_per_s).toFixed(3);
out.ttft_ratio = +(out.kvarena.ttft_ms_median / out["llama.cpp"].ttft_ms_median).toFixed(3);
console.log(JSON.stringify(out));' "$TMP/runs.jsonl"
