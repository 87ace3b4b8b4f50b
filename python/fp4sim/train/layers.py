"""The quantized linear layer: a torch autograd Function whose three GEMMs quantize their operands
along each GEMM's reduction axis (golden's linear_operand_options), and the QuantLinear module.

For X [T, in], W [out, in], dY [T, out] (linear.hpp's shapes, MMA convention D = A . B^T):
  Fprop  Y  = Q(X) . Q(W)^T       X along in (axis -1),   W along in (axis -1)
  Dgrad  dX = Q(dY) . Q(W)        dY along out (axis -1), W along out (axis 0)
  Wgrad  dW = Q(dY)^T . Q(X)      dY along T (axis 0),    X along T (axis 0)
gemm="float32" multiplies the fake-quantized operands with torch (FP32); gemm="hardware" quantizes
each operand to codes and scales with fp4sim.quantize along its reduction axis and runs fp4sim.mma
with the kind's hardware model (blackwell; ascend-hif4 for hif4), times the NVFP4 global scales.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import torch

import fp4sim

from . import recipe as R

# Test hooks: called with a dict per quantized operand / per GEMM (see _quant and _hw_gemm).
QUANT_HOOKS: list = []
GEMM_HOOKS: list = []


@dataclass
class QuantContext:
    """What every QuantLinear of a model shares: the recipe, the GEMM mode, the run seed, the
    optimizer step (the trainer advances it; SR bits change with it) and the thread count."""
    recipe: R.Recipe
    gemm: str = "float32"
    seed: int = 0
    threads: int = 1
    step: int = 0
    layers: list = field(default_factory=list)

    def __post_init__(self):
        if self.gemm not in ("float32", "hardware"):
            raise ValueError(f"--gemm: unknown mode '{self.gemm}' (expected float32 or hardware)")
        R.validate(self.recipe)

    def mode_of(self, name: str) -> str:
        """'none', 'bf16' or the block format for layer `name`."""
        r = self.recipe
        if r.format == "none":
            return "none"
        if r.format == "bf16" or any(name == p or name.startswith(p + ".") for p in r.bf16_layers):
            return "bf16"
        return r.block_format


def _bf16(t: torch.Tensor) -> torch.Tensor:
    return t.to(torch.bfloat16).to(torch.float32)


class _Operands:
    """One layer's options for one step (computed at Fprop, used again in the backward pass)."""

    def __init__(self, qctx: QuantContext, index: int, name: str):
        self.name, self.index, self.step = name, index, qctx.step
        self.mode = qctx.mode_of(name)
        self.gemm = qctx.gemm
        self.threads = qctx.threads
        self.opts = None
        if self.mode not in ("none", "bf16"):
            self.opts = R.operand_options(qctx.recipe, R.sr_seed(qctx.seed, index, qctx.step),
                                          R.rht_seed(qctx.seed, index))

    def quant(self, x: torch.Tensor, gemm: int, which: int, axis: int, out: torch.Tensor | None = None):
        """The fake-quantized operand (float32, x's shape) along `axis`."""
        if self.mode == "none":
            return x
        if self.mode == "bf16":
            return _bf16(x)
        kw = R.fake_quantize_kwargs(self.mode, self.opts[gemm][which])
        y = fp4sim.fake_quantize(x, self.mode, axis=axis, out=out, threads=self.threads, **kw)
        for h in QUANT_HOOKS:
            h({"layer": self.name, "step": self.step, "gemm": gemm, "operand": "ab"[which], "axis": axis,
               "format": self.mode, "kwargs": kw, "x": x, "out": y})
        return y

    def mm(self, a: torch.Tensor, b: torch.Tensor, gemm: int, a_axis: int, b_axis: int, bufs: dict):
        """D = A . B^T where A is the operand `a` quantized along a_axis and B the one of `b`
        along b_axis, both reducing over K: the layout each GEMM needs is given by the axes (-1:
        rows are K-major as is; 0: K runs down the rows, the operand is used transposed)."""
        if self.gemm == "hardware" and self.mode not in ("none", "bf16"):
            a2 = a if a_axis == -1 else a.t().contiguous()
            b2 = b if b_axis == -1 else b.t().contiguous()
            return _hw_gemm(a2, b2, self.mode, self.opts[gemm][0], self.opts[gemm][1], self.threads,
                            {"layer": self.name, "step": self.step, "gemm": gemm})
        qa = self.quant(a, gemm, 0, a_axis, _buf(bufs, (gemm, 0), a))
        qb = self.quant(b, gemm, 1, b_axis, _buf(bufs, (gemm, 1), b))
        qa = qa if a_axis == -1 else qa.t()
        qb = qb if b_axis == -1 else qb.t()
        return qa @ qb.t()


def _buf(bufs: dict | None, key, like: torch.Tensor):
    """A reusable output tensor for fake_quantize (fresh memory costs page faults every step)."""
    if bufs is None:
        return None
    b = bufs.get(key)
    if b is None or b.shape != like.shape:
        b = torch.empty(like.shape, dtype=torch.float32)
        bufs[key] = b
    return b


