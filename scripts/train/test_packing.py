#!/usr/bin/python3
# test_packing.py: checks of the row packing that training relies on (ctest `train-packing`):
# two documents packed into one row with their document ids and positions give, token for
# token, the logits each gives alone (so no document sees another, and each is rotated from
# position 0 as at inference); without them the second document's logits differ (the check
# can fail); Packer.rows() marks documents, positions and boundaries consistently; and the
# loss weights of context, targets and an action's free text (mask 2) are as asked. The GPU
# path's attention (Llama.use_sdpa) is held to the same packed == alone check.
# Exit 77 (skipped) without torch.
import os
import sys
import tempfile

try:
    import torch
except ImportError:
    print("test_packing: skipped: /usr/bin/python3 has no torch", file=sys.stderr)
    sys.exit(77)
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import numpy as np  # noqa: E402

from model import Llama, LlamaConfig  # noqa: E402
from data import Packer  # noqa: E402


def check_model():
    torch.manual_seed(0)
    m = Llama(LlamaConfig(dim=64, n_layers=2, n_heads=4, n_kv_heads=2, ffn_dim=96, n_vocab=50))
    m.init_random(3, std=0.2)
    a = torch.randint(0, 50, (1, 23))
    b = torch.randint(0, 50, (1, 17))
    row = torch.cat([a, b], dim=1)
    seg = torch.tensor([[0] * 23 + [1] * 17])
    pos = torch.tensor([list(range(23)) + list(range(17))])
    with torch.no_grad():
        la, lb = m(a)[0], m(b)[0]
        for per_doc in (True, False):      # attention per document, or the document mask
            m.segment_attention = per_doc
            for chunk in (0, 8):
                m.attn_chunk = chunk
                packed = m(row, seg, pos)[0]
                d = max(float((packed[:23] - la).abs().max()), float((packed[23:] - lb).abs().max()))
                assert d < 1e-4, f"per_doc {per_doc} chunk {chunk}: packed logits differ from the lone documents by {d}"
        m.use_sdpa()                       # the GPU path: one SDPA call with a (B, 1, T, T) mask
        packed = m(row, seg, pos)[0]
        d = max(float((packed[:23] - la).abs().max()), float((packed[23:] - lb).abs().max()))
        assert d < 1e-4, f"sdpa: packed logits differ from the lone documents by {d}"
        d = float((m(a)[0] - la).abs().max())
        assert d < 1e-4, f"sdpa: a lone document's logits differ from the reference path's by {d}"
        m.use_sdpa(False)
        m.attn_chunk = 0
        unmasked = m(row)[0]
        d = float((unmasked[23:] - lb).abs().max())
        assert d > 1e-3, f"without the mask the second document should see the first (diff {d})"
    print(f"model: packed == alone (per document and masked, chunks 0, 8, sdpa); unmasked differs by {d:.3g}")


def check_packer():
    with tempfile.TemporaryDirectory() as d:
        os.makedirs(os.path.join(d, "tokens"))
        lens = [5, 9, 3, 7, 4, 6, 8, 2]
        toks = np.concatenate([np.full(n, i + 1, np.uint16) for i, n in enumerate(lens)])
        mask = np.concatenate([np.r_[np.zeros(n - 2, np.uint8), np.ones(2, np.uint8)] for n in lens])
        idx = np.r_[0, np.cumsum(lens)].astype("<u8")
        toks.astype("<u2").tofile(os.path.join(d, "tokens", "x.tok"))
        mask.tofile(os.path.join(d, "tokens", "x.mask"))
        idx.tofile(os.path.join(d, "tokens", "x.idx"))
        p = Packer(d, {"x": 1.0}, 0.1, seed=1, pool_size=4, log=open(os.devnull, "w"), whole=())
        tok, w, tgt, filled, seg, pos = p.rows(6, 15)
        for r in range(6):
            for j in range(16):
                if j < 16 and tok[r, j] == 0:  # padding
                    continue
                # a document is one run of one token value (value = sequence number + 1)
                start = j
                while start > 0 and seg[r, start - 1] == seg[r, j]:
                    start -= 1
                assert pos[r, j] == j - start, (r, j, pos[r], seg[r])
                assert tok[r, start:j + 1].min() == tok[r, start:j + 1].max(), (r, seg[r], tok[r])
                if j > 0 and seg[r, j] != seg[r, j - 1]:
                    assert w[r, j - 1] == 0, "a label across a document boundary must have weight 0"
        print(f"packer: 6 rows of 16, {filled} tokens filled, documents and positions consistent")


def check_weights():
    # Mask 0 context, 1 target, 2 free text (typed text / stop answer); weights written out by hand.
    with tempfile.TemporaryDirectory() as d:
        os.makedirs(os.path.join(d, "tokens"))
        mask = np.array([0, 0, 1, 2, 2, 2, 1, 0, 2, 1], np.uint8)
        np.arange(1, 11, dtype="<u2").tofile(os.path.join(d, "tokens", "x.tok"))
        mask.tofile(os.path.join(d, "tokens", "x.mask"))
        np.array([0, 10], "<u8").tofile(os.path.join(d, "tokens", "x.idx"))
        null = open(os.devnull, "w")
        p = Packer(d, {"x": 1.0}, 0.1, seed=1, pool_size=1, log=null, whole=(), text_weight=3.0, first_text_weight=8.0)
        want = np.array([0.1, 0.1, 1, 8, 3, 3, 1, 0.1, 8, 1], np.float32)
        assert np.allclose(p.weights(mask), want), p.weights(mask)
        tok, w, tgt, filled, seg, pos = p.rows(1, 9)      # one row of 10 tokens: the sequence
        assert np.allclose(w[0], want[1:]) and list(tgt[0]) == [0, 1, 1, 1, 1, 1, 0, 1, 1], (w, tgt)
        plain = Packer(d, {"x": 1.0}, 0.1, seed=1, pool_size=1, log=null, whole=())
        assert np.allclose(plain.weights(mask), [0.1, 0.1, 1, 1, 1, 1, 1, 0.1, 1, 1])
    print("weights: context 0.1, targets 1, free text 3, its first token 8; targets include free text")


if __name__ == "__main__":
    check_model()
    check_packer()
    check_weights()
