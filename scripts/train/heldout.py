# heldout.py: the learning-curve measure of the agent model that needs no episode run:
# on agent-last sequences of site seeds never trained on (a `kvarena train-data` folder of
# its own), the reply the model would give greedily is the oracle's exactly when the argmax
# at every target position is the target token (teacher forcing then equals greedy
# decoding). Reports that exact-match rate, the per-token accuracy and the target loss; where
# the token files mark an action's free text (mask 2: typed text, stop answers), also how
# often its first token (where copying starts) and all of it come out right.
import numpy as np
import torch
import torch.nn.functional as F

from data import Dataset, run_spans


def load_heldout(data_dir, name="agent-last"):
    import os
    return Dataset(os.path.join(data_dir, "tokens"), name)


def evaluate(model, ds, n, max_len=4096):
    """{"n", "exact", "token_acc", "target_loss", "text_n", "text_first", "text_exact"} over n sequences of ds spread evenly over
    it (sequences are in generation order: seeds, templates, steps), those that fit max_len.
    text_*: over the free-text runs (mask 2) of those sequences, the share whose first token
    / every token is the argmax (None when the files mark none)."""
    was_training = model.training
    model.eval()
    exact = tok_ok = tok_n = 0
    loss_sum = 0.0
    seen = 0
    text_n = text_first = text_exact = 0
    device = next(model.parameters(), torch.zeros(0)).device  # CPU for a model without parameters
    with torch.no_grad():
        for i in np.unique(np.linspace(0, ds.n_seq - 1, min(n, ds.n_seq)).astype(np.int64)):
            a, b = int(ds.idx[i]), int(ds.idx[i + 1])
            if b - a > max_len + 1:
                continue
            x = torch.from_numpy(np.asarray(ds.tok[a:b]).astype(np.int64))[None]
            mv = np.asarray(ds.mask[a + 1:b])
            m = torch.from_numpy(mv > 0)
            if not m.any():
                continue
            logits = model(x[:, :-1].to(device))[0].float().cpu()  # (T-1, vocab)
            y = x[0, 1:]
            pred = logits.argmax(-1)
            right = (pred == y).numpy()
            ok = torch.from_numpy(right)[m]
            text = mv == 2
            for s0, e0 in run_spans(text):
                text_n += 1
                text_first += int(right[s0])
                text_exact += int(right[s0:e0].all())
            exact += int(ok.all())
            tok_ok += int(ok.sum())
            tok_n += int(m.sum())
            loss_sum += float(F.cross_entropy(logits[m], y[m], reduction="sum"))
            seen += 1
    if was_training:
        model.train()
    return {"n": seen, "exact": exact / max(seen, 1), "token_acc": tok_ok / max(tok_n, 1),
            "target_loss": loss_sum / max(tok_n, 1), "text_n": text_n,
            "text_first": text_first / text_n if text_n else None,
            "text_exact": text_exact / text_n if text_n else None}


def text_summary(r):
    """The free-text part of an evaluate() result for a log line ("" when none)."""
    if not r.get("text_n"):
        return ""
    return f" free text: first token {r['text_first']:.3f} whole {r['text_exact']:.3f} (n {r['text_n']})"
