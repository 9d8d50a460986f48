#!/usr/bin/python3
# note_steps.py: the held-out sets that say whether a model has learned notes (the
# compact style's memory, agent/prompt.h) and answers, cut from a `kvarena train-data` folder's
# agent-last (site seeds never trained on) into a folder train.py --watch and
# heldout.py read:
#   OUT/tokens/note-write.*  the steps whose reply begins with a note line ("NOTE: $23.99",
#                            or by element "NOTE [84]")
#   OUT/tokens/note-use.*    the steps whose action list carries a note ("(NOTE: $23.99)",
#                            "(NOTE: Rating: 2.4 out of 5 (7 reviews))") and whose reply's
#                            free text (mask 2) holds the note's first number as a whole
#                            (a typed price "23.99", a message "... $23.99?", "Rated 2.4")
#   OUT/tokens/stop-answer.* the other steps whose reply is a stop (an answer, "stop [$31.99]",
#                            or by element "stop [[84]]", agent-action.h)
# Sequences are copied whole, tokens and mask as they are; OUT/manifest.json is SRC's with
# these datasets' sizes.
#   note_steps.py SRC OUT [--tokenizer FILE.gguf]   (default: SRC's manifest tokenizer)
import argparse
import json
import os
import re
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from data import Dataset, run_spans, run_starts, write_dataset  # noqa: E402
from gguf_read import tokenizer_of_file  # noqa: E402


def byte_of_char():
    """GPT-2's byte-level alphabet inverted: the character a vocabulary piece uses -> its byte."""
    printable = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + \
        list(range(ord("®"), ord("ÿ") + 1))
    out, extra = {}, 0
    for b in range(256):
        if b in printable:
            out[chr(b)] = b
        else:
            out[chr(256 + extra)] = b
            extra += 1
    return out


class Decoder:
    def __init__(self, tokens):
        self.tokens = tokens
        self.bytes_of = byte_of_char()

    def __call__(self, ids):
        out = bytearray()
        for i in ids:
            piece = self.tokens[int(i)]
            if piece.startswith("<|") and piece.endswith("|>"):  # a special token: its text
                out += piece.encode()
            else:
                out += bytes(self.bytes_of.get(ch, ord("?")) for ch in piece)
        return out.decode("utf-8", "replace")


NOTE_IN_LIST = re.compile(r"\(NOTE: ([^\n]*?)\)(?= \(|$)", re.M)  # up to the ")" ending the line or before " ("
NUMBER = re.compile(r"\d[\d,]*(?:\.\d+)?")


def holds_number(text, number):
    """Whether `number` occurs in `text` with no digit or "." + digit joined to it."""
    return re.search(r"(?<![\d.])" + re.escape(number) + r"(?!\d|\.\d)", text) is not None


def uses_note(tok, mask, reply_start, dec):
    """Whether the reply's free text (mask 2) holds the first number of a note its action list carries."""
    free = [dec(tok[s:e]) for s, e in run_spans(mask == 2)]
    if not free:  # nothing typed or answered (and no prompt to decode)
        return False
    context = dec(tok[:reply_start])
    facts = NOTE_IN_LIST.findall(context[max(context.rfind("PREVIOUS ACTION"), 0):])
    return any((first := NUMBER.search(f)) and any(holds_number(t, first.group()) for t in free) for f in facts)


def classify(tok, mask, dec):
    """("write" | "use" | "stop" | None) for one sequence's tokens and mask."""
    target = mask > 0
    starts = np.flatnonzero(run_starts(target))
    if len(starts) == 0:
        return None
    reply = dec(tok[starts[-1]:][target[starts[-1]:]])
    if reply.startswith("NOTE: ") or reply.startswith("NOTE ["):
        return "write"
    if uses_note(tok, mask, starts[-1], dec):
        return "use"
    return "stop" if reply.startswith("```stop [") else None


def main(argv=None):
    ap = argparse.ArgumentParser(description="held-out note-write and note-use sets cut from agent-last")
    ap.add_argument("src")
    ap.add_argument("out")
    ap.add_argument("--tokenizer", help="GGUF whose vocabulary the token files use (default: the manifest's)")
    a = ap.parse_args(argv)
    with open(os.path.join(a.src, "manifest.json")) as f:
        man = json.load(f)
    tk = tokenizer_of_file(a.tokenizer or man["tokenizer"])
    dec = Decoder(tk["tokens"])
    ds = Dataset(os.path.join(a.src, "tokens"), "agent-last")
    picked = {"write": [], "use": [], "stop": []}
    names = {"write": "note-write", "use": "note-use", "stop": "stop-answer"}
    for i in range(ds.n_seq):
        s, e = int(ds.idx[i]), int(ds.idx[i + 1])
        kind = classify(np.asarray(ds.tok[s:e]), np.asarray(ds.mask[s:e]), dec)
        if kind:
            picked[kind].append(i)
    os.makedirs(os.path.join(a.out, "tokens"), exist_ok=True)
    sizes = {}
    for kind, picks in picked.items():
        seqs = [(ds.tok[ds.idx[i]:ds.idx[i + 1]], ds.mask[ds.idx[i]:ds.idx[i + 1]]) for i in picks]
        write_dataset(os.path.join(a.out, "tokens"), names[kind], seqs)
        sizes[names[kind]] = {"sequences": len(seqs), "tokens": int(sum(len(t) for t, _ in seqs))}
    man = dict(man, datasets=sizes, cut_from=os.path.abspath(a.src))
    with open(os.path.join(a.out, "manifest.json"), "w") as f:
        json.dump(man, f, indent=2)
    print(json.dumps(sizes))


if __name__ == "__main__":
    main()
