#!/usr/bin/env python3
"""page-observations.py: print the text browser's observation (VWA's accessibility tree)
of a fixed list of pages of every local site, through `kvarena env-server`, so two builds'
observations can be diffed (styling and images must not change pages that had none).
Usage: scripts/page-observations.py KVARENA_BINARY [--browser text|chromium] > obs.txt"""
import json, subprocess, sys, time, urllib.request, socket

PAGES = [
    ("classifieds", "/"), ("classifieds", "/category/bicycles"), ("classifieds", "/item/2"),
    ("classifieds", "/item/5"), ("classifieds", "/search?q=chair"), ("classifieds", "/my/listings"),
    ("shopping", "/"), ("shopping", "/category/2"), ("shopping", "/product/3"), ("shopping", "/search?q=mug"),
    ("shopping", "/wishlist"), ("shopping", "/cart"),
    ("reddit", "/"), ("reddit", "/f/photography"), ("reddit", "/post/3"), ("reddit", "/post/10"),
    ("reddit", "/search?q=camera"), ("reddit", "/forums"),
]
PLACEHOLDER = {"classifieds": "__CLASSIFIEDS__", "shopping": "__SHOPPING__", "reddit": "__REDDIT__"}

def call(base, path, body=None):
    req = urllib.request.Request(base + path, data=None if body is None else json.dumps(body).encode(),
                                 headers={"Content-Type": "application/json"}, method="GET" if body is None else "POST")
    with urllib.request.urlopen(req, timeout=120) as r:
        return json.loads(r.read())

def main():
    binary = sys.argv[1]
    browser = sys.argv[sys.argv.index("--browser") + 1] if "--browser" in sys.argv else "text"
    s = socket.socket(); s.bind(("127.0.0.1", 0)); port = s.getsockname()[1]; s.close()
    srv = subprocess.Popen([binary, "env-server", "--port", str(port)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}"
    try:
        for _ in range(100):
            try:
                call(base, "/v1/health"); break
            except Exception:
                time.sleep(0.1)
        for site, path in PAGES:
            task = {"task_id": 0, "sites": [site], "require_login": True, "start_url": PLACEHOLDER[site] + path,
                    "intent": "look", "eval": {"eval_types": ["string_match"], "reference_answers": {"exact_match": "x"}}}
            out = call(base, "/v1/sessions", {"task": task, "browser": browser})
            print(f"===== {site} {path}")
            print(out["observation"]["text"])
    finally:
        srv.terminate(); srv.wait()

main()
