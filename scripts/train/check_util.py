# check_util.py: the failure counter the trainer's script tests share: check(cond, what)
# prints "FAIL: what" and counts; finish(name) prints the verdict and exits 1 on any failure.
import sys

_fails = 0


def check(cond, what):
    global _fails
    if not cond:
        _fails += 1
        print("FAIL:", what)


def finish(name):
    print(f"{name}:", "FAIL" if _fails else "ok")
    sys.exit(1 if _fails else 0)
