#!/usr/bin/env bash
# run-e2e.sh KVARENA_BIN: `kvarena serve` end to end with real clients: the official openai
# npm client (e2e.mjs) and curl. Starts two servers on free loopback ports on the shipped
# model (models/kvarena-agent.gguf): one with --parallel 8, one with --parallel 1 --queue 1
# --token secret (the 503 and 401 cases). Exit 77 (skip) without node or without the client
# installed (scripts/setup.sh test runs `npm ci` here).
set -euo pipefail
KVARENA="${1:?usage: run-e2e.sh KVARENA_BIN}"
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
MODEL="$ROOT/models/kvarena-agent.gguf"
command -v node >/dev/null || { echo "SKIP: node is not installed (scripts/setup.sh test)"; exit 77; }
[ -d "$HERE/node_modules/openai" ] || { echo "SKIP: the openai client is not installed: run scripts/setup.sh test (npm ci in tests/serve)"; exit 77; }
command -v curl >/dev/null || { echo "SKIP: curl is not installed"; exit 77; }

TMP="$(mktemp -d)"
PIDS=()
cleanup() {
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null || true; done
  rm -rf "$TMP"
}
trap cleanup EXIT

# start NAME ARGS...: a server on a free port; its URL in the variable NAME.
start() {
  local name="$1"; shift
  "$KVARENA" serve --model "$MODEL" --port 0 "$@" >"$TMP/$name.out" 2>"$TMP/$name.err" &
  PIDS+=($!)
  for _ in $(seq 1 300); do
    [ -s "$TMP/$name.out" ] && break
    kill -0 "${PIDS[-1]}" 2>/dev/null || { cat "$TMP/$name.err"; echo "FAIL: kvarena serve $* exited"; exit 1; }
    sleep 0.1
  done
  local url; url="$(head -n1 "$TMP/$name.out")"
  [ -n "$url" ] || { cat "$TMP/$name.err"; echo "FAIL: no URL from kvarena serve $*"; exit 1; }
  printf -v "$name" '%s' "$url"
}
start SERVE_URL --parallel 8 --queue 8 -t 2
start SMALL_URL --parallel 1 --queue 1 --token secret --ctx 4096 -t 1

pass=0; fail=0
check() {  # check NAME COMMAND...: the command's status
  if "${@:2}"; then pass=$((pass + 1)); echo "ok - $1"; else fail=$((fail + 1)); echo "not ok - $1"; fi
}
body='{"model":"m","messages":[{"role":"user","content":"Find a bike."}],"max_tokens":6,"temperature":0,"ignore_eos":true}'
curl_chat() { curl -sS -o "$TMP/r.json" -w '%{http_code}' -H 'Content-Type: application/json' "$@"; }

check "curl: chat completion 200 with usage" bash -c "
  [ \"\$(curl -sS -o $TMP/c.json -w '%{http_code}' -H 'Content-Type: application/json' -d '$body' $SERVE_URL/v1/chat/completions)\" = 200 ] &&
  grep -q '\"completion_tokens\":6' $TMP/c.json && grep -q '\"peak_kv_logical_bytes\"' $TMP/c.json"
check "curl: a stream ends with data: [DONE]" bash -c "
  curl -sS -N -H 'Content-Type: application/json' -d '$(echo "$body" | sed 's/}$/,"stream":true}/')' $SERVE_URL/v1/chat/completions > $TMP/s.txt &&
  grep -q '^data: {\"id\"' $TMP/s.txt && [ \"\$(tail -n2 $TMP/s.txt | head -n1)\" = 'data: [DONE]' ]"
check "curl: malformed JSON is a 400" bash -c "
  [ \"\$(curl -sS -o $TMP/e.json -w '%{http_code}' -H 'Content-Type: application/json' -d '{\"messages\": [' $SERVE_URL/v1/chat/completions)\" = 400 ] &&
  grep -q 'not valid JSON' $TMP/e.json"
check "curl: a wrong type is a 400 naming the field" bash -c "
  [ \"\$(curl -sS -o $TMP/e.json -w '%{http_code}' -d '{\"messages\": [{\"role\": \"user\", \"content\": \"x\"}], \"max_tokens\": \"many\"}' $SERVE_URL/v1/chat/completions)\" = 400 ] &&
  grep -q '\"param\":\"max_tokens\"' $TMP/e.json"
check "curl: no token is a 401" bash -c "
  [ \"\$(curl -sS -o /dev/null -w '%{http_code}' $SMALL_URL/v1/models)\" = 401 ]"
# A client that drops a stream mid-way: the server counts it cancelled and serves the next.
cancelled_before="$(curl -sS "$SMALL_URL/health" | sed -E 's/.*"cancelled":([0-9]+).*/\1/')"
curl -sS -N --max-time 1 -H 'Authorization: Bearer secret' -H 'Content-Type: application/json' \
  -d '{"messages":[{"role":"user","content":"hi"}],"max_tokens":100000,"ignore_eos":true,"stream":true}' \
  "$SMALL_URL/v1/chat/completions" >/dev/null 2>&1 || true
check "curl: a dropped stream frees its slot for the next request" bash -c "
  for i in \$(seq 1 300); do
    c=\$(curl -sS $SMALL_URL/health | sed -E 's/.*\"cancelled\":([0-9]+).*/\1/'); [ \"\$c\" -gt $cancelled_before ] && break; sleep 0.1
  done
  [ \"\$c\" -gt $cancelled_before ] &&
  [ \"\$(curl -sS -o /dev/null -w '%{http_code}' -H 'Authorization: Bearer secret' -d '$body' $SMALL_URL/v1/chat/completions)\" = 200 ]"
echo "curl: $pass passed, $fail failed"

cd "$HERE"
SERVE_URL="$SERVE_URL" SMALL_URL="$SMALL_URL" node --test-reporter=spec --test e2e.mjs || fail=$((fail + 1))
[ "$fail" -eq 0 ]
