"""Independent numpy reference of fp4sim's MMA hardware models, with planted kernel bugs.

Written from SPEC §1 and §4, docs/numerics.md and docs/vectors.md (not from golden/src), so that
the mutation runner can score the golden suites: the flagless path must equal every suite's
`d_blackwell.npy` / `d_ascend-hif4.npy` bit for bit, and each entry of MUTANTS is one bug a kernel
team plausibly writes, switched on by its name in `bugs`.

Exactness: every quantity below is a dyadic rational. Group dot products are FP32 einsums of
small integers (every partial sum an integer < 2^24); other integers are carried in float64 only
where they provably stay below 2^53 (group terms < 2^20, aligned sums < 2^50, products of two
4-bit significands); powers of two are applied with ldexp (exact in float64's range); wider sums
(the no-truncation and hif4-one-round mutants) go through a 44-bit limb decomposition or Python
ints. Steps are the accumulator after each instruction (HiF4: each 64-element group), before alpha.
"""

from __future__ import annotations

import math

import numpy as np

F32_MAX = float(np.finfo(np.float32).max)
NAN_BITS = np.uint32(0x7FFFFFFF)
ZERO_EXP = -126  # MMA-Sim: a zero (element, scale, C) has exponent -126 whatever its type
NEG = -(1 << 20)  # "no exponent": below every real one, for terms excluded from the alignment
NEG16 = -30000  # the same in int16

MUTANTS: dict[str, tuple[str, str]] = {  # name -> (class, what the buggy kernel does)
    "rn-final": ("rounding", "Blackwell final FP32 conversion rounds to nearest even instead of toward zero"),
    "no-truncation": ("alignment", "Blackwell terms summed exactly: no truncation to the alignment window"),
    "window-25-f4": ("alignment",
        "mxf4/mxf4nvf4 keep 25 fraction bits below the largest exponent instead of 35"),
    "window-35-f8": ("alignment", "mxf8f6f4 keeps 35 fraction bits below the largest exponent instead of 25"),
    "zero-groups-no-align": ("alignment",
        "all-zero groups (K=64) / zero products (K=32) do not take part in the alignment"),
    "fp8-subnormal-exp": ("alignment",
        "mxf8f6f4 subnormal elements aligned at exponent -bias instead of 1-bias"),
    "zero-elem-exp": ("alignment",
        "mxf8f6f4 zero elements aligned at the format's minimum exponent instead of -126"),
    "fp32-seq-accum": ("accumulation",
        "Blackwell terms added one by one into an FP32 accumulator (RN each) instead of the fused sum"),
    "c-after-round": ("accumulation",
        "C kept out of the alignment: products fused and truncated to FP32, then C added with FP32 RN"),
    "chain-fp64": ("accumulation",
        "chained K: instruction results kept exact (FP64) between instructions, one RZ to FP32 at the end"),
    "split-k": ("accumulation",
        "split-K: two halves of the instruction chain (the second from +0) added in FP32 at the end"),
    "k-reversed": ("accumulation", "instructions / HiF4 groups chained in reverse K order"),
    "group-32": ("accumulation",
        "mxf4/mxf4nvf4 block-32 scales: two groups of 32 products per instruction instead of four of 16"),
    "alpha-before-round": ("epilogue",
        "alpha multiplies the last instruction's exact sum before the RZ to FP32 (no separate RN(alpha*acc))"),
    "alpha-on-c": ("epilogue",
        "C is scaled by alpha as well (C' = RN(alpha*C) fed to the MMA, then D = RN(alpha*acc))"),
    "nan-scale-ignored": ("specials",
        "NaN scale codes decoded as numbers (UE8M0 0xFF = 2^128, UE4M3 0x7F = 480, E6M2 0xFF = 57344)"),
    "negzero-kept": ("specials",
        "a zero result keeps C's -0 sign (Blackwell: zero result with C = -0; HiF4: all groups zero)"),
    "overflow-saturate": ("specials", "results of magnitude >= 2^128 saturate to +-FLT_MAX instead of +-Inf"),
    "ftz-result": ("specials", "subnormal results flushed to +0"),
    "c-daz": ("specials", "subnormal C (and chained accumulators) read as zero"),
    "inf-times-zero": ("specials", "mxf8f6f4: an E5M2 Inf times a zero element contributes 0 instead of NaN"),
    "ue4m3-sign": ("scale-decode", "UE4M3 scale sign bit honoured (negative scale) instead of ignored"),
    "ue8m0-zero": ("scale-decode", "UE8M0 code 0x00 decoded as 0 instead of 2^-127"),
    "scale-b16-as-b32": ("indexing",
        "block-16 scales indexed as block 32: the scale of column k/32 used for element k"),
    "hif4-one-round": ("hif4", "HiF4: one RN over the whole K instead of one per 64-element group"),
    "hif4-rz": ("hif4", "HiF4: per-group accumulator rounding toward zero instead of to nearest even"),
    "hif4-no-levels": ("hif4", "HiF4: level-2/3 bits of the scale word ignored"),
    "hif4-level-order": ("hif4", "HiF4: level bits read MSB-first (bit 15-k / 31-j instead of 8+k / 16+j)"),
}

