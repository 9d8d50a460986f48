# model.py: the llama model of the engine (engine/cpu/model-forward-llama.cpp) in PyTorch:
# RMSNorm (x / sqrt(mean(x^2) + eps) * w), Q/K/V without biases, RoPE on ADJACENT pairs
# (2i, 2i+1) with theta = pos * base^(-2i/rope_dims) (angles in float64, cos/sin rounded
# to float32 as the engine does), causal GQA attention where query head h reads KV head
# h // (n_heads / n_kv_heads), scale 1/sqrt(head_dim), SwiGLU FFN (silu(gate) * up), final
# RMSNorm and tied embeddings (token_embd is the output matrix when output.weight is
# absent). Weights are named and shaped as in GGUF ([out][in], as nn.Linear).
import math
from dataclasses import dataclass, asdict

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


@dataclass
class LlamaConfig:
    dim: int = 256
    n_layers: int = 4
    n_heads: int = 4
    n_kv_heads: int = 2
    ffn_dim: int = 704
    n_vocab: int = 4096
    n_ctx: int = 4096          # llama.context_length written to the GGUF
    norm_eps: float = 1e-5
    rope_base: float = 10000.0
    tied: bool = True

    @property
    def head_dim(self):
        return self.dim // self.n_heads

    def to_dict(self):
        return asdict(self)

    @staticmethod
    def from_gguf_meta(meta, n_vocab, tied):
        a = "llama."
        n_heads = int(meta[a + "attention.head_count"])
        return LlamaConfig(
            dim=int(meta[a + "embedding_length"]), n_layers=int(meta[a + "block_count"]),
            n_heads=n_heads, n_kv_heads=int(meta.get(a + "attention.head_count_kv", n_heads)),
            ffn_dim=int(meta[a + "feed_forward_length"]), n_vocab=n_vocab,
            n_ctx=int(meta[a + "context_length"]),
            norm_eps=float(meta.get(a + "attention.layer_norm_rms_epsilon", 1e-5)),
            rope_base=float(meta.get(a + "rope.freq_base", 10000.0)), tied=tied)


class RMSNorm(nn.Module):
    def __init__(self, dim, eps):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


