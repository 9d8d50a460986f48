#!/usr/bin/python3
# test_step_stats.py: step_stats.py on a hand-made run database (ctest `train-step-stats`):
# four episodes, the figures worked out by hand below: one clicks an element on its page then
# answers by element (resolved, solved), one answers by an element the page lacks (failed),
# one answers in text (solved), one never parses.
import json
import os
import sqlite3
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from check_util import check, finish  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
with tempfile.TemporaryDirectory() as w:
    path = os.path.join(w, "run.sqlite")
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE task_results (run_id, task_id, policy, seed, success, steps)")
    db.execute("CREATE TABLE steps (run_id, task_id, policy, seed, step, action, action_error, observation, output)")
    rows = [  # task, step, action, action_error, observation, output
        ("a", 0, "click [5]", None, "[5] link 'Cars'", "```click [5]```"),
        ("a", 1, "stop [$3.00]", None, "[84] StaticText '$3.00'", "```stop [[84]]```"),
        ("b", 0, "stop [[9]]", "stop [[9]]: no element [9] on the page", "[84] StaticText '$3.00'", "```stop [[9]]```"),
        ("c", 0, "stop [$3]", None, "[84] StaticText '$3.00'", "```stop [$3]```"),
        ("d", 0, "none", "no action", "[84] StaticText '$3.00'", "I think so"),
    ]
    for t, k, act, err, obs, out in rows:
        db.execute("INSERT INTO steps VALUES (1, ?, 'full', 0, ?, ?, ?, ?, ?)", (t, k, act, err, obs, out))
    for t, ok, n in (("a", 1, 2), ("b", 0, 1), ("c", 1, 1), ("d", 0, 1)):
        db.execute("INSERT INTO task_results VALUES (1, ?, 'full', 0, ?, ?)", (t, ok, n))
    db.commit()
    r = subprocess.run([sys.executable, os.path.join(HERE, "step_stats.py"), path], capture_output=True, text=True)
    check(r.returncode == 0, f"step_stats exits 0 (got {r.returncode}: {r.stderr})")
    got = json.loads(r.stdout)
    want = [{"policy": "full", "tasks": 4, "success": 2, "steps": 5, "parsed": 0.8, "names_element": 1,
             "element_on_page": 1.0,
             "answers": {"stops": 3, "by_element": 2, "by_element_resolved": 1, "by_element_success": 1,
                         "text_success": 1}}]
    check(got == want, f"the figures worked out by hand (got {got})")
finish("test_step_stats")