# ------------------------------------------------------------------------------------------
# Decoding (SPEC §1). Significands are integers with a fixed number of fraction bits; the
# exponent returned is MMA-Sim's alignment exponent (clamped at the type's minimum normal one).

_ELEM = {  # name: (exponent bits, mantissa bits, bias)
    "e2m1": (2, 1, 1),
    "e2m3": (2, 3, 1),
    "e3m2": (3, 2, 3),
    "e4m3": (4, 3, 7),
    "e5m2": (5, 2, 15),
}


def _decode_elem(codes, name, bugs):
    """-> sig (signed float64 integer, mbits fraction bits), exp (int64), mbits, nan, pinf, ninf."""
    eb, mb, bias = _ELEM[name]
    width = 1 + eb + mb
    c = codes.astype(np.int64) & ((1 << width) - 1)
    neg = (c >> (width - 1)) & 1
    e = (c >> mb) & ((1 << eb) - 1)
    m = c & ((1 << mb) - 1)
    emax = (1 << eb) - 1
    if name == "e4m3":
        nan = (e == emax) & (m == ((1 << mb) - 1))
        inf = np.zeros_like(nan)
    elif name == "e5m2":
        nan = (e == emax) & (m != 0)
        inf = (e == emax) & (m == 0)
    else:
        nan = np.zeros(c.shape, bool)
        inf = np.zeros(c.shape, bool)
    sub = e == 0
    sig = np.where(sub, m, m | (1 << mb)).astype(np.int64)
    exp = np.where(sub, 1 - bias, e - bias).astype(np.int64)
    zero = sub & (m == 0)
    if "fp8-subnormal-exp" in bugs:
        # same value, one binade lower: 2·0.m at 2^-bias
        subn = sub & ~zero
        sig = np.where(subn, sig * 2, sig)
        exp = np.where(subn, exp - 1, exp)
    if "zero-elem-exp" not in bugs:
        exp = np.where(zero, ZERO_EXP, exp)
    special = nan | inf
    sig = np.where(special, 0, sig)
    exp = np.where(special, ZERO_EXP, exp)
    fsig = np.where(neg == 1, -sig, sig).astype(np.float64)
    return fsig, exp, mb, nan, inf & (neg == 0), inf & (neg == 1), zero


def _decode_scale8(codes, stype, bugs):
    """UE8M0 / UE4M3 -> sig (float64, 3 fraction bits), exp (int64), nan."""
    c = codes.astype(np.int64) & 0xFF
    ignore_nan = "nan-scale-ignored" in bugs
    if stype == "ue8m0":
        nan = c == 0xFF
        sig = np.full(c.shape, 8, np.int64)
        exp = c - 127  # code 0 is 2^-127, exponent -127 (UE8M0's own minimum)
        if "ue8m0-zero" in bugs:
            sig = np.where(c == 0, 0, sig)
            exp = np.where(c == 0, ZERO_EXP, exp)
    elif stype == "ue4m3":
        mag = c & 0x7F
        nan = mag == 0x7F  # 0x7F and 0xFF: e4m3fn NaN, checked before the sign is dropped
        e = mag >> 3
        m = mag & 7
        sig = np.where(e == 0, m, m | 8)
        exp = np.where(e == 0, np.where(m == 0, ZERO_EXP, -6), e - 7)
        if "ue4m3-sign" in bugs:
            sig = np.where(c & 0x80, -sig, sig)
    else:
        raise ValueError(f"unknown scale type {stype!r}")
    if ignore_nan:
        nan = np.zeros_like(nan)
    return sig.astype(np.float64), exp.astype(np.int64), nan


def _decode_c(cv, bugs):
    """C (float64 values) -> sig (signed float64 integer), lsb (value = sig·2^lsb), align exp."""
    fin = np.isfinite(cv)
    v = np.where(fin, cv, 0.0)
    if "c-daz" in bugs:
        v = np.where(np.abs(v) < 2.0**-126, np.copysign(0.0, v), v)
    f, ex = np.frexp(v)
    ex = ex.astype(np.int64)
    sig = np.ldexp(f, 53)
    lsb = np.where(v == 0, 0, ex - 53)
    align = np.where(v == 0, ZERO_EXP, np.maximum(ex - 1, -126))
    return sig, lsb, align


