# heldout.py: the learning-curve measure of the agent model that needs no episode run:
# on agent-last sequences of site seeds never trained on (a `kvarena train-data` folder of
# its own), the reply the model would give greedily is the oracle's exactly when the argmax
# at every target position is the target token (teacher forcing then equals greedy
# decoding). Reports that exact-match rate, the per-token accuracy and the target loss.
import numpy as np
import torch
import torch.nn.functional as F

from data import Dataset


def load_heldout(data_dir, name="agent-last"):
    import os
    return Dataset(os.path.join(data_dir, "tokens"), name)


def evaluate(model, ds, n, max_len=4096):
    """{"n", "exact", "token_acc", "target_loss"} over n sequences of ds spread evenly over
    it (sequences are in generation order: seeds, templates, steps), those that fit max_len."""
    was_training = model.training
    model.eval()
    exact = tok_ok = tok_n = 0
    loss_sum = 0.0
    seen = 0
    with torch.no_grad():
        for i in np.unique(np.linspace(0, ds.n_seq - 1, min(n, ds.n_seq)).astype(np.int64)):
            a, b = int(ds.idx[i]), int(ds.idx[i + 1])
            if b - a > max_len + 1:
                continue
            x = torch.from_numpy(np.asarray(ds.tok[a:b]).astype(np.int64))[None]
            m = torch.from_numpy(np.asarray(ds.mask[a + 1:b]).astype(bool))
            if not m.any():
                continue
            logits = model(x[:, :-1])[0]                       # (T-1, vocab)
            y = x[0, 1:]
            pred = logits.argmax(-1)
            ok = (pred == y)[m]
            exact += int(ok.all())
            tok_ok += int(ok.sum())
            tok_n += int(m.sum())
            loss_sum += float(F.cross_entropy(logits[m], y[m], reduction="sum"))
            seen += 1
    if was_training:
        model.train()
    return {"n": seen, "exact": exact / max(seen, 1), "token_acc": tok_ok / max(tok_n, 1),
            "target_loss": loss_sum / max(tok_n, 1)}
