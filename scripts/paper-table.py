#!/usr/bin/env python3
"""paper-table.py: the markdown tables of scripts/paper-comparisons.sh: each claim of the
CONF-KV / FreeKV papers | the paper's figure | kvarena before a change | after, with 95%
intervals (Wilson for accuracies and success rates, Fisher z for correlations), then the
long-horizon table per history mode and byte budget.

  scripts/paper-table.py AFTER_DIR [BEFORE_DIR]

Each DIR is an OUT_DIR of paper-comparisons.sh: paper.sqlite (the benches) and
long-<history>.sqlite (the runs; read through `kvarena report --json`, KVARENA or
build/kvarena). Perplexity has no interval here: the bench reports the mean NLL only.
"""
import json
import math
import os
import sqlite3
import subprocess
import sys

Z = 1.959963984540054  # the normal 97.5% quantile


def wilson(k, n):
    if n == 0:
        return (float("nan"), float("nan"))
    p = k / n
    d = 1 + Z * Z / n
    c = (p + Z * Z / (2 * n)) / d
    h = Z * math.sqrt(p * (1 - p) / n + Z * Z / (4 * n * n)) / d
    return (max(0.0, c - h), min(1.0, c + h))


def fisher(r, n):
    if n is None or n < 4 or r is None or abs(r) >= 1:
        return (float("nan"), float("nan"))
    z, se = math.atanh(r), 1 / math.sqrt(n - 3)
    return (math.tanh(z - Z * se), math.tanh(z + Z * se))


def bench_rows(out_dir):
    """{bench: {policy spec without the budget: (metrics, config)}} of paper.sqlite."""
    path = os.path.join(out_dir, "paper.sqlite")
    rows = {}
    if not os.path.exists(path):
        return rows
    db = sqlite3.connect("file:" + path + "?mode=ro", uri=True)
    for bench, policy, options, config, metrics in db.execute(
            "SELECT bench, policy, options_json, config_json, metrics_json FROM bench_results ORDER BY id"):
        cfg, opts = json.loads(config), json.loads(options)
        key = policy.split("@")[0]  # the policy's name: its variants by the options that make them
        for flag in ("kv-int8", "random-rank"):
            if opts.get(flag) == 1 and f":{flag}=1" not in key:
                key += f":{flag}=1"
        if bench == "confidence-kl":
            key = cfg.get("ablate_span", "recent")
        rows.setdefault(bench, {})[key] = (json.loads(metrics), cfg)
    return rows


def niah_cell(rows, policy):
    m = rows.get("niah", {}).get(policy)
    if not m:
        return "—"
    grid = m[0].get("grid", [])
    k, n = sum(1 for c in grid if c.get("correct")), len(grid)
    lo, hi = wilson(k, n)
    return f"{k}/{n} = {100 * k / n:.0f}% [{100 * lo:.0f}, {100 * hi:.0f}]"


def ppl_of(rows, policy):
    m = rows.get("ppl", {}).get(policy)
    return None if not m else m[0]


def ppl_cell(rows, policy, ref=None):
    m = ppl_of(rows, policy)
    if not m:
        return "—"
    s = f"{m['ppl']:.4f}"
    r = ppl_of(rows, ref) if ref else None
    if r:
        s += f" (Δ {m['ppl'] - r['ppl']:+.4f} vs {ref})"
    return s + f", peak {m['peak_kv_logical_bytes'] / 2**20:.2f} MiB"


def ckl_cell(rows, span):
    m = rows.get("confidence-kl", {}).get(span) or (rows.get("confidence-kl", {}).get("recent") if span == "recent" else None)
    if not m:
        return "—"
    r, n = m[0].get("pearson_r"), m[0].get("n_samples")
    lo, hi = fisher(r, n)
    s = f"r = {r:+.3f} [{lo:+.2f}, {hi:+.2f}]"
    if "spearman_r" in m[0]:
        rs = m[0]["spearman_r"]
        lo, hi = fisher(rs, n)
        s += f", ρ = {rs:+.3f} [{lo:+.2f}, {hi:+.2f}]"
    return s + f" (n = {n})"


