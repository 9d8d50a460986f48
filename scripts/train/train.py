#!/usr/bin/python3
# train.py: resumable CPU training of the small llama model (model.py) on packed rows from
# DIR/tokens (data.py), weighted cross-entropy (targets 1, context --ctx-weight, an action's
# free text --text-weight / --first-text-weight), a context
# curriculum at a roughly constant token count per step, AdamW with warmup + cosine LR and
# gradient clipping, fp32. Checkpoints (model, optimizer, step, RNG and data state, loss
# history) go atomically to --ckpt-dir every --ckpt-minutes, on SIGTERM/SIGINT and at the
# end; a run resumes from the latest one, or starts from --init-gguf, or from random init.
# --export writes a GGUF (gguf_write.py) with the recipe; --bench measures tokens/s.
#   train.py --data DIR --max-steps 20000 --minutes 60 --export out.gguf
#   train.py --export-only --ckpt-dir D --export out.gguf
#   train.py --bench
import argparse
import contextlib
import json
import math
import os
import queue
import random
import resource
import signal
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cpu_setup  # noqa: E402,F401  (sets up OpenBLAS and malloc before numpy / torch)
import numpy as np  # noqa: E402
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

from model import Llama, LlamaConfig, load_gguf_model  # noqa: E402
from gguf_write import write_llama_gguf  # noqa: E402
from gguf_read import tokenizer_of_file  # noqa: E402

REPO = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
DEFAULT_MIX = "agent-last=0.5,agent-full=0.3,niah=0.1,kv=0.05,corpus=0.05"


def log(*a):
    print(*a, file=sys.stderr, flush=True)


