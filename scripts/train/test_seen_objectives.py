#!/usr/bin/python3
# test_seen_objectives.py: checks of seen_objectives.py (ctest `train-seen-objectives`) on a
# hand-made suite of five tasks (objectives A-E), training tasks with objectives B, D and X,
# and results: task 0 solved, 1 solved, 2 failed, 3 solved, 4 an error.
#   1. seen = tasks 1 and 3: "2/2"; unseen = tasks 0, 2, 4: 1 of 3, 95% Wilson [0.061, 0.792]
#      (the interval as tabulated for 1/3, written out here);
#   2. an objective that differs by one character is unseen (word for word);
#   3. a result for a task the suite lacks is an error, not a silent skip;
#   4. a text file of objectives (one per line) counts as training tasks: with "Objective A"
#      listed, seen = tasks 0, 1, 3: "3/3"; unseen = tasks 2, 4: 0 of 2, Wilson [0, 0.658]
#      (by hand, z = 1.96, n = 2: centre (z^2/4)/(1 + z^2/2) = 0.9604/2.9208 = 0.3288,
#      half-width z*(z/4)/2.9208 = 0.9604/2.9208 = 0.3288).
import json
import os
import sqlite3
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from check_util import check, finish  # noqa: E402


def write_tasks(folder, intents):
    os.makedirs(folder)
    for i, intent in enumerate(intents):
        with open(os.path.join(folder, f"{i}.json"), "w") as f:
            json.dump({"task_id": i, "intent": intent, "sites": ["shopping"]}, f)


def write_db(path, rows):
    con = sqlite3.connect(path)
    con.execute("CREATE TABLE task_results (task_id TEXT, status TEXT, success INTEGER)")
    con.executemany("INSERT INTO task_results VALUES (?, ?, ?)", rows)
    con.commit()
    con.close()


def run(suite, db, train):
    p = subprocess.run([sys.executable, os.path.join(HERE, "seen_objectives.py"), "--name", "t", "--suite", suite,
                        "--db", db, "--train", *train], capture_output=True, text=True)
    return p.returncode, p.stdout, p.stderr


with tempfile.TemporaryDirectory() as d:
    suite, train = os.path.join(d, "suite"), os.path.join(d, "train")
    write_tasks(suite, ["Objective A", "Objective B", "Objective C", "Objective D", "Objective E"])
    write_tasks(train, ["Objective X", "Objective D", "Objective B", "Objective C."])
    db = os.path.join(d, "r.sqlite")
    write_db(db, [("0", "done", 1), ("1", "done", 1), ("2", "done", 0), ("3", "done", 1), ("4", "error", 0)])
    rc, out, err = run(suite, db, [train])
    check(rc == 0, f"exit {rc}: {err}")
    if rc == 0:
        r = json.loads(out)
        check(r["seen"] == "2/2", f"seen {r['seen']}")
        check(r["unseen"] == "0.333 [0.061, 0.792] (1/3)", f"unseen {r['unseen']}")

    bad = os.path.join(d, "bad.sqlite")
    write_db(bad, [("0", "done", 1), ("9", "done", 1)])
    rc, out, err = run(suite, bad, [train])
    check(rc != 0 and "task 9" in err, f"unknown task: exit {rc}, {err}")

    listed = os.path.join(d, "retarget-objectives.txt")
    with open(listed, "w") as f:
        f.write("Objective A\nObjective Q\n")
    rc, out, err = run(suite, db, [train, listed])
    check(rc == 0, f"exit {rc}: {err}")
    if rc == 0:
        r = json.loads(out)
        check(r["seen"] == "3/3", f"seen with the list {r['seen']}")
        check(r["unseen"] == "0.000 [0.000, 0.658] (0/2)", f"unseen with the list {r['unseen']}")

finish("test_seen_objectives")