def rope_tables(n, head_dim, base, pos0=0):
    """cos, sin of shape (n, head_dim/2): float64 angles, rounded to float32."""
    j = torch.arange(head_dim // 2, dtype=torch.float64)
    inv = torch.pow(torch.tensor(float(np.float32(base)), dtype=torch.float64), -2.0 * j / head_dim)
    theta = torch.arange(pos0, pos0 + n, dtype=torch.float64)[:, None] * inv[None, :]
    return torch.cos(theta).float(), torch.sin(theta).float()


def apply_rope(x, cos, sin):
    """x: (B, T, H, hd); pairs (2i, 2i+1) rotate by theta_i. cos/sin: (T, hd/2) for
    positions 0..T-1, or (B, T, hd/2) gathered per token (packed documents)."""
    B, T, H, hd = x.shape
    xp = x.view(B, T, H, hd // 2, 2)
    x0, x1 = xp[..., 0], xp[..., 1]
    if cos.dim() == 3:
        c, s = cos[:, :, None, :], sin[:, :, None, :]
    else:
        c, s = cos[:T, None, :], sin[:T, None, :]
    return torch.stack((x0 * c - x1 * s, x0 * s + x1 * c), dim=-1).view(B, T, H, hd)


def causal_attention(q, k, v, scale, mask, chunk=0):
    """q: (B, KVH, G, T, hd), k/v: (B, KVH, T, hd); mask: (T, T) or (B, 1, 1, T, T)
    additive (0 / -inf).
    chunk > 0 splits the queries into blocks that skip the keys after the block."""
    B, KVH, G, T, hd = q.shape
    if chunk <= 0 or chunk >= T:
        s = torch.matmul(q.reshape(B, KVH, G * T, hd), k.transpose(-1, -2)).view(B, KVH, G, T, T)
        p = torch.softmax(s * scale + mask, dim=-1)
        return torch.matmul(p.view(B, KVH, G * T, T), v).view(B, KVH, G, T, hd)
    outs = []
    for a in range(0, T, chunk):
        b = min(T, a + chunk)
        qb = q[:, :, :, a:b].reshape(B, KVH, G * (b - a), hd)
        s = torch.matmul(qb, k[:, :, :b].transpose(-1, -2)).view(B, KVH, G, b - a, b)
        p = torch.softmax(s * scale + mask[..., a:b, :b], dim=-1)
        outs.append(torch.matmul(p.view(B, KVH, G * (b - a), b), v[:, :, :b]).view(B, KVH, G, b - a, hd))
    return torch.cat(outs, dim=3)


def sdpa(q, k, v, allowed, scale):
    """q/k/v (B, H, T, hd), allowed: boolean (T, T) or (B, 1, T, T), True where a query may
    attend. torch >= 2.1's fused kernel; older torch (Debian's 1.13) the same sum written out."""
    if hasattr(F, "scaled_dot_product_attention"):
        return F.scaled_dot_product_attention(q, k, v, attn_mask=allowed, scale=scale)
    s = torch.matmul(q, k.transpose(-1, -2)) * scale
    return torch.matmul(torch.softmax(s.masked_fill(~allowed, float("-inf")), dim=-1), v)


def segment_bounds(seg):
    """seg: (B, T) document index of each token -> per row, the [start, end) of each run of
    one document: [[(0, 480), (480, 1536)], ...]."""
    s = seg.numpy()
    out = []
    for row in s:
        cut = [0] + (np.flatnonzero(row[1:] != row[:-1]) + 1).tolist() + [len(row)]
        out.append(list(zip(cut[:-1], cut[1:])))
    return out


def segmented_attention(q, k, v, scale, causal, chunk, bounds):
    """causal_attention over packed rows, each document alone: q (B, KVH, G, T, hd), k/v
    (B, KVH, T, hd), causal (T, T) additive mask, bounds from segment_bounds. The same
    result as the (B, 1, 1, T, T) document mask, without the scores between documents
    (a row of 1536 tokens packing 3 documents computes a third of them)."""
    rows = []
    for b, runs in enumerate(bounds):
        parts = [causal_attention(q[b:b + 1, :, :, s:e], k[b:b + 1, :, s:e], v[b:b + 1, :, s:e], scale,
                                  causal[:e - s, :e - s], chunk) for s, e in runs]
        rows.append(torch.cat(parts, dim=3))
    return torch.cat(rows, dim=0)


class Block(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.c = c
        kv = c.n_kv_heads * c.head_dim
        self.attn_norm = RMSNorm(c.dim, c.norm_eps)
        self.wq = nn.Linear(c.dim, c.dim, bias=False)
        self.wk = nn.Linear(c.dim, kv, bias=False)
        self.wv = nn.Linear(c.dim, kv, bias=False)
        self.wo = nn.Linear(c.dim, c.dim, bias=False)
        self.ffn_norm = RMSNorm(c.dim, c.norm_eps)
        self.w_gate = nn.Linear(c.dim, c.ffn_dim, bias=False)
        self.w_up = nn.Linear(c.dim, c.ffn_dim, bias=False)
        self.w_down = nn.Linear(c.ffn_dim, c.dim, bias=False)

    def forward(self, x, cos, sin, mask, chunk, bounds=None):
        """mask: additive (0 / -inf) for the reference paths, boolean "may attend" for SDPA
        (Llama.use_sdpa)."""
        c = self.c
        B, T, D = x.shape
        hd, H, KVH = c.head_dim, c.n_heads, c.n_kv_heads
        h = self.attn_norm(x)
        q = apply_rope(self.wq(h).view(B, T, H, hd), cos, sin)
        k = apply_rope(self.wk(h).view(B, T, KVH, hd), cos, sin)
        v = self.wv(h).view(B, T, KVH, hd)
        # (B, T, H, hd) -> (B, KVH, G, T, hd): head h = g * G + j belongs to KV head g.
        q = q.view(B, T, KVH, H // KVH, hd).permute(0, 2, 3, 1, 4)
        k = k.transpose(1, 2)
        v = v.transpose(1, 2)
        if mask.dtype == torch.bool:
            # (B, KVH, G, T, hd) -> (B, H, T, hd); KV head g repeated for its G query heads.
            o = sdpa(q.reshape(B, H, T, hd), k.repeat_interleave(H // KVH, dim=1),
                     v.repeat_interleave(H // KVH, dim=1), mask, 1.0 / math.sqrt(hd)).view(B, KVH, H // KVH, T, hd)
        elif bounds is None:
            o = causal_attention(q, k, v, 1.0 / math.sqrt(hd), mask, chunk)
        else:
            o = segmented_attention(q, k, v, 1.0 / math.sqrt(hd), mask, chunk, bounds)
        x = x + self.wo(o.permute(0, 3, 1, 2, 4).reshape(B, T, D))
        h = self.ffn_norm(x)
        return x + self.w_down(F.silu(self.w_gate(h)) * self.w_up(h))


class Llama(nn.Module):
    def __init__(self, c: LlamaConfig):
        super().__init__()
        self.c = c
        self.tok_embd = nn.Embedding(c.n_vocab, c.dim)
        self.layers = nn.ModuleList([Block(c) for _ in range(c.n_layers)])
        self.norm = RMSNorm(c.dim, c.norm_eps)
        self.output = None if c.tied else nn.Linear(c.dim, c.n_vocab, bias=False)
        self.attn_chunk = 0
        # Packed rows: attention per document (True) or over the row with a document mask.
        self.segment_attention = True
        self._tables = {}
        self.sdpa = False

    def use_sdpa(self, on=True):
        """Attention through F.scaled_dot_product_attention with a boolean (T, T) causal or
        (B, 1, T, T) causal-and-same-document mask, one call per layer: the GPU path (the
        per-document loop of segmented_attention launches too many small kernels there)."""
        self.sdpa = on
        self._tables = {}
        return self

    def init_random(self, seed, std=0.02):
        g = torch.Generator().manual_seed(seed)
        with torch.no_grad():
            for name, p in self.named_parameters():
                if p.ndim == 1:
                    p.fill_(1.0)
                else:
                    s = std / math.sqrt(2 * self.c.n_layers) if name.endswith(("wo.weight", "w_down.weight")) else std
                    p.copy_(torch.randn(p.shape, generator=g) * s)

    def _rope_mask(self, T, device):
        if (T, device) not in self._tables:
            cos, sin = rope_tables(T, self.c.head_dim, self.c.rope_base)
            if self.sdpa:
                mask = torch.ones((T, T), dtype=torch.bool).tril()      # True: may attend
            else:
                mask = torch.full((T, T), float("-inf")).triu(1)         # additive
            self._tables = {(T, device): (cos.to(device), sin.to(device), mask.to(device))}  # one length at a time
        return self._tables[(T, device)]

    def hidden(self, tokens, seg=None, pos=None):
        """tokens: (B, T). seg/pos (B, T), optional: the packed document of each token and
        its position in it; a token then attends only to earlier tokens of its own
        document and is rotated by its own position, as if each document ran alone."""
        cos, sin, mask = self._rope_mask(tokens.shape[1], tokens.device)
        bounds = None
        if seg is not None:
            if self.sdpa:
                mask = ((seg[:, :, None] == seg[:, None, :]) & mask)[:, None]  # (B, 1, T, T)
            elif self.segment_attention:
                bounds = segment_bounds(seg)                               # mask stays (T, T) causal
            else:
                same = seg[:, :, None] == seg[:, None, :]                  # (B, T, T)
                allowed = same & (mask == 0)                               # and causal
                mask = torch.zeros(same.shape).masked_fill_(~allowed, float("-inf"))[:, None, None]
            cos, sin = cos[pos], sin[pos]                                  # (B, T, hd/2)
        x = self.tok_embd(tokens)
        for layer in self.layers:
            x = layer(x, cos, sin, mask, self.attn_chunk, bounds)
        return self.norm(x)

    def logits(self, h):
        w = self.tok_embd.weight if self.output is None else self.output.weight
        return F.linear(h, w)

    def forward(self, tokens, seg=None, pos=None):
        return self.logits(self.hidden(tokens, seg, pos))

    # GGUF naming: name -> parameter.
    def gguf_params(self):
        out = {"token_embd.weight": self.tok_embd.weight, "output_norm.weight": self.norm.weight}
        if self.output is not None:
            out["output.weight"] = self.output.weight
        for l, L in enumerate(self.layers):
            p = f"blk.{l}."
            out.update({p + "attn_norm.weight": L.attn_norm.weight, p + "attn_q.weight": L.wq.weight,
                        p + "attn_k.weight": L.wk.weight, p + "attn_v.weight": L.wv.weight,
                        p + "attn_output.weight": L.wo.weight, p + "ffn_norm.weight": L.ffn_norm.weight,
                        p + "ffn_gate.weight": L.w_gate.weight, p + "ffn_up.weight": L.w_up.weight,
                        p + "ffn_down.weight": L.w_down.weight})
        return out

    def gguf_state(self):
        return {k: v.detach().cpu().numpy().astype(np.float32) for k, v in self.gguf_params().items()}

    def load_gguf_state(self, tensors):
        with torch.no_grad():
            for k, p in self.gguf_params().items():
                if k not in tensors:
                    raise KeyError(f"tensor {k} missing from the GGUF")
                t = torch.from_numpy(np.asarray(tensors[k], dtype=np.float32))
                if tuple(t.shape) != tuple(p.shape):
                    raise ValueError(f"tensor {k}: shape {tuple(t.shape)}, model wants {tuple(p.shape)}")
                p.copy_(t)


def load_gguf_model(path):
    """(model, metadata) from a llama GGUF (F32/F16 tensors)."""
    from gguf_read import read_gguf
    meta, tensors = read_gguf(path)
    if meta.get("general.architecture") != "llama":
        raise ValueError(f"{path}: architecture {meta.get('general.architecture')}, want llama")
    n_vocab = tensors["token_embd.weight"].shape[0]
    cfg = LlamaConfig.from_gguf_meta(meta, n_vocab, tied="output.weight" not in tensors)
    if int(meta.get("llama.rope.dimension_count", cfg.head_dim)) != cfg.head_dim:
        raise ValueError("rope.dimension_count != head_dim is not supported by model.py")
    m = Llama(cfg)
    m.load_gguf_state(tensors)
    return m, meta
