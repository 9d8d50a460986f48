#!/usr/bin/python3
# test_reexport.py: `train.py --export-only` with no checkpoint exports --init-gguf's weights
# again (ctest `train-reexport`): a tiny random llama written with a recipe, a 512-token
# observation budget and no kvarena.history comes back with the same tensors bit for bit (F16
# matrices, F32 norms), the same recipe, tokenizer and budget, and kvarena.history "last" (or
# what --history gives); with neither a checkpoint nor an --init-gguf file it stops with a
# message. Needs torch (exit 77, skipped, without it).
import json
import os
import sys
import tempfile

try:
    import numpy as np
    import torch  # noqa: F401
except ImportError:
    print("train-reexport: skipped (no torch)")
    sys.exit(77)

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from check_util import check, finish  # noqa: E402
from gguf_read import read_gguf  # noqa: E402
from gguf_write import write_llama_gguf  # noqa: E402
from model import Llama, LlamaConfig  # noqa: E402
import train  # noqa: E402

G = "\u0120"
tok = {"model": "gpt2", "pre": "qwen2", "tokens": ["a", "b", G, "ab", "<|endoftext|>"], "merges": ["a b"],
       "token_types": [1, 1, 1, 1, 3], "eos_token_id": 4}
recipe = {"steps": 7, "init": "random:seed=3", "loss_curve": [{"step": 7, "loss": 1.5}]}

with tempfile.TemporaryDirectory() as d:
    src, out, out_full = (os.path.join(d, n) for n in ("src.gguf", "out.gguf", "out-full.gguf"))
    cfg = LlamaConfig(dim=16, n_layers=1, n_heads=2, n_kv_heads=1, ffn_dim=32, n_vocab=5, n_ctx=64)
    m = Llama(cfg)
    m.init_random(3)
    write_llama_gguf(src, cfg, m.gguf_state(), tokenizer=tok, recipe=recipe, max_obs_tokens=512)
    empty = os.path.join(d, "no-ckpt")
    train.main(["--export-only", "--ckpt-dir", empty, "--init-gguf", src, "--export", out])
    train.main(["--export-only", "--ckpt-dir", empty, "--init-gguf", src, "--export", out_full, "--history", "full"])

    m0, t0 = read_gguf(src)
    m1, t1 = read_gguf(out)
    check("kvarena.history" not in m0, "the source names no history")
    check(m1.get("kvarena.history") == "last", f"history {m1.get('kvarena.history')!r} (want 'last')")
    check(read_gguf(out_full)[0].get("kvarena.history") == "full", "--history full is written")
    check(set(m1) - set(m0) == {"kvarena.history"}, f"new keys {sorted(set(m1) - set(m0))}")
    changed = [k for k in m0 if m0[k] != m1.get(k)]
    check(not changed, f"metadata changed: {changed}")
    check(json.loads(m1["kvarena.train.recipe"]) == recipe, "the recipe is kept")
    check(m1.get("kvarena.max_obs_tokens") == 512, f"budget {m1.get('kvarena.max_obs_tokens')}")
    check(set(t0) == set(t1), f"tensor names {sorted(set(t0) ^ set(t1))}")
    for k in t0:
        same = t0[k].dtype == t1[k].dtype and np.array_equal(t0[k], t1[k])
        check(same, f"{k}: {t0[k].dtype} vs {t1[k].dtype}, equal {np.array_equal(t0[k], t1[k])}")

    try:
        train.main(["--export-only", "--ckpt-dir", empty, "--init-gguf", os.path.join(d, "missing.gguf"),
                    "--export", os.path.join(d, "x.gguf")])
        check(False, "an export from nothing was accepted")
    except SystemExit as e:
        check("no --init-gguf file" in str(e), f"message: {e}")

finish("train-reexport")
