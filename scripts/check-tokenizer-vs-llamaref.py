#!/usr/bin/env python3
"""check-tokenizer-vs-llamaref.py: a one-off cross-check of kvarena's tokenizers against
llama.cpp (tools/llamaref) on random strings, per vocabulary in ../shared/models.

    python3 scripts/check-tokenizer-vs-llamaref.py [--n 300] [--seed 1]
        [--kvarena build/cli/kvarena] [--llamaref ~/.cache/llamaref/bin/llamaref]

Each random string mixes ASCII words, accented and non-Latin letters, CJK, emoji (with ZWJ
and variation selectors), digit runs and other numerals, whitespace runs (tabs, newlines,
CR LF, NBSP, ideographic space), contractions in both cases, punctuation runs, combining
marks, control bytes, now and then special-token text and invalid UTF-8 bytes. Both sides
tokenize the same bytes (passed with -f) without BOS; every eighth string runs with BOS and
--special instead. kvarena's --decode must give back every plain string that is valid
UTF-8. Vocabularies: the four GGUFs, a copy of the GPT-2 one with tokenizer.ggml.pre =
"default" (llama.cpp's fallback chain), and llama2c-tokenizer.bin (kvarena) against the
Llama-2 GGUF (llama.cpp). Then the vocabularies of llama.cpp's own models/ folder that
kvarena claims (phi-3, gemma-4, qwen35, mpt, starcoder, refact, command-r, falcon,
deepseek-coder), taken from the llama.cpp clone of tools/llamaref/setup.sh
($LLAMAREF_CACHE/llama.cpp-*.git; skipped when absent), with their own chat tokens mixed in
too. Prints the match rate per vocabulary and every mismatch; exits 1 if any.
"""
import argparse
import glob
import json
import os
import random
import struct
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def rand_word(r, alphabet, lo=1, hi=9):
    return "".join(r.choice(alphabet) for _ in range(r.randint(lo, hi)))


ASCII_LOWER = "abcdefghijklmnopqrstuvwxyz"
ASCII_MIXED = ASCII_LOWER + ASCII_LOWER.upper()
ACCENTED = "éèêëàâäáãåçñóòôöõøúùûüíìîïýÿßæœÅÉÖÜÑ"
GREEK = "αβγδεζηθικλμνξοπρστυφχψωΑΒΓΔ"
CYRILLIC = "абвгдежзийклмнопрстуфхцчшщыэюяБДЖ"
ARABIC = "ابتثجحخدذرزسشصضطظعغفقكلمنهوي"
DEVANAGARI = "कखगघचछजझटठडढणतथदधनपफबभमयरलवशषसह"
PUNCT = "!?.,;:-()[]{}\"'`~@#$%^&*+=<>/\\|_"
CONTRACTIONS = ["'s", "'t", "'re", "'ve", "'m", "'ll", "'d", "'S", "'T", "'RE", "'Ve", "'M", "'LL", "'D", "'x", "'"]
SPACES = [" ", "  ", "   ", "\t", "\n", "\n\n", "\r\n", " \n", "\n ", "\u00a0", "\u3000", "\u2009", "    ", " \t "]
OTHER_NUMERALS = ["½", "²", "³", "٣", "४", "Ⅻ", "①", "〇", "¼"]
SPECIAL_TEXT = ["<|im_start|>", "<|im_end|>", "<|endoftext|>", "<s>", "</s>", "<unk>",
                "<|begin_of_text|>", "<|eot_id|>", "[PAD151646]"]


def rand_emoji(r):
    base = chr(r.choice([r.randint(0x1F600, 0x1F64F), r.randint(0x1F300, 0x1F5FF),
                         r.randint(0x1F680, 0x1F6FF), r.randint(0x2600, 0x26FF)]))
    roll = r.random()
    if roll < 0.15:
        return base + "\u200d" + chr(r.randint(0x1F300, 0x1F5FF))  # ZWJ sequence
    if roll < 0.3:
        return base + "\ufe0f"
    if roll < 0.4:
        return base + chr(r.randint(0x1F3FB, 0x1F3FF))  # skin tone
    return base


# Chat and tool tokens of the vocabularies from llama.cpp's models/ folder.
FAMILY_SPECIAL_TEXT = ["<|user|>", "<|end|>", "<|assistant|>", "<|system|>", "<bos>", "<eos>",
                       "<|turn>", "<turn|>", "<|tool_call>", "<tool_call|>", "<|\"|>",
                       "<|vision_start|>", "<think>", "</think>", "<fim_prefix>",
                       "<|START_OF_TURN_TOKEN|>", "<\uff5cbegin\u2581of\u2581sentence\uff5c>"]