def claims(after, before):
    b = bench_rows(before) if before else {}
    a = bench_rows(after)
    lines = ["| claim | paper | before | after |", "|---|---|---|---|"]

    def row(claim, paper, fn):
        lines.append(f"| {claim} | {paper} | {fn(b) if before else '—'} | {fn(a)} |")

    for pol, paper in [("confkv", "91.4%"), ("h2o", "80.6%"), ("window", "53.8%"), ("confkv:kv-int8=1", "—"),
                       ("confkv-l", "—"), ("freekv", "—"), ("full", "—")]:
        row(f"NIAH accuracy, {pol}", paper, lambda r, p=pol: niah_cell(r, p))
    row("PPL, window (the memory reference)", "—", lambda r: ppl_cell(r, "window"))
    row("PPL, CONF-KV+INT8 at the window's bytes", "3.11 below window",
        lambda r: ppl_cell(r, "confkv:kv-int8=1", "window"))
    row("PPL, CONF-KV at the window's bytes", "—", lambda r: ppl_cell(r, "confkv", "window"))
    row("PPL, CONF-KV-L at the window's bytes", "3.89 below window", lambda r: ppl_cell(r, "confkv-l", "window"))
    row("PPL, random eviction at CONF-KV's steps", "36.54 vs CONF-KV 30.92",
        lambda r: ppl_cell(r, "confkv:random-rank=1", "confkv"))
    row("PPL, H2O at the window's bytes", "—", lambda r: ppl_cell(r, "h2o", "window"))
    row("PPL, FreeKV vs full", "equal (LongBench 29.22 both)", lambda r: ppl_cell(r, "freekv", "full"))
    row("PPL, full", "—", lambda r: ppl_cell(r, "full"))
    row("confidence vs KL shift, recent span ablated", "r = -0.77", lambda r: ckl_cell(r, "recent"))
    row("confidence vs KL shift, distant span ablated", "—", lambda r: ckl_cell(r, "distant"))
    return lines


def report(path):
    kv = os.environ.get("KVARENA") or os.path.join(os.path.dirname(__file__), "..", "build", "kvarena")
    out = subprocess.run([kv, "report", path, "--json"], capture_output=True, text=True, check=True).stdout
    return json.loads(out)


def long_tables(after, before):
    lines = []
    for h in ("last", "full"):
        runs = {}
        for tag, d in (("after", after), ("before", before)):
            p = os.path.join(d, f"long-{h}.sqlite") if d else None
            if p and os.path.exists(p):
                runs[tag] = {x["policy"]: x for x in report(p)["policies"]}
        if "after" not in runs:
            continue
        lines += ["", f"**Long-horizon, history `{h}`** (success k/n [Wilson 95%]; retained = / full's success; "
                  "KV = median peak logical KV / full's)", "",
                  "| policy | before | after | retained (after) | KV vs full (after) |", "|---|---|---|---|---|"]
        for pol, x in runs["after"].items():
            def cell(y):
                if not y or not y.get("items"):
                    return "—"
                k, n = y["successes"], y["items"]
                lo, hi = wilson(k, n)
                return f"{k}/{n} [{100 * lo:.0f}, {100 * hi:.0f}]%"
            ret = x.get("success_retained_vs_full")
            kvr = x.get("peak_kv_median_vs_full")
            lines.append(f"| {pol} | {cell(runs.get('before', {}).get(pol))} | {cell(x)} | "
                         f"{'—' if ret is None else f'{100 * ret:.0f}%'} | {'—' if kvr is None else f'{kvr:.2f}'} |")
    return lines


def main():
    if len(sys.argv) < 2:
        print(__doc__.strip(), file=sys.stderr)
        sys.exit(2)
    after = sys.argv[1]
    before = sys.argv[2] if len(sys.argv) > 2 else None
    print("\n".join(claims(after, before) + long_tables(after, before)))


if __name__ == "__main__":
    main()
