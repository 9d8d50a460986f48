#!/usr/bin/python3
# test_transplant_vocab.py: checks of transplant_vocab.py (ctest `train-transplant-vocab`) on
# hand-made vocabularies in GPT-2 byte-character form ("Ġ" is the space):
#   old: a b c Ġ ab Ġab Ġcab <|endoftext|>        (ids 0-7)
#   new: Ġ a ab cab abc bc <|endoftext|>
#   1. a token the old vocabulary has keeps its row: Ġ -> 3, a -> 0, ab -> 4, <|endoftext|> -> 7;
#   2. else the old token with a space before it: cab -> Ġcab (6);
#   3. else the old tokens covering it, longest first from the left: abc -> ab + c (4, 2),
#      bc -> b + c (1, 2); its row is their mean (old rows 10*i: abc -> (40 + 20) / 2 = 30);
#   4. a character the old vocabulary lacks is an error, not a silent zero row.
# Needs numpy only (exit 77, skipped, without it).
import os
import sys

try:
    import numpy as np
except ImportError:
    print("train-transplant-vocab: skipped (no numpy)")
    sys.exit(77)

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from check_util import check, finish  # noqa: E402
from transplant_vocab import transplant_embedding, transplant_sources  # noqa: E402

G = "\u0120"
old = ["a", "b", "c", G, "ab", G + "ab", G + "cab", "<|endoftext|>"]
new = [G, "a", "ab", "cab", "abc", "bc", "<|endoftext|>"]
src = transplant_sources(old, new)
want = [("same", [3]), ("same", [0]), ("same", [4]), ("space", [6]), ("pieces", [4, 2]), ("pieces", [1, 2]),
        ("same", [7])]
for t, got, w in zip(new, src, want):
    check(tuple(got) == (w[0], w[1]), f"{t!r}: {got} (want {w})")

emb = np.array([[10.0 * i, -1.0 * i] for i in range(len(old))], dtype=np.float32)
rows = transplant_embedding(emb, src)
check(rows.shape == (len(new), 2), f"shape {rows.shape}")
check(list(rows[4]) == [30.0, -3.0], f"abc row {list(rows[4])} (want [30, -3])")
check(list(rows[3]) == [60.0, -6.0], f"cab row {list(rows[3])} (want Ġcab's [60, -6])")
check(list(rows[0]) == [30.0, -3.0], f"Ġ row {list(rows[0])} (want [30, -3])")

try:
    transplant_sources(old, ["ax"])
    check(False, "a character the old vocabulary lacks was accepted")
except ValueError as e:
    check("'x'" in str(e), f"error names the character: {e}")

finish("train-transplant-vocab")