def rand_segment(r, specials=SPECIAL_TEXT):
    k = r.random()
    if k < 0.22:
        return rand_word(r, ASCII_LOWER if r.random() < 0.6 else ASCII_MIXED)
    if k < 0.30:
        return rand_word(r, ASCII_LOWER + ACCENTED, 1, 7)
    if k < 0.36:
        return rand_word(r, r.choice([GREEK, CYRILLIC, ARABIC, DEVANAGARI]), 1, 7)
    if k < 0.43:
        return "".join(chr(r.randint(0x4E00, 0x9FFF)) for _ in range(r.randint(1, 5)))
    if k < 0.46:
        return "".join(chr(r.choice([r.randint(0x3041, 0x3096), r.randint(0xAC00, 0xD7A3)]))
                       for _ in range(r.randint(1, 4)))
    if k < 0.52:
        return "".join(rand_emoji(r) for _ in range(r.randint(1, 3)))
    if k < 0.60:
        return "".join(r.choice("0123456789") for _ in range(r.randint(1, 12)))
    if k < 0.62:
        return r.choice(OTHER_NUMERALS)
    if k < 0.76:
        return r.choice(SPACES)
    if k < 0.82:
        return r.choice(CONTRACTIONS)
    if k < 0.90:
        return rand_word(r, PUNCT, 1, 5)
    if k < 0.93:
        return r.choice("aeouAEO") + "\u0301" * r.randint(1, 2)
    if k < 0.95:
        return chr(r.choice([0x01, 0x07, 0x1B, 0x7F, 0x85, 0x200B]))
    if k < 0.97:
        return r.choice(specials)
    if k < 0.98:  # invalid UTF-8: lone bytes, carried as surrogate escapes
        return r.choice(["\udc80", "\udcc3", "\udcff", "\udce2\udc82", "\udcf0\udc9f"])
    return " " + rand_word(r, ASCII_LOWER, 2, 8)


def rand_text(r, specials=SPECIAL_TEXT):
    return "".join(rand_segment(r, specials) for _ in range(r.randint(1, 14)))


def gguf_with_pre(src, dst, pre):
    """Copies a tensor-less GGUF, setting tokenizer.ggml.pre (added if missing)."""
    d = open(src, "rb").read()
    assert d[:4] == b"GGUF"
    version, n_tensors, n_kv = struct.unpack_from("<IQQ", d, 4)
    assert n_tensors == 0, "only vocabulary-only GGUFs"
    off = 24
    sizes = {0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 10: 8, 11: 8, 12: 8}

    def skip_value(t, o):
        if t == 8:
            (n,) = struct.unpack_from("<Q", d, o)
            return o + 8 + n
        if t == 9:
            et, n = struct.unpack_from("<IQ", d, o)
            o += 12
            for _ in range(n):
                o = skip_value(et, o)
            return o
        return o + sizes[t]

    def gguf_str(s):
        b = s.encode()
        return struct.pack("<Q", len(b)) + b

    kvs = []
    for _ in range(n_kv):
        (klen,) = struct.unpack_from("<Q", d, off)
        key = d[off + 8:off + 8 + klen].decode()
        (t,) = struct.unpack_from("<I", d, off + 8 + klen)
        end = skip_value(t, off + 12 + klen)
        if key != "tokenizer.ggml.pre":
            kvs.append(d[off:end])
        off = end
    kvs.append(gguf_str("tokenizer.ggml.pre") + struct.pack("<I", 8) + gguf_str(pre))
    body = struct.pack("<4sIQQ", b"GGUF", version, 0, len(kvs)) + b"".join(kvs)
    body += b"\0" * (-len(body) % 32)
    open(dst, "wb").write(body)


