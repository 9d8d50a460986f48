# data.py: the training data reader and row packer.
# DIR/tokens/NAME.tok (uint16 LE ids, sequences concatenated), NAME.mask (uint8 per token,
# 0 = context, 1 = loss target, 2 = loss target that is an action's free text: typed text
# or a stop answer, weighted text_weight, its first token first_text_weight), NAME.idx
# (uint64 LE start offsets, n_seq + 1 entries, last = total),
# read through numpy memmaps. Datasets are sampled by mixture weight; sampled sequences
# wait in a small pool and rows of ctx + 1 tokens are packed from it: each row starts with
# the oldest pooled sequence, the rest is filled best-fit (largest that fits), leftovers
# are padding with weight 0. A sequence longer than a row is cut to a window that ends at
# the end of a random target span (or at the sequence's end when it has no targets),
# except in the `whole` datasets (retrieval documents: a cut could drop the needle), which
# are only sampled among sequences that fit a row.
import os
import sys

import numpy as np


def run_starts(flags):
    """Boolean array: where a run of True in `flags` (a boolean array) begins."""
    return flags & ~np.concatenate(([False], flags[:-1]))


def run_spans(flags):
    """[(start, end), ...]: each run of True in `flags` (a boolean array), end exclusive."""
    ends = np.flatnonzero(flags & ~np.concatenate((flags[1:], [False]))) + 1
    return list(zip(np.flatnonzero(run_starts(flags)).tolist(), ends.tolist()))


def write_dataset(tokens_dir, name, seqs):
    """Writes tokens_dir/NAME.{tok,mask,idx} (the layout above) from [(ids, mask), ...]."""
    base = os.path.join(tokens_dir, name)
    np.concatenate([np.asarray(ids, "<u2") for ids, _ in seqs] or [np.zeros(0, "<u2")]).tofile(base + ".tok")
    np.concatenate([np.asarray(mask, np.uint8) for _, mask in seqs] or [np.zeros(0, np.uint8)]).tofile(base + ".mask")
    np.cumsum([0] + [len(ids) for ids, _ in seqs]).astype("<u8").tofile(base + ".idx")


class Dataset:
    def __init__(self, d, name):
        p = os.path.join(d, name)
        self.name = name
        self.tok = np.memmap(p + ".tok", dtype="<u2", mode="r")
        self.mask = np.memmap(p + ".mask", dtype=np.uint8, mode="r")
        self.idx = np.fromfile(p + ".idx", dtype="<u8").astype(np.int64)
        if len(self.mask) != len(self.tok) or len(self.idx) < 2 or self.idx[-1] != len(self.tok):
            raise ValueError(f"{p}: .tok/.mask/.idx sizes disagree")
        self.n_seq = len(self.idx) - 1
        self.lens = np.diff(self.idx)


def parse_mix(spec):
    out = {}
    for part in spec.split(","):
        if part.strip():
            k, v = part.split("=")
            out[k.strip()] = float(v)
    return out


