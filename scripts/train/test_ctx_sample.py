#!/usr/bin/python3
# test_ctx_sample.py: checks of train.py's --ctx-sample (ctest `train-ctx-sample`): computing
# the loss on every target position but only a fraction p of the context positions, each
# weighted 1/p, must leave the loss's expectation unchanged. On a tiny model and one batch:
#   1. p = 1 gives exactly the loss of the plain full-logits cross entropy written out here;
#   2. the target loss does not depend on p (targets are always kept);
#   3. the mean of the sampled loss over 400 draws at p = 0.1 is within 4 standard errors of
#      the full loss, and a biased variant (context kept without the 1/p weight) is not (so
#      the check can fail).
# Exit 77 (skipped) without torch.
import os
import sys

try:
    import torch
except ImportError:
    print("test_ctx_sample: skipped: /usr/bin/python3 has no torch", file=sys.stderr)
    sys.exit(77)
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import numpy as np  # noqa: E402
import torch.nn.functional as F  # noqa: E402

from model import Llama, LlamaConfig  # noqa: E402
from train import train_step  # noqa: E402


class NoStep(torch.optim.SGD):
    """An optimizer whose step does nothing: train_step's loss without changing the model."""

    def step(self, closure=None):
        return None


def batch(rng, R=4, T=48, vocab=40, ctx_weight=0.3):
    tok = rng.integers(0, vocab, size=(R, T + 1)).astype(np.int64)
    tgt = np.zeros((R, T), dtype=np.float32)
    tgt[:, T - 6:] = 1.0                         # the last 6 positions of each row are targets
    w = np.full((R, T), ctx_weight, dtype=np.float32)
    w[tgt > 0] = 1.0
    w[:, :3] = 0.0                               # padding: weight 0
    return tok, w, tgt


def main():
    torch.manual_seed(0)
    m = Llama(LlamaConfig(dim=32, n_layers=1, n_heads=2, n_kv_heads=1, ffn_dim=48, n_vocab=40))
    m.init_random(5, std=0.3)
    opt = NoStep(m.parameters(), lr=0.0)
    tok, w, tgt = batch(np.random.default_rng(1))

    with torch.no_grad():  # the full loss, written out
        x = torch.from_numpy(tok)
        ce = F.cross_entropy(m(x[:, :-1]).reshape(-1, 40), x[:, 1:].reshape(-1), reduction="none")
        full = float((ce * torch.from_numpy(w).reshape(-1)).sum()) / float(w.sum())
        full_t = float((ce * torch.from_numpy(tgt).reshape(-1)).sum()) / float(tgt.sum())

    loss1, t1 = train_step(m, opt, tok, w, tgt, 2, 0.0, 1e9)
    assert abs(loss1 - full) < 1e-5, f"p=1: {loss1} vs the full loss {full}"
    assert abs(t1 - full_t) < 1e-5, f"p=1: target loss {t1} vs {full_t}"

    draws, draws_biased = [], []
    for i in range(400):
        loss, t = train_step(m, opt, tok, w, tgt, 2, 0.0, 1e9, ctx_sample=0.1, rng=np.random.default_rng(i))
        assert abs(t - full_t) < 1e-5, f"draw {i}: target loss {t} vs {full_t}: a target was dropped"
        draws.append(loss)
        # Biased: the same kept positions without the 1/p weight (what the check must reject).
        draws_biased.append(loss_without_reweight(m, tok, w, tgt, 0.1, np.random.default_rng(i)))
    mean, se = float(np.mean(draws)), float(np.std(draws) / np.sqrt(len(draws)))
    assert abs(mean - full) < 4 * se, f"p=0.1: mean {mean:.5f} +- {se:.5f} vs full {full:.5f}: biased"
    bmean = float(np.mean(draws_biased))
    assert abs(bmean - full) > 4 * se, f"the biased variant {bmean:.5f} is not told apart from {full:.5f}"
    print(f"test_ctx_sample: ok (full {full:.5f}; p=0.1 mean {mean:.5f} +- {se:.5f}; unweighted {bmean:.5f})")


def loss_without_reweight(m, tok, w, tgt, p, rng):
    with torch.no_grad():
        x = torch.from_numpy(tok)
        wt, tt = torch.from_numpy(w).reshape(-1), torch.from_numpy(tgt).reshape(-1)
        ce = F.cross_entropy(m(x[:, :-1]).reshape(-1, 40), x[:, 1:].reshape(-1), reduction="none")
        ctx = (wt > 0) & (tt == 0)
        keep = (tt > 0) | (ctx & torch.from_numpy(rng.random(wt.shape[0]) < p))
        return float((ce * wt * keep).sum()) / float(w.sum())


if __name__ == "__main__":
    main()
