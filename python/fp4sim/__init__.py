"""fp4sim: bit-exact 4-bit block-scaled quantizers and tensor-core numerics, from Python.

The functions mirror the command line (docs/cli.md, docs/python.md): keyword names are the CLI's
option names with dashes turned into underscores (``--scale-rule`` -> ``scale_rule``, ``--2d`` ->
``two_d``), the defaults are the CLI's, an option left at ``None`` is "not given", and a bad
argument raises ``ValueError`` with the CLI's one-line message (without ``fp4sim: error:``; where
the CLI names a file, Python names the argument).

Arrays: numpy arrays (or torch CPU tensors, when torch is installed) go in; numpy arrays come out.
C-contiguous inputs of the expected dtype are read in place, and results are numpy arrays that own
the C++ buffers (nothing copied). ml_dtypes arrays (float4_e2m1fn, float6_e2m3fn, float6_e3m2fn,
float8_e4m3fn, float8_e5m2, float8_e8m0fnu, bfloat16) are accepted wherever codes, scales or BF16
inputs are, and ``Quantized.codes_as_ml_dtypes()`` / ``scales_as_ml_dtypes()`` give them back.
A torch.float4_e2m1fn_x2 tensor is two E2M1 codes per byte (low nibble = even element) and is
unpacked where codes go in.

Suites: vectors() writes a golden vector suite as `fp4sim vectors` does (vectors_from() one case
from your own tensors, as `fp4sim vectors --from`), load_suite() reads one,
save_result() stores a kernel's output in a results folder, check() compares that folder with the
suite bit for bit (docs/vectors.md).
"""

from __future__ import annotations

import functools
import os
import warnings
from typing import Any

import math

import numpy as np

from . import _core
from .suite import Case, Operand, Suite, SuiteError, check, load_suite, result_path, save_result

__version__ = _core.__version__

__all__ = [
    "quantize", "dequantize", "fake_quantize", "Quantized", "pack_nibbles", "unpack_nibbles", "scales_to_atom",
    "scales_from_atom", "mma", "mma_numerics", "mma_rows", "MmaRows", "explain_mma", "gemm", "GemmResult", "load_suite", "check",
    "Suite", "Case", "Operand",
    "SuiteError", "result_path", "save_result", "vectors", "vectors_from", "SUITES", "FORMATS", "KINDS", "ml_dtype",
]

FORMATS: dict[str, dict] = {f["name"]: f for f in _core.block_formats()}
KINDS: dict[str, dict] = {k["name"]: k for k in _core.mma_kinds()}
SUITES: tuple[str, ...] = tuple(_core.suite_names())
_MX = {n for n in FORMATS if n not in ("nvfp4", "hif4")}
# MX scale rules: OCP's floor, and the truncation-free rule that rounds the scale exponent up,
# which torchao and NVIDIA call RCEIL; "ceil" is accepted for it too. Values: the manifests' names.
_SCALE_RULES = {"floor": "floor", "rceil": "rceil", "ceil": "rceil"}
# Whose quantizer the codes match (docs/formats.md, "Conventions"): TransformerEngine (the default),
# torchao, NVIDIA ModelOpt.
_CONVENTIONS = ("te", "torchao", "modelopt")
_MODELS = ("blackwell", "exact", "fp32-seq", "ascend-hif4")
_U64 = (1 << 64) - 1
_U32 = (1 << 32) - 1


# ---- argument helpers (the CLI's messages) ----

def _uint(option: str, value: Any, lo: int, hi: int) -> int:
    """cli.cpp parse_uint: decimal or 0x-hex text, or a Python int, in [lo, hi]."""
    if isinstance(value, (bool, np.bool_)):
        raise ValueError(f"--{option}: '{value}' is not a non-negative integer")
    if isinstance(value, (int, np.integer)):
        v, text = int(value), str(int(value))
        if v < 0:  # as the CLI reads "-1": a sign is not part of a non-negative integer
            raise ValueError(f"--{option}: '{text}' is not a non-negative integer")
    elif isinstance(value, str):
        text = value
        digits, base = (value[2:], 16) if len(value) > 2 and value[:2] in ("0x", "0X") else (value, 10)
        ok = digits != "" and all(c in "0123456789abcdefABCDEF"[: 22 if base == 16 else 10] for c in digits)
        if not ok:
            raise ValueError(f"--{option}: '{value}' is not a non-negative integer")
        v = int(digits, base)
    else:
        raise ValueError(f"--{option}: '{value}' is not a non-negative integer")
    if v < lo or v > hi:
        raise ValueError(f"--{option}: {text} is out of range [{lo}, {hi}]")
    return v


def _on_off(option: str, value: Any) -> bool:
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if value in ("on", "off"):
        return value == "on"
    raise ValueError(f"--{option}: expected 'on' or 'off', got '{value}'")


def _format(format: str) -> dict:
    if format not in FORMATS:
        raise ValueError(f"--format: unknown format '{format}' (expected one of: {', '.join(FORMATS)})")
    return FORMATS[format]


def _quant_options(format: str, rounding, seed, stream, scale_rule, pts, two_d, rht, rht_bf16, convention=None) -> dict:
    """cli.cpp parse_quant_options, same order and messages."""
    fi = _format(format)
    o = {"rounding": "rne" if rounding is None else rounding}
    if o["rounding"] not in ("rne", "rna", "rz", "sr"):
        raise ValueError(f"--rounding: unknown mode '{rounding}' (expected rne, rna, rz or sr)")
    if format == "hif4" and o["rounding"] == "rz":
        raise ValueError("--rounding rz: hif4 rounds half-up (rna, also selected by rne) or with sr")
    o["seed"] = 0 if seed is None else _uint("seed", seed, 0, _U64)
    o["stream"] = 0 if stream is None else _uint("stream", stream, 0, _U32)
    o["scale_rule"] = "floor"
    if scale_rule is not None:
        if scale_rule not in _SCALE_RULES:
            raise ValueError(f"--scale-rule: unknown rule '{scale_rule}' (expected floor or rceil)")
        if format not in _MX:
            raise ValueError(f"--scale-rule applies to MX formats only, not {fi['name']}")
        o["scale_rule"] = _SCALE_RULES[scale_rule]
    o["pts"] = True
    if pts is not None:
        o["pts"] = _on_off("pts", pts)
        if format != "nvfp4":
            raise ValueError(f"--pts applies to nvfp4 only, not {fi['name']}")
    o["two_d"] = bool(two_d)
    if o["two_d"] and format != "nvfp4":
        raise ValueError(f"--2d (16x16 tile scaling) applies to nvfp4 only, not {fi['name']}")
    o["rht"] = 0
    if rht is not None:
        n = _uint("rht", rht, 0, 1 << 30)
        if n != 0 and (n < 2 or n & (n - 1)):
            raise ValueError(f"--rht: size must be a power of two >= 2 (or 0 = off), got {rht}")
        o["rht"] = n
    o["rht_bf16"] = bool(rht_bf16)
    if o["rht_bf16"] and o["rht"] == 0:
        raise ValueError("--rht-bf16 needs --rht N")
    o["convention"] = "te"
    if convention is not None:
        _convention_name(convention)
        try:  # golden's check_convention: the library's quantizer exists with these options
            _core.check_convention(convention, format, o["rounding"], o["two_d"], o["scale_rule"])
        except ValueError as e:
            raise ValueError(f"--convention {convention}: {e}") from None
        o["convention"] = convention
    return o


