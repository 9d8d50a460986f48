# gguf_write.py: a small GGUF v3 writer (the subset the engine's gguf-reader accepts):
# header, typed metadata (scalars, strings, arrays), tensor infos with offsets aligned to
# general.alignment (32), F32 / F16 tensor data. Also turns a tokenizer.json into the
# tokenizer.ggml.* keys and a llama state dict into a model file (write_llama_gguf).
import json
import os
import struct

import numpy as np

# GGUF metadata value types (engine/model/gguf-reader.h: gguf_vtype).
U8, I8, U16, I16, U32, I32, F32, BOOL, STRING, ARRAY, U64, I64, F64 = range(13)
# ggml tensor types.
GGML_F32, GGML_F16 = 0, 1
ALIGN = 32

_SCALAR_FMT = {U8: "<B", I8: "<b", U16: "<H", I16: "<h", U32: "<I", I32: "<i", F32: "<f",
               BOOL: "<B", U64: "<Q", I64: "<q", F64: "<d"}


def _str(s):
    b = s.encode("utf-8")
    return struct.pack("<Q", len(b)) + b


class GGUFWriter:
    def __init__(self):
        self.kv = {}        # key -> encoded (type, payload); insertion order kept
        self.tensors = []   # (name, ggml type, ne list, bytes)

    def set(self, key, vtype, value):
        if vtype == STRING:
            payload = _str(value)
        elif vtype == ARRAY:
            etype, items = value
            payload = struct.pack("<IQ", etype, len(items))
            if etype == STRING:
                payload += b"".join(_str(s) for s in items)
            else:
                payload += np.asarray(items, dtype=np.dtype(_SCALAR_FMT[etype])).tobytes()
        else:
            payload = struct.pack(_SCALAR_FMT[vtype], value)
        self.kv[key] = (vtype, payload)

    def set_u32(self, k, v): self.set(k, U32, int(v))
    def set_f32(self, k, v): self.set(k, F32, float(v))
    def set_bool(self, k, v): self.set(k, BOOL, 1 if v else 0)
    def set_string(self, k, v): self.set(k, STRING, v)
    def set_strings(self, k, v): self.set(k, ARRAY, (STRING, list(v)))
    def set_i32s(self, k, v): self.set(k, ARRAY, (I32, list(v)))

    def add_tensor(self, name, array, f16=False):
        """array: numpy, torch layout ([out][in] for matrices); ne is the reversed shape."""
        a = np.ascontiguousarray(array, dtype=np.float16 if f16 else np.float32)
        ne = list(reversed(a.shape))
        self.tensors.append((name, GGML_F16 if f16 else GGML_F32, ne, a.tobytes()))

    def write(self, path):
        self.set_u32("general.alignment", ALIGN)
        h = bytearray(struct.pack("<IIQQ", 0x46554747, 3, len(self.tensors), len(self.kv)))
        for key, (vtype, payload) in self.kv.items():
            h += _str(key) + struct.pack("<I", vtype) + payload
        off = 0
        for name, gtype, ne, data in self.tensors:
            h += _str(name) + struct.pack("<I", len(ne)) + struct.pack(f"<{len(ne)}Q", *ne)
            h += struct.pack("<IQ", gtype, off)
            off += (len(data) + ALIGN - 1) // ALIGN * ALIGN
        h += b"\0" * ((-len(h)) % ALIGN)
        tmp = path + ".tmp"
        with open(tmp, "wb") as f:
            f.write(h)
            for _, _, _, data in self.tensors:
                f.write(data)
                f.write(b"\0" * ((-len(data)) % ALIGN))
        os.replace(tmp, path)


def set_tokenizer(w, tok):
    """tok: the dict of a tokenizer.json (model, pre, tokens, token_types, merges, ...)."""
    w.set_string("tokenizer.ggml.model", tok.get("model", "gpt2"))
    if tok.get("pre"):
        w.set_string("tokenizer.ggml.pre", tok["pre"])
    w.set_strings("tokenizer.ggml.tokens", tok["tokens"])
    types = tok.get("token_types") or [1] * len(tok["tokens"])
    w.set_i32s("tokenizer.ggml.token_type", types)
    if "merges" in tok:  # written even when empty: a gpt2 tokenizer needs the key
        w.set_strings("tokenizer.ggml.merges", tok["merges"])
    for key in ("bos", "eos"):
        v = tok.get(key + "_token_id", -1)
        if v is not None and v >= 0:
            w.set_u32(f"tokenizer.ggml.{key}_token_id", v)
    if "add_bos" in tok:
        w.set_bool("tokenizer.ggml.add_bos_token", tok["add_bos"])
    w.set_bool("tokenizer.ggml.add_eos_token", False)
    if tok.get("chat_template"):
        w.set_string("tokenizer.chat_template", tok["chat_template"])


def write_llama_gguf(path, cfg, state, tokenizer=None, name="kvarena-agent", recipe=None,
                     f16=True, extra_strings=None, max_obs_tokens=None, history=None):
    """cfg: model.LlamaConfig; state: name -> numpy array in GGUF tensor naming.
    max_obs_tokens: the observation budget the model was trained with (kvarena.max_obs_tokens,
    which `kvarena run` uses unless --max-obs-tokens is given).
    history: "last" or "full", the history mode its figures are measured in (kvarena.history,
    `kvarena run`'s default for it unless --history is given)."""
    w = GGUFWriter()
    w.set_string("general.architecture", "llama")
    w.set_string("general.name", name)
    w.set_u32("general.file_type", 1 if f16 else 0)
    a = "llama."
    w.set_u32(a + "context_length", cfg.n_ctx)
    w.set_u32(a + "embedding_length", cfg.dim)
    w.set_u32(a + "block_count", cfg.n_layers)
    w.set_u32(a + "feed_forward_length", cfg.ffn_dim)
    w.set_u32(a + "attention.head_count", cfg.n_heads)
    w.set_u32(a + "attention.head_count_kv", cfg.n_kv_heads)
    w.set_f32(a + "attention.layer_norm_rms_epsilon", cfg.norm_eps)
    w.set_u32(a + "rope.dimension_count", cfg.head_dim)
    w.set_f32(a + "rope.freq_base", cfg.rope_base)
    if tokenizer is not None:
        set_tokenizer(w, tokenizer)
    w.set_string("kvarena.prompt_style", "compact")
    if max_obs_tokens:
        w.set_u32("kvarena.max_obs_tokens", max_obs_tokens)
    if history:
        if history not in ("last", "full"):
            raise ValueError(f"history {history!r}: expected last or full")
        w.set_string("kvarena.history", history)
    if recipe is not None:
        w.set_string("kvarena.train.recipe", json.dumps(recipe, sort_keys=True))
    for k, v in (extra_strings or {}).items():
        w.set_string(k, v)
    for tname, arr in state.items():
        w.add_tensor(tname, arr, f16=f16 and arr.ndim == 2)  # norms stay F32
    w.write(path)