class Packer:
    """Samples sequences by mixture weight and packs them into rows; its state (RNG and
    pool) goes into the checkpoint so a resumed run sees the same data."""

    def __init__(self, data_dir, mix, ctx_weight, seed, pool_size=32, log=sys.stderr, whole=("niah", "kv", "lookup"),
                 text_weight=1.0, first_text_weight=None):
        tdir = os.path.join(data_dir, "tokens")
        self.sets, weights = [], []
        for name, w in mix.items():
            if not os.path.exists(os.path.join(tdir, name + ".tok")):
                print(f"data: {name}: not found in {tdir}, skipped", file=log)
                continue
            ds = Dataset(tdir, name)
            if w <= 0 or ds.n_seq == 0:
                continue
            print(f"data: {name}: {ds.n_seq} sequences, {len(ds.tok)} tokens "
                  f"({int(np.count_nonzero(ds.mask))} targets), weight {w}", file=log)
            self.sets.append(ds)
            weights.append(w)
        if not self.sets:
            raise SystemExit(f"data: no dataset of the mixture found in {tdir}")
        self.p = np.asarray(weights) / sum(weights)
        self.ctx_weight = ctx_weight
        self.text_weight = text_weight
        self.first_text_weight = text_weight if first_text_weight is None else first_text_weight
        self.pool_size = pool_size
        self.rng = np.random.Generator(np.random.PCG64(seed))
        self.pool = []  # (dataset index, sequence index)
        self.whole = [ds.name in whole for ds in self.sets]
        self._fitting = {}  # (dataset index, row length) -> indices of the sequences that fit

    def max_token(self):
        return max(int(ds.tok.max()) for ds in self.sets)

    def state(self):
        return {"rng": self.rng.bit_generator.state, "pool": list(self.pool)}

    def load_state(self, s):
        self.rng.bit_generator.state = s["rng"]
        self.pool = [tuple(x) for x in s["pool"]]

    def _refill(self, row_len):
        while len(self.pool) < self.pool_size:
            d = int(self.rng.choice(len(self.sets), p=self.p))
            if not self.whole[d]:
                self.pool.append((d, int(self.rng.integers(self.sets[d].n_seq))))
                continue
            key = (d, row_len)
            if key not in self._fitting:
                self._fitting[key] = np.flatnonzero(self.sets[d].lens <= row_len)
            fit = self._fitting[key]
            if len(fit):
                self.pool.append((d, int(fit[self.rng.integers(len(fit))])))

    def _seq(self, item, n):
        """Tokens and mask of a pooled sequence, cut to at most n tokens."""
        ds = self.sets[item[0]]
        a, b = int(ds.idx[item[1]]), int(ds.idx[item[1] + 1])
        if b - a > n:
            m = np.asarray(ds.mask[a:b])
            t = m > 0
            ends = np.flatnonzero(t & ~np.append(t[1:], False))  # last token of each target span
            e = (int(self.rng.choice(ends)) + 1) if len(ends) else b - a
            e = max(e, n)
            a, b = a + e - n, a + e
        return np.asarray(ds.tok[a:b]), np.asarray(ds.mask[a:b])

    def weights(self, m):
        """Loss weight per token of a mask: context ctx_weight, targets 1, free text
        text_weight, the first token of each free-text run first_text_weight."""
        w = np.where(m > 0, 1.0, self.ctx_weight).astype(np.float32)
        text = m == 2
        w[text] = self.text_weight
        first = run_starts(text)
        w[first] = self.first_text_weight
        return w

    def rows(self, R, T):
        """R rows of T + 1 tokens: (tokens int64 (R, T+1), label weight float32 (R, T),
        label is-target float32 (R, T), filled token count, document index int64 (R, T+1),
        position in the document int64 (R, T+1)); padding is one more document."""
        tok = np.zeros((R, T + 1), np.int64)
        seg = np.zeros((R, T + 1), np.int64)
        posn = np.zeros((R, T + 1), np.int64)
        w = np.zeros((R, T + 1), np.float32)
        tgt = np.zeros((R, T + 1), np.float32)
        filled = 0
        for r in range(R):
            self._refill(T + 1)
            pos, first, doc = 0, True, 0
            while pos < T + 1:
                if first:
                    item = self.pool.pop(0)
                else:
                    space = T + 1 - pos
                    lens = [self.sets[d].lens[s] for d, s in self.pool]
                    fits = [i for i, n in enumerate(lens) if n <= space]
                    if not fits:
                        break
                    item = self.pool.pop(max(fits, key=lambda i: lens[i]))
                t, m = self._seq(item, T + 1 - pos)
                n = len(t)
                tok[r, pos:pos + n] = t
                tgt[r, pos:pos + n] = m > 0
                w[r, pos:pos + n] = self.weights(m)
                seg[r, pos:pos + n] = doc
                doc += 1
                posn[r, pos:pos + n] = np.arange(n)
                if not first:
                    w[r, pos] = tgt[r, pos] = 0.0  # no loss across a document boundary
                pos += n
                first = False
                self._refill(T + 1)
            seg[r, pos:] = doc
            posn[r, pos:] = np.arange(T + 1 - pos)
            filled += pos
        return tok, w[:, 1:], tgt[:, 1:], filled, seg, posn