def run_json(cmd):
    p = subprocess.run(cmd, capture_output=True)
    if p.returncode != 0:
        return None, p.stderr.decode(errors="replace").strip()
    return json.loads(p.stdout), None


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=300, help="random strings per vocabulary")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--kvarena", default=os.environ.get("KVARENA_BIN", os.path.join(ROOT, "build/cli/kvarena")))
    ap.add_argument("--llamaref", default=os.path.expanduser("~/.cache/llamaref/bin/llamaref"))
    ap.add_argument("--models", default=os.environ.get("KVARENA_SHARED_MODELS", os.path.join(ROOT, "../shared/models")))
    ap.add_argument("--only", help="run only vocabularies whose label contains this")
    ap.add_argument("--llamacpp-git", default=None,
                    help="llama.cpp clone with models/ggml-vocab-*.gguf (default: $LLAMAREF_CACHE/llama.cpp-*.git)")
    args = ap.parse_args()

    tmp = tempfile.mkdtemp(prefix="tokcheck-")
    m = args.models
    default_copy = os.path.join(tmp, "ggml-vocab-gpt-2-default-pre.gguf")
    gguf_with_pre(os.path.join(m, "ggml-vocab-gpt-2.gguf"), default_copy, "default")
    vocabs = [  # (label, file for kvarena, file for llamaref)
        ("gpt-2", f"{m}/ggml-vocab-gpt-2.gguf", f"{m}/ggml-vocab-gpt-2.gguf"),
        ("llama-spm", f"{m}/ggml-vocab-llama-spm.gguf", f"{m}/ggml-vocab-llama-spm.gguf"),
        ("qwen2", f"{m}/ggml-vocab-qwen2.gguf", f"{m}/ggml-vocab-qwen2.gguf"),
        ("llama-bpe", f"{m}/ggml-vocab-llama-bpe.gguf", f"{m}/ggml-vocab-llama-bpe.gguf"),
        ("gpt-2 pre=default", default_copy, default_copy),
        ("llama2c .bin vs llama-spm", f"{m}/llama2c-tokenizer.bin", f"{m}/ggml-vocab-llama-spm.gguf"),
    ]
    cache = os.environ.get("LLAMAREF_CACHE", os.path.expanduser("~/.cache/llamaref"))
    git = args.llamacpp_git or max(glob.glob(os.path.join(cache, "llama.cpp-*.git")), default=None)
    families = ["phi-3", "gemma-4", "qwen35", "mpt", "starcoder", "refact", "command-r", "falcon", "deepseek-coder"]
    if git and not args.only or git and any(args.only in f for f in families):
        files = [f"models/ggml-vocab-{f}.gguf" for f in families]
        subprocess.run(f"git --git-dir='{git}' archive HEAD {' '.join(files)} | tar -x -C '{tmp}'", shell=True, check=True)
        vocabs += [(f, f"{tmp}/{p}", f"{tmp}/{p}") for f, p in zip(families, files)]
    elif not git:
        print("no llama.cpp clone (run tools/llamaref/setup.sh): llama.cpp's models/ vocabularies skipped")
    text_path = os.path.join(tmp, "text.txt")
    failures = 0
    summary = []
    for label, ours_model, ref_model in vocabs:
        if args.only and args.only not in label:
            continue
        r = random.Random(f"{args.seed}:{label}")
        specials = SPECIAL_TEXT + FAMILY_SPECIAL_TEXT if label in families else SPECIAL_TEXT
        match = round_trip = round_trip_checked = 0
        for i in range(args.n):
            text = rand_text(r, specials)
            special = i % 8 == 7
            raw = text.encode("utf-8", "surrogateescape")
            valid = not any(0xDC80 <= ord(c) <= 0xDCFF for c in text)
            with open(text_path, "wb") as f:
                f.write(raw)
            flags = [] if special else ["--no-bos"]
            flags += ["--special"] if special else []
            ours, err1 = run_json([args.kvarena, "tokenize", "--model", ours_model, "-f", text_path] + flags)
            ref, err2 = run_json([args.llamaref, "tokenize", ref_model, "-f", text_path] + flags)
            if ours is None or ref is None:
                print(f"[{label}] #{i} {text!r}: error: kvarena: {err1} llamaref: {err2}")
                failures += 1
                continue
            if ours["tokens"] == ref["tokens"]:
                match += 1
            else:
                failures += 1
                a, b = ours["tokens"], ref["tokens"]
                k = next((j for j in range(min(len(a), len(b))) if a[j] != b[j]), min(len(a), len(b)))
                print(f"[{label}] #{i} {text!r}{' (bos, special)' if special else ''}\n"
                      f"   kvarena  {a}\n   llamaref {b}\n   first difference at {k}: "
                      f"{ours['pieces'][k:k + 3]} vs {ref['pieces'][k:k + 3]}")
            if not special and valid:
                round_trip_checked += 1
                ids = ",".join(map(str, ours["tokens"]))
                back, err = run_json([args.kvarena, "tokenize", "--model", ours_model, "--decode", ids]) if ids else ({"text": ""}, None)
                if back is not None and back["text"] == text:
                    round_trip += 1
                else:
                    failures += 1
                    print(f"[{label}] #{i} round trip failed: {text!r} -> {back and back['text']!r} {err or ''}")
        line = f"{label}: {match}/{args.n} token-identical ({100.0 * match / args.n:.1f}%), round trip {round_trip}/{round_trip_checked}"
        print(line, flush=True)
        summary.append(line)
    print("\n".join(["", "summary:"] + summary))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