def _convention_name(convention) -> None:
    if convention not in _CONVENTIONS:
        raise ValueError(f"--convention: unknown library '{convention}' (expected te, torchao or modelopt)")


def _core_quant_args(o: dict) -> tuple:
    """The quantize options in _core's argument order (rounding ... rht_bf16, convention)."""
    return (o["rounding"], o["seed"], o["stream"], o["scale_rule"], o["pts"], o["two_d"], o["rht"], o["rht_bf16"],
            o["convention"])


def _threads(threads) -> int:
    return _uint("threads", threads, 0, 1024)


def _is_torch(x) -> bool:
    return type(x).__module__.split(".")[0] == "torch"


def _numpy(x, fp4x2: str = "unpack") -> np.ndarray:
    """numpy view of x; torch CPU tensors without a copy (their bfloat16 / float8 as bit patterns).
    torch.float4_e2m1fn_x2 holds two E2M1 codes per byte, element 2i in the low nibble (torch's and
    PTX's order, SPEC §1): fp4x2="unpack" gives float4_e2m1fn codes [..., 2n] (one per byte, so
    that K counts elements, not bytes); "raw" gives the packed bytes as uint8 [..., n]."""
    if _is_torch(x):
        import torch  # only reached when the caller already has torch

        t = x.detach()
        if t.device.type != "cpu":
            t = t.cpu()
        if t.dtype == torch.bfloat16:
            return t.contiguous().view(torch.int16).numpy().view(np.uint16).view(_mld().bfloat16)
        name = str(t.dtype).removeprefix("torch.")
        if name == "float4_e2m1fn_x2":
            raw = t.contiguous().view(torch.uint8).numpy()
            return raw if fp4x2 == "raw" else _unpack_x2(raw)
        if name.startswith("float8"):
            target = {"float8_e4m3fn": "float8_e4m3fn", "float8_e5m2": "float8_e5m2",
                      "float8_e8m0fnu": "float8_e8m0fnu"}.get(name)
            if target is None:
                raise ValueError(f"torch dtype {t.dtype} is no element or scale type of fp4sim")
            return t.contiguous().view(torch.uint8).numpy().view(getattr(_mld(), target))
        return t.numpy()
    return np.asarray(x)


def _unpack_x2(raw: np.ndarray) -> np.ndarray:
    """Packed E2M1 pairs uint8 [..., n] -> float4_e2m1fn codes [..., 2n], low nibble first."""
    if raw.ndim == 0:
        raise ValueError("float4_e2m1fn_x2: need a tensor of rank >= 1 (pairs run along the last axis)")
    codes = np.empty(raw.shape[:-1] + (2 * raw.shape[-1],), dtype=np.uint8)
    codes[..., 0::2] = raw & 0x0F
    codes[..., 1::2] = raw >> 4
    return codes.view(_mld().float4_e2m1fn)


@functools.cache
def _mld():
    import ml_dtypes

    return ml_dtypes


def _shape(shape) -> str:
    return str(tuple(int(s) for s in shape))


def _dtype_name(a: np.ndarray) -> str:
    return str(a.dtype) if a.dtype.isnative or a.dtype.itemsize == 1 else a.dtype.str


def _float_input(x, name: str) -> np.ndarray:
    """float32 as is; uint16 (BF16 bit patterns, as the CLI reads them), bfloat16 and float16
    widened exactly. Other dtypes are refused rather than rounded. NaN / Inf values get the CLI's
    warning (a RuntimeWarning) and are quantized as the formats define them."""
    a = _numpy(x)
    dt = a.dtype
    if dt == np.float32 and dt.isnative:
        f = np.require(a, requirements="C")  # (ascontiguousarray would make rank 0 rank 1)
    elif (dt == np.uint16 and dt.isnative) or dt.name == "bfloat16":
        bits = np.require(a, requirements="C").view(np.uint16)
        f = (bits.astype(np.uint32) << 16).view(np.float32)
    elif dt == np.float16 and dt.isnative:
        f = a.astype(np.float32)
    else:
        f = None
    if f is not None:
        nonfinite = f.size - int(np.count_nonzero(np.isfinite(f)))
        if nonfinite:
            nan = int(np.count_nonzero(np.isnan(f)))
            warnings.warn(f"{name}: {nan} NaN and {nonfinite - nan} Inf of {f.size} values; quantized as the "
                          "formats define them (docs/cli.md)", RuntimeWarning, stacklevel=3)
        return f
    raise ValueError(f"{name}: input dtype is {_dtype_name(a)}; expected float32 or uint16 (BF16 bits) "
                     "(bfloat16 and float16 arrays are also accepted)")


# ml_dtypes names of the element and scale types that have one.
_ML_NAMES = {"e2m1": "float4_e2m1fn", "e2m3": "float6_e2m3fn", "e3m2": "float6_e3m2fn", "e4m3": "float8_e4m3fn",
             "e5m2": "float8_e5m2", "ue8m0": "float8_e8m0fnu", "ue4m3": "float8_e4m3fn"}


_ML_ELEMS = {v: k for k, v in _ML_NAMES.items() if not k.startswith("u")}
_ML_SCALES = {"float8_e8m0fnu": "ue8m0", "float8_e4m3fn": "ue4m3"}