# ------------------------------------------------------------------------------------------
# Rounding an exact value T·2^lsb (T an integer) to FP32. (ldexp exponents are passed as int32:
# numpy's int64 ldexp loop is several times slower.)


def _round_f32(T, lsb, rn, bugs=frozenset()):
    """T: float64 integers with |T| < 2^53; lsb: int64. RZ (or RN-even); zero -> +0;
    |result| >= 2^128 -> +-Inf; subnormals kept (grid 2^-149)."""
    a = np.abs(T)
    _, bl = np.frexp(a)
    bl = bl.astype(np.int64)
    E = bl - 1 + lsb
    q = np.maximum(E - 23, -149)
    sh = np.where(a == 0, 0, q - lsb)
    scaled = np.ldexp(a, (-sh).astype(np.int32))
    m = np.floor(scaled)
    if rn:
        frac = scaled - m
        m = m + ((frac > 0.5) | ((frac == 0.5) & (np.fmod(m, 2) == 1)))
    with np.errstate(over="ignore"):
        val = np.ldexp(m, q.astype(np.int32))
        # a nonzero sum that truncates to 0 is +0 too (MMA-Sim: math.trunc returns the int 0)
        out = np.where((T < 0) & (m != 0), -val, val).astype(np.float32)
    return _finish_f32(out, bugs)


def _finish_f32(out, bugs):
    if "overflow-saturate" in bugs:
        out = np.where(np.isinf(out), np.copysign(np.float32(F32_MAX), out), out).astype(np.float32)
    if "ftz-result" in bugs:
        out = np.where(np.abs(out) < np.float32(2.0**-126), np.float32(0.0), out).astype(np.float32)
    return out


def _py_round(T: int, lsb: int, rn: bool) -> float:
    """Python-int twin of _round_f32 for values wider than 53 bits."""
    if T == 0:
        return 0.0
    a = abs(T)
    E = a.bit_length() - 1 + lsb
    q = max(E - 23, -149)
    sh = q - lsb
    if sh > 0:
        m = a >> sh
        if rn:
            rem = a - (m << sh)
            half = 1 << (sh - 1)
            if rem > half or (rem == half and m & 1):
                m += 1
    else:
        m = a << -sh
    if m == 0:
        return 0.0
    if m.bit_length() - 1 + q >= 128:
        v = math.inf
    else:
        v = math.ldexp(m, q)
    return -v if T < 0 else v


def _rn32_add(x, y):
    """RN_fp32(x + y) for float64 x, y holding exact values: TwoSum, then round-to-odd to 53
    bits before the RN to 24 bits (double rounding through an odd sticky bit is exact)."""
    with np.errstate(invalid="ignore", over="ignore"):
        s = x + y
        bb = s - x
        err = (x - (s - bb)) + (y - bb)
        fin = np.isfinite(s)
        odd = (s.view(np.uint64) & np.uint64(1)) == 1
        need = fin & (err != 0) & ~odd
        toward = np.where(err > 0, np.inf, -np.inf)
        s = np.where(need, np.nextafter(s, toward), s)
        return s.astype(np.float32)


def _rz32_add(x, y):
    """RZ_fp32(x + y), same operands as _rn32_add; an exact zero is +0."""
    with np.errstate(invalid="ignore", over="ignore"):
        s = x + y
        bb = s - x
        err = (x - (s - bb)) + (y - bb)
        t = s.astype(np.float32)
        fin = np.isfinite(s)
        d = np.where(fin, t.astype(np.float64) - s, 0.0) - np.where(fin, err, 0.0)
        true_pos = (s > 0) | ((s == 0) & (err > 0))
        true_neg = (s < 0) | ((s == 0) & (err < 0))
        # |t| > |x + y|: step one FP32 ulp toward zero (Inf -> FLT_MAX too)
        over = fin & ((true_pos & ((d > 0) | np.isinf(t))) | (true_neg & ((d < 0) | np.isinf(t))))
        t = np.where(over, np.nextafter(t, np.float32(0)), t)
    return t.astype(np.float32)


# ------------------------------------------------------------------------------------------
# One Blackwell instruction over stacked terms: Nt·2^vl (integers Nt), alignment exponent ea.


