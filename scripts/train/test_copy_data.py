#!/usr/bin/python3
# test_copy_data.py: checks of make_copy_data.copy_sequences (ctest `train-copy-data`): every
# sequence is a run followed by the same run (or three copies), the mask marks exactly the
# copies after the first, ids stay below the number of normal tokens, lengths stay in range,
# a seed fixes the data, and --alphabet / --alphabet-size keep each run to the ids asked for;
# copy_in_context (--context) lays out [text][" run][text][ [ run] pairs with the text taken
# from the context in order, the spans no longer than asked, and the mask on the copies only.
# Needs numpy only (exit 77, skipped, without it).
import os
import sys

try:
    import numpy  # noqa: F401
except ImportError:
    print("test_copy_data: skipped: /usr/bin/python3 has no numpy", file=sys.stderr)
    sys.exit(77)
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from make_copy_data import copy_sequences, copy_in_context, word_kinds  # noqa: E402


def main():
    tok, mask, idx = copy_sequences(50, 200, 3, 9, seed=4)
    assert len(idx) == 201 and idx[0] == 0 and idx[-1] == len(tok) == len(mask)
    seen_lens = set()
    for i in range(200):
        a, b = int(idx[i]), int(idx[i + 1])
        n = (b - a) // 2
        assert (b - a) % 2 == 0 and 3 <= n <= 9, (a, b)
        seen_lens.add(n)
        assert (tok[a:a + n] == tok[a + n:b]).all(), f"sequence {i}: second run differs"
        assert (mask[a:a + n] == 0).all() and (mask[a + n:b] == 1).all(), f"sequence {i}: mask"
    assert int(tok.max()) < 50
    assert seen_lens == set(range(3, 10)), seen_lens
    again = copy_sequences(50, 200, 3, 9, seed=4)
    other = copy_sequences(50, 200, 3, 9, seed=5)
    assert all((x == y).all() for x, y in zip((tok, mask, idx), again)), "not deterministic"
    assert len(other[0]) != len(tok) or (other[0] != tok).any(), "another seed gives the same data"
    tok3, mask3, idx3 = copy_sequences(50, 100, 3, 9, seed=4, repeats=3)
    for i in range(100):
        a, b = int(idx3[i]), int(idx3[i + 1])
        n = (b - a) // 3
        assert (b - a) % 3 == 0 and 3 <= n <= 9, (a, b)
        assert (tok3[a:a + n] == tok3[a + n:a + 2 * n]).all() and (tok3[a:a + n] == tok3[a + 2 * n:b]).all()
        assert (mask3[a:a + n] == 0).all() and (mask3[a + n:b] == 1).all(), f"sequence {i}: mask (3 copies)"
    digits = list(range(48, 58))  # an alphabet given as ids (the digits' ids in the agent vocabulary)
    tokd, maskd, idxd = copy_sequences(4093, 300, 6, 12, seed=7, alphabet=digits)
    assert set(tokd.tolist()) == set(digits), sorted(set(tokd.tolist()))
    for i in range(300):
        a, b = int(idxd[i]), int(idxd[i + 1])
        n = (b - a) // 2
        assert (tokd[a:a + n] == tokd[a + n:b]).all() and (maskd[a + n:b] == 1).all()
    tokk, _, idxk = copy_sequences(4093, 300, 12, 12, seed=8, alphabet_size=3)
    per_run = [set(tokk[int(idxk[i]):int(idxk[i]) + 12].tolist()) for i in range(300)]
    assert all(len(s) <= 3 for s in per_run), "a run uses more than its 3 ids"
    assert sum(len(s) == 3 for s in per_run) > 250, "12 draws from 3 ids should nearly always use all 3"
    assert len(set().union(*per_run)) > 500, "each run should pick its own alphabet"
    try:
        copy_sequences(4093, 2, 6, 12, seed=1, alphabet=digits, alphabet_size=11)
        raise AssertionError("alphabet_size 11 of 10 ids was accepted")
    except ValueError:
        pass
    print(f"copy data: 200 sequences, runs repeated, mask on the second run, lengths {sorted(seen_lens)}")
    check_in_context()


