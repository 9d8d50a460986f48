#!/usr/bin/python3
# test_merge_data.py: merge_data.py on two hand-made train-data folders (ctest
# `train-merge-data`): the merged folder holds folder 1's sequences then folder 2's, each
# with its own tokens and mask (written out below), a dataset present in one folder only
# is kept, the manifest sums the sizes and lists both seed ranges, and folders with
# different observation budgets are refused.
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
try:
    import numpy as np
except ImportError:
    print("test_merge_data: skipped: no numpy", file=sys.stderr)
    sys.exit(77)

from check_util import check, finish  # noqa: E402
from data import Dataset, write_dataset  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))


def make(d, seeds, budget, sets):
    os.makedirs(os.path.join(d, "tokens"))
    for name, seqs in sets.items():
        write_dataset(os.path.join(d, "tokens"), name, seqs)
    with open(os.path.join(d, "manifest.json"), "w") as f:
        json.dump({"site_seeds": seeds, "max_obs_tokens": budget, "tokenizer": "t.gguf", "n_vocab": 50}, f)


def merge(*args):
    return subprocess.run([sys.executable, os.path.join(HERE, "merge_data.py"), *args], capture_output=True, text=True)


with tempfile.TemporaryDirectory() as w:
    a, b, c, out = (os.path.join(w, x) for x in ("a", "b", "c", "out"))
    make(a, "2-3", 2048, {"x": [([1, 2, 3], [0, 0, 1]), ([4, 5], [0, 2])]})
    make(b, "4-5", 2048, {"x": [([6, 7, 8, 9], [0, 1, 1, 0])], "y": [([10, 11], [0, 1])]})
    make(c, "6", 1024, {"x": [([1], [0])]})
    r = merge(out, a, b)
    check(r.returncode == 0, f"merge of two folders exits 0 (got {r.returncode}: {r.stderr})")
    x = Dataset(os.path.join(out, "tokens"), "x")
    check(x.n_seq == 3, f"x holds 2 + 1 sequences (got {x.n_seq})")
    want = [([1, 2, 3], [0, 0, 1]), ([4, 5], [0, 2]), ([6, 7, 8, 9], [0, 1, 1, 0])]
    for i, (t, m) in enumerate(want):
        s, e = int(x.idx[i]), int(x.idx[i + 1])
        check(list(x.tok[s:e]) == t and list(x.mask[s:e]) == m, f"x sequence {i}: {list(x.tok[s:e])} {list(x.mask[s:e])}")
    y = Dataset(os.path.join(out, "tokens"), "y")
    check(y.n_seq == 1 and list(y.tok) == [10, 11], "y, in folder 2 only, is kept")
    with open(os.path.join(out, "manifest.json")) as f:
        man = json.load(f)
    check(man["site_seeds"] == "2-3,4-5", f"manifest lists both seed ranges (got {man['site_seeds']})")
    check(man["datasets"]["x"] == {"sequences": 3, "tokens": 9}, f"manifest sums x (got {man['datasets']['x']})")
    check(man["max_obs_tokens"] == 2048, "manifest keeps the observation budget")
    r = merge(os.path.join(w, "out2"), a, c)
    check(r.returncode != 0 and "max_obs_tokens" in r.stderr, f"different budgets are refused (got {r.returncode}: {r.stderr})")
finish("test_merge_data")