def ml_dtype(type_name: str):
    """The ml_dtypes dtype for an element or scale type name ("e2m1", "ue8m0", ...), or None
    (s1p2, e6m2 and HiF4 words have none). UE4M3 codes 0x00-0x7F read as float8_e4m3fn."""
    n = _ML_NAMES.get(type_name)
    return None if n is None else np.dtype(getattr(_mld(), n))


def _codes_input(x, name: str, want_bits: int | None = None, elem: str | None = None) -> tuple[np.ndarray, str | None]:
    """uint8 codes, or an ml_dtypes element array (its bit patterns); returns (uint8 array, the
    element type the dtype names or None)."""
    a = _numpy(x)
    from_dtype = None
    if a.dtype != np.uint8:
        from_dtype = _ML_ELEMS.get(a.dtype.name)
        if from_dtype is None:
            raise ValueError(f"{name}: {name.upper()} must be uint8, got {_dtype_name(a)}")
        a = np.ascontiguousarray(a).view(np.uint8)
        # ml_dtypes keeps sub-byte codes in the low bits and ignores the bits above them, so a byte
        # array of packed nibbles viewed as float4_e2m1fn reads as its even elements only: refused.
        bits = int(_core.elem_info(from_dtype)["bits"])
        high = np.flatnonzero(a.reshape(-1) >> bits) if bits < 8 else np.empty(0)
        if high.size:
            i = int(high[0])
            cols = a.shape[-1] if a.ndim else 1
            where = f"[{i // cols}, {i % cols}]" if a.ndim >= 2 else f"[{i}]"
            packing = ("two E2M1 codes packed per byte (as torch.float4_e2m1fn_x2)? unpack them first: "
                       "fp4sim.unpack_nibbles(packed), low nibble = even element" if bits == 4 else
                       "its bits above the code must be zero")
            raise ValueError(f"{name}: {_ML_NAMES[from_dtype]} byte 0x{int(a.reshape(-1)[i]):02x} at {where} has bits "
                             f"above its {bits}-bit code: {packing}")
        if elem is not None and elem != from_dtype:
            raise ValueError(f"{name}: array dtype {_ML_NAMES[from_dtype]} holds {from_dtype} codes, not {elem}")
    return np.ascontiguousarray(a), from_dtype


def _scales_input(x, name: str, word32: bool, what: str) -> tuple[np.ndarray, str | None]:
    a = _numpy(x)
    from_dtype = None
    if word32:
        if a.dtype != np.uint32 or not a.dtype.isnative:
            raise ValueError(f"{name}: {what} must be uint32, got {_dtype_name(a)}")
    elif a.dtype != np.uint8:
        from_dtype = _ML_SCALES.get(a.dtype.name)
        if from_dtype is None:
            raise ValueError(f"{name}: {what} must be uint8, got {_dtype_name(a)}")
        a = np.ascontiguousarray(a).view(np.uint8)
    return np.ascontiguousarray(a), from_dtype


def _check_code_width(a: np.ndarray, name: str, bits: int, elem: str) -> None:
    """cmd_mma.cpp check_codes: a code wider than the element is refused (usually a packed file)."""
    if bits >= 8 or a.size == 0:
        return
    bad = np.flatnonzero(a.reshape(-1) >= (1 << bits))
    if bad.size:
        i = int(bad[0])
        cols = a.shape[-1]
        raise ValueError(f"{name}: code 0x{int(a.reshape(-1)[i]):02x} at [{i // cols}, {i % cols}] does not fit "
                         f"{bits}-bit {elem} (codes must be unpacked, one per byte)")


# ---- quantize / dequantize ----

class Quantized:
    """The result of quantize(): what `fp4sim quantize` writes, as arrays.

    codes       uint8 [..., C]         one element code per value (sign in the element's top bit)
    packed      uint8 [..., C/2]       4-bit formats: low nibble = even element; None otherwise
    scales      uint8 [..., C/block]   block scale codes, row-major; uint32 HiF4 words for hif4
    dequant     float32 [..., C]       the values the codes stand for (after the RHT, if any)
    global_scale float32 [1]           nvfp4: S_dec (1.0 with pts="off"); None otherwise
    amax        float                  nvfp4: the tensor amax that produced S_enc; None otherwise
    """

    def __init__(self, format: str, options: dict, shape: tuple, codes, scales, dequant, global_scale, amax):
        fi = FORMATS[format]
        self.format = format
        self.options = options
        self.element_type = fi["elem"]
        self.scale_type = fi["scale"]
        self.block_size = fi["block"]
        lead = tuple(shape[:-1])
        self.codes = codes.reshape(shape)
        self.scales = scales.reshape(lead + (scales.shape[1],))
        self.dequant = dequant.reshape(shape)
        self.global_scale = np.array([global_scale], dtype=np.float32) if format == "nvfp4" else None
        self.amax = float(amax) if format == "nvfp4" else None

    @functools.cached_property
    def packed(self) -> np.ndarray | None:
        if FORMATS[self.format]["elem_bits"] != 4:
            return None
        return pack_nibbles(self.codes)

    def codes_as_ml_dtypes(self) -> np.ndarray:
        """The codes as an ml_dtypes array (a view, no copy). hif4's S1P2 has no ml_dtypes type."""
        dt = ml_dtype(self.element_type)
        if dt is None:
            raise ValueError(f"{self.format}: element type {self.element_type} has no ml_dtypes dtype")
        return self.codes.view(dt)

    def scales_as_ml_dtypes(self) -> np.ndarray:
        """The scales as float8_e4m3fn (nvfp4's UE4M3) or float8_e8m0fnu (MX), a view."""
        dt = ml_dtype(self.scale_type)
        if dt is None or FORMATS[self.format]["scale_word32"]:
            raise ValueError(f"{self.format}: scale type {self.scale_type} has no ml_dtypes dtype")
        return self.scales.view(dt)

    def scales_atom(self) -> np.ndarray:
        """The scales in the tensor-core 128x4 atom layout (layout.hpp), as `fp4sim vectors` writes
        *_scales_atom.npy; all leading axes count as rows."""
        if FORMATS[self.format]["scale_word32"]:
            raise ValueError("hif4: scale words have no tensor-core atom layout")
        return scales_to_atom(self.scales)

    def __repr__(self) -> str:
        return f"<fp4sim.Quantized {self.format} {_shape(self.codes.shape)}>"


