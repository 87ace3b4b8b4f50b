"""Per-instruction golden for testbenches (docs/python.md, docs/cocotb.md).

mma_rows() gives a whole batch of independent instructions in one C++ call (golden's mma_dot and
mma_flags, the values the DPI library and the line vectors give); explain_mma() says why one
instruction's D is what it is: the operands' values, the exact C + sum of products (summed here
with fractions.Fraction, independently of the C++ code), the rule of the model that decided, and,
given the DUT's D, how far it is and which simple alternative it equals.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any, NamedTuple

import numpy as np

from . import (KINDS, _check_code_width, _codes_input, _core, _dtype_name, _is_torch, _mma_setup, _numerics_spec,
               _numpy, _scales_input, _shape, _threads)

# SoftFloat's flag bits (golden's MmaFlag).
FLAG_NAMES = ((0x10, "invalid"), (0x04, "overflow"), (0x02, "underflow"), (0x01, "inexact"))


class MmaRows(NamedTuple):
    """mma_rows()'s result: d_bits (uint32 [N], FP32 bit patterns) and flags (uint8 [N], SoftFloat's
    bits: 0x01 inexact, 0x02 underflow, 0x04 overflow, 0x10 invalid; None with flags=False)."""

    d_bits: np.ndarray
    flags: np.ndarray | None

    @property
    def d(self) -> np.ndarray:
        """D as float32 (a view of d_bits)."""
        return self.d_bits.view(np.float32)


def _c_bits_rows(c, n: int) -> np.ndarray:
    if c is None:
        return np.zeros(n, dtype=np.uint32)
    ca = _numpy(c)
    if ca.dtype == np.float32 and ca.dtype.isnative:
        ca = np.ascontiguousarray(ca).view(np.uint32)
    if ca.dtype != np.uint32 or not ca.dtype.isnative:
        raise ValueError(f"c: C must be uint32 (FP32 bits) or float32, got {_dtype_name(ca)}")
    if ca.shape != (n,):
        raise ValueError(f"c: C has shape {_shape(ca.shape)}, expected ({n},)")
    return np.ascontiguousarray(ca)


def _rows_inputs(a, b, sfa, sfb, kind, block, scale_type, elem, elem_a, elem_b, model):
    """The checked arrays of N paired instructions: A, B [N, K] (K = the kind's instruction K),
    SA, SB [N, K/block]."""
    k, ea, eb, st, blk, m, a, b, sfa, sfb = _mma_setup(kind, block, scale_type, elem, elem_a, elem_b, model,
                                                       a, b, sfa, sfb)
    K = k["k"]
    A, _ = _codes_input(a, "a", elem=ea)
    B, _ = _codes_input(b, "b", elem=eb)
    if A.ndim != 2 or A.shape[1] != K:
        raise ValueError(f"a: A must be [N, {K}] (one {kind} instruction of K = {K} per row), got shape "
                         f"{_shape(A.shape)}")
    if B.shape != A.shape:
        raise ValueError(f"b: B has shape {_shape(B.shape)}, expected {_shape(A.shape)} (row i pairs with A's row i)")
    n = A.shape[0]
    SA, _ = _scales_input(sfa, "sfa", k["scale_word32"], "SA")
    SB, _ = _scales_input(sfb, "sfb", k["scale_word32"], "SB")
    for arr, name, role in ((SA, "sfa", "SA"), (SB, "sfb", "SB")):
        if arr.shape != (n, K // blk):
            raise ValueError(f"{name}: {role} has shape {_shape(arr.shape)}, expected ({n}, {K // blk})")
    _check_code_width(A, "a", int(_core.elem_info(ea)["bits"]), ea)
    _check_code_width(B, "b", int(_core.elem_info(eb)["bits"]), eb)
    return k, ea, eb, st, blk, m, A, B, SA, SB


def mma_rows(a, b, sfa, sfb, c=None, kind: str = "mxf4nvf4", block: int | None = None,
             scale_type: str | None = None, elem: str | None = None, elem_a: str | None = None,
             elem_b: str | None = None, model: str | None = None, flags: bool = True,
             threads: int = 0, numerics=None) -> MmaRows:
    """N independent instructions in one call: instruction i is D[i] = C[i] + A[i] . B[i] with
    SFA[i], SFB[i] — element codes A, B [N, K] (K = the kind's instruction K, unpacked, uint8 or
    ml_dtypes), scale codes SFA, SFB [N, K/block] (uint8 / ml_dtypes, uint32 words for hif4), C [N]
    as uint32 FP32 bits or float32 (default +0). Keywords as mma(); model defaults to the kind's
    hardware model. Returns MmaRows(d_bits uint32 [N], flags uint8 [N] or None) — golden's mma_dot
    and mma_flags per row, bit for bit what `fp4sim vectors --lines` and the DPI library give."""
    k, ea, eb, st, blk, m, A, B, SA, SB = _rows_inputs(a, b, sfa, sfb, kind, block, scale_type, elem, elem_a,
                                                       elem_b, model)
    C = _c_bits_rows(c, A.shape[0])
    try:
        d, f = _core.mma_rows(A, B, SA, SB, C, kind, ea, eb, st, blk, m, _numerics_spec(numerics), bool(flags),
                              _threads(threads))
    except ValueError as e:
        if str(e).startswith("numerics"):
            raise ValueError(f"--numerics: {e}") from None
        raise
    return MmaRows(d, f)


# ---- explain_mma: exact arithmetic on the decoded operands ----

def _f32_value(bits: int) -> float:
    return float(np.array(bits, dtype=np.uint32).view(np.float32))


def _f32_text(bits: int) -> str:
    return str(np.array(bits, dtype=np.uint32).view(np.float32)[()])


def _fp32_bits(x: Fraction, rne: bool) -> int:
    """x to FP32 bits: round to nearest even (rne) or toward zero; subnormals kept (grid 2^-149);
    a magnitude at or past 2^128 after rounding is +-Inf (also toward zero: Blackwell's float64 ->
    float32 conversion, docs/numerics.md). Zero gives +0."""
    if x == 0:
        return 0
    neg, m = x < 0, abs(x)
    e = m.numerator.bit_length() - m.denominator.bit_length()
    if Fraction(2) ** e > m:
        e -= 1
    e = max(e, -126)
    q = m / Fraction(2) ** (e - 23)  # 24-bit significand (fewer for subnormals) and a fraction
    n = q.numerator // q.denominator
    rem = q - n
    if rne and (rem > Fraction(1, 2) or (rem == Fraction(1, 2) and n & 1)):
        n += 1
    bits = min(((e + 126) << 23) + n, 0x7F800000)  # a carry out of the significand moves the exponent
    return bits | (0x80000000 if neg else 0)


def _num(x: Fraction) -> str:
    """A dyadic rational: 2^e for a power of two outside [2^-10, 2^10], the shortest decimal when it
    is a double, else n*2^e with an approximation."""
    d = float(x)
    m = abs(x)
    if m != 0 and (m.numerator & (m.numerator - 1)) == 0 and (m.denominator & (m.denominator - 1)) == 0 \
            and not 1 / 1024 <= m <= 1024:  # a power of two, as the grids and ulps are named
        e = m.numerator.bit_length() - m.denominator.bit_length()
        return f"{'-' if x < 0 else ''}2^{e}"
    if Fraction(d) == x:
        return repr(d)
    e = 0
    n, den = x.numerator, x.denominator
    while den % 2 == 0:
        den //= 2
        e -= 1
    while n % 2 == 0:
        n //= 2
        e += 1
    return f"{n}*2^{e} (~{d:.9g})"


def _exp(v: float, emin: int) -> int:
    """MMA-Sim's exponent of a finite value: floor(log2|v|), at least the format's smallest normal
    exponent (subnormals), -126 for a zero."""
    if v == 0:
        return -126
    return max(math.frexp(abs(v))[1] - 1, emin)


def _flag_names(f: int) -> str:
    names = [n for bit, n in FLAG_NAMES if f & bit]
    return f"0x{f:02x} ({', '.join(names) if names else 'none'})"


def _blackwell(k: dict, emins: tuple[int, int, int], va, vb, vsa, vsb, cval: float, frac_bits: int):
    """The Blackwell rule (docs/numerics.md): terms (products, or 16-product group sums times their
    scales) and C, their exponents, every one truncated toward zero to frac_bits fractional bits
    below the largest exponent, summed exactly, RZ to FP32. Returns (terms, max_e, lsb, T, D bits);
    terms = [(label, value, exponent, truncated value)]."""
    K, group = k["k"], k["group"]
    ema, emb, ems = emins
    terms = []
    if group == K:  # one fused sum (mxf8f6f4): UE8M0 scales add exponents only
        for q in range(K):
            e = _exp(va[q], ema) + _exp(vb[q], emb) + _exp(vsa[q], ems) + _exp(vsb[q], ems)
            terms.append([f"product {q}", Fraction(va[q]) * Fraction(vb[q]) * Fraction(vsa[q]) * Fraction(vsb[q]), e])
    else:  # exact 16-product group sums; a group's exponent is its scales' (even for a zero sum)
        for g in range(K // group):
            q0 = g * group
            s = sum(Fraction(va[q]) * Fraction(vb[q]) for q in range(q0, q0 + group))
            e = _exp(vsa[q0], ems) + _exp(vsb[q0], ems)
            terms.append([f"group {g} (k {q0}-{q0 + group - 1})", s * Fraction(vsa[q0]) * Fraction(vsb[q0]), e])
    terms.append(["C", Fraction(cval), _exp(cval, -126)])
    max_e = max(t[2] for t in terms)
    lsb = max_e - frac_bits
    unit = Fraction(2) ** lsb
    for t in terms:
        t.append(Fraction(math.trunc(t[1] / unit)) * unit)
    total = sum(t[3] for t in terms)
    return terms, max_e, lsb, total, _fp32_bits(total, rne=False)


def _fp32_seq(va, vb, vsa, vsb, cval: float):
    """fp32-seq (docs/numerics.md): a' = RN(a * sa), b' = RN(b * sb), acc = RN(a' * b' + acc) from C,
    k in order. Returns (D bits, dequantizations rounded, FMA steps rounded), or None when a value
    is not finite on the way."""
    acc = Fraction(cval)
    nq = nf = 0
    bits = _fp32_bits(acc, True)
    for q in range(len(va)):
        ops = []
        for v, s in ((va[q], vsa[q]), (vb[q], vsb[q])):
            x = Fraction(v) * Fraction(s)
            r = _fp32_bits(x, True)
            if r & 0x7F800000 == 0x7F800000:
                return None
            nq += Fraction(_f32_value(r)) != x
            ops.append(Fraction(_f32_value(r)))
        x = ops[0] * ops[1] + acc
        bits = _fp32_bits(x, True)
        if bits & 0x7F800000 == 0x7F800000:
            return None
        nf += Fraction(_f32_value(bits)) != x
        acc = Fraction(_f32_value(bits))
    return bits, nq, nf


def _c_scalar(c) -> int:
    """One C: FP32 bits as an int / numpy unsigned integer, or a float32 value (a Python float must
    be exactly a float32)."""
    if isinstance(c, (bool, np.bool_)):
        raise ValueError(f"c: expected FP32 bits (int) or a float32 value, got {c!r}")
    if isinstance(c, (int, np.integer)):
        if not 0 <= int(c) <= 0xFFFFFFFF:
            raise ValueError(f"c: FP32 bits {int(c)} are out of range [0, 0xffffffff]")
        return int(c)
    if isinstance(c, (float, np.floating)):
        f = np.float32(c)
        if not (np.isnan(f) or float(f) == float(c)):
            raise ValueError(f"c: {c!r} is not a float32 value (give its FP32 bits)")
        return int(np.array(f).view(np.uint32))
    raise ValueError(f"c: expected FP32 bits (int) or a float32 value, got {type(c).__name__}")


def explain_mma(a, b, sfa, sfb, c=0, got=None, kind: str = "mxf4nvf4", block: int | None = None,
                scale_type: str | None = None, elem: str | None = None, elem_a: str | None = None,
                elem_b: str | None = None, model: str | None = None) -> dict[str, Any]:
    """Why one instruction's D is what it is. a, b: the K element codes; sfa, sfb: the K/block scale
    codes; c: C as FP32 bits (int) or a float32 value; got: the DUT's D (bits or float32), or None.
    Keywords as mma(). Returns a dict: the operands (codes and values), expected_bits / flags from
    golden, exact (C + sum of products as a Fraction, None if an operand is NaN or Inf) and
    exact_rne_bits, rule (what the model did, e.g. which terms the Blackwell alignment truncated),
    with got: got_bits, ulps, diff (got - expected, a Fraction), matches (the alternatives got
    equals: "RNE(exact)", "RZ(exact)", Blackwell windows of one fractional bit more or less); and
    text, all of it for a person."""
    word32 = KINDS[kind]["scale_word32"] if kind in KINDS else False

    def row(x, dtype):  # arrays keep their dtype (checked as mma's); lists and ints become `dtype`
        x = _numpy(x) if isinstance(x, np.ndarray) or _is_torch(x) else np.asarray(x, dtype=dtype)
        return x.reshape(1, -1)

    k, ea, eb, st, blk, m, A, B, SA, SB = _rows_inputs(
        row(a, np.uint8), row(b, np.uint8), row(sfa, np.uint32 if word32 else np.uint8),
        row(sfb, np.uint32 if word32 else np.uint8), kind, block, scale_type, elem, elem_a, elem_b, model)
    cb = _c_scalar(c)
    gb = None if got is None else _c_scalar(got)
    d, f = _core.mma_rows(A, B, SA, SB, np.array([cb], dtype=np.uint32), kind, ea, eb, st, blk, m, "", True, 1)
    exp_bits, flags = int(d[0]), int(f[0])
    sa32, sb32 = SA[0].astype(np.uint32), SB[0].astype(np.uint32)
    va, vb, vsa, vsb = (x.tolist() for x in _core.mma_factors(A[0], B[0], sa32, sb32, kind, ea, eb, st, blk))
    cval = _f32_value(cb)
    K = k["k"]
    r: dict[str, Any] = {"kind": kind, "model": m, "elem_a": ea, "elem_b": eb, "scale_type": st, "block": blk,
                         "a_codes": A[0].tolist(), "b_codes": B[0].tolist(), "a_values": va, "b_values": vb,
                         "sfa_codes": SA[0].tolist(), "sfb_codes": SB[0].tolist(),
                         "sfa_values": vsa[::blk], "sfb_values": vsb[::blk],
                         "c_bits": cb, "c_value": cval, "expected_bits": exp_bits,
                         "expected_value": _f32_value(exp_bits), "flags": flags}
    w = 8 if k["scale_word32"] else 2
    lines = [f"instruction: kind {kind}, model {m}, A {ea} x B {eb}, scale {st} per {blk} elements",
             f"  A codes (k = 0..{K - 1}): {' '.join(f'{x:x}' for x in A[0])}",
             f"  B codes (k = 0..{K - 1}): {' '.join(f'{x:x}' for x in B[0])}",
             "  scales A: " + ", ".join(f"0x{int(s):0{w}x} ({v!r})" for s, v in zip(SA[0], vsa[::blk])) +
             "; B: " + ", ".join(f"0x{int(s):0{w}x} ({v!r})" for s, v in zip(SB[0], vsb[::blk]))]
    nz = [f"{q}: {va[q]!r} x {vb[q]!r}" for q in range(K) if va[q] != 0 and vb[q] != 0]
    lines.append(f"  nonzero products (k: a x b; {len(nz)} of {K}): {', '.join(nz) if nz else 'none'}")
    lines.append(f"  C = 0x{cb:08x} ({_f32_text(cb)})")

    factors = va + vb + vsa + vsb + [cval]
    nan_op = any(math.isnan(x) for x in factors)
    inf_op = any(math.isinf(x) for x in factors)
    exact = rne = None
    rule = ""
    if nan_op:
        where = [n for n, vals in (("an A element", va), ("a B element", vb), ("an A scale", vsa),
                                   ("a B scale", vsb), ("C", [cval])) if any(math.isnan(x) for x in vals)]
        rule = f"NaN in {', '.join(where)}: D is NaN (canonical 0x7fffffff), no flag"
    elif inf_op:
        rule = ("an operand is infinite: D is +-Inf passed on, or NaN (invalid) where Inf meets a zero factor or "
                "+Inf meets -Inf")
    else:
        exact = sum(Fraction(va[q]) * Fraction(vb[q]) * Fraction(vsa[q]) * Fraction(vsb[q]) for q in range(K))
        exact += Fraction(cval)
        rne = _fp32_bits(exact, rne=True)
        lines.append(f"exact C + sum of products = {_num(exact)}; RNE to FP32: 0x{rne:08x} ({_f32_text(rne)})")
        if m == "blackwell":
            emins = tuple(int(_core.elem_info(t)["emin"]) for t in (ea, eb, st))
            F = k["frac_bits"]
            terms, max_e, lsb, total, dz = _blackwell(k, emins, va, vb, vsa, vsb, cval, F)
            top = next(t[0] for t in terms if t[2] == max_e)
            lost = [t for t in terms if t[3] != t[1]]
            how = "one fused sum of the products" if k["group"] == K else f"{K // k['group']} exact group sums"
            rule = (f"blackwell ({how} and C): every term aligned to the largest exponent 2^{max_e} ({top}) and "
                    f"truncated toward zero to {F} fractional bits below it (grid 2^{lsb}); ")
            if lost:
                rule += (f"terms below 2^{lsb} were truncated in {len(lost)} term(s): "
                         + "; ".join(f"{t[0]} {_num(t[1])} -> {_num(t[3])}" for t in lost[:6])
                         + ("; ..." if len(lost) > 6 else "")
                         + f"; exact sum S = {_num(exact)}, truncated sum T = {_num(total)}, D = RZ(T)")
            else:
                rule += f"no term had bits below 2^{lsb}: T = S = {_num(total)}, D = RZ(T)"
            if dz != exp_bits:  # the reconstruction here disagrees with golden: say so, never hide it
                rule += f" [this reconstruction gives 0x{dz:08x}, golden 0x{exp_bits:08x}: please report]"
            r.update(max_exp=max_e, lsb_exp=lsb, truncated_sum=total)
        elif m == "fp32-seq":
            seq = _fp32_seq(va, vb, vsa, vsb, cval)
            if seq is None:
                rule = "fp32-seq: a dequantized element or an FMA step overflowed to Inf"
            else:
                rule = (f"fp32-seq: each element x its scale rounded to FP32 ({seq[1]} of {2 * K} inexact), then "
                        f"{K} FMAs from C in k order, each one RN ({seq[2]} inexact); D = the last")
                if seq[0] != exp_bits:
                    rule += f" [this reconstruction gives 0x{seq[0]:08x}, golden 0x{exp_bits:08x}: please report]"
        elif m == "ascend-hif4":
            rule = "ascend-hif4: the 64 products (with the level bits) summed exactly, D = RN(C + group sum)"
        else:
            rule = "exact: D = RNE(C + sum of products), one rounding"
        if exp_bits == rne or (exp_bits & 0x7FFFFFFF) == 0 == (rne & 0x7FFFFFFF):
            rule += "; D equals the exact value rounded to nearest even"
        elif exp_bits & 0x7F800000 == 0x7F800000:
            rule += "; |D| overflows FP32: +-Inf"
        else:
            rule += f"; D differs from RNE(exact) 0x{rne:08x} by {_core.ulp_distance(exp_bits, rne)} ulp"
    r.update(exact=exact, exact_rne_bits=rne, rule=rule)
    lines.append(f"rule: {rule}")
    lines.append(f"expected D = 0x{exp_bits:08x} ({_f32_text(exp_bits)}), flags {_flag_names(flags)}")
    if gb is not None:
        ulps = _core.ulp_distance(exp_bits, gb)
        gv = _f32_value(gb)
        r.update(got_bits=gb, got_value=gv, ulps=ulps)
        diff = None
        if math.isfinite(gv) and math.isfinite(r["expected_value"]):
            diff = Fraction(gv) - Fraction(r["expected_value"])
        r["diff"] = diff
        matches = []
        if exact is not None and gb != exp_bits:
            cands = [("RNE(exact)", rne), ("RZ(exact)", _fp32_bits(exact, rne=False))]
            if m == "blackwell":
                for F in (k["frac_bits"] - 1, k["frac_bits"] + 1):
                    cands.append((f"blackwell with {F} fractional bits",
                                  _blackwell(k, emins, va, vb, vsa, vsb, cval, F)[4]))
            matches = [n for n, bits in cands if bits == gb]
        r["matches"] = matches
        if gb == exp_bits:
            lines.append(f"got      D = 0x{gb:08x}: equal")
        else:
            side = "above" if gv > r["expected_value"] else "below"
            how_far = "NaN involved" if ulps is None else f"{ulps} ulp {side}"
            more = f"; got - expected = {_num(diff)}" if diff is not None else ""
            eq = f"; got equals {', '.join(matches)}" if matches else ""
            lines.append(f"got      D = 0x{gb:08x} ({_f32_text(gb)}): {how_far}{more}{eq}")
    r["text"] = "\n".join(lines)
    return r