def parse_args(argv=None):
    ap = argparse.ArgumentParser(description=__doc__)
    a = ap.add_argument
    a("--data", help="folder with tokens/ (and tokenizer.json)")
    a("--mix", default=DEFAULT_MIX, help="dataset=weight,... (missing datasets are skipped)")
    a("--tokenizer", help="tokenizer.json, or a GGUF whose vocabulary to use (default DATA/tokenizer.json, else the "
      "checkpoint's copy, else --init-gguf's)")
    a("--ckpt-dir", default=os.path.expanduser("~/.cache/kvarena-train/ckpt"))
    a("--init-gguf", default=os.path.join(REPO, "models", "kvarena-agent.gguf"),
      help="weights to start from when there is no checkpoint (if the file exists)")
    a("--dim", type=int, default=256)
    a("--layers", type=int, default=4)
    a("--heads", type=int, default=4)
    a("--kv-heads", type=int, default=2)
    a("--ffn", type=int, default=704)
    a("--rope-base", type=float, default=10000.0, help="RoPE frequency base (larger: slower rotation, for long contexts)")
    a("--vocab", type=int, default=0, help="default: the tokenizer's size")
    a("--n-ctx", type=int, default=0, help="llama.context_length to write (default: the largest ctx)")
    a("--ctx-schedule", default="512:0,1024:0.3,2048:0.6,4096:0.8",
      help="CTX:FRACTION,...: context length from each fraction of --max-steps on")
    a("--tokens-per-step", type=int, default=16384)
    a("--micro-tokens", type=int, default=4096, help="tokens per forward/backward (accumulated)")
    a("--max-steps", type=int, default=20000, help="also the length of the LR and ctx schedules")
    a("--minutes", type=float, default=0, help="wall-clock budget of this run (0 = none)")
    a("--steps", type=int, default=0, help="at most this many steps in this run (0 = no limit)")
    a("--lr-by-time", action="store_true", help="the cosine runs over this run's --minutes rather than over "
      "--max-steps (a fixed time budget on a machine whose speed is not known ahead, e.g. a lent GPU)")
    a("--lr", type=float, default=1e-3)
    a("--min-lr-frac", type=float, default=0.1)
    a("--warmup", type=int, default=200)
    a("--wd", type=float, default=0.1)
    a("--beta2", type=float, default=0.95)
    a("--clip", type=float, default=1.0)
    a("--ctx-weight", type=float, default=0.1, help="loss weight of context (non-target) tokens")
    a("--text-weight", type=float, default=1.0,
      help="loss weight of an action's free text (typed text, stop answers: mask 2 in the token files)")
    a("--first-text-weight", type=float, default=None,
      help="loss weight of the first token of each free text (default --text-weight): where copying starts")
    a("--ctx-sample", type=float, default=1.0,
      help="fraction of context (non-target) positions whose loss is computed, weighted 1/fraction "
      "(every target position always is); below 1 skips most of the vocabulary projection")
    a("--no-doc-mask", dest="doc_mask", action="store_false",
      help="let packed documents attend to the ones before them in their row (the first round did)")
    a("--eval-data", help="train-data folder of site seeds never trained on: held-out reply exact-match "
      "(heldout.py) every --eval-every steps, into CKPT/eval.csv and the recipe")
    a("--eval-every", type=int, default=200)
    a("--eval-n", type=int, default=150, help="held-out sequences per evaluation")
    a("--eval-only", action="store_true", help="evaluate the checkpoint (or --init-gguf) on --eval-data and exit")
    a("--eval-set", default="agent-last", help="--eval-only: the dataset of --eval-data measured (agent-last, "
      "niah, kv, lookup: teacher-forced exact match of every answer of a sequence)")
    a("--watch", default="", help="DIR:SET,... more held-out sets measured with --eval-data's (e.g. "
      "heldout-retrieval:copy), each into CKPT/eval-DIRNAME-SET.csv (DIRNAME: DIR's last component): a skill "
      "the mixture is meant to teach")
    a("--seed", type=int, default=1, help="init seed")
    a("--data-seed", type=int, default=1)
    a("--ckpt-minutes", type=float, default=5)
    a("--log-every", type=int, default=10)
    a("--threads", type=int, default=2)
    a("--device", default="cpu", help="cpu, or cuda: the GPU path (bf16 autocast, one attention call per layer "
      "with a document mask; fp32 weights and optimizer), same data, checkpoints and export")
    a("--prefetch", type=int, default=0, help="pack this many steps' rows ahead in a thread (the GPU path: the "
      "packer is Python); a run resumed from its checkpoint then sees other rows than an unbroken one")
    a("--attn-chunk", type=int, default=-1, help="query block of attention (0 = none, -1 = auto)")
    a("--export", help="write the weights to this GGUF at the end")
    a("--export-only", action="store_true",
      help="only export the latest checkpoint (none: --init-gguf's weights and recipe, with this version's metadata)")
    a("--export-f32", action="store_true", help="F32 matrices instead of F16")
    a("--name", default="kvarena-agent", help="general.name of the export")
    a("--max-obs-tokens", type=int, default=0,
      help="kvarena.max_obs_tokens to write (default: the training data's, from its manifest.json)")
    a("--history", choices=("last", "full"), default="last",
      help="kvarena.history to write: the history mode `kvarena run` uses with the export unless given "
      "--history (the mode its figures are measured in; agent-last is most of the recipe's agent data)")
    a("--bench", action="store_true", help="measure tokens/s on random data and exit")
    a("--bench-models", default="256x4,192x6,320x4", help="DIMxLAYERS,... (head_dim 64)")
    a("--bench-ctx", default="512,1024,2048,4096")
    a("--bench-steps", type=int, default=2)
    return ap.parse_args(argv)


def parse_schedule(spec):
    pts = sorted((float(f), int(c)) for c, f in (p.split(":") for p in spec.split(",")))
    return pts


def watch_specs(spec, ckpt_dir):
    """--watch's "DIR:SET,...": (label, DIR, SET, csv) per entry, csv = CKPT/eval-DIRNAME-SET.csv
    (DIRNAME = DIR's last component, so two folders watched for the same SET keep their own
    files). A malformed entry or two entries with one csv stop with a usage error."""
    out, seen = [], set()
    for item in filter(None, spec.split(",")):
        wdir, _, wset = item.rpartition(":")
        if not wdir or not wset:
            raise SystemExit(f"train.py: --watch wants DIR:SET, got '{item}'")
        name = os.path.basename(os.path.normpath(wdir))
        csv = os.path.join(ckpt_dir, f"eval-{name}-{wset}.csv")
        if csv in seen:
            raise SystemExit(f"train.py: --watch names {name}:{wset} twice (one file, {csv})")
        seen.add(csv)
        out.append((f"{name}:{wset}", wdir, wset, csv))
    return out


def ctx_at(sched, frac):
    ctx = sched[0][1]
    for f, c in sched:
        if frac >= f:
            ctx = c
    return ctx