def _fused(Nt, vl, ea, cterm, F, rn, bugs):
    """Align the product/group terms and C (cterm = (sig, lsb, align), or None) to the largest
    exponent, truncate each at 2^(max_e - F), sum exactly, round to FP32.
    Returns (float32 result, T, lsb) with T·2^lsb the exact sum before the rounding."""
    if "zero-groups-no-align" in bugs:
        ea = np.where(Nt == 0, NEG, ea)
    max_e = ea.max(axis=-1).astype(np.int64)
    if cterm is not None:
        max_e = np.maximum(max_e, cterm[2])
    if "no-truncation" in bugs:
        if cterm is not None:
            Nt = np.concatenate([Nt, cterm[0][..., None]], axis=-1)
            vl = np.concatenate([vl, cterm[1][..., None]], axis=-1)
        return _exact_round(Nt, vl, rn, bugs)
    lsb = max_e - F
    with np.errstate(over="ignore"):
        X = np.ldexp(Nt, (vl - lsb[..., None]).astype(np.int32))
        np.trunc(X, out=X)
        T = X.sum(axis=-1)
        if cterm is not None:
            T = T + np.trunc(np.ldexp(cterm[0], (cterm[1] - lsb).astype(np.int32)))
    return _round_f32(T, lsb, rn, bugs), T, lsb


def _exact_round(Nt, vl, rn, bugs):
    """Exact sum of the terms Nt·2^vl (last axis; |Nt| < 2^54, at most 64 terms), one rounding.

    Decomposition 44 bits at a time: on the grid 2^g (g = top - 44) every term is integer part
    + signed fraction; the integer parts sum exactly (< 2^50) and the fractions are decomposed
    again, 44 bits lower, until none is left. Folding the levels back (floor division by 2^44,
    remainders in [0, 2^44)) gives sum = T·2^g + rho with
    0 <= rho < 2^g; T·2^g + (rho > 0)·2^(g-1) rounds like the sum wherever the FP32 grid is
    at least 2^(g+1) (a round-to-odd sticky bit). Elsewhere (deep cancellation): Python ints."""
    nz = Nt != 0
    _, bl = np.frexp(np.abs(Nt))
    top = np.where(nz, vl + bl, NEG).max(axis=-1)
    g = np.where(top == NEG, 0, top - 44)
    x = np.ldexp(Nt, (vl - g[..., None]).astype(np.int32))
    f = np.trunc(x)
    r = x - f  # exact: the low bits of x (a floor of a tiny negative x would round 1 - tiny)
    T = f.sum(axis=-1)
    levels = []
    while r.any():
        y = np.ldexp(r, 44)
        f = np.trunc(y)
        r = y - f
        levels.append(f.sum(axis=-1))
    carry = np.zeros_like(T)
    sticky = np.zeros(T.shape, bool)
    for s_l in reversed(levels):
        tot = s_l + carry
        carry = np.floor(np.ldexp(tot, -44))
        sticky |= tot != np.ldexp(carry, 44)
    T = T + carry
    T2 = 2 * T + sticky
    out = _round_f32(T2, g - 1, rn, bugs)
    _, bl2 = np.frexp(np.abs(T2))
    q = np.maximum(bl2 - 1 + g - 1 - 23, -149)
    for idx in zip(*np.nonzero(sticky & (q < g + 1))):
        n = Nt[idx]
        v = vl[idx]
        lmin = int(v[n != 0].min())
        tot = sum(int(n[t]) << int(v[t] - lmin) for t in range(n.shape[0]) if n[t] != 0)
        out[idx] = _finish_f32(np.float32(_py_round(tot, lmin, rn)), bugs)
    return out, None, None


def _alpha_before(T, lsb, alpha):
    """alpha-before-round: RZ_fp32(alpha · T·2^lsb) with Python ints (the product needs 77 bits)."""
    am, ae = math.frexp(float(alpha))
    ai = int(am * (1 << 24))
    out = np.empty(T.shape, np.float32)
    for idx in np.ndindex(T.shape):
        out[idx] = np.float32(_py_round(int(T[idx]) * ai, int(lsb[idx]) + ae - 24, False))
    return out


# ------------------------------------------------------------------------------------------
# Chaining along K (D of one instruction is C of the next) and the epilogue.


def _canon(x):
    x = np.asarray(x, np.float32).copy()
    x.view(np.uint32)[np.isnan(x)] = NAN_BITS
    return x