def check_in_context():
    import numpy as np
    # Context ids 1000..2999 in order, runs from ids 0..49, markers 60 (open) and 61 (copy):
    # every token tells which part it belongs to.
    context = np.arange(1000, 3000)
    tok, mask, idx = copy_in_context(context, 50, 60, 2, 6, seed=3, pairs=3, max_lead=10, max_gap=40,
                                     open_id=60, copy_id=61)
    assert len(idx) == 61 and idx[-1] == len(tok) == len(mask)
    leads, gaps = [], []
    for i in range(60):
        t, m = tok[int(idx[i]):int(idx[i + 1])].astype(int), mask[int(idx[i]):int(idx[i + 1])]
        opens, copies = np.flatnonzero(t == 60), np.flatnonzero(t == 61)
        assert len(opens) == len(copies) == 3, (i, t)
        end = 0
        for o, c in zip(opens, copies):
            lead, run_end = t[end:o], o + 1
            while run_end < len(t) and t[run_end] < 50:
                run_end += 1
            run, gap = t[o + 1:run_end], t[run_end:c]
            assert 2 <= len(run) <= 6 and (gap >= 1000).all() and (lead >= 1000).all(), (i, t)
            for span in (lead, gap):      # a span is consecutive context, i.e. consecutive ids
                assert (np.diff(span) == 1).all(), (i, span)
            assert (t[c + 1:c + 1 + len(run)] == run).all(), f"sequence {i}: the copy differs from the run"
            assert (m[c + 1:c + 1 + len(run)] == 1).all() and m[:c + 1].sum() == m[:end].sum(), f"sequence {i}: mask"
            leads.append(len(lead)), gaps.append(len(gap))
            end = c + 1 + len(run)
        assert end == len(t) and int(m.sum()) == sum(1 for k in range(len(t)) if m[k]), i
    assert max(leads) <= 10 and max(gaps) <= 40 and min(leads) == 0 and max(gaps) > 30, (leads, gaps)
    again = copy_in_context(context, 50, 60, 2, 6, seed=3, pairs=3, max_lead=10, max_gap=40, open_id=60, copy_id=61)
    assert all((x == y).all() for x, y in zip((tok, mask, idx), again)), "not deterministic"
    try:
        copy_in_context(np.arange(20), 50, 1, 2, 6, seed=3, pairs=1, max_lead=10, max_gap=40, open_id=60, copy_id=61)
        raise AssertionError("a context shorter than a span was accepted")
    except ValueError:
        pass
    print("copy in context: 60 sequences of 3 pairs, text spans in order and within bounds, mask on the copies")
    # --words: runs are whole words of the context. Ids: 0 " a" and 3 " c" open words, 1 "b"
    # goes on with one, 2 "," and 4 a line break are neither; the context's words are " ab",
    # " c" and " abb".
    pieces = ["\u0120a", "b", ",", "\u0120c", "\u010a"]
    kinds = word_kinds(pieces)
    assert kinds.tolist() == [1, 2, 0, 1, 0], kinds
    context = np.array([0, 1, 2, 3, 4, 0, 1, 1, 2] * 50)
    tok, mask, idx = copy_in_context(context, 5, 40, 3, 8, seed=5, pairs=2, max_lead=6, max_gap=9,
                                     open_id=60, copy_id=61, kinds=kinds)
    runs = 0
    for i in range(40):
        t = tok[int(idx[i]):int(idx[i + 1])].astype(int)
        for o in np.flatnonzero(t == 60):
            assert t[o + 1] in (0, 3), f"sequence {i}: a run starts mid-word: {t[o + 1:o + 9]}"
            runs += 1
        m = mask[int(idx[i]):int(idx[i + 1])]
        copied = t[m == 1]
        assert set(copied.tolist()) <= {0, 1, 3}, f"sequence {i}: a run holds punctuation or a line break: {copied}"
        for k in range(1, len(copied)):   # "b" only after " a" or "b"; " c" is a word of its own
            if copied[k] == 1:
                assert copied[k - 1] in (0, 1), copied
        ends = set(np.flatnonzero(np.diff(np.r_[m, 0].astype(int)) == -1).tolist())   # a run's last token
        for k in np.flatnonzero((m == 1) & (t == 0)):  # " a" is whole only with its "b"
            assert k in ends or t[k + 1] == 1, f"sequence {i}: a word cut inside a run: {t[k:k + 3]}"
    assert runs == 80
    print("copy in context, --words: runs of whole words only")


if __name__ == "__main__":
    main()