def lr_at(a, step, time_frac=None):
    """Warmup over --warmup steps, then cosine to --min-lr-frac: over the steps up to
    --max-steps, or, given time_frac (--lr-by-time), over the fraction of this run's
    --minutes spent."""
    if step < a.warmup:
        return a.lr * (step + 1) / a.warmup
    t = min(1.0, (step - a.warmup) / max(1, a.max_steps - a.warmup)) if time_frac is None else min(1.0, time_frac)
    return a.lr * (a.min_lr_frac + (1 - a.min_lr_frac) * 0.5 * (1 + math.cos(math.pi * t)))


def auto_chunk(a, T):
    if a.attn_chunk >= 0:
        return a.attn_chunk
    return 0 if T <= 256 else 256


def make_optimizer(a, model):
    decay = [p for p in model.parameters() if p.ndim >= 2]
    other = [p for p in model.parameters() if p.ndim < 2]
    return torch.optim.AdamW([{"params": decay, "weight_decay": a.wd}, {"params": other, "weight_decay": 0.0}],
                             lr=a.lr, betas=(0.9, a.beta2), eps=1e-8)


def train_step(model, opt, tok, w, tgt, micro_rows, lr, clip, seg=None, pos=None, ctx_sample=1.0, rng=None,
               device="cpu", amp=False):
    """One optimizer step over the rows; returns (weighted loss, target loss). seg/pos
    (R, T+1): packed documents attend only within themselves (see Llama.hidden).
    ctx_sample < 1: the logits and loss are computed at every target position but only at
    that fraction of the context positions (drawn with rng), each weighted 1/ctx_sample,
    so the loss's expectation is unchanged and the vocabulary projection, softmax and their
    backward pass run on a fraction of the tokens. device: where the model is (the rows go
    there); amp: bf16 autocast for the forward pass (the GPU path; weights and optimizer
    stay fp32). The losses are read back once, at the end of the step."""
    for g in opt.param_groups:
        g["lr"] = lr
    opt.zero_grad(set_to_none=True)
    wsum, tsum = float(w.sum()), float(tgt.sum())
    loss_acc = torch.zeros((), device=device)
    tloss_acc = torch.zeros((), device=device)

    def dev(a):
        return torch.from_numpy(a).to(device, non_blocking=True)
    for r0 in range(0, tok.shape[0], micro_rows):
        x = dev(tok[r0:r0 + micro_rows])
        wt = dev(w[r0:r0 + micro_rows]).reshape(-1)
        tt = dev(tgt[r0:r0 + micro_rows]).reshape(-1)
        with (torch.autocast("cuda", dtype=torch.bfloat16) if amp else contextlib.nullcontext()):
            if seg is None:
                h = model.hidden(x[:, :-1])
            else:
                h = model.hidden(x[:, :-1], dev(seg[r0:r0 + micro_rows, :-1]), dev(pos[r0:r0 + micro_rows, :-1]))
            h = h.reshape(-1, h.shape[-1])                                   # (rows*T, D)
            y = x[:, 1:].reshape(-1)
            if ctx_sample < 1.0:
                ctx = (wt > 0) & (tt == 0)
                drawn = dev(rng.random(wt.shape[0]) < ctx_sample)
                keep = torch.nonzero((tt > 0) | (ctx & drawn)).squeeze(1)    # (n_kept,)
                wt = torch.where(ctx, wt / ctx_sample, wt)[keep]
                tt, h, y = tt[keep], h[keep], y[keep]
            logits = model.logits(h)
        ce = F.cross_entropy(logits.float(), y, reduction="none")
        loss = (ce * wt).sum() / max(wsum, 1e-9)
        loss.backward()
        loss_acc += loss.detach()
        tloss_acc += (ce.detach() * tt).sum() / max(tsum, 1e-9)
    torch.nn.utils.clip_grad_norm_(model.parameters(), clip)
    opt.step()
    return float(loss_acc), float(tloss_acc)


