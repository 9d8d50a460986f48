# gguf_read.py: reads a GGUF (v2/v3) file back: metadata as Python values and F32 / F16
# tensors as float32 numpy arrays in torch layout (shape = reversed ne). Enough to
# initialise training from a committed model and to check what gguf_write produced.
import struct

import numpy as np

_FMT = {0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 6: "<f", 7: "<B",
        10: "<Q", 11: "<q", 12: "<d"}
STRING, ARRAY = 8, 9


class _Cursor:
    def __init__(self, buf):
        self.buf, self.pos = buf, 0

    def take(self, fmt):
        v = struct.unpack_from(fmt, self.buf, self.pos)
        self.pos += struct.calcsize(fmt)
        return v[0]

    def string(self):
        n = self.take("<Q")
        s = bytes(self.buf[self.pos:self.pos + n]).decode("utf-8", errors="replace")
        self.pos += n
        return s

    def value(self, vtype):
        if vtype == STRING:
            return self.string()
        if vtype == ARRAY:
            etype, n = self.take("<I"), self.take("<Q")
            return [self.value(etype) for _ in range(n)]
        v = self.take(_FMT[vtype])
        return bool(v) if vtype == 7 else v


def read_gguf(path, want_tensors=True):
    """Returns (metadata dict, {name: float32 numpy array})."""
    buf = np.memmap(path, dtype=np.uint8, mode="r")
    c = _Cursor(buf)
    if bytes(buf[:4]) != b"GGUF":
        raise ValueError(f"{path}: not a GGUF file")
    c.pos = 4
    version, n_tensors, n_kv = c.take("<I"), c.take("<Q"), c.take("<Q")
    if version not in (2, 3):
        raise ValueError(f"{path}: unsupported GGUF version {version}")
    meta = {}
    for _ in range(n_kv):
        key = c.string()
        meta[key] = c.value(c.take("<I"))
    infos = []
    for _ in range(n_tensors):
        name = c.string()
        nd = c.take("<I")
        ne = [c.take("<Q") for _ in range(nd)]
        infos.append((name, ne, c.take("<I"), c.take("<Q")))
    align = int(meta.get("general.alignment", 32))
    base = (c.pos + align - 1) // align * align
    tensors = {}
    if want_tensors:
        for name, ne, gtype, off in infos:
            if gtype not in (0, 1):
                raise ValueError(f"{path}: tensor {name} has type {gtype} (only F32/F16 read)")
            dt = np.float32 if gtype == 0 else np.float16
            n = int(np.prod(ne))
            a = np.frombuffer(buf, dtype=dt, count=n, offset=base + off)
            tensors[name] = a.astype(np.float32).reshape(list(reversed(ne)))
    return meta, tensors


def tokenizer_from_gguf(meta):
    """The tokenizer.json dict (gguf_write.set_tokenizer's input) of a GGUF's tokenizer.ggml.*
    keys, so that training can go on from a model file alone; None if it has no tokens."""
    if "tokenizer.ggml.tokens" not in meta:
        return None
    tok = {"model": meta.get("tokenizer.ggml.model", "gpt2"), "tokens": list(meta["tokenizer.ggml.tokens"])}
    if "tokenizer.ggml.pre" in meta:
        tok["pre"] = meta["tokenizer.ggml.pre"]
    if "tokenizer.ggml.token_type" in meta:
        tok["token_types"] = list(meta["tokenizer.ggml.token_type"])
    if "tokenizer.ggml.merges" in meta:
        tok["merges"] = list(meta["tokenizer.ggml.merges"])
    for key in ("bos", "eos"):
        if f"tokenizer.ggml.{key}_token_id" in meta:
            tok[key + "_token_id"] = int(meta[f"tokenizer.ggml.{key}_token_id"])
    if "tokenizer.ggml.add_bos_token" in meta:
        tok["add_bos"] = bool(meta["tokenizer.ggml.add_bos_token"])
    if "tokenizer.chat_template" in meta:
        tok["chat_template"] = meta["tokenizer.chat_template"]
    return tok


def tokenizer_of_file(path):
    """tokenizer_from_gguf of a GGUF file's metadata (its tensors are not read)."""
    return tokenizer_from_gguf(read_gguf(path, want_tensors=False)[0])