def _chain(steps_fn, S, c32, bugs):
    """steps_fn(i, acc64, last) -> (float32 result, float64 acc carried on). Returns (acc, steps)."""
    order = list(range(S))
    if "k-reversed" in bugs:
        order.reverse()

    def run(idx, start):
        acc = start
        res = None
        outs = []
        for j, i in enumerate(idx):
            res, acc = steps_fn(i, acc, j == len(idx) - 1)
            outs.append(_canon(res))
        return res, outs

    c64 = c32.astype(np.float64)
    if "split-k" in bugs and S >= 2:
        h = (S + 1) // 2
        r1, o1 = run(order[:h], c64)
        r2, o2 = run(order[h:], np.zeros_like(c64))
        with np.errstate(invalid="ignore", over="ignore"):
            acc = (r1.astype(np.float32) + r2.astype(np.float32)).astype(np.float32)
            o2 = [_canon(r1 + o) for o in o2[:-1]] + [_canon(acc)]
        return acc, o1 + o2
    res, outs = run(order, c64)
    return res, outs


def _epilogue(acc, outs, alpha, bugs, skip_alpha=False):
    with np.errstate(over="ignore", invalid="ignore"):
        d = acc if skip_alpha else (np.float32(alpha) * acc.astype(np.float32)).astype(np.float32)
    steps = np.stack(outs) if len(outs) > 1 else None
    return _canon(d), steps


def _c_input(c, alpha, bugs):
    c32 = np.asarray(c, np.float32)
    if "alpha-on-c" in bugs:
        with np.errstate(over="ignore", invalid="ignore"):
            c32 = (np.float32(alpha) * c32).astype(np.float32)
    return c32


# ------------------------------------------------------------------------------------------
# blackwell, kinds mxf4 / mxf4nvf4 (K = 64: four groups of 16)

_E2M1X2 = np.array([0, 1, 2, 3, 4, 6, 8, 12], np.float64)  # 2 × |E2M1|, exact integers


def _group_dot(A, B):
    """Batched [G, M, k] @ [G, k, N] of small integers, in FP32: exact, since every partial sum
    is an integer below 2^24 whatever the order. einsum's own loop, not BLAS: multithreaded BLAS
    on a loaded 2-core machine stalls for ~100 ms per call."""
    A = np.ascontiguousarray(A, np.float32)
    B = np.ascontiguousarray(B, np.float32)
    return np.einsum("gmk,gkn->gmn", A, B).astype(np.float64)


def _e2m1x2(codes):
    c = codes.astype(np.int64) & 0xF
    v = _E2M1X2[c & 7]
    return np.where(c & 8, -v, v)


def _bw_grouped(a, b, sa, sb, c, alpha, stype, block, bugs):
    M, K = a.shape
    N = b.shape[0]
    S = K // 64
    gs = 32 if ("group-32" in bugs and block == 32) else 16
    G = K // gs
    gpi = 64 // gs
    A2 = _e2m1x2(a).reshape(M, G, gs).transpose(1, 0, 2)
    B2 = _e2m1x2(b).reshape(N, G, gs).transpose(1, 2, 0)
    S2 = _group_dot(A2, B2)  # [G, M, N]: Σ (2a)(2b), integers < 2^13
    sblock = 32 if ("scale-b16-as-b32" in bugs and block == 16) else block
    col = (np.arange(G) * gs) // sblock
    msA, esA, nA = _decode_scale8(sa[:, col], stype, bugs)  # [M, G]
    msB, esB, nB = _decode_scale8(sb[:, col], stype, bugs)  # [N, G]
    # group term: S2·mA·mB at 2^(eA+eB-2-6) (2a, 2b and two 3-bit scale fractions)
    Nt = S2 * msA.T[:, :, None] * msB.T[:, None, :]  # [G, M, N]
    ea = esA.T[:, :, None] + esB.T[:, None, :]
    vl = ea - 8
    F = 25 if "window-25-f4" in bugs else 35
    rn = "rn-final" in bugs
    c32 = _c_input(c, alpha, bugs)
    fp64 = "chain-fp64" in bugs
    alpha_b = "alpha-before-round" in bugs and np.float32(alpha) != np.float32(1)

    def step(i, acc, last):
        g = slice(i * gpi, (i + 1) * gpi)
        nan = nA[:, g].any(axis=1)[:, None] | nB[:, g].any(axis=1)[None, :] | np.isnan(acc)
        cinf = np.isinf(acc)
        csig, clsb, cal = _decode_c(acc, bugs)
        tN = np.moveaxis(Nt[g], 0, -1)
        tv = np.moveaxis(vl[g], 0, -1)
        te = np.moveaxis(ea[g], 0, -1)
        res64 = None
        if "fp32-seq-accum" in bugs:
            r = acc.astype(np.float32).astype(np.float64)
            for t in range(tN.shape[-1]):
                r = _rn32_add(r, np.ldexp(tN[..., t], tv[..., t].astype(np.int32))).astype(np.float64)
            res = r.astype(np.float32)
        elif "c-after-round" in bugs:
            p, _, _ = _fused(tN, tv, te, None, F, rn, bugs)
            with np.errstate(over="ignore", invalid="ignore"):
                res = (p + acc.astype(np.float32)).astype(np.float32)
        else:
            res, T, lsb = _fused(tN, tv, te, (csig, clsb, cal), F, rn, bugs)
            if fp64 and T is not None:
                res64 = np.ldexp(T, lsb.astype(np.int32))
            if last and alpha_b and T is not None:
                res = _alpha_before(T, lsb, alpha)
            if "negzero-kept" in bugs:
                res = np.where((res == 0) & (acc == 0) & np.signbit(acc), np.float32(-0.0), res)
        with np.errstate(over="ignore"):
            res = np.where(cinf, acc.astype(np.float32), res)
        res = np.where(nan, np.float32(np.nan), res).astype(np.float32)
        if res64 is not None and not last:
            carry = np.where(cinf | nan, res.astype(np.float64), res64)
        else:
            carry = res.astype(np.float64)
        return res, carry

    acc, outs = _chain(step, S, c32, bugs)
    return _epilogue(acc, outs, alpha, bugs, skip_alpha=alpha_b)


