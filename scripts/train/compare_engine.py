#!/usr/bin/python3
# compare_engine.py: runs the engine (`kvarena logits --all`) and the PyTorch model on the
# same GGUF and tokens and prints the largest absolute and relative logit differences.
#   compare_engine.py MODEL.gguf [--tokens 1,2,3] [--kvarena build/kvarena]
import argparse
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cpu_setup  # noqa: E402,F401  (sets up OpenBLAS and malloc before numpy / torch)
import numpy as np  # noqa: E402

from make_fixture import torch_logits  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("model")
    ap.add_argument("--tokens")
    ap.add_argument("--n", type=int, default=64, help="sequence length when --tokens is not given")
    ap.add_argument("--kvarena", default=os.path.join(os.path.dirname(__file__), "../../build/kvarena"))
    a = ap.parse_args()
    from gguf_read import read_gguf
    meta, _ = read_gguf(a.model, want_tensors=False)
    v = len(meta.get("tokenizer.ggml.tokens", [])) or 256
    tokens = [int(t) for t in a.tokens.split(",")] if a.tokens else [(i * 7919 + 13) % v for i in range(a.n)]
    out = subprocess.run([a.kvarena, "logits", "--model", a.model, "--tokens", ",".join(map(str, tokens)),
                          "--all", "-t", "1"], check=True, capture_output=True, text=True).stdout
    eng = np.asarray(json.loads(out)["logits"], dtype=np.float64)
    ref, _ = torch_logits(a.model, tokens)
    diff = np.abs(eng - ref)
    scale = np.abs(ref).max()
    res = {"tokens": len(tokens), "max_abs_diff": float(diff.max()), "max_abs_logit": float(scale),
           "max_rel_diff": float(diff.max() / scale), "argmax_agree": float((eng.argmax(1) == ref.argmax(1)).mean())}
    print(json.dumps(res))


if __name__ == "__main__":
    main()
