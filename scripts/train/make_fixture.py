#!/usr/bin/python3
# make_fixture.py: loads a llama GGUF (F32/F16, e.g. one exported by train.py) into the
# PyTorch model through gguf_read (so the weights are the same rounded values the engine
# reads), runs a fixed token sequence and writes a JSON fixture with the logits of the
# last position and of a few others, for a C++ test comparing the engine against it.
#   make_fixture.py MODEL.gguf OUT.json [--tokens 1,2,3] [--positions 0,7,15]
import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cpu_setup  # noqa: E402,F401  (sets up OpenBLAS and malloc before numpy / torch)
import numpy as np  # noqa: E402
import torch  # noqa: E402

from model import load_gguf_model  # noqa: E402


def fnv1a64_file_hex(path):
    """FNV-1a 64 of the file's bytes (tests/forward-fixture.h computes the same)."""
    h = 0xcbf29ce484222325
    with open(path, "rb") as f:
        for c in f.read():
            h = ((h ^ c) * 0x100000001b3) & 0xFFFFFFFFFFFFFFFF
    return "%016x" % h


def torch_logits(path, tokens, threads=2):
    cpu_setup.set_threads(threads)
    m, _ = load_gguf_model(path)
    m.eval()
    with torch.no_grad():
        return m(torch.tensor([tokens], dtype=torch.long))[0].double().numpy(), m.c


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("model")
    ap.add_argument("out")
    ap.add_argument("--tokens", help="comma separated ids (default: 48 ids spread over the vocabulary)")
    ap.add_argument("--positions", help="positions whose logits are stored besides the last")
    ap.add_argument("--threads", type=int, default=2)
    a = ap.parse_args()
    from gguf_read import read_gguf
    meta, _ = read_gguf(a.model, want_tensors=False)
    n_vocab = len(meta.get("tokenizer.ggml.tokens", [])) or None
    if a.tokens:
        tokens = [int(t) for t in a.tokens.split(",")]
    else:
        v = n_vocab or 256
        tokens = [(i * 7919 + 13) % v for i in range(48)]
    lg, cfg = torch_logits(a.model, tokens, a.threads)
    n = len(tokens)
    pos = sorted({int(p) for p in a.positions.split(",")} if a.positions else {0, n // 4, n // 2, n - 2})
    pos = [p for p in pos if 0 <= p < n - 1]
    fix = {
        "model": os.path.basename(a.model),
        "model_fnv1a64": fnv1a64_file_hex(a.model),
        "config": cfg.to_dict(),
        "tokens": tokens,
        "logits_last": [float(x) for x in lg[-1].astype(np.float32)],
        "logits_at": {str(p): [float(x) for x in lg[p].astype(np.float32)] for p in pos},
        "torch_version": torch.__version__,
        "numpy_version": np.__version__,
    }
    with open(a.out, "w") as f:
        json.dump(fix, f)
    print(f"wrote {a.out}: {n} tokens, vocab {lg.shape[1]}, positions {pos} + last", file=sys.stderr)


if __name__ == "__main__":
    main()
