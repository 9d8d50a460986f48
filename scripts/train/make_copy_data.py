#!/usr/bin/python3
# make_copy_data.py: the `copy` dataset, the plainest in-context retrieval there is: a run of
# random tokens, then the same run again (or --repeats times); every copy after the first is the loss target. Each of its
# tokens follows from the first run alone (which token came after this one there), so the
# loss falls only once the model attends back to it: the induction mechanism that NIAH, the
# kv documents, looking up an element's id and copying a title from the objective all need.
# Random tokens of the whole vocabulary rarely repeat within a run, so where to copy from is
# never ambiguous (unlike digits amid page text). That is also its limit: one token of context
# says where to copy from, and a model that learns only that does not copy a code such as
# " 55083" (" ", then one token per digit, each digit common in the text). --alphabet digits
# draws the runs from the ten digit tokens, --alphabet-size K from K tokens picked per run, so
# that only a longer match (the previous two or three tokens) finds the place to copy from.
# Those runs always open their sequence, so a model can learn to copy them by position (the
# token L places back) rather than by content; round 10 found the shipped model does just
# that: it copies a run at position 0 and nothing once 40 tokens of text come first.
# --context NAME (a token dataset of the same folder, e.g. `corpus`: site pages) embeds the
# runs in text instead: each sequence is --pairs times [text][" run][text][ [ run], spans of
# the context of up to --max-lead and --max-gap tokens, the first copy after ` "` and the
# second after ` [` (as an objective quotes a name and a `type` action repeats it), every
# token of the second copy a target, its first one found only through the marker. --words
# makes the runs whole words of the text from random places (a word salad: natural tokens that
# a language prior does not predict, as a made-up product name).
#   scripts/train/make_copy_data.py --vocab models/kvarena-agent.gguf --out DIR/tokens \
#       [--n 40000] [--min-len 8] [--max-len 128] [--repeats 2] [--seed 0] \
#       [--alphabet all|digits] [--alphabet-size K] [--name copy] \
#       [--context corpus --pairs 4 --max-lead 128 --max-gap 512]
# writes DIR/tokens/NAME.{tok,mask,idx} (data.py's format); deterministic for a seed.
import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gguf_read import read_gguf  # noqa: E402


def copy_sequences(n_vocab_normal, n, min_len, max_len, seed, repeats=2, alphabet=None, alphabet_size=0):
    """(tokens uint16, mask uint8, idx uint64): n sequences, each a run of L random ids
    (L uniform in [min_len, max_len]) written `repeats` times in a row; mask 1 on every copy
    after the first. The ids come from `alphabet` (default: all of [0, n_vocab_normal)), or,
    with alphabet_size K > 0, from K ids of it drawn afresh for each run."""
    alphabet = np.arange(n_vocab_normal) if alphabet is None else np.asarray(alphabet)
    if alphabet_size > len(alphabet):
        raise ValueError(f"alphabet_size {alphabet_size} > the {len(alphabet)} ids to draw from")
    rng = np.random.Generator(np.random.PCG64(seed))
    lens = rng.integers(min_len, max_len + 1, size=n)
    idx = np.zeros(n + 1, np.uint64)
    idx[1:] = np.cumsum(repeats * lens)
    tok = np.empty(int(idx[-1]), np.uint16)
    mask = np.zeros(int(idx[-1]), np.uint8)
    for i, L in enumerate(lens):
        letters = alphabet if alphabet_size <= 0 else rng.choice(alphabet, alphabet_size, replace=False)
        run = letters[rng.integers(0, len(letters), size=L)].astype(np.uint16)
        a = int(idx[i])
        for r in range(repeats):
            tok[a + r * L:a + (r + 1) * L] = run
        mask[a + L:a + repeats * L] = 1
    return tok, mask, idx


def word_kinds(pieces):
    """Per vocabulary id: 1 opens a word (a space, then letters or digits), 2 goes on with one
    (letters or digits only), 0 neither (punctuation, brackets, line breaks, specials)."""
    def alnum(p):
        return p.isascii() and p.isalnum()
    return np.array([1 if p.startswith("\u0120") and alnum(p[1:]) else 2 if alnum(p) else 0 for p in pieces], np.uint8)


def word_salad(context, kinds, opens, length, rng):
    """`length` tokens of whole words of `context` drawn from random places, one after another
    (the last cut to fit): text whose next word no language prior predicts. kinds: word_kinds;
    opens: the positions of context whose token opens a word."""
    out = []
    while len(out) < length:
        a = int(opens[rng.integers(0, len(opens))])
        b = a + 1
        while b < len(context) and kinds[context[b]] == 2:
            b += 1
        out.extend(context[a:b].tolist())
    return np.asarray(out[:length])