def quantize(x, format: str = "nvfp4", rounding: str | None = None, seed: int | None = None,
             stream: int | None = None, scale_rule: str | None = None, pts: str | bool | None = None,
             two_d: bool = False, rht: int | None = None, rht_bf16: bool = False, convention: str | None = None,
             threads: int = 0, rht_seed: int | None = None) -> Quantized:
    """`fp4sim quantize`: blocks along the last axis of x (float32, or BF16 as uint16 bits /
    bfloat16; float16 is widened exactly). Options as the CLI's; convention: whose quantizer the
    codes match, "te" (TransformerEngine, the default), "torchao" or "modelopt" (docs/formats.md,
    Conventions); `threads` (0 = all cores) does not change the bits. rht_seed: the RHT signs from
    this seed alone (as fake_quantize's rht_seed, for every size); None keeps the CLI's rule (signs
    from `seed`, TE's fixed signs for rht=16)."""
    o = _quant_options(format, rounding, seed, stream, scale_rule, pts, two_d, rht, rht_bf16, convention)
    nthreads = _threads(threads)
    rseed, rseeded = (0, False) if rht_seed is None else (_uint("rht_seed", rht_seed, 0, _U64), True)
    a = _float_input(x, "x")
    fi = FORMATS[format]
    if a.ndim == 0:
        raise ValueError("x: rank-0 array; quantize needs rank >= 1 (blocks run along the last axis)")
    if a.size == 0:
        raise ValueError(f"x: array has no elements, shape {_shape(a.shape)}")
    cols = a.shape[-1]
    if cols % fi["block"]:
        raise ValueError(f"x: last axis {cols} is not a multiple of the {format} block size {fi['block']}")
    if o["rht"] and cols % o["rht"]:
        raise ValueError(f"x: last axis {cols} is not a multiple of the RHT size {o['rht']}")
    try:
        codes, scales, deq, gs, amax = _core.quantize(a.reshape(-1, cols), format, *_core_quant_args(o), nthreads,
                                                      rseed, rseeded)
    except ValueError as e:
        raise ValueError(f"x: {e}") from None
    return Quantized(format, o, a.shape, codes, scales, deq, gs, amax)


# ---- fake_quantize ----

def _f32_array(v, name: str, writable: bool):
    """(the object _core gets, its shape, its kind) for a float32 C-contiguous CPU array, without a
    copy: numpy arrays and torch tensors as they are, other buffer-protocol / DLPack objects through
    a numpy view. Anything else is refused with one line: fake_quantize reads and writes in place."""
    if _is_torch(v):
        if str(v.dtype) != "torch.float32":
            raise ValueError(f"{name}: dtype {str(v.dtype).removeprefix('torch.')}; fake_quantize needs float32 "
                             "(it works in place, no conversion)")
        if v.device.type != "cpu":
            raise ValueError(f"{name}: tensor on {v.device}; fake_quantize needs a CPU tensor")
        if not v.is_contiguous():
            raise ValueError(f"{name}: not C-contiguous (strides {tuple(v.stride())}); pass .contiguous()")
        return v.detach(), tuple(v.shape), "torch"
    if not isinstance(v, np.ndarray):
        try:
            v = np.from_dlpack(v) if hasattr(v, "__dlpack__") else np.asarray(memoryview(v))
        except (TypeError, ValueError, BufferError, RuntimeError) as e:
            raise ValueError(f"{name}: {type(v).__name__} is not an array (buffer protocol or DLPack): {e}") from None
    if v.dtype != np.float32:
        raise ValueError(f"{name}: dtype {_dtype_name(v)}; fake_quantize needs float32 (it works in place, "
                         "no conversion)")
    if not v.flags.c_contiguous:
        raise ValueError(f"{name}: not C-contiguous (strides {v.strides}); pass np.ascontiguousarray({name})")
    if writable and not v.flags.writeable:
        raise ValueError(f"{name}: read-only array")
    return v, v.shape, "numpy"


