#!/usr/bin/python3
# merge_data.py: several `kvarena train-data` folders made with one tokenizer and one
# observation budget (e.g. two site-seed ranges) as one folder that train.py reads:
# OUT/tokens/NAME.{tok,mask,idx} are each dataset's files one after another (the second
# folder's start offsets shifted by the first's token count), and OUT/manifest.json is the
# first folder's with the observation budget, every folder's site seeds and the summed
# dataset sizes. A dataset missing from a folder is taken from the others; folders whose
# tokenizer or observation budget differ are refused.
#   merge_data.py OUT DIR1 DIR2 [...]
import json
import os
import sys

import numpy as np


def merge(out, dirs):
    mans = []
    for d in dirs:
        with open(os.path.join(d, "manifest.json")) as f:
            mans.append(json.load(f))
    for key in ("max_obs_tokens", "tokenizer", "n_vocab"):
        vals = {json.dumps(m.get(key)) for m in mans}
        if len(vals) > 1:
            raise SystemExit(f"merge_data: the folders disagree on {key}: {sorted(vals)}")
    names = sorted({f[:-4] for d in dirs for f in os.listdir(os.path.join(d, "tokens")) if f.endswith(".tok")})
    os.makedirs(os.path.join(out, "tokens"), exist_ok=True)
    sizes = {}
    for name in names:
        base = os.path.join(out, "tokens", name)
        starts, total, n_seq = [np.zeros(1, np.uint64)], 0, 0
        with open(base + ".tok", "wb") as ft, open(base + ".mask", "wb") as fm:
            for d in dirs:
                src = os.path.join(d, "tokens", name)
                if not os.path.exists(src + ".tok"):
                    continue
                idx = np.fromfile(src + ".idx", dtype="<u8")
                tok = np.fromfile(src + ".tok", dtype="<u2")
                mask = np.fromfile(src + ".mask", dtype=np.uint8)
                if len(tok) != len(mask) or int(idx[-1]) != len(tok):
                    raise SystemExit(f"merge_data: {src}: .tok/.mask/.idx sizes disagree")
                tok.tofile(ft)
                mask.tofile(fm)
                starts.append(idx[1:] + np.uint64(total))
                total += len(tok)
                n_seq += len(idx) - 1
        np.concatenate(starts).astype("<u8").tofile(base + ".idx")
        sizes[name] = {"sequences": n_seq, "tokens": total}
    man = dict(mans[0])
    man["site_seeds"] = ",".join(str(m.get("site_seeds")) for m in mans)
    man["merged_from"] = [os.path.abspath(d) for d in dirs]
    man["datasets"] = sizes
    for key in ("tasks", "solved"):
        if all(key in m for m in mans):
            man[key] = sum(m[key] for m in mans)
    man["skipped_site_seeds"] = sorted(s for m in mans for s in m.get("skipped_site_seeds", []))
    with open(os.path.join(out, "manifest.json"), "w") as f:
        json.dump(man, f, indent=2)
    return man


if __name__ == "__main__":
    if len(sys.argv) < 4:
        raise SystemExit("usage: merge_data.py OUT DIR1 DIR2 [...]")
    m = merge(sys.argv[1], sys.argv[2:])
    print(json.dumps({"out": sys.argv[1], "site_seeds": m["site_seeds"], "datasets": m["datasets"]}))
