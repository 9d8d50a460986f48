#!/usr/bin/env bash
# make-fixtures.sh: regenerates the golden-logit fixtures of tests/test-forward*.cpp from
# llama.cpp (tools/llamaref, llama.cpp v0.4.0 = commit 80fb11ac, F32 KV cache, flash
# attention off, all tokens in one batch). The files it writes are committed; this script
# is the exact record of how they were made. Rerun it when the random-model generator
# changes (the tests then fail on the recorded model hash).
#
#   scripts/make-fixtures.sh            # needs build/kvarena (or build/cli/kvarena, or $KVARENA_BIN)
#
# For each random model: `kvarena model random ARGS --out M.gguf`, then
# `llamaref logits M.gguf --tokens T --all` over a fixed 64-token sequence T, stored as
#   tests/fixtures/forward-NAME.json  header: generator args, model size + FNV-1a 64 hash,
#                                     tokens, shape, the commands
#   tests/fixtures/forward-NAME.bin   float32 little-endian logits, (64, n_vocab)
# For ../shared/models/llama-2-tiny-random.gguf (vocab 32000) only a fixed sample of 512
# vocab columns is stored per position, plus argmax and logsumexp over the whole row.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

KVARENA="${KVARENA_BIN:-}"
if [ -z "$KVARENA" ]; then
  for c in build/kvarena build/cli/kvarena; do [ -x "$c" ] && KVARENA="$c" && break; done
fi
[ -n "$KVARENA" ] && [ -x "$KVARENA" ] || { echo "make-fixtures: build kvarena first (or set KVARENA_BIN)" >&2; exit 1; }
LLAMAREF="$(bash ../shared/tools/llamaref/setup.sh)"
OUT="tests/fixtures"
TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT
mkdir -p "$OUT"

# The fixed sequence: llamaref bench's LCG, (state >> 33) % vocab, 64 draws.
lcg_tokens() {  # vocab count
  python3 -c "
import sys
v, n = int(sys.argv[1]), int(sys.argv[2])
r, out = 0x9E3779B97F4A7C15, []
for _ in range(n):
    r = (r * 6364136223846793005 + 1442695040888963407) % (1 << 64)
    out.append((r >> 33) % v)
print(','.join(map(str, out)))" "$1" "$2"
}

# convert NAME MODEL LOGITS_JSON TOKENS [SAMPLE] GENERATOR_ARGS...
# Writes the header and the .bin from llamaref's JSON output.
convert() {
  local name="$1" model="$2" ref_json="$3" tokens="$4" sample="$5"
  shift 5
  python3 - "$name" "$model" "$ref_json" "$tokens" "$sample" "$OUT" "$@" <<'PY'
import json, math, os, random, struct, sys
name, model, ref_json, tokens, sample, out = sys.argv[1:7]
gen_args = sys.argv[7:]
ref = json.load(open(ref_json))
rows = ref["logits"]
n_vocab = ref["n_vocab"]
assert ref["positions"] == list(range(len(rows))), "need --all"
data = open(model, "rb").read()
h = 0xcbf29ce484222325
for b in data:
    h = ((h ^ b) * 0x100000001b3) & 0xFFFFFFFFFFFFFFFF
hdr = {
    "name": name,
    "reference": "tools/llamaref logits --all (llama.cpp v0.4.0, commit 80fb11ac; F32 KV cache, flash attention off, one batch)",
    "model": os.path.basename(model) if not gen_args else name + ".gguf",
    "generator_args": gen_args,
    "model_bytes": len(data),
    "model_fnv1a64": "%016x" % h,
    "tokens": [int(t) for t in tokens.split(",")],
    "n_vocab": n_vocab,
    "n_positions": len(rows),
    "logits_file": "forward-%s.bin" % name,
    "logits_layout": "float32 little-endian, (n_positions, n_cols) row-major; n_cols = n_vocab or len(vocab_sample)",
    "commands": [
        ("kvarena model random " + " ".join(gen_args) + " --out " + name + ".gguf") if gen_args else None,
        "llamaref logits %s --tokens %s --all" % (name + ".gguf" if gen_args else os.path.basename(model), tokens),
    ],
}
hdr["commands"] = [c for c in hdr["commands"] if c]
cols = list(range(n_vocab))
if sample == "sample":
    cols = sorted(random.Random(1234).sample(range(n_vocab), 512))
    hdr["vocab_sample"] = cols
    hdr["argmax"] = [max(range(n_vocab), key=lambda j: r[j]) for r in rows]
    def lse(r):
        m = max(r)
        return m + math.log(sum(math.exp(x - m) for x in r))
    hdr["logsumexp"] = [lse(r) for r in rows]
with open(os.path.join(out, hdr["logits_file"]), "wb") as f:
    for r in rows:
        f.write(struct.pack("<%df" % len(cols), *[r[j] for j in cols]))
with open(os.path.join(out, "forward-%s.json" % name), "w") as f:
    json.dump(hdr, f, indent=1)
    f.write("\n")
print("fixture %s: %d positions x %d columns, model %d bytes" % (name, len(rows), len(cols), len(data)), file=sys.stderr)
PY
}

TOKENS512="$(lcg_tokens 512 64)"
random_fixture() {  # NAME ARGS...
  local name="$1"
  shift
  "$KVARENA" model random "$@" --out "$TMP/$name.gguf" >/dev/null
  "$LLAMAREF" logits "$TMP/$name.gguf" --tokens "$TOKENS512" --all >"$TMP/$name.json"
  convert "$name" "$TMP/$name.gguf" "$TMP/$name.json" "$TOKENS512" full "$@"
}

random_fixture llama-mha-f32 --arch llama --dim 128 --layers 2 --heads 4 --ffn 320 --vocab 512 --type f32 --seed 11
random_fixture llama-gqa-f16 --arch llama --dim 128 --layers 2 --heads 8 --kv-heads 2 --ffn 256 --vocab 512 --type f16 --seed 12
random_fixture llama-q8_0 --arch llama --dim 128 --layers 2 --heads 4 --kv-heads 2 --ffn 256 --vocab 512 --type q8_0 --seed 13
random_fixture qwen2-f32-tied --arch qwen2 --dim 96 --layers 2 --heads 6 --kv-heads 2 --ffn 256 --vocab 512 --type f32 --seed 14 --tied
random_fixture gpt2-f32 --arch gpt2 --dim 128 --layers 2 --heads 4 --ffn 512 --vocab 512 --type f32 --seed 15

TINY="../shared/models/llama-2-tiny-random.gguf"
if [ -f "$TINY" ]; then
  TOKENS32K="$(lcg_tokens 32000 64)"
  "$LLAMAREF" logits "$TINY" --tokens "$TOKENS32K" --all >"$TMP/tiny.json"
  convert llama-2-tiny-random "$TINY" "$TMP/tiny.json" "$TOKENS32K" sample
else
  echo "make-fixtures: $TINY not found; skipping its fixture" >&2
fi
du -ch "$OUT"/forward-* | tail -1 >&2
