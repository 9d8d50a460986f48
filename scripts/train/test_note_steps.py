#!/usr/bin/python3
# test_note_steps.py: note_steps.py on a hand-made agent-last (ctest `train-note-steps`),
# spelled byte by byte in the shipped model's vocabulary: a step that writes a note goes to
# note-write, a step that types the noted price to note-use, a stop (an answer, as text or by
# element) to stop-answer, and steps that list a note but use something else, or list none,
# to none; tokens and masks are copied as they were.
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
try:
    import numpy as np
except ImportError:
    print("test_note_steps: skipped: no numpy", file=sys.stderr)
    sys.exit(77)

from check_util import check, finish  # noqa: E402
from data import Dataset, write_dataset  # noqa: E402
from gguf_read import tokenizer_of_file  # noqa: E402
from note_steps import byte_of_char  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
MODEL = os.path.join(HERE, "..", "..", "models", "kvarena-agent.gguf")
if not os.path.exists(MODEL):
    print("test_note_steps: skipped: no models/kvarena-agent.gguf", file=sys.stderr)
    sys.exit(77)

tokens = tokenizer_of_file(MODEL)["tokens"]
id_of = {p: i for i, p in enumerate(tokens)}
char_of = {b: c for c, b in byte_of_char().items()}


def spell(text):
    """Token ids of text, one per byte (specials as themselves)."""
    out = []
    for part in text.replace("<|im_end|>", "\0<|im_end|>\0").split("\0"):
        if part == "<|im_end|>":
            out.append(id_of[part])
        else:
            out += [id_of[char_of[b]] for b in part.encode()]
    return out


def seq(context, reply, free):
    """(ids, mask): reply's bytes targets (1), those of the `free` substrings 2."""
    ids = spell(context) + spell(reply)
    mask = [0] * len(spell(context)) + [1] * len(spell(reply))
    for f in free:
        at = len(spell(context)) + len(reply[:reply.index(f)].encode())
        for k in range(at, at + len(f.encode())):
            mask[k] = 2
    return ids, mask


ctx = "OBSERVATION:\nPrice $5.00\nOBJECTIVE: note its price\nPREVIOUS ACTIONS:\nclick [1]"
seqs = [
    seq(ctx, "NOTE: $5.00\n```tab_focus [1]```<|im_end|>", ["NOTE: $5.00"]),           # write
    seq(ctx + "\ntab_focus [1] (NOTE: $5.00)", "```type [3] [5.00] [0]```<|im_end|>", ["5.00"]),  # use
    seq(ctx + "\ntab_focus [1] (NOTE: $5.00)", "```type [3] [hello] [0]```<|im_end|>", ["hello"]),
    seq(ctx, "```type [3] [5.00] [0]```<|im_end|>", ["5.00"]),                         # no note listed
    seq(ctx, "NOTE [84]\n```tab_focus [1]```<|im_end|>", ["NOTE [84]"]),               # write, by element
    seq(ctx + "\ntab_focus [1] (NOTE: Rating: 2.4 out of 5 (7 reviews))",                # use: its first number
        "```type [3] [Rated 2.4, fine] [0]```<|im_end|>", ["Rated 2.4, fine"]),
    seq(ctx + "\ntab_focus [1] (NOTE: Rating: 2.4 out of 5 (7 reviews))",                # "5" is not its number
        "```type [3] [5] [0]```<|im_end|>", ["5"]),
    seq(ctx + "\ntab_focus [1] (NOTE: $2.40)", "```type [3] [12.40] [0]```<|im_end|>", ["12.40"]),  # not whole
    seq(ctx, "```stop [[84]]```<|im_end|>", ["[84]"]),                                  # stop, by element
    seq(ctx, "```stop [3]```<|im_end|>", ["3"]),                                        # stop
    seq(ctx + "\ntab_focus [1] (NOTE: $5.00)", "```stop [$5.00]```<|im_end|>", ["$5.00"]),   # use, not stop
]
with tempfile.TemporaryDirectory() as w:
    src, out = os.path.join(w, "src"), os.path.join(w, "out")
    os.makedirs(os.path.join(src, "tokens"))
    write_dataset(os.path.join(src, "tokens"), "agent-last", seqs)
    with open(os.path.join(src, "manifest.json"), "w") as f:
        json.dump({"tokenizer": MODEL, "max_obs_tokens": 2048}, f)
    r = subprocess.run([sys.executable, os.path.join(HERE, "note_steps.py"), src, out], capture_output=True, text=True)
    check(r.returncode == 0, f"note_steps exits 0 (got {r.returncode}: {r.stderr})")
    for name, want in (("note-write", [0, 4]), ("note-use", [1, 5, 10]), ("stop-answer", [8, 9])):
        d = Dataset(os.path.join(out, "tokens"), name)
        check(d.n_seq == len(want), f"{name} holds {len(want)} sequence(s) (got {d.n_seq})")
        for k, i in enumerate(want):
            got = (list(d.tok[d.idx[k]:d.idx[k + 1]]), list(d.mask[d.idx[k]:d.idx[k + 1]]))
            check(got == (seqs[i][0], seqs[i][1]), f"{name}[{k}] is sequence {i}, tokens and mask")
    with open(os.path.join(out, "manifest.json")) as f:
        man = json.load(f)
    check(man["datasets"] == {"note-write": {"sequences": 2, "tokens": len(seqs[0][0]) + len(seqs[4][0])},
                              "note-use": {"sequences": 3, "tokens": len(seqs[1][0]) + len(seqs[5][0]) + len(seqs[10][0])},
                              "stop-answer": {"sequences": 2, "tokens": len(seqs[8][0]) + len(seqs[9][0])}},
          f"the manifest counts them (got {man['datasets']})")
    check(man["max_obs_tokens"] == 2048, "the manifest keeps the source's observation budget")
finish("test_note_steps")
