"""A small decoder-only byte-level GPT whose linear layers are QuantLinear, and its corpus: the
Python standard library's .py sources (present wherever Python is, no download)."""

from __future__ import annotations

import math
import os
import sysconfig

import torch
import torch.nn.functional as F

from .layers import QuantContext, QuantLinear


class LayerNorm(torch.nn.Module):
    """LayerNorm from elementwise ops and per-row reductions: torch's fused CPU kernel sums the
    weight and bias gradients over rows in per-thread chunks, whose bits change with the thread
    count; here those sums run down each column in order, for any count."""

    def __init__(self, d: int, eps: float = 1e-5):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.ones(d))
        self.bias = torch.nn.Parameter(torch.zeros(d))
        self.eps = eps

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        mu = x.mean(-1, keepdim=True)
        xc = x - mu
        var = (xc * xc).mean(-1, keepdim=True)
        return xc * torch.rsqrt(var + self.eps) * self.weight + self.bias


class Block(torch.nn.Module):
    def __init__(self, d: int, heads: int, qctx: QuantContext, name: str):
        super().__init__()
        self.heads = heads
        self.ln1 = LayerNorm(d)
        self.qkv = QuantLinear(d, 3 * d, qctx, f"{name}.attn.qkv")
        self.proj = QuantLinear(d, d, qctx, f"{name}.attn.proj")
        self.ln2 = LayerNorm(d)
        self.fc = QuantLinear(d, 4 * d, qctx, f"{name}.mlp.fc")
        self.out = QuantLinear(4 * d, d, qctx, f"{name}.mlp.proj")

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        B, T, d = x.shape
        h = self.heads
        q, k, v = self.qkv(self.ln1(x)).split(d, dim=-1)
        q, k, v = (t.reshape(B, T, h, d // h).transpose(1, 2) for t in (q, k, v))
        # Plain attention (no fused kernel): every op has a deterministic CPU implementation.
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(d // h))
        att = att.masked_fill(mask[:T, :T], float("-inf")).softmax(dim=-1)
        y = (att @ v).transpose(1, 2).reshape(B, T, d)
        x = x + self.proj(y)
        return x + self.out(F.gelu(self.fc(self.ln2(x))))


class GPT(torch.nn.Module):
    """Byte-level GPT: token + position embeddings, `layers` pre-LN blocks, a final LayerNorm and
    lm_head. The quantized layers are named blocks.<i>.attn.{qkv,proj}, blocks.<i>.mlp.{fc,proj}
    and lm_head (the names --bf16-layers matches)."""

    def __init__(self, qctx: QuantContext, layers: int = 4, d_model: int = 128, heads: int = 4, context: int = 128):
        super().__init__()
        if d_model % heads:
            raise ValueError(f"--d-model {d_model} is not a multiple of --heads {heads}")
        self.context = context
        self.tok = torch.nn.Embedding(256, d_model)
        self.pos = torch.nn.Embedding(context, d_model)
        torch.nn.init.normal_(self.tok.weight, std=0.02)
        torch.nn.init.normal_(self.pos.weight, std=0.02)
        self.blocks = torch.nn.ModuleList(Block(d_model, heads, qctx, f"blocks.{i}") for i in range(layers))
        self.ln = LayerNorm(d_model)
        self.lm_head = QuantLinear(d_model, 256, qctx, "lm_head")
        self.register_buffer("mask", torch.triu(torch.ones(context, context, dtype=torch.bool), 1), persistent=False)

    def forward(self, idx: torch.Tensor, targets: torch.Tensor | None = None):
        T = idx.shape[1]
        x = self.tok(idx) + self.pos.weight[:T]
        for b in self.blocks:
            x = b(x, self.mask)
        logits = self.lm_head(self.ln(x))
        if targets is None:
            return logits
        return F.cross_entropy(logits.reshape(-1, 256), targets.reshape(-1))


def stdlib_files() -> list[str]:
    """The standard library's .py files, sorted by path relative to the stdlib folder
    (site-packages excluded: it differs between machines)."""
    root = sysconfig.get_paths()["stdlib"]
    out = []
    for d, dirs, files in os.walk(root):
        dirs[:] = sorted(x for x in dirs if x not in ("site-packages", "dist-packages", "__pycache__"))
        out += [os.path.relpath(os.path.join(d, f), root) for f in files if f.endswith(".py")]
    return [os.path.join(root, p) for p in sorted(out)]


def load_corpus(max_bytes: int = 8 << 20) -> bytes:
    """The first max_bytes bytes of the stdlib sources, concatenated in sorted order."""
    parts, n = [], 0
    for p in stdlib_files():
        with open(p, "rb") as f:
            b = f.read()
        parts.append(b)
        n += len(b)
        if n >= max_bytes:
            break
    data = b"".join(parts)[:max_bytes]
    if len(data) < 4096:
        raise ValueError(f"corpus: only {len(data)} bytes of .py sources under {sysconfig.get_paths()['stdlib']}")
    return data


class Corpus:
    """Train / validation split of the corpus bytes: the last val_fraction is validation. Training
    batches are random windows drawn with the run's generator; validation is a fixed set of
    evenly spaced windows."""

    def __init__(self, data: bytes, context: int, val_fraction: float = 0.1):
        t = torch.frombuffer(bytearray(data), dtype=torch.uint8).to(torch.long)
        cut = int(len(t) * (1 - val_fraction))
        self.train, self.val, self.context = t[:cut], t[cut:], context
        if len(self.val) < context + 2:
            raise ValueError(f"corpus: validation split has {len(self.val)} bytes, needs > context {context}")

    def batch(self, gen: torch.Generator, batch: int):
        ix = torch.randint(0, len(self.train) - self.context - 1, (batch,), generator=gen)
        return self._windows(self.train, ix)

    def val_batches(self, batch: int, count: int):
        n = batch * count
        span = len(self.val) - self.context - 1
        ix = torch.tensor([span * i // n for i in range(n)], dtype=torch.long)
        return [self._windows(self.val, ix[i * batch:(i + 1) * batch]) for i in range(count)]

    def _windows(self, src: torch.Tensor, ix: torch.Tensor):
        off = torch.arange(self.context + 1)
        w = src[ix[:, None] + off[None, :]]
        return w[:, :-1].contiguous(), w[:, 1:].contiguous()
