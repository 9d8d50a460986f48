#!/usr/bin/python3
# test_watch_specs.py: checks of train.py's --watch parsing (ctest `train-watch-specs`):
#   1. two folders watched for the same set get two csv files, named after each folder;
#   2. a trailing comma is ignored; a folder path containing ':' keeps it (the set is after the last);
#   3. an entry without DIR or SET, or one folder/set named twice, is a usage error (SystemExit).
# Exit 77 (skipped) without torch (train.py imports it).
import os
import sys

try:
    import torch  # noqa: F401
except ImportError:
    print("test_watch_specs: skipped: /usr/bin/python3 has no torch", file=sys.stderr)
    sys.exit(77)
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from check_util import check, finish  # noqa: E402
from train import watch_specs  # noqa: E402



got = watch_specs("/d/heldout-niah-short:niah,/d/heldout-retrieval/:niah,", "/ck")
check(got == [("heldout-niah-short:niah", "/d/heldout-niah-short", "niah", "/ck/eval-heldout-niah-short-niah.csv"),
              ("heldout-retrieval:niah", "/d/heldout-retrieval/", "niah", "/ck/eval-heldout-retrieval-niah.csv")],
      f"two folders, one set: {got}")
got = watch_specs("a:b/c:copy", "ck")
check(got == [("c:copy", "a:b/c", "copy", "ck/eval-c-copy.csv")], f"':' in the folder: {got}")
check(watch_specs("", "ck") == [], "empty spec")

for bad in ("copy", ":copy", "dir:", "/d/x:copy,/e/x:copy", "x:copy,x/:copy"):
    try:
        watch_specs(bad, "ck")
        check(False, f"'{bad}' accepted")
    except SystemExit as e:
        check("--watch" in str(e), f"'{bad}': message {e}")

finish("test_watch_specs")