def fake_quantize(x, format: str = "nvfp4", axis: int = -1, out=None, rounding: str | None = None,
                  sr_seed: int | None = None, rht_seed: int | None = None, rht: int | None = None,
                  pts: str | bool | None = None, two_d: bool = False, scale_rule: str | None = None,
                  rht_bf16: bool = False, stream: int | None = None, threads: int = 0):
    """quantize -> dequantize in one pass, float32 in and out, no codes or scales handed back: the
    bits of `quantize(x, ...).dequant`, blocks along `axis` — the last (-1) or the first (0; the
    transpose of quantizing the transposed tensor, never built). x: a C-contiguous float32 CPU array
    (numpy, a torch tensor, or any buffer-protocol / DLPack object), read in place; out: None (a new
    array of x's kind) or one of x's shape and dtype, written in place (x itself allowed) and
    returned. sr_seed keys the stochastic rounding bits only; rht_seed the RHT signs only (None: TE's
    fixed signs for rht=16, seed 0 for other sizes). Other options as quantize()'s (TE convention);
    `threads` (0 = all cores) never changes a bit. NaN / Inf are quantized as the formats define
    them, without quantize()'s warning (that would cost a pass)."""
    o = _quant_options(format, rounding, sr_seed, stream, scale_rule, pts, two_d, rht, rht_bf16)
    nthreads = _threads(threads)
    rseed, rseeded = (0, False) if rht_seed is None else (_uint("rht_seed", rht_seed, 0, _U64), True)
    a, shape, kind = _f32_array(x, "x", writable=False)
    ndim = len(shape)
    if ndim == 0:
        raise ValueError("x: rank-0 array; fake_quantize needs rank >= 1")
    size = math.prod(shape)
    if size == 0:
        raise ValueError(f"x: array has no elements, shape {_shape(shape)}")
    if not isinstance(axis, (int, np.integer)) or isinstance(axis, bool) or not -ndim <= axis < ndim:
        raise ValueError(f"axis: {axis!r} is not an axis of x (rank {ndim})")
    ax = int(axis) % ndim
    if ax not in (0, ndim - 1):
        raise ValueError(f"axis: blocks run along the first (0) or the last (-1) axis, got {axis} (rank {ndim})")
    first = ax == 0 and ndim > 1
    n = shape[ax]
    fi = FORMATS[format]
    if n % fi["block"]:
        raise ValueError(f"x: axis {axis} has {n} elements, not a multiple of the {format} block size {fi['block']}")
    if o["rht"] and n % o["rht"]:
        raise ValueError(f"x: axis {axis} has {n} elements, not a multiple of the RHT size {o['rht']}")
    rows, cols = (n, size // n) if first else (size // n, n)
    if out is None:
        if kind == "torch":
            import torch  # only reached when the caller already has torch
            out = torch.empty(shape, dtype=torch.float32)
        else:
            out = np.empty(shape, np.float32)
    o_arr, o_shape, _ = _f32_array(out, "out", writable=True)
    if tuple(o_shape) != tuple(shape):
        raise ValueError(f"out: shape {_shape(o_shape)}, expected x's {_shape(shape)}")
    if isinstance(a, np.ndarray) and isinstance(o_arr, np.ndarray) and np.may_share_memory(a, o_arr) and \
            a.__array_interface__["data"][0] != o_arr.__array_interface__["data"][0]:
        raise ValueError("out: overlaps x without being x (in place means out=x)")
    try:
        _core.fake_quantize(a, o_arr, rows, cols, format, first, o["rounding"], o["seed"], o["stream"],
                            o["scale_rule"], o["pts"], o["two_d"], o["rht"], o["rht_bf16"], rseed, rseeded, nthreads)
    except ValueError as e:
        raise ValueError(f"x: {e}") from None
    return out


def dequantize(codes, scales, format: str = "nvfp4", global_scale=None, convention: str | None = None) -> np.ndarray:
    """The values codes [..., C] with scales [..., C/block] stand for (float32), as quantize()'s
    `dequant`. global_scale: nvfp4's S_dec (default 1.0); other formats have none. A NaN block
    scale gives NaN for its block. convention (nvfp4): whose dequantization to follow, as
    quantize(convention=) does — torchao and ModelOpt multiply by (s * S_dec) and decode the code
    0x8 as +0; the MX and HiF4 values are the same for every convention."""
    fi = _format(format)
    if convention is not None:
        _convention_name(convention)
        try:  # only "no quantizer of this format" can fail with these options
            _core.check_convention(convention, format, "rne", False, "rceil")
        except ValueError as e:
            raise ValueError(f"--convention {convention}: {e}") from None
    c, dt_elem = _codes_input(codes, "codes", elem=fi["elem"])
    s, _ = _scales_input(scales, "scales", fi["scale_word32"], "scales")
    if c.ndim == 0 or c.size == 0:
        raise ValueError(f"codes: need a non-empty array of rank >= 1, got shape {_shape(c.shape)}")
    cols = c.shape[-1]
    if cols % fi["block"]:
        raise ValueError(f"codes: last axis {cols} is not a multiple of the {format} block size {fi['block']}")
    want = c.shape[:-1] + (cols // fi["block"],)
    if s.shape != want:
        raise ValueError(f"scales: shape {_shape(s.shape)}, expected {_shape(want)} for codes {_shape(c.shape)}")
    _check_code_width(c.reshape(-1, cols), "codes", fi["elem_bits"], fi["elem"])
    if global_scale is not None and format != "nvfp4":
        raise ValueError(f"global_scale applies to nvfp4 only, not {format}")
    gs = 1.0 if global_scale is None else float(np.asarray(global_scale, dtype=np.float32).reshape(-1)[0])
    d = _core.dequantize(c.reshape(-1, cols), s.reshape(-1, want[-1]), format, gs, convention or "te")
    return d.reshape(c.shape)


# ---- layouts ----

def pack_nibbles(codes) -> np.ndarray:
    """4-bit codes [..., C] -> uint8 [..., ceil(C/2)], row by row, low nibble = even element
    (pack_nibbles_rows, SPEC §1). Accepts uint8 codes or a float4_e2m1fn array."""
    c, _ = _codes_input(codes, "codes")
    if c.ndim == 0:
        raise ValueError("codes: need an array of rank >= 1")
    cols = c.shape[-1]
    _check_code_width(c.reshape(-1, max(cols, 1)), "codes", 4, "4-bit element")
    p = _core.pack_nibbles_rows(c.reshape(-1, cols))
    return p.reshape(c.shape[:-1] + (p.shape[1],))


def unpack_nibbles(packed, cols: int | None = None, dtype=None) -> np.ndarray:
    """uint8 [..., P] -> codes [..., cols] (default 2P; an odd cols drops the last high nibble).
    dtype=None gives uint8 codes; dtype=ml_dtypes.float4_e2m1fn (or "e2m1") a view of that type."""
    p = _numpy(packed, fp4x2="raw")
    if p.dtype != np.uint8:
        raise ValueError(f"packed: must be uint8, got {_dtype_name(p)}")
    if p.ndim == 0:
        raise ValueError("packed: need an array of rank >= 1")
    p = np.ascontiguousarray(p)
    n = 2 * p.shape[-1] if cols is None else int(cols)
    c = _core.unpack_nibbles_rows(p.reshape(-1, p.shape[-1]), n).reshape(p.shape[:-1] + (n,))
    if dtype is None:
        return c
    return c.view(ml_dtype(dtype) if isinstance(dtype, str) else np.dtype(dtype))


def scales_to_atom(scales) -> np.ndarray:
    """8-bit scales [rows, K/block] (leading axes flattened into rows) -> the tensor-core 128x4
    atom layout (layout.hpp; cuBLAS / CUTLASS / TransformerEngine): uint8, zero-padded to whole
    512-byte tiles."""
    s, _ = _scales_input(scales, "scales", False, "scales")
    if s.ndim == 0:
        raise ValueError("scales: need an array of rank >= 1")
    return _core.scales_to_atom(s.reshape(-1, s.shape[-1]))


def scales_from_atom(atom, rows: int, scols: int) -> np.ndarray:
    """The inverse of scales_to_atom: uint8 [rows, scols] (the padding is dropped)."""
    a, _ = _scales_input(atom, "atom", False, "atom")
    return _core.scales_from_atom(a.reshape(-1), int(rows), int(scols))


# ---- MMA / GEMM ----

def _model_name(model: str) -> None:
    if model not in _MODELS:
        raise ValueError(f"--model: unknown model '{model}' (expected blackwell, exact, fp32-seq or ascend-hif4)")


def _matrix(a: np.ndarray, name: str, role: str) -> None:
    if a.ndim != 2:
        raise ValueError(f"{name}: {role} must be a 2-D array, got shape {_shape(a.shape)}")


def _c_input(c, M: int, N: int, rank_first: bool = False, bits_ok: bool = False) -> np.ndarray | None:
    """C: float32 [M, N]. rank_first: `fp4sim mma` names a wrong rank before a wrong shape.
    bits_ok: uint32 FP32 bit patterns are accepted too, viewed as float32 (every bit kept, NaN
    payloads included: nothing converts them); another dtype gets the CLI's message, which knows
    float32 only (`fp4sim mma --c` reads float32 .npy files)."""
    if c is None:
        return None
    ca = _numpy(c)
    if bits_ok and ca.dtype == np.uint32 and ca.dtype.isnative:
        ca = np.ascontiguousarray(ca).view(np.float32)
    if ca.dtype != np.float32 or not ca.dtype.isnative:
        raise ValueError(f"c: C must be float32, got {_dtype_name(ca)}")
    if rank_first:
        _matrix(ca, "c", "C")
    if ca.shape != (M, N):
        raise ValueError(f"c: C has shape {_shape(ca.shape)}, expected ({M}, {N})")
    return np.ascontiguousarray(ca)


def _gemm_sizes(A, B):
    """M, K, N of A [M, K] and B [N, K] (both already 2-D), with the CLI's messages."""
    M, K, N = A.shape[0], A.shape[1], B.shape[0]
    if M == 0 or K == 0:
        raise ValueError(f"a: A is empty, shape {_shape(A.shape)}")
    if N == 0:
        raise ValueError(f"b: B is empty, shape {_shape(B.shape)}")
    if B.shape[1] != K:
        raise ValueError(f"b: B has shape {_shape(B.shape)} but A has K = {K} (B is [N, K], K-major)")
    return M, K, N


def _mma_setup(kind, block, scale_type, elem, elem_a, elem_b, model, a, b, sfa, sfb):
    """The configuration of mma / mma_rows / explain_mma from the keywords and the arrays' ml_dtypes,
    with `fp4sim mma`'s checks and messages: (kind row, elem_a, elem_b, scale, block, model, a, b,
    sfa, sfb) with the arrays as numpy."""
    if kind not in KINDS:
        raise ValueError(f"--kind: unknown kind '{kind}' (expected one of: {', '.join(KINDS)})")
    k = KINDS[kind]
    if elem is not None and (elem_a is not None or elem_b is not None):
        raise ValueError("--elem cannot be combined with --elem-a / --elem-b")

    def pick(option: str, name: str, allowed: list[str]) -> str:
        if name not in allowed:
            raise ValueError(f"--{option}: '{name}' is not allowed for kind {kind} (allowed: {', '.join(allowed)})")
        return name

    ea = eb = None
    if elem is not None:
        ea = eb = pick("elem", elem, k["elems"])
    if elem_a is not None:
        ea = pick("elem-a", elem_a, k["elems"])
    if elem_b is not None:
        eb = pick("elem-b", elem_b, k["elems"])
    st = None if scale_type is None else pick("scale-type", scale_type, k["scales"])
    blk = 0 if block is None else _uint("block", block, 1, 1024)
    # Types the arrays' ml_dtypes name, where the caller did not (the arrays themselves are checked
    # after the configuration, in the CLI's order).
    a, b, sfa, sfb = _numpy(a), _numpy(b), _numpy(sfa), _numpy(sfb)
    ta, tb = _ML_ELEMS.get(a.dtype.name), _ML_ELEMS.get(b.dtype.name)
    tsa, tsb = _ML_SCALES.get(sfa.dtype.name), _ML_SCALES.get(sfb.dtype.name)
    ea = ea or (ta and pick("elem-a", ta, k["elems"]))
    eb = eb or (tb and pick("elem-b", tb, k["elems"]))
    if st is None and (tsa or tsb):
        st = pick("scale-type", tsa or tsb, k["scales"])
    try:
        ea, eb, st, blk_eff = _core.resolved_mma_config(kind, ea, eb, st, blk)
    except ValueError as e:
        raise ValueError(f"{e}: block {blk} with scale {st or k['scales'][0]}") from None
    m = k["hardware_model"]
    if model is not None:
        _model_name(model)
        try:
            _core.check_mma_config(kind, ea, eb, st, blk_eff, model)
        except ValueError as e:
            raise ValueError(f"--model {model}: {e}") from None
        m = model
    return k, ea, eb, st, blk_eff, m, a, b, sfa, sfb


def _numerics_spec(numerics) -> str:
    """numerics= as `fp4sim mma --numerics` takes it: "key=value,..." or a dict (True/False -> yes/no)."""
    if numerics is None:
        return ""
    if isinstance(numerics, str):
        return numerics
    if isinstance(numerics, dict):
        def val(v):
            return ("yes" if v else "no") if isinstance(v, bool) else str(v)
        return ",".join(f"{k}={val(v)}" for k, v in numerics.items())
    raise TypeError(f"numerics: expected a 'key=value,...' string or a dict, got {type(numerics).__name__}")


def _resolved_numerics(kind, ea, eb, st, blk, m, spec: str) -> dict[str, str]:
    """Every parameter golden runs (format_numerics), as a dict; errors as `--numerics: ...`."""
    try:
        text = _core.resolve_numerics(kind, ea, eb, st, blk, m, spec)
    except ValueError as e:
        raise ValueError(f"--numerics: {e}") from None
    return dict(kv.split("=", 1) for kv in text.split(","))


def mma_numerics(kind: str = "mxf4nvf4", model: str | None = None, numerics=None, block: int | None = None,
             scale_type: str | None = None, elem: str | None = None, elem_a: str | None = None,
             elem_b: str | None = None) -> dict[str, str]:
    """The parameters golden runs for `kind` under `model` (default: the kind's hardware model) with
    `numerics` ("key=value,..." or a dict) changed — docs/numerics.md, "Numerics a designer can set".
    Returns every parameter as a dict of strings, e.g. mma_numerics("mxf8f6f4")["frac_bits"] == "25"."""
    k, ea, eb, st, blk, m, *_ = _mma_setup(kind, block, scale_type, elem, elem_a, elem_b, model,
                                           np.zeros((1, 1), np.uint8), np.zeros((1, 1), np.uint8),
                                           np.zeros((1, 1), np.uint8), np.zeros((1, 1), np.uint8))
    return _resolved_numerics(kind, ea, eb, st, blk, m, _numerics_spec(numerics))


def mma(a, b, sfa, sfb, c=None, kind: str = "mxf4nvf4", block: int | None = None, scale_type: str | None = None,
        elem: str | None = None, elem_a: str | None = None, elem_b: str | None = None, model: str | None = None,
        alpha: float = 1.0, threads: int = 0, numerics=None) -> np.ndarray:
    """`fp4sim mma`: D [M, N] float32 = alpha * (C + A . B^T) from element codes A [M, K], B [N, K]
    (K-major, unpacked, uint8 or ml_dtypes), scale codes SFA [M, K/block], SFB [N, K/block] (uint8,
    float8_e8m0fnu / float8_e4m3fn, or uint32 words for hif4) and C [M, N] (float32, or uint32
    FP32 bit patterns; default +0). Element and scale types not given are taken from ml_dtypes
    arrays, else the kind's defaults. alpha (not a CLI option) is the one FP32 multiply of the
    suites' epilogue; 1 leaves D as is. numerics ("key=value,..." or a dict, `--numerics`) changes
    the model's parameters: a variant datapath (docs/numerics.md)."""
    k, ea, eb, st, blk_eff, m, a, b, sfa, sfb = _mma_setup(kind, block, scale_type, elem, elem_a, elem_b, model,
                                                           a, b, sfa, sfb)
    spec = _numerics_spec(numerics)
    nk = 0
    if spec:
        nk = int(_resolved_numerics(kind, ea, eb, st, blk_eff, m, spec)["k"])
    nthreads = _threads(threads)

    # The CLI's order: A (dtype, rank), B, sizes, K, then SA, SB, C, the code widths.
    A, _ = _codes_input(a, "a", elem=ea)
    _matrix(A, "a", "A")
    B, _ = _codes_input(b, "b", elem=eb)
    _matrix(B, "b", "B")
    M, K, N = _gemm_sizes(A, B)
    if spec:
        step = math.lcm(blk_eff, nk) if nk else blk_eff
        if K % step:
            raise ValueError(f"a: K = {K} is not a multiple of {step} (the block {blk_eff} and --numerics k={nk})")
    else:
        per_instruction = m in ("blackwell", "ascend-hif4")
        step = k["k"] if per_instruction else blk_eff
        if K % step:
            what = "the instruction K of" if per_instruction else "the block of"
            raise ValueError(f"a: K = {K} is not a multiple of {step} ({what} {kind})")
    nblk = K // blk_eff
    SA, _ = _scales_input(sfa, "sfa", k["scale_word32"], "SA")
    _matrix(SA, "sfa", "SA")
    SB, _ = _scales_input(sfb, "sfb", k["scale_word32"], "SB")
    _matrix(SB, "sfb", "SB")
    for arr, name, role, rows in ((SA, "sfa", "SA", M), (SB, "sfb", "SB", N)):
        if arr.shape != (rows, nblk):
            raise ValueError(f"{name}: {role} has shape {_shape(arr.shape)}, expected ({rows}, {nblk})")
    C = _c_input(c, M, N, rank_first=True, bits_ok=True)
    _check_code_width(A, "a", int(_core.elem_info(ea)["bits"]), ea)
    _check_code_width(B, "b", int(_core.elem_info(eb)["bits"]), eb)
    return _core.mma(A, B, SA, SB, C, kind, ea, eb, st, blk_eff, m, spec, float(np.float32(alpha)), nthreads)


class GemmResult:
    """The result of gemm(): d (float32 [M, N]), acc (the MMA's result before the epilogue), alpha
    (nvfp4: RN(S_dec_A * S_dec_B), else 1), kind, model, stream_a / stream_b, and error: rel_err,
    qsnr_db, max_abs_err, bias, n, n_nonfinite, n_skipped against the FP64 product of the
    unquantized operands (what `fp4sim gemm` prints and writes with --json)."""

    def __init__(self, r: dict, format: str, options: dict):
        self.d: np.ndarray = r["d"]
        self.acc: np.ndarray = r["acc"]
        self.alpha = float(r["alpha"])
        self.kind: str = r["kind"]
        self.model: str = r["model"]
        self.format = format
        self.options = options
        self.stream_a, self.stream_b = int(r["stream_a"]), int(r["stream_b"])
        self.error: dict = dict(r["error"])

    def __repr__(self) -> str:
        e = self.error
        return (f"<fp4sim.GemmResult {self.format} on {self.kind} ({self.model}) {_shape(self.d.shape)} "
                f"rel_err={e['rel_err']:.6e} qsnr_db={e['qsnr_db']:.3f}>")


def gemm(a, b, c=None, format: str = "nvfp4", model: str | None = None, rounding: str | None = None,
         seed: int | None = None, stream: int | None = None, scale_rule: str | None = None,
         pts: str | bool | None = None, two_d: bool = False, rht: int | None = None, rht_bf16: bool = False,
         convention: str | None = None, threads: int = 0) -> GemmResult:
    """`fp4sim gemm`: A [M, K] and B [N, K] (float32 or BF16) quantized along K with `format` and
    the quantize options (B's SR bits from stream + 1, both operands the same RHT signs), multiplied
    by the format's MMA kind with `model` (default: the kind's hardware model), then the epilogue
    D = fma(alpha, acc, C) in FP32."""
    fi = _format(format)
    o = _quant_options(format, rounding, seed, stream, scale_rule, pts, two_d, rht, rht_bf16, convention)
    if model is not None:
        _model_name(model)
        try:  # the configuration mma_config_for(format) runs on
            _core.check_mma_config(fi["kind"], fi["elem"], fi["elem"], fi["scale"], fi["block"], model)
        except ValueError as e:
            raise ValueError(f"--model {model} cannot run format {format}: {e}") from None
    nthreads = _threads(threads)
    A = _float_input(a, "a")
    B = _float_input(b, "b")
    _matrix(A, "a", "A")
    _matrix(B, "b", "B")
    M, K, N = _gemm_sizes(A, B)
    C = _c_input(c, M, N)
    try:
        r = _core.gemm(A, B, C, format, model, *_core_quant_args(o), nthreads)
    except ValueError as e:
        raise ValueError(f"a: {e}") from None
    return GemmResult(r, format, o)



# ---- suites ----

def vectors(suite: str, out, seed: int | None = None, size: int | None = None, force: bool = False,
            threads: int = 0, convention: str | None = None):
    """`fp4sim vectors --suite SUITE --out OUT [--seed S] [--size N] [--force] [--threads T]`: writes
    the same suite, file for file (the .npy files are byte-identical to the CLI's; the manifest's
    command_line records this call), and returns it loaded (load_suite(out)). OUT's parent must
    exist; an existing OUT needs force=True and is replaced atomically. seed: random, llm, smoke
    (default 0); size: random M = N, llm tokens; convention (quant suite only): te (default),
    torchao or modelopt, whose quantizer the float cases follow. Bad arguments raise ValueError
    with the CLI's message; an unusable OUT raises OSError naming it."""
    if suite not in SUITES:
        names = ", ".join(SUITES[:-1]) + " or " + SUITES[-1]
        raise ValueError(f"--suite: unknown suite '{suite}' (expected {names})")
    conv = "te" if convention is None else str(convention)
    if conv not in ("te", "torchao", "modelopt"):
        raise ValueError(f"--convention: unknown library '{conv}' (expected te, torchao or modelopt)")
    if conv != "te" and suite != "quant":
        raise ValueError(f"--convention {conv}: only the quant suite (and --from) take a library's quantizer; "
                         f"suite {suite} is made of codes")
    s = 0
    if seed is not None:
        if suite == "corners":
            raise ValueError("--seed: the corners suite is not random")
        s = _uint("seed", seed, 0, _U64)
    n = 0 if size is None else _uint("size", size, 1, 1 << 20)
    nthreads = _threads(threads)
    out_s = os.fspath(out)
    if out_s == "":
        raise ValueError("--out: empty directory name")
    call = [f"suite={suite!r}", f"out={out_s!r}"]
    call += [f"{k}={v!r}" for k, v in (("seed", seed), ("size", size), ("convention", convention)) if v is not None]
    call += ["force=True"] if force else []
    argv = [f"fp4sim.vectors({', '.join(call)})"]  # the manifest's command_line
    try:
        _core.vectors(suite, out_s, s, n, nthreads, bool(force), argv, conv)
    except ValueError as e:
        raise ValueError(f"--size: {e}") from None
    except OSError as e:  # the CLI's message, with this function's keyword for --force
        raise OSError(str(e).replace("use --force", "use force=True")) from None
    return load_suite(out_s)


def _call_text(name: str, positional: list[str], kw: dict) -> str:
    """The manifest's command_line for a Python call: name(args, key=value, ...) of what was given."""
    parts = positional + [f"{k}={v!r}" for k, v in kw.items() if v is not None and v is not False]
    return f"{name}({', '.join(parts)})"


def vectors_from(a, b=None, *, format: str, out, force: bool = False, threads: int = 0, rounding: str | None = None,
                 seed: int | None = None, stream: int | None = None, scale_rule: str | None = None,
                 pts: str | bool | None = None, two_d: bool = False, rht: int | None = None, rht_bf16: bool = False,
                 convention: str | None = None):
    """`fp4sim vectors --from A.npy [--b B.npy] --format F [quantize options] --out OUT`: a suite of
    one GEMM case, 0000-<config>-from, from your own A [M, K] and B [N, K] (float32, or BF16 as
    uint16 bits / bfloat16, numpy or torch; b=None: B = A), both quantized to `format` with the
    quantize() keywords, C = +0, the expected D of every applicable model. The .npy files are the
    CLI's byte for byte; the manifest records this call (command_line) and from = {"a": "a",
    "b": "b" or null}. OUT's parent must exist; an existing OUT needs force=True (replaced
    atomically); nothing is left behind on failure. Returns the suite loaded (load_suite(out)).
    Bad arguments raise ValueError with the CLI's message, naming `a` / `b` where it names a file."""
    if format not in FORMATS:  # (`vectors --from` names no list, unlike quantize)
        raise ValueError(f"--format: unknown format '{format}'")
    o = _quant_options(format, rounding, seed, stream, scale_rule, pts, two_d, rht, rht_bf16, convention)
    nthreads = _threads(threads)
    out_s = os.fspath(out)
    if out_s == "":
        raise ValueError("--out: empty directory name")
    try:  # the CLI checks OUT before it reads the tensors
        _core.check_out_dir(out_s, bool(force))
    except OSError as e:
        raise OSError(str(e).replace("use --force", "use force=True")) from None
    A = _float_input(a, "a")
    if A.ndim != 2 or A.size == 0:
        raise ValueError(f"a: needs a 2-D array [rows, K], got shape {_shape(A.shape)}")
    B = None
    if b is not None:
        B = _float_input(b, "b")
        if B.ndim != 2 or B.size == 0:
            raise ValueError(f"b: needs a 2-D array [rows, K], got shape {_shape(B.shape)}")
        if B.shape[1] != A.shape[1]:
            raise ValueError(f"b: K = {B.shape[1]}, A has K = {A.shape[1]}")
    call = _call_text("fp4sim.vectors_from", ["a"] + (["b"] if b is not None else []),
                      {"format": format, "out": out_s, "force": force, "rounding": rounding, "seed": seed,
                       "stream": stream, "scale_rule": scale_rule, "pts": pts, "two_d": two_d, "rht": rht,
                       "rht_bf16": rht_bf16, "convention": convention})
    try:
        _core.vectors_from(A, B, format, *_core_quant_args(o), out_s, nthreads, bool(force), [call], "a",
                           "b" if b is not None else None)
    except ValueError as e:  # build_from_tensors: K against the block, the instruction K, the RHT size
        raise ValueError(f"a: {e}") from None
    except OSError as e:
        raise OSError(str(e).replace("use --force", "use force=True")) from None
    return load_suite(out_s)

# ml_dtypes element and scale types, stored in a results folder as the suite's uint8 containers.
_ML_CODE_TYPES = {"float4_e2m1fn": 4, "float6_e2m3fn": 6, "float6_e3m2fn": 6, "float8_e4m3fn": 8,
                  "float8_e5m2": 8, "float8_e8m0fnu": 8}


def _as_result_array(array, output: str) -> np.ndarray:
    """save_result's conversion (suite.py): the array in the dtype the suite stores `output` in."""
    packed_out = output.endswith("_packed")
    a = _numpy(array, fp4x2="raw" if packed_out else "unpack")
    name = a.dtype.name
    if name in _ML_CODE_TYPES:
        a, _ = (_codes_input(a, output) if name in _ML_ELEMS and not output.endswith(("_scales", "_scales_atom"))
                else _scales_input(a, output, False, output))
        if packed_out and name == "float4_e2m1fn":
            a = pack_nibbles(a)  # one code per byte in, the file holds two
    return np.ascontiguousarray(a)


# Per-instruction checking (instructions.py) builds on mma's argument helpers above.
from .instructions import MmaRows, explain_mma, mma_rows  # noqa: E402