# ------------------------------------------------------------------------------------------
# blackwell, kind mxf8f6f4 (K = 32: one fused sum of 32 products and C, 25 fraction bits)


def _bw_fused(a, b, sa, sb, c, alpha, elem_a, elem_b, stype, block, bugs):
    M, K = a.shape
    N = b.shape[0]
    S = K // 32
    pa, xa, ma, nanA, piA, niA, zA = _decode_elem(a, elem_a, bugs)
    pb, xb, mb, nanB, piB, niB, zB = _decode_elem(b, elem_b, bugs)
    va = np.ldexp(pa, (xa - ma).astype(np.int32))  # element values, exact
    vb = np.ldexp(pb, (xb - mb).astype(np.int32))
    xa = xa.astype(np.int32)
    xb = xb.astype(np.int32)
    xa16 = xa.astype(np.int16)  # alignment exponents: -126 ... 16, sums fit int16
    xb16 = xb.astype(np.int16)
    msA, esA, snA = _decode_scale8(sa, stype, bugs)  # [M, K/32]
    msB, esB, snB = _decode_scale8(sb, stype, bugs)
    F = 35 if "window-35-f8" in bugs else 25
    rn = "rn-final" in bugs
    c32 = _c_input(c, alpha, bugs)
    fp64 = "chain-fp64" in bugs
    alpha_b = "alpha-before-round" in bugs and np.float32(alpha) != np.float32(1)
    f64 = np.float64

    def step(i, acc, last):
        k = slice(i * 32, (i + 1) * 32)
        j = (i * 32) // block
        # NaN / Inf first, as IEEE arithmetic on the operands (MMA-Sim's float64 pre-check)
        nan = (nanA[:, k].any(1) | snA[:, j])[:, None] | (nanB[:, k].any(1) | snB[:, j])[None, :]
        nan = nan | np.isnan(acc)
        cpos = acc == np.inf
        cneg = acc == -np.inf
        pos = cpos.copy()
        neg = cneg.copy()
        if piA[:, k].any() or niA[:, k].any() or piB[:, k].any() or niB[:, k].any():
            iA = (piA[:, k] | niA[:, k]).astype(f64)
            iB = (piB[:, k] | niB[:, k]).astype(f64)
            if "inf-times-zero" not in bugs:
                nan = nan | ((iA @ zB[:, k].T.astype(f64) + zA[:, k].astype(f64) @ iB.T) > 0)
            fpA = (~zA[:, k] & (pa[:, k] > 0)).astype(f64)
            fnA = (~zA[:, k] & (pa[:, k] < 0)).astype(f64)
            fpB = (~zB[:, k] & (pb[:, k] > 0)).astype(f64)
            fnB = (~zB[:, k] & (pb[:, k] < 0)).astype(f64)
            pA, nA_ = piA[:, k].astype(f64), niA[:, k].astype(f64)
            pB, nB_ = piB[:, k].astype(f64), niB[:, k].astype(f64)
            pos = pos | ((pA @ (pB + fpB).T + nA_ @ (nB_ + fnB).T + fpA @ pB.T + fnA @ nB_.T) > 0)
            neg = neg | ((pA @ (nB_ + fnB).T + nA_ @ (pB + fpB).T + fpA @ nB_.T + fnA @ pB.T) > 0)
        nan = nan | (pos & neg)
        inf = ~nan & (pos | neg)
        csig, clsb, cal = _decode_c(acc, bugs)
        es = esA[:, j][:, None] + esB[:, j][None, :]  # [M, N]
        ssig = msA[:, j][:, None] * msB[:, j][None, :]  # 3+3 fraction bits
        res64 = None
        if bugs & {"fp32-seq-accum", "c-after-round", "no-truncation"}:
            # integer terms P·2^tv with alignment exponents te, for the generic paths
            P = pa[:, None, k] * pb[None, :, k] * ssig[..., None]  # exact: <= 14-bit integers
            te = xa[:, None, k] + xb[None, :, k] + es.astype(np.int32)[..., None]
            tv = te - np.int32(ma + mb + 6)
        if "fp32-seq-accum" in bugs:
            r = acc.astype(np.float32).astype(np.float64)
            for t in range(32):
                r = _rn32_add(r, np.ldexp(P[..., t], tv[..., t].astype(np.int32))).astype(np.float64)
            res = r.astype(np.float32)
        elif "c-after-round" in bugs:
            p, _, _ = _fused(P, tv, te, None, F, rn, bugs)
            with np.errstate(over="ignore", invalid="ignore"):
                res = (p + acc.astype(np.float32)).astype(np.float32)
        else:
            if "no-truncation" in bugs:
                res, T, lsb = _fused(P, tv, te, (csig, clsb, cal), F, rn, bugs)
            else:
                # _fused on values: the element products are exact doubles (<= 8-bit
                # significands) and the alignment is one power-of-two factor per output
                V = va[:, None, k] * vb[None, :, k]
                E = xa16[:, None, k] + xb16[None, :, k]
                if "zero-groups-no-align" in bugs:
                    E = np.where(V == 0, np.int16(NEG16), E)
                lsb = np.maximum(E.max(axis=-1) + es, cal) - F
                X = V * np.ldexp(ssig / 64.0, (es - lsb).astype(np.int32))[..., None]
                np.trunc(X, out=X)
                T = X.sum(axis=-1) + np.trunc(np.ldexp(csig, (clsb - lsb).astype(np.int32)))
                res = _round_f32(T, lsb, rn, bugs)
            if fp64 and T is not None:
                res64 = np.ldexp(T, lsb.astype(np.int32))
            if last and alpha_b and T is not None:
                res = _alpha_before(T, lsb, alpha)
            if "negzero-kept" in bugs:
                res = np.where((res == 0) & (acc == 0) & np.signbit(acc), np.float32(-0.0), res)
        res = np.where(inf, np.where(pos, np.float32(np.inf), np.float32(-np.inf)), res)
        res = np.where(nan, np.float32(np.nan), res).astype(np.float32)
        if res64 is not None and not last:
            carry = np.where(inf | nan, res.astype(np.float64), res64)
        else:
            carry = res.astype(np.float64)
        return res, carry

    acc, outs = _chain(step, S, c32, bugs)
    return _epilogue(acc, outs, alpha, bugs, skip_alpha=alpha_b)