def step_rows(a, packer, sched, step0):
    """(ctx, rows, packer.rows(...)) for each step from step0 on; with --prefetch N packed up
    to N steps ahead in a daemon thread."""
    def make(step):
        T = ctx_at(sched, step / a.max_steps)
        R = max(1, a.tokens_per_step // T)
        return T, R, packer.rows(R, T)
    if a.prefetch <= 0:
        step = step0
        while True:
            yield make(step)
            step += 1
    q = queue.Queue(a.prefetch)

    def work():
        step = step0
        while True:
            q.put(make(step))
            step += 1
    threading.Thread(target=work, daemon=True).start()
    while True:
        yield q.get()


# ----------------------------------------------------------------------------- checkpoints

def latest_ckpt(d):
    p = os.path.join(d, "latest.pt")
    return p if os.path.exists(p) else None


def save_ckpt(d, st):
    os.makedirs(d, exist_ok=True)
    path = os.path.join(d, "latest.pt")
    tmp = path + ".tmp"
    torch.save(st, tmp)
    os.replace(tmp, path)
    return path


def load_tokenizer(a, ckpt_tok=None):
    cands = [a.tokenizer] if a.tokenizer else []
    if a.data:
        cands.append(os.path.join(a.data, "tokenizer.json"))
    for p in cands:
        if p and p.endswith(".gguf") and os.path.exists(p):  # a model file's own vocabulary
            return tokenizer_of_file(p), p
        if p and os.path.exists(p):
            with open(p) as f:
                return json.load(f), p
    if a.tokenizer:
        raise SystemExit(f"tokenizer {a.tokenizer} not found")
    if ckpt_tok:
        return ckpt_tok, "checkpoint"
    if a.init_gguf and os.path.exists(a.init_gguf):  # the model file's own vocabulary
        tok = tokenizer_of_file(a.init_gguf)
        if tok:
            return tok, a.init_gguf
    return None, None


def data_obs_budget(data_dir):
    """The observation budget (tokens) the data's pages were cut to, from train-data's manifest."""
    p = os.path.join(data_dir, "manifest.json")
    if not os.path.exists(p):
        return None
    with open(p) as f:
        return json.load(f).get("max_obs_tokens")


def recipe_of(st):
    h = st["history"]
    pick = [h[int(i)] for i in np.linspace(0, len(h) - 1, min(len(h), 20))] if h else []
    return {
        "data_seed": st["data_seed"], "init": st["init"], "steps": st["step"],
        "tokens_seen": st["tokens"], "target_tokens_seen": st["target_tokens"],
        "wall_time_s": round(st["wall"], 1), "command_lines": st["commands"],
        "loss_curve": [{"step": r["step"], "tokens": r["tokens"], "ctx": r["ctx"],
                        "loss": round(r["loss"], 4), "target_loss": round(r["target_loss"], 4)} for r in pick],
        "final_loss": round(h[-1]["loss"], 4) if h else None,
        "final_target_loss": round(h[-1]["target_loss"], 4) if h else None,
        "hparams": st["hparams"], "parent": st.get("parent"), "torch_version": torch.__version__,
        "heldout": st.get("evals", [])[-10:],
    }


def write_export(a, model, tok, recipe, max_obs_tokens):
    """--export's file: the weights, the recipe, the observation budget (--max-obs-tokens, else
    the one given) and the history mode (--history)."""
    if tok is None:
        raise SystemExit("export: no tokenizer (give --tokenizer or --data with tokenizer.json)")
    write_llama_gguf(a.export, model.c, model.gguf_state(), tokenizer=tok, name=a.name, recipe=recipe,
                     f16=not a.export_f32, max_obs_tokens=a.max_obs_tokens or max_obs_tokens, history=a.history)


def export(a, st, model, tok):
    write_export(a, model, tok, recipe_of(st), st.get("max_obs_tokens"))
    log(f"exported step {st['step']} to {a.export}")


def reexport_gguf(a):
    """--export-only without a checkpoint: --init-gguf's weights, recipe and observation budget
    written again with this version's metadata (e.g. kvarena.history); the weights round-trip
    exactly (F16 -> F32 -> F16)."""
    if not (a.init_gguf and os.path.exists(a.init_gguf)):
        raise SystemExit(f"no checkpoint in {a.ckpt_dir}, and no --init-gguf file to export again")
    model, meta = load_gguf_model(a.init_gguf)
    if a.n_ctx:
        model.c.n_ctx = a.n_ctx
    tok, _ = load_tokenizer(a)
    write_export(a, model, tok, json.loads(meta.get("kvarena.train.recipe") or "null"),
                 meta.get("kvarena.max_obs_tokens"))
    log(f"exported {a.init_gguf} again to {a.export} (no checkpoint in {a.ckpt_dir})")


# ----------------------------------------------------------------------------- bench

def bench(a):
    res = []
    for spec in a.bench_models.split(","):
        dim, layers = (int(x) for x in spec.split("x"))
        heads = dim // 64
        cfg = LlamaConfig(dim=dim, n_layers=layers, n_heads=heads, n_kv_heads=heads // 2 if heads % 2 == 0 else 1,
                          ffn_dim=int(round(dim * 2.75 / 32)) * 32, n_vocab=a.vocab or 4096)
        model = Llama(cfg)
        model.init_random(0)
        opt = make_optimizer(a, model)
        n_params = sum(p.numel() for p in model.parameters())
        for T in (int(c) for c in a.bench_ctx.split(",")):
            model.attn_chunk = auto_chunk(a, T)
            R = max(1, a.tokens_per_step // T)
            rng = np.random.default_rng(0)
            tok = rng.integers(0, cfg.n_vocab, size=(R, T + 1))
            w = np.ones((R, T), np.float32)
            times = []
            for i in range(a.bench_steps + 1):
                t0 = time.time()
                train_step(model, opt, tok, w, w, max(1, a.micro_tokens // T), 1e-4, 1.0)
                times.append(time.time() - t0)
            dt = min(times[1:])
            r = {"model": f"d{dim} l{layers} h{heads} kv{cfg.n_kv_heads} ffn{cfg.ffn_dim}", "params_M": round(n_params / 1e6, 2),
                 "ctx": T, "rows": R, "chunk": model.attn_chunk, "step_s": round(dt, 2),
                 "tok_per_s": round(R * T / dt), "max_rss_GB": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20, 2)}
            log(json.dumps(r))
            res.append(r)
    print(json.dumps({"bench": "train", "threads": a.threads, "results": res}))


# ----------------------------------------------------------------------------- main

def main(argv=None):
    a = parse_args(argv)
    cpu_setup.set_threads(a.threads)
    if a.bench:
        return bench(a)
    ck = latest_ckpt(a.ckpt_dir)
    st = torch.load(ck, map_location="cpu", weights_only=False) if ck else None
    if a.device != "cpu" and not torch.cuda.is_available():
        raise SystemExit(f"--device {a.device}: torch {torch.__version__} sees no GPU")
    if a.export_only:
        return export_only(a, st)
    if a.eval_only:
        return eval_only(a, st)
    return train(a, st, ck)


def export_only(a, st):
    """--export-only: the latest checkpoint to --export (without one: --init-gguf's file again)."""
    if not st:
        return reexport_gguf(a)
    model = Llama(LlamaConfig(**st["config"]))
    model.load_state_dict(st["model"])
    if a.n_ctx:
        model.c.n_ctx = a.n_ctx
    tok, _ = load_tokenizer(a, st.get("tokenizer"))
    return export(a, st, model, tok)


def eval_only(a, st):
    """--eval-only: the checkpoint (or --init-gguf) measured on --eval-data's --eval-set, one JSON line."""
    if not a.eval_data:
        raise SystemExit("--eval-only needs --eval-data DIR")
    if st:
        model = Llama(LlamaConfig(**st["config"]))
        model.load_state_dict(st["model"])
    else:
        model, _ = load_gguf_model(a.init_gguf)
    from heldout import load_heldout, evaluate
    r = evaluate(model, load_heldout(a.eval_data, a.eval_set), a.eval_n)
    r["set"] = a.eval_set
    r["model"] = f"checkpoint step {st['step']}" if st else a.init_gguf
    print(json.dumps(r))


def train(a, st, ck):
    """A training run: resumed from the checkpoint st (file ck) or started anew, until --max-steps,
    --steps, --minutes or a signal; then evaluated, checkpointed and exported (--export)."""
    if not a.data:
        raise SystemExit("--data DIR is required for training")
    if a.lr_by_time and not a.minutes:
        raise SystemExit("--lr-by-time needs --minutes (the time the cosine runs over)")
    tok, tok_src = load_tokenizer(a, st.get("tokenizer") if st else None)
    sched = parse_schedule(a.ctx_schedule)
    model, st = resume_or_start(a, st, ck, tok, sched)
    place_model(a, model, tok, tok_src)
    packer = make_packer(a, st, model)
    opt = make_resumed_optimizer(a, st, model, packer)
    stop = stop_on_signals()
    os.makedirs(a.ckpt_dir, exist_ok=True)
    losses = LossLog(a)
    evals = HeldoutEvals(a)
    train_loop(a, st, model, opt, packer, tok, sched, stop, losses, evals)
    if evals.enabled and (not st.get("evals") or st["evals"][-1]["step"] != st["step"]):
        evals.run(model, st)
    checkpoint(a, st, model, opt, packer, tok)
    if a.export:
        export(a, st, model, tok)


# ----------------------------------------------------------------------------- training: the stages

def resume_or_start(a, st, ck, tok, sched):
    """(model, state): the checkpoint's, with this command line added, or new_model's."""
    cmd = " ".join([os.path.basename(sys.argv[0])] + sys.argv[1:])
    if not st:
        return new_model(a, tok, sched, cmd)
    model = Llama(LlamaConfig(**st["config"]))
    model.load_state_dict(st["model"])
    log(f"resumed {ck}: step {st['step']}, {st['tokens']} tokens, {st['wall']:.0f} s")
    st["commands"].append(cmd)
    return model, st


def new_model(a, tok, sched, cmd):
    """(model, state) of a new run: --init-gguf's weights (if the file exists; its recipe becomes the
    parent) or random ones of --dim etc. at --seed."""
    if a.init_gguf and os.path.exists(a.init_gguf):
        model, meta = load_gguf_model(a.init_gguf)
        init = "gguf:" + os.path.basename(a.init_gguf)
        prev = json.loads(meta.get("kvarena.train.recipe", "{}") or "{}")
        parent = {k: prev[k] for k in ("init", "steps", "tokens_seen", "data_seed", "wall_time_s") if k in prev}
        log(f"initialised from {a.init_gguf} ({model.c.dim}d x {model.c.n_layers} layers); --dim etc. ignored")
    else:
        n_vocab = a.vocab or (len(tok["tokens"]) if tok else 0)
        if not n_vocab:
            raise SystemExit("no vocabulary size: give --vocab or a tokenizer.json")
        cfg = LlamaConfig(dim=a.dim, n_layers=a.layers, n_heads=a.heads, n_kv_heads=a.kv_heads,
                          ffn_dim=a.ffn, n_vocab=n_vocab, n_ctx=a.n_ctx or max(c for _, c in sched),
                          rope_base=a.rope_base)
        model = Llama(cfg)
        model.init_random(a.seed)
        init = f"random:seed={a.seed}"
        parent = None
    st = {"parent": parent, "step": 0, "tokens": 0, "target_tokens": 0, "wall": 0.0, "history": [], "init": init,
          "data_seed": a.data_seed, "commands": [cmd]}
    return model, st


def place_model(a, model, tok, tok_src):
    """--n-ctx applied, the tokenizer checked against the vocabulary, the model moved to --device."""
    if a.n_ctx:
        model.c.n_ctx = a.n_ctx
    if tok is not None and len(tok["tokens"]) != model.c.n_vocab:
        raise SystemExit(f"tokenizer ({tok_src}) has {len(tok['tokens'])} tokens, model vocab {model.c.n_vocab}")
    n_params = sum(p.numel() for p in model.parameters())
    log(f"model: {model.c.to_dict()} ({n_params / 1e6:.2f} M parameters)")
    model.to(a.device)
    if a.device != "cpu":
        model.use_sdpa()
        torch.backends.cuda.matmul.allow_tf32 = True
        log(f"device {a.device}: {torch.cuda.get_device_name()} (torch {torch.__version__}), bf16 autocast")


def make_packer(a, st, model):
    """The row packer over --data's --mix; the data's observation budget recorded in the state."""
    from data import Packer, parse_mix
    obs_budget = data_obs_budget(a.data)
    if st.get("max_obs_tokens") and obs_budget and obs_budget != st["max_obs_tokens"]:
        log(f"observation budget changed: {st['max_obs_tokens']} -> {obs_budget} tokens (the data's)")
    st["max_obs_tokens"] = obs_budget or st.get("max_obs_tokens")
    packer = Packer(a.data, parse_mix(a.mix), a.ctx_weight, st["data_seed"],
                    text_weight=a.text_weight, first_text_weight=a.first_text_weight)
    if packer.max_token() >= model.c.n_vocab:
        raise SystemExit(f"data has token id {packer.max_token()} >= vocab {model.c.n_vocab}")
    return packer


def make_resumed_optimizer(a, st, model, packer):
    """AdamW; from a checkpoint also its optimizer, packer (unless the data or mixture changed) and
    RNG states, else the RNG seeded with --seed."""
    from data import parse_mix
    opt = make_optimizer(a, model)
    if "optimizer" not in st:
        torch.manual_seed(a.seed)
        return opt
    opt.load_state_dict(st["optimizer"])
    mixture = {"data": os.path.abspath(a.data), "mix": parse_mix(a.mix)}
    if st.get("mixture", mixture) == mixture:
        packer.load_state(st["data"])
    else:  # the pooled (dataset, sequence) indices would name other sequences
        log(f"data or mixture changed since the checkpoint ({st['mixture']} -> {mixture}): a fresh pool")
        packer.rng = np.random.Generator(np.random.PCG64([st["data_seed"], st["step"]]))
    torch.set_rng_state(st["rng"]["torch"])
    np.random.set_state(st["rng"]["numpy"])
    random.setstate(st["rng"]["python"])
    return opt


def stop_on_signals():
    """SIGTERM / SIGINT: stop after this step with a checkpoint (a second one: KeyboardInterrupt).
    The returned dict's "sig" is the signal once one came."""
    stop = {"sig": None}

    def on_signal(sig, _frame):
        if stop["sig"] is not None:
            raise KeyboardInterrupt
        stop["sig"] = sig
        log(f"signal {sig}: checkpointing after this step")
    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    return stop


def checkpoint(a, st, model, opt, packer, tok):
    """Everything a resumed run needs, into --ckpt-dir/latest.pt (atomically)."""
    from data import parse_mix
    st.update(model=model.state_dict(), optimizer=opt.state_dict(), data=packer.state(),
              mixture={"data": os.path.abspath(a.data), "mix": parse_mix(a.mix)},
              config=model.c.to_dict(), tokenizer=tok,
              rng={"torch": torch.get_rng_state(), "numpy": np.random.get_state(), "python": random.getstate()},
              hparams={k: v for k, v in vars(a).items() if not k.startswith(("bench", "export"))})
    p = save_ckpt(a.ckpt_dir, st)
    log(f"checkpoint step {st['step']} -> {p}")


def csv_with_header(path, header):
    """path, with the header line written first if the file does not exist yet (a resumed run appends)."""
    if not os.path.exists(path):
        with open(path, "w") as f:
            f.write(header)
    return path


EVAL_CSV_HEADER = "step,tokens,n,exact,token_acc,target_loss\n"


class HeldoutEvals:
    """--eval-data's held-out set (into CKPT/eval.csv and the state's evals) and the --watch sets (each
    into its own csv), measured by run(); enabled only with --eval-data."""

    def __init__(self, a):
        self.a = a
        self.heldout = None
        self.watched = []  # (label, dataset, csv path)
        if a.eval_data or a.watch:
            from heldout import load_heldout
        if a.eval_data:
            self.heldout = load_heldout(a.eval_data)
            self.ecsv = csv_with_header(os.path.join(a.ckpt_dir, "eval.csv"), EVAL_CSV_HEADER)
        for label, wdir, wset, wcsv in watch_specs(a.watch, a.ckpt_dir):
            csv_with_header(wcsv, EVAL_CSV_HEADER)
            self.watched.append((label, load_heldout(wdir, wset), wcsv))

    @property
    def enabled(self):
        return self.heldout is not None

    def run(self, model, st):
        from heldout import evaluate, text_summary
        a = self.a
        for label, wds, wcsv in self.watched:
            r = evaluate(model, wds, a.eval_n)
            log(f"held-out {label} step {st['step']}: exact {r['exact']:.3f} token_acc {r['token_acc']:.3f} "
                f"target_loss {r['target_loss']:.3f} (n {r['n']}){text_summary(r)}")
            with open(wcsv, "a") as f:
                f.write(f"{st['step']},{st['tokens']},{r['n']},{r['exact']:.4f},{r['token_acc']:.4f},"
                        f"{r['target_loss']:.4f}\n")
        t0 = time.time()
        r = evaluate(model, self.heldout, a.eval_n)
        r.update(step=st["step"], tokens=st["tokens"])
        st.setdefault("evals", []).append(r)
        log(f"held-out step {r['step']}: exact {r['exact']:.3f} token_acc {r['token_acc']:.3f} "
            f"target_loss {r['target_loss']:.3f} (n {r['n']}, {time.time() - t0:.0f} s){text_summary(r)}")
        with open(self.ecsv, "a") as f:
            f.write(f"{r['step']},{r['tokens']},{r['n']},{r['exact']:.4f},{r['token_acc']:.4f},{r['target_loss']:.4f}\n")


class LossLog:
    """The steps' losses averaged over each --log-every steps: a row into the state's history, the log
    and CKPT/loss.csv."""
    COLUMNS = ("step", "tokens", "target_tokens", "ctx", "rows", "loss", "target_loss", "lr", "tok_per_s", "fill",
               "wall_s")

    def __init__(self, a):
        self.csv = csv_with_header(os.path.join(a.ckpt_dir, "loss.csv"), ",".join(self.COLUMNS) + "\n")
        self.reset()

    def reset(self):
        self.acc = {"loss": 0.0, "tloss": 0.0, "n": 0, "tok": 0, "fill": 0, "t": time.time()}

    def add(self, loss, tloss, R, T, filled):
        acc = self.acc
        acc["loss"] += loss
        acc["tloss"] += tloss
        acc["n"] += 1
        acc["tok"] += R * T
        acc["fill"] += filled / (R * (T + 1))

    def flush(self, st, T, R, lr):
        acc = self.acc
        dt = time.time() - acc["t"]
        row = {"step": st["step"], "tokens": st["tokens"], "target_tokens": st["target_tokens"], "ctx": T,
               "rows": R, "loss": acc["loss"] / acc["n"], "target_loss": acc["tloss"] / acc["n"], "lr": lr,
               "tok_per_s": acc["tok"] / dt, "fill": acc["fill"] / acc["n"], "wall_s": st["wall"]}
        st["history"].append(row)
        log(f"step {row['step']} tok {row['tokens']} ctx {T}x{R} loss {row['loss']:.4f} "
            f"target {row['target_loss']:.4f} lr {lr:.2e} {row['tok_per_s']:.0f} tok/s fill {row['fill']:.2f}")
        with open(self.csv, "a") as f:
            f.write(",".join(f"{row[k]:.6g}" if isinstance(row[k], float) else str(row[k])
                             for k in self.COLUMNS) + "\n")
        self.reset()


def train_loop(a, st, model, opt, packer, tok, sched, stop, losses, evals):
    """Steps until --max-steps, this run's --steps or --minutes, or a signal; logging every --log-every,
    evaluating every --eval-every and checkpointing every --ckpt-minutes."""
    batches = step_rows(a, packer, sched, st["step"])
    t_start = time.time()
    wall0 = st["wall"]
    last_ckpt = time.time()
    losses.reset()
    step0 = st["step"]
    while st["step"] < a.max_steps and stop["sig"] is None:
        if a.steps and st["step"] - step0 >= a.steps:
            break
        if a.minutes and time.time() - t_start >= a.minutes * 60:
            log(f"time budget of {a.minutes} min reached")
            break
        T, R, lr = take_step(a, st, model, opt, next(batches), t_start, wall0, losses)
        if st["step"] % a.log_every == 0 or st["step"] == a.max_steps:
            losses.flush(st, T, R, lr)
        if evals.enabled and st["step"] % a.eval_every == 0:
            evals.run(model, st)
        if time.time() - last_ckpt >= a.ckpt_minutes * 60:
            checkpoint(a, st, model, opt, packer, tok)
            last_ckpt = time.time()


def take_step(a, st, model, opt, batch, t_start, wall0, losses):
    """One optimizer step on the step's packed rows; the state's counters and the loss log advanced.
    Returns (ctx, rows, lr)."""
    T, R, (tk, w, tg, filled, seg, pos) = batch
    model.attn_chunk = auto_chunk(a, T)
    if not a.doc_mask:
        seg = pos = None
    lr = lr_at(a, st["step"], (time.time() - t_start) / (a.minutes * 60) if a.lr_by_time else None)
    loss, tloss = train_step(model, opt, tk, w, tg, max(1, a.micro_tokens // T), lr, a.clip, seg, pos,
                             a.ctx_sample, np.random.default_rng([st["data_seed"], st["step"]]),
                             device=a.device, amp=a.device != "cpu")
    st["step"] += 1
    st["tokens"] += R * T
    st["target_tokens"] += int(tg.sum())
    st["wall"] = wall0 + time.time() - t_start
    losses.add(loss, tloss, R, T, filled)
    return T, R, lr


if __name__ == "__main__":
    main()
