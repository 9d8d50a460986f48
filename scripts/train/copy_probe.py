#!/usr/bin/python3
# copy_probe.py: does a model copy by content or by position? A run of --len random tokens is
# placed after --leads tokens of site text, then --gaps tokens of other text, then the run
# again; printed per (lead, gap) is the share of the copy's tokens 2..len the model predicts
# (teacher forced: the argmax at each position is the next token of the copy). An induction
# head copies at any lead and gap; a model that learnt only the layout of copy data that
# opens its sequence copies at lead 0 and short gaps alone (models/README.md, round 10).
#   copy_probe.py MODEL.gguf --text DIR/tokens/corpus [--leads 0,4,40] [--gaps 0,16,64,256,1024]
#                 [--trials 12] [--len 10] [--seed 0]
import argparse
import os
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cpu_setup  # noqa: E402,F401
from model import load_gguf_model  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description="copy accuracy by text before the run and between the copies")
    ap.add_argument("model")
    ap.add_argument("--text", required=True, help="token files (PATH.tok) of site text, e.g. a train-data corpus")
    ap.add_argument("--leads", default="0,4,40")
    ap.add_argument("--gaps", default="0,16,64,256,1024")
    ap.add_argument("--trials", type=int, default=12)
    ap.add_argument("--len", type=int, default=10)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--threads", type=int, default=1)
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    model, meta = load_gguf_model(a.model)
    model.eval()
    n_normal = sum(1 for t in meta["tokenizer.ggml.token_type"] if t == 1)
    text = np.fromfile(a.text + ".tok", "<u2").astype(np.int64)
    leads, gaps = [int(x) for x in a.leads.split(",")], [int(x) for x in a.gaps.split(",")]
    if len(text) < 2 * (max(leads) + max(gaps)) + 1:
        raise SystemExit(f"copy_probe: {a.text}.tok is too short for these leads and gaps")
    rng = np.random.default_rng(a.seed)
    print(f"{a.model}: share of copied tokens 2..{a.len} right, {a.trials} runs per cell")
    print("lead \\ gap " + " ".join(f"{g:>6}" for g in gaps))
    with torch.no_grad():
        for lead in leads:
            row = []
            for gap in gaps:
                right = []
                for _ in range(a.trials):
                    run = rng.integers(0, n_normal, a.len)
                    s = int(rng.integers(0, len(text) - lead - gap))
                    seq = np.concatenate([text[s:s + lead], run, text[s + lead:s + lead + gap], run])
                    x = torch.from_numpy(seq)[None]
                    pred = model(x[:, :-1])[0].argmax(-1).numpy()
                    c = len(seq) - a.len                       # where the copy starts
                    right.append(float((pred[c:len(seq) - 1] == seq[c + 1:]).mean()))
                row.append(np.mean(right))
            print(f"{lead:>10} " + " ".join(f"{v:6.2f}" for v in row))


if __name__ == "__main__":
    main()
