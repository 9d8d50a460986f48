#!/usr/bin/python3
# seen_objectives.py: a suite's success split by whether each task's objective (its
# "intent", word for word) occurs among the tasks the model was trained on. Templated
# objectives repeat across site seeds ("How many orders have I placed so far?"), so a
# trained model may have seen the very objective of an evaluation task (with other site
# content behind it); the unseen part is the cleaner measure.
#   seen_objectives.py --name NAME --suite DIR --db RESULTS.sqlite --train PATH [PATH ...]
# PATH: folders of task JSON files (kvarena tasks generate's vwa-local/ and long-horizon/),
# or text files of objectives, one per line (train-data's retarget-objectives.txt: the
# objectives its agent-retarget set made up);
# RESULTS.sqlite: kvarena run's (task_results: task_id, status, success).
# Prints one JSON line: {"measure", "seen": "k/n", "unseen": "rate [lo, hi] (k/n)"}.
import argparse
import glob
import json
import math
import os
import sqlite3
import sys


def wilson(k, n, z=1.96):
    if n == 0:
        return "n/a"
    p = k / n
    d = 1 + z * z / n
    c = (p + z * z / (2 * n)) / d
    h = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / d
    return f"{p:.3f} [{max(0, c - h):.3f}, {min(1, c + h):.3f}] ({k}/{n})"


def intents(folder):
    """{task_id (str): intent} of the task JSON files in folder."""
    out = {}
    for f in glob.glob(os.path.join(folder, "*.json")):
        with open(f) as fh:
            t = json.load(fh)
        if isinstance(t, dict) and "intent" in t and "task_id" in t:
            out[str(t["task_id"])] = t["intent"]
    return out


def split(suite, db, train_dirs):
    """(seen_k, seen_n, unseen_k, unseen_n) over the results in db of the tasks in suite."""
    suite_intents = intents(suite)
    if not suite_intents:
        raise SystemExit(f"seen_objectives: no task JSON in {suite}")
    trained = set()
    for d in train_dirs:
        if os.path.isfile(d):
            with open(d, encoding="utf-8") as fh:
                trained |= {line.rstrip("\n") for line in fh if line.strip()}
        else:
            trained |= set(intents(d).values())
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    rows = con.execute("SELECT task_id, status = 'done' AND success = 1 FROM task_results").fetchall()
    con.close()
    sk = sn = uk = un = 0
    for task_id, ok in rows:
        if task_id not in suite_intents:
            raise SystemExit(f"seen_objectives: task {task_id} of {db} is not in {suite}")
        if suite_intents[task_id] in trained:
            sk, sn = sk + ok, sn + 1
        else:
            uk, un = uk + ok, un + 1
    return sk, sn, uk, un


def main():
    ap = argparse.ArgumentParser(description="a suite's success split by objectives seen in training")
    ap.add_argument("--name", required=True)
    ap.add_argument("--suite", required=True)
    ap.add_argument("--db", required=True)
    ap.add_argument("--train", nargs="+", required=True)
    a = ap.parse_args()
    sk, sn, uk, un = split(a.suite, a.db, a.train)
    print(json.dumps({"measure": a.name, "seen": f"{sk}/{sn}", "unseen": wilson(uk, un)}))


if __name__ == "__main__":
    sys.exit(main())
