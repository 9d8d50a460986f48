#!/usr/bin/python3
"""transplant_vocab.py: moves a trained model onto a new vocabulary, so that training on data
encoded with the new vocabulary starts from the old weights instead of from random ones.

    transplant_vocab.py --model OLD.gguf --vocab NEW.gguf --out OUT.gguf

Every tensor but the embedding (tied: it is also the output projection) is kept as it is. Row
t of the new embedding [n_vocab_new, dim] comes from the old one by the token's text (GPT-2
byte-character form, as both files store it):
  1. the old token of the same text ("Books" -> "Books");
  2. else the old token of the same text after a space ("listings" -> "Ġlistings"): the
     letters-apart vocabulary (`train-tokenizer --letters-apart`) keeps words without their
     space, which the old vocabulary had only with it;
  3. else the mean of the old tokens that cover the text, longest first from the left (the
     old vocabulary's byte tokens cover any text).
The new file takes OLD's metadata but the tokenizer (NEW's) and a recipe line that records
the transplant (counts per rule); the model's shape must fit (same dim; any vocabulary sizes).
"""
import argparse
import json
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from gguf_read import read_gguf, tokenizer_from_gguf, tokenizer_of_file  # noqa: E402

SPACE = "\u0120"  # "Ġ": the space byte in GPT-2's byte-character form


def transplant_sources(old_tokens, new_tokens):
    """For each new token: (rule, [old ids]) with rule "same", "space" or "pieces"."""
    old_id = {}
    for i, t in enumerate(old_tokens):
        old_id.setdefault(t, i)
    longest = max(len(t) for t in old_tokens)
    out = []
    for t in new_tokens:
        if t in old_id:
            out.append(("same", [old_id[t]]))
        elif SPACE + t in old_id:
            out.append(("space", [old_id[SPACE + t]]))
        else:
            ids, pos = [], 0
            while pos < len(t):
                for n in range(min(longest, len(t) - pos), 0, -1):
                    if t[pos:pos + n] in old_id:
                        ids.append(old_id[t[pos:pos + n]])
                        pos += n
                        break
                else:
                    raise ValueError(f"new token {t!r}: {t[pos]!r} is no token of the old vocabulary")
            out.append(("pieces", ids))
    return out


def transplant_embedding(old_emb, sources):
    """old_emb [n_old, dim] -> new [len(sources), dim] (float32)."""
    new = np.empty((len(sources), old_emb.shape[1]), dtype=np.float32)
    for t, (_, ids) in enumerate(sources):
        new[t] = old_emb[ids].mean(axis=0)
    return new


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--model", required=True, help="trained llama GGUF (old vocabulary)")
    p.add_argument("--vocab", required=True, help="GGUF holding the new vocabulary (vocabulary-only is fine)")
    p.add_argument("--out", required=True, help="the new model file")
    a = p.parse_args(argv)

    import torch  # noqa: F401  (model.py needs it)
    from model import load_gguf_model
    from gguf_write import write_llama_gguf

    model, meta = load_gguf_model(a.model)
    old_tok = tokenizer_from_gguf(meta)
    new_tok = tokenizer_of_file(a.vocab)
    if old_tok is None or new_tok is None:
        raise SystemExit("both files need a tokenizer (tokenizer.ggml.tokens)")
    sources = transplant_sources(old_tok["tokens"], new_tok["tokens"])
    state = model.gguf_state()
    state["token_embd.weight"] = transplant_embedding(state["token_embd.weight"], sources)
    if "output.weight" in state:
        state["output.weight"] = transplant_embedding(state["output.weight"], sources)
    model.c.n_vocab = len(new_tok["tokens"])
    counts = {r: sum(1 for s in sources if s[0] == r) for r in ("same", "space", "pieces")}
    recipe = {"transplant": {"model": os.path.basename(a.model), "vocab": os.path.basename(a.vocab),
                             "rows": counts}}
    if "kvarena.train.recipe" in meta:
        recipe["parent_recipe"] = json.loads(meta["kvarena.train.recipe"])
    write_llama_gguf(a.out, model.c, state, tokenizer=new_tok, name=meta.get("general.name", "kvarena-agent"),
                     recipe=recipe)
    print(json.dumps({"out": a.out, "n_vocab": model.c.n_vocab, "rows": counts}))


if __name__ == "__main__":
    main()
