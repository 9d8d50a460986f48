#!/usr/bin/python3
# make_synthetic.py: writes a tiny training folder for smoke tests: DIR/tokenizer.json (a
# trivial byte-level vocabulary: the 256 GPT-2 byte characters, then <|endoftext|>,
# <|im_start|>, <|im_end|> as control tokens, no merges) and DIR/tokens/NAME.{tok,mask,idx}
# with random sequences (context tokens, then a "reply" span whose mask is 1).
#   make_synthetic.py DIR [--seqs 200] [--seed 1]
import argparse
import json
import os

import numpy as np


def byte_chars():
    """GPT-2's byte -> printable character map (the printable Latin-1 bytes map to
    themselves, the others to U+0100 upwards in byte order)."""
    keep = [b for b in range(256) if 33 <= b <= 126 or 161 <= b <= 172 or 174 <= b <= 255]
    out, extra = {}, 0
    for b in range(256):
        if b in keep:
            out[b] = chr(b)
        else:
            out[b] = chr(256 + extra)
            extra += 1
    return [out[b] for b in range(256)]


def write_tokenizer(path):
    tokens = byte_chars() + ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
    tok = {"model": "gpt2", "pre": "qwen2", "tokens": tokens, "token_types": [1] * 256 + [3, 3, 3],
           "merges": [], "bos_token_id": -1, "eos_token_id": 256, "add_bos": False,
           "chat_template": "{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endfor %}"}
    with open(path, "w") as f:
        json.dump(tok, f)
    return tok


def write_dataset(d, name, rng, n_seq, lo, hi):
    toks, masks, idx = [], [], [0]
    for _ in range(n_seq):
        n = int(rng.integers(lo, hi))
        reply = max(2, n // 8)
        t = rng.integers(0, 256, size=n).astype(np.uint16)
        t[-reply:] = (t[-reply - 1] + np.arange(reply)) % 256   # learnable: counts up
        t[-1] = 258  # <|im_end|>
        m = np.zeros(n, np.uint8)
        m[-reply:] = 1
        toks.append(t), masks.append(m), idx.append(idx[-1] + n)
    np.concatenate(toks).tofile(os.path.join(d, name + ".tok"))
    np.concatenate(masks).tofile(os.path.join(d, name + ".mask"))
    np.asarray(idx, np.uint64).tofile(os.path.join(d, name + ".idx"))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dir")
    ap.add_argument("--seqs", type=int, default=200)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    os.makedirs(os.path.join(a.dir, "tokens"), exist_ok=True)
    write_tokenizer(os.path.join(a.dir, "tokenizer.json"))
    rng = np.random.default_rng(a.seed)
    write_dataset(os.path.join(a.dir, "tokens"), "agent-last", rng, a.seqs, 100, 900)
    write_dataset(os.path.join(a.dir, "tokens"), "corpus", rng, a.seqs, 20, 300)
    print(f"wrote {a.dir}/tokenizer.json and {a.dir}/tokens/{{agent-last,corpus}}.*")


if __name__ == "__main__":
    main()