# ------------------------------------------------------------------------------------------
# ascend-hif4 (per 64-element group: exact integer sum, times both E6M2, one FP32 RN)


def _hif4_q(codes, words, bugs):
    """S1P2 codes [R, K] and scale words [R, K/64] -> q = ±c·2^(levels), float64 integers."""
    R, K = codes.shape
    c = codes.astype(np.int64) & 0xF
    mag = c & 7
    w = words.astype(np.int64)[:, np.arange(K) // 64]  # [R, K]
    p = np.arange(K) % 64
    if "hif4-no-levels" in bugs:
        lev = np.zeros((R, K), np.int64)
    elif "hif4-level-order" in bugs:
        lev = ((w >> (15 - p // 8)) & 1) + ((w >> (31 - p // 4)) & 1)
    else:
        lev = ((w >> (8 + p // 8)) & 1) + ((w >> (16 + p // 4)) & 1)
    q = (mag << lev).astype(np.float64)
    return np.where(c & 8, -q, q)


def _hif4(a, b, sa, sb, c, alpha, bugs):
    M, K = a.shape
    N = b.shape[0]
    G = K // 64
    qa = _hif4_q(a, sa, bugs).reshape(M, G, 64).transpose(1, 0, 2)
    qb = _hif4_q(b, sb, bugs).reshape(N, G, 64).transpose(1, 2, 0)
    Sg = _group_dot(qa, qb) + 0.0  # [G, M, N], integers < 2^16; +0.0 makes -0 sums +0

    def e6m2(words):
        byte = words.astype(np.int64) & 0xFF
        nan = byte == 0xFF
        if "nan-scale-ignored" in bugs:
            nan = np.zeros_like(nan)
        return 4 + (byte & 3), byte >> 2, nan

    WA, EA, NA = e6m2(sa)  # [M, G]
    WB, EB, NB = e6m2(sb)
    Wg = (WA.T[:, :, None] * WB.T[:, None, :]).astype(np.float64)
    Eg = EA.T[:, :, None] + EB.T[:, None, :] - 104
    nan_g = NA.T[:, :, None] | NB.T[:, None, :]
    # exact group value: integer < 2^22 at 2^(>= -104): an FP32 normal
    gv = np.ldexp(Sg * Wg, Eg.astype(np.int32))
    gv = np.where(nan_g, np.nan, gv)
    c32 = _c_input(c, alpha, bugs)

    if "hif4-one-round" in bugs:
        outs = _hif4_one_round(Sg, Wg, Eg, nan_g, c32, bugs)
        return _epilogue(outs[-1], [_canon(o) for o in outs], alpha, bugs)

    def step(g, acc, last):
        x = acc.astype(np.float32)
        if "c-daz" in bugs:
            x = np.where(np.abs(x) < np.float32(2.0**-126), np.copysign(np.float32(0), x), x).astype(np.float32)
        y = gv[g].astype(np.float32)
        with np.errstate(over="ignore", invalid="ignore"):
            if "hif4-rz" in bugs:
                res = _rz32_add(x.astype(np.float64), y.astype(np.float64))
                res = np.where(np.isfinite(x) & np.isfinite(y), res, x + y).astype(np.float32)
            else:
                res = (x + y).astype(np.float32)
        fin_in = np.isfinite(x) & np.isfinite(y)
        res = np.where(fin_in, _finish_f32(res, bugs), res).astype(np.float32)
        if "negzero-kept" in bugs:
            res = np.where((res == 0) & (x == 0) & np.signbit(x) & (y == 0), np.float32(-0.0), res)
        return res, res.astype(np.float64)

    acc, outs = _chain(step, G, c32, bugs)
    return _epilogue(acc, outs, alpha, bugs)


def _hif4_one_round(Sg, Wg, Eg, nan_g, c32, bugs):
    """Exact sum of C and the groups so far, one RN to FP32 per prefix (the steps)."""
    cv = c32.astype(np.float64)
    csig, clsb, _ = _decode_c(cv, bugs)
    Nt = np.concatenate([csig[..., None], np.moveaxis(Sg * Wg, 0, -1)], axis=-1)
    vl = np.concatenate([clsb[..., None], np.moveaxis(Eg, 0, -1)], axis=-1)
    nan = np.isnan(cv)
    outs = []
    for g in range(Sg.shape[0]):
        nan = nan | nan_g[g]
        r, _, _ = _exact_round(Nt[..., : g + 2], vl[..., : g + 2], True, bugs)
        r = np.where(np.isinf(cv), cv.astype(np.float32), r)
        outs.append(np.where(nan, np.float32(np.nan), r).astype(np.float32))
    return outs


# ------------------------------------------------------------------------------------------


def hardware_d(kind, elem_a, elem_b, scale_type, block, a_codes, b_codes, a_scales, b_scales, c, alpha,
               bugs=frozenset()):
    """D [M, N] float32 of the kind's hardware model (blackwell; ascend-hif4 for hif4), epilogue
    D = RN_fp32(alpha·acc), NaN as 0x7FFFFFFF; and steps [S, M, N] = acc after each instruction
    (before alpha), or None for one instruction."""
    bugs = frozenset(bugs)
    unknown = bugs - MUTANTS.keys()
    if unknown:
        raise ValueError(f"unknown mutant(s): {sorted(unknown)}")
    a = np.asarray(a_codes)
    b = np.asarray(b_codes)
    sa = np.asarray(a_scales)
    sb = np.asarray(b_scales)
    c = np.asarray(c, np.float32)
    K = a.shape[1]
    if kind in ("mxf4", "mxf4nvf4"):
        if K % 64:
            raise ValueError(f"{kind}: K = {K} is not a multiple of 64")
        return _bw_grouped(a, b, sa, sb, c, alpha, scale_type, int(block), bugs)
    if kind == "mxf8f6f4":
        if K % 32:
            raise ValueError(f"mxf8f6f4: K = {K} is not a multiple of 32")
        return _bw_fused(a, b, sa, sb, c, alpha, elem_a, elem_b, scale_type, int(block), bugs)
    if kind == "hif4":
        if K % 64:
            raise ValueError(f"hif4: K = {K} is not a multiple of 64")
        return _hif4(a, b, sa, sb, c, alpha, bugs)
    raise ValueError(f"unknown kind {kind!r}")