def copy_in_context(context, n_vocab_normal, n, min_len, max_len, seed, pairs, max_lead, max_gap,
                    open_id, copy_id, kinds=None):
    """(tokens uint16, mask uint8, idx uint64): n sequences, each `pairs` times
    [lead][open_id][run][gap][copy_id][run]: lead and gap are spans of `context` (a token
    array) of 0..max_lead and 0..max_gap tokens drawn at random places, the run L random ids of
    [0, n_vocab_normal) (L uniform in [min_len, max_len]), or with kinds (word_kinds) L
    tokens of words of the context (word_salad); mask 1 on the second run only."""
    context = np.asarray(context)
    if len(context) <= max(max_lead, max_gap):
        raise ValueError(f"a context of {len(context)} tokens is too short for spans of {max(max_lead, max_gap)}")
    rng = np.random.Generator(np.random.PCG64(seed))
    toks, masks, idx = [], [], [0]
    opens = None if kinds is None else np.flatnonzero(kinds[context] == 1)

    def span(most):
        k = int(rng.integers(0, most + 1))
        a = int(rng.integers(0, len(context) - k + 1))
        return context[a:a + k].astype(np.uint16)

    for _ in range(n):
        parts, part_mask = [], []
        for _ in range(pairs):
            L = int(rng.integers(min_len, max_len + 1))
            run = (rng.integers(0, n_vocab_normal, size=L) if kinds is None
                   else word_salad(context, kinds, opens, L, rng)).astype(np.uint16)
            lead, gap = span(max_lead), span(max_gap)
            for piece, target in ((lead, 0), ([open_id], 0), (run, 0), (gap, 0), ([copy_id], 0), (run, 1)):
                parts.append(np.asarray(piece, np.uint16))
                part_mask.append(np.full(len(piece), target, np.uint8))
        toks.append(np.concatenate(parts))
        masks.append(np.concatenate(part_mask))
        idx.append(idx[-1] + len(toks[-1]))
    return np.concatenate(toks), np.concatenate(masks), np.asarray(idx, np.uint64)


def main():
    ap = argparse.ArgumentParser(description="the copy dataset: random runs of tokens, repeated")
    ap.add_argument("--vocab", required=True, help="GGUF whose tokenizer.ggml.token_type names the normal tokens")
    ap.add_argument("--out", required=True, help="tokens folder to write copy.{tok,mask,idx} into")
    ap.add_argument("--n", type=int, default=40000)
    ap.add_argument("--min-len", type=int, default=8)
    ap.add_argument("--max-len", type=int, default=128)
    ap.add_argument("--repeats", type=int, default=2, help="copies of each run (the first is context)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--alphabet", choices=("all", "digits"), default="all",
                    help="ids the runs are drawn from: every normal token, or the ten one-digit tokens")
    ap.add_argument("--alphabet-size", type=int, default=0,
                    help="K > 0: each run draws from K ids of the alphabet picked for it (0: the whole alphabet)")
    ap.add_argument("--name", default="copy", help="dataset name: the files NAME.{tok,mask,idx}")
    ap.add_argument("--context", help="token dataset of --out (e.g. corpus) whose text the runs are embedded in")
    ap.add_argument("--words", action="store_true",
                    help="--context: runs of whole words of the text drawn from random places, not random ids")
    ap.add_argument("--pairs", type=int, default=4, help="--context: runs (each copied once) per sequence")
    ap.add_argument("--max-lead", type=int, default=128, help="--context: most text tokens before a run")
    ap.add_argument("--max-gap", type=int, default=512, help="--context: most text tokens between a run and its copy")
    a = ap.parse_args()
    if not 1 <= a.min_len <= a.max_len:
        raise SystemExit("make_copy_data: need 1 <= --min-len <= --max-len")
    if a.repeats < 2:
        raise SystemExit("make_copy_data: need --repeats >= 2 (the first copy is only context)")
    meta, _ = read_gguf(a.vocab)
    types = list(meta["tokenizer.ggml.token_type"])
    n_normal = sum(1 for t in types if t == 1)
    if types[:n_normal] != [1] * n_normal:
        raise SystemExit("make_copy_data: the normal tokens are not ids 0..N-1 in this vocabulary")
    if a.alphabet_size < 0:
        raise SystemExit("make_copy_data: need --alphabet-size >= 0")
    alphabet = None
    if a.alphabet == "digits":
        digits = set("0123456789")
        alphabet = [i for i, piece in enumerate(meta["tokenizer.ggml.tokens"][:n_normal]) if piece in digits]
        if len(alphabet) != 10:
            raise SystemExit("make_copy_data: this vocabulary has no one-token digits 0-9")
    if a.context:
        if a.pairs < 1 or a.max_lead < 0 or a.max_gap < 0 or a.repeats != 2 or a.alphabet != "all" or a.alphabet_size:
            raise SystemExit("make_copy_data: --context needs --pairs >= 1, --max-lead/--max-gap >= 0 and "
                             "takes neither --repeats nor --alphabet/--alphabet-size")
        path = os.path.join(a.out, a.context + ".tok")
        if not os.path.exists(path):
            raise SystemExit(f"make_copy_data: --context {a.context}: {path} not found")
        pieces = meta["tokenizer.ggml.tokens"]
        try:
            tok, mask, idx = copy_in_context(np.fromfile(path, "<u2"), n_normal, a.n, a.min_len, a.max_len, a.seed,
                                             a.pairs, a.max_lead, a.max_gap, pieces.index("\u0120\""),
                                             pieces.index("\u0120["),
                                             word_kinds(pieces) if a.words else None)
        except ValueError as e:
            raise SystemExit(f"make_copy_data: --context {a.context}: {e}")
    else:
        try:
            tok, mask, idx = copy_sequences(n_normal, a.n, a.min_len, a.max_len, a.seed, a.repeats,
                                            alphabet, a.alphabet_size)
        except ValueError as e:
            raise SystemExit(f"make_copy_data: --alphabet-size: {e}")
    os.makedirs(a.out, exist_ok=True)
    tok.astype("<u2").tofile(os.path.join(a.out, a.name + ".tok"))
    mask.tofile(os.path.join(a.out, a.name + ".mask"))
    idx.astype("<u8").tofile(os.path.join(a.out, a.name + ".idx"))
    print(f"{a.name}: {a.n} sequences, {len(tok)} tokens ({int(mask.sum())} targets), "
          f"{len(np.unique(tok))} distinct ids")


if __name__ == "__main__":
    main()