def _hw_gemm(a: torch.Tensor, b: torch.Tensor, fmt: str, oa: dict, ob: dict, threads: int, where: dict):
    """A [M, K] . B [N, K]^T through the bit-accurate MMA model of fmt's kind."""
    fi = fp4sim.FORMATS[fmt]
    qa = fp4sim.quantize(a.detach().numpy(), fmt, threads=threads, **R.quantize_kwargs(fmt, oa))
    qb = fp4sim.quantize(b.detach().numpy(), fmt, threads=threads, **R.quantize_kwargs(fmt, ob))
    # CUTLASS's epilogue alpha: one FP32 product of the two global scales (1 for non-NVFP4).
    alpha = float(np.float32(qa.global_scale[0]) * np.float32(qb.global_scale[0])) if fmt == "nvfp4" else 1.0
    d = fp4sim.mma(qa.codes, qb.codes, qa.scales, qb.scales, kind=fi["kind"], elem=fi["elem"],
                   scale_type=fi["scale"], block=fi["block"], alpha=alpha, threads=threads)
    for h in GEMM_HOOKS:
        h(dict(where, format=fmt, a=a, b=b, oa=oa, ob=ob, alpha=alpha, d=d))
    return torch.from_numpy(d)


class QuantLinearFunction(torch.autograd.Function):
    """Y = Q(X) Q(W)^T (+ bias) with the quantized Dgrad and Wgrad of the module docstring.
    x: [T, in] (C-contiguous float32), w: [out, in]."""

    @staticmethod
    def forward(ctx, x, w, bias, ops: _Operands, bufs: dict):
        x = x.contiguous()
        w = w.contiguous()
        y = ops.mm(x, w, R.FPROP, -1, -1, bufs)
        if bias is not None:
            y = y + bias
        ctx.save_for_backward(x, w)
        ctx.ops, ctx.bufs, ctx.has_bias = ops, bufs, bias is not None
        return y

    @staticmethod
    def backward(ctx, dy):
        x, w = ctx.saved_tensors
        ops, bufs = ctx.ops, ctx.bufs
        dy = dy.contiguous()
        dx = dw = db = None
        if ctx.needs_input_grad[0]:
            dx = ops.mm(dy, w, R.DGRAD, -1, 0, bufs)      # dY [T,out] . (W^T [in,out])^T
        if ctx.needs_input_grad[1]:
            dw = ops.mm(dy, x, R.WGRAD, 0, 0, bufs)       # (dY^T [out,T]) . (X^T [in,T])^T
        if ctx.has_bias and ctx.needs_input_grad[2]:
            db = dy.sum(0)
        return dx, dw, db, None, None


class QuantLinear(torch.nn.Module):
    """nn.Linear with the three GEMMs quantized per qctx's recipe. `name` picks the BF16 layers and
    `index` the layer's SR / RHT seeds."""

    def __init__(self, in_features: int, out_features: int, qctx: QuantContext, name: str, bias: bool = False):
        super().__init__()
        self.in_features, self.out_features = in_features, out_features
        self.weight = torch.nn.Parameter(torch.empty(out_features, in_features))
        self.bias = torch.nn.Parameter(torch.zeros(out_features)) if bias else None
        torch.nn.init.normal_(self.weight, std=0.02)
        self.qctx, self.name = qctx, name
        self.index = len(qctx.layers)
        qctx.layers.append(name)
        self._bufs: dict = {}
        self._step = self._reduction_step()
        for n, what in ((in_features, "in_features (Fprop reduces over it)"),
                        (out_features, "out_features (Dgrad reduces over it)")):
            if n % self._step:
                raise ValueError(f"layer {name}: {what} = {n} is not a multiple of {self._step} "
                                 f"({self._why()})")

    def _reduction_step(self) -> int:
        """What every reduction axis must be a multiple of: the block, the MMA instruction K in
        hardware mode, and (Wgrad, tokens only) the RHT size."""
        mode = self.qctx.mode_of(self.name)
        if mode in ("none", "bf16"):
            return 1
        step = fp4sim.FORMATS[mode]["block"]
        if self.qctx.gemm == "hardware":
            step = math.lcm(step, fp4sim.KINDS[fp4sim.FORMATS[mode]["kind"]]["k"])
        return step

    def _why(self) -> str:
        mode = self.qctx.mode_of(self.name)
        hw = f", {fp4sim.FORMATS[mode]['kind']} instruction K" if self.qctx.gemm == "hardware" else ""
        return f"the {mode} block{hw}"

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        lead = x.shape[:-1]
        if x.shape[-1] != self.in_features:
            raise ValueError(f"layer {self.name}: input has {x.shape[-1]} features, expected {self.in_features}")
        tokens = x.numel() // self.in_features
        rht = self.qctx.recipe.rht if self._step > 1 else 0
        need = math.lcm(self._step, rht) if rht else self._step
        if tokens % need:
            raise ValueError(f"layer {self.name}: {tokens} tokens (Wgrad reduces over them) is not a multiple of "
                             f"{need} ({self._why()}{f', RHT {rht}' if rht else ''})")
        ops = _Operands(self.qctx, self.index, self.name)
        y = QuantLinearFunction.apply(x.reshape(-1, self.in_features), self.weight, self.bias, ops, self._bufs)
        return y.reshape(*lead, self.out_features)

    def extra_repr(self) -> str:
        return f"{self.in_features}, {self.out_features}, name={self.name}, mode={self.qctx.mode_of(self.name)}"
