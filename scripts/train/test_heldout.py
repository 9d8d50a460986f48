#!/usr/bin/python3
# test_heldout.py: the held-out measures of heldout.evaluate (ctest `train-heldout`) on two
# hand-made sequences and a stand-in model that always predicts "this token + 1", so which
# targets come out right is known by hand: the reply exact rate, the token accuracy, and
# for the free-text runs (mask 2) the first-token and whole-run rates.
# Exit 77 (skipped) without torch.
import os
import sys
import tempfile

try:
    import torch
except ImportError:
    print("test_heldout: skipped: /usr/bin/python3 has no torch", file=sys.stderr)
    sys.exit(77)
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import numpy as np  # noqa: E402

from data import Dataset  # noqa: E402
from heldout import evaluate, text_summary  # noqa: E402

VOCAB = 16


class PlusOne(torch.nn.Module):
    """Logits (1, T, VOCAB) whose argmax at each position is that position's token + 1."""

    def forward(self, x):
        return torch.nn.functional.one_hot((x + 1) % VOCAB, VOCAB).float()


def main():
    # Sequence 1: tokens 1 2 3 7 8 9 10 4 5, mask 0 0 1 2 2 1 2 2 1. Labels (token i+1 after
    # token i) and PlusOne's guesses: 2 ok, 3 ok, 7 (guess 4) wrong, 8 ok, 9 ok, 10 ok,
    # 4 (guess 11) wrong, 5 ok. Targets are the last 7 labels: 5 right. Free-text runs:
    # [7 8] first wrong; [10 4] first right, not whole.
    # Sequence 2: tokens 1 2 3 4, mask 0 0 2 2: every label right; run [3 4] whole.
    tok = [1, 2, 3, 7, 8, 9, 10, 4, 5] + [1, 2, 3, 4]
    mask = [0, 0, 1, 2, 2, 1, 2, 2, 1] + [0, 0, 2, 2]
    with tempfile.TemporaryDirectory() as d:
        np.array(tok, "<u2").tofile(os.path.join(d, "x.tok"))
        np.array(mask, np.uint8).tofile(os.path.join(d, "x.mask"))
        np.array([0, 9, 13], "<u8").tofile(os.path.join(d, "x.idx"))
        r = evaluate(PlusOne(), Dataset(d, "x"), n=2)
    assert r["n"] == 2 and r["exact"] == 0.5, r
    assert abs(r["token_acc"] - 7 / 9) < 1e-9, r              # 5 of 7, then 2 of 2
    assert r["text_n"] == 3, r
    assert abs(r["text_first"] - 2 / 3) < 1e-9 and abs(r["text_exact"] - 1 / 3) < 1e-9, r
    assert "first token 0.667 whole 0.333 (n 3)" in text_summary(r), text_summary(r)
    print(f"heldout: exact 1/2, tokens 7/9, free text first 2/3, whole 1/3, as worked out by hand")


if __name__ == "__main__":
    main()
