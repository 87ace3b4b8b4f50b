"""Independent numpy reference quantizer, written from SPEC.md §1-3, docs/formats.md,
docs/rng_and_transforms.md and docs/vectors.md (not from golden/src).

The bug-free path is the one with no flag in `bugs`; every `if "<name>" in bugs:` is a planted
implementation bug (a mutant) listed in QUANT_MUTANTS. Entry point: `quantize(x, quant, bugs)`
with `quant` the operand's `quant` object of a suite manifest.

Exactness: element rounding is decided on float64 values that are exact (float32 inputs scaled by
powers of two, or float32 x BF16 products), by comparing the exact fraction; NVFP4's formulas run
in numpy float32 (each operation rounded once, as TE's FP32 code); the RHT sums in float64 only
where the exponent spread proves the sum exact, otherwise in Python integers.
"""
from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

# name -> (class, one-line description). Classes: element, scale, layout, sr, rht, hif4.
QUANT_MUTANTS: dict[str, tuple[str, str]] = {
    # element rounding
    "nvfp4_rna": ("element", "NVFP4 elements round half away from zero instead of half to even"),
    "nvfp4_rz": ("element", "NVFP4 elements truncated (RZ) instead of RNE"),
    "mx_fp4_rna": ("element", "MXFP4 (E2M1) elements round half away instead of half to even"),
    "mx_fp6_rna": ("element", "MXFP6 (E2M3/E3M2) ties rounded away from zero"),
    "mx_fp8_rna": ("element", "MXFP8 (E4M3/E5M2) ties rounded away from zero"),
    "mx_rz": ("element", "MX elements truncated (RZ) instead of RNE"),
    "fp8_no_sat": ("element", "MXFP8 element overflow gives NaN/Inf instead of saturating to +-max"),
    "nvfp4_nan_zero": ("element", "NVFP4 NaN input encodes as 0 instead of +6 (satfinite)"),
    "neg_zero_signed": ("element", "-0.0 input encoded as -0 (sign from the sign bit, not x < 0)"),
    "neg_underflow_plus0": ("element", "negative value rounding to 0 encoded as +0 instead of -0"),
    "mx_subnormal_ftz": ("element", "FP6/FP8 element subnormals flushed to zero"),
    # scale computation
    "nvfp4_scale_div6_first": ("scale", "NVFP4 block scale RN(RN(amax/6)*S_enc) instead of amax*RN(S_enc*RN(1/6))"),
    "nvfp4_scale_torchao": ("scale", "NVFP4 block scale RN(RN(amax/6)/S_dec) (torchao's order)"),
    "nvfp4_sdec_2688": ("scale", "NVFP4 S_dec = amax/2688 instead of 1/S_enc"),
    "nvfp4_divide": ("scale", "NVFP4 elements x/(scale*S_dec) instead of x*RN(1/(scale*S_dec))"),
    "ue4m3_rz": ("scale", "UE4M3 block scale rounded toward zero instead of RNE"),
    "nvfp4_no_inv_clamp": ("scale", "missing FLT_MAX clamp of the reciprocal block scale (1/0 = Inf)"),
    "nvfp4_min_scale_clamp": ("scale", "NVFP4 block scale clamped below at 2^-6 (E4M3 min normal)"),
    "nvfp4_amax0_senc": ("scale", "tensor amax == 0 not mapped to S_enc = 1"),
    "nvfp4_no_senc_clamp": ("scale", "missing FLT_MAX clamp on S_enc = 2688/amax"),
    "nvfp4_pts_pre_rht": ("scale", "per-tensor amax taken before the RHT instead of after"),
    "nvfp4_2d_as_1d": ("scale", "2D 16x16 tile scaling done as 1x16 blocks"),
    "mx_scale_rule_swap": ("scale", "MX scale rules floor and ceil swapped"),
    "mx_log2_f32": ("scale", "MX shared exponent from float32 log2 (integer just below powers of two)"),
    "mx_emax_e3m2": ("scale", "MX emax of E3M2 taken as 2 (E2M3's) instead of 4"),
    "mx_zero_scale_127": ("scale", "MX all-zero block gets scale 127 (1.0) instead of 0"),
    "mx_nan_not_flagged": ("scale", "MX block with NaN not flagged (scale from the finite values, NaN -> 0)"),
    "mx_no_m127_clamp": ("scale", "MX exponent not clamped at -127 (8-bit code wraps)"),
    # layouts
    "nibble_swap": ("layout", "packed nibbles swapped: element 2i in the high nibble"),
    "atom_rc_swap": ("layout", "scale atom: (r%128)/32 and c%4 strides swapped inside the 512-byte tile"),
    "atom_col_major": ("layout", "scale atom: 128x4 tiles stored column-major (row tiles fastest)"),
    "atom_pad_nonzero": ("layout", "scale atom padding filled with the code of 1.0 instead of 0"),
    # stochastic rounding
    "sr_byte_be": ("sr", "SR byte taken big-endian within each Philox word"),
    "sr_counter_i": ("sr", "Philox counter i instead of i/16"),
    "sr_stream_ignored": ("sr", "SR stream ignored (counter word 2 = 0)"),
    "sr_gt": ("sr", "SR rounds up when frac + r/256 > 1 instead of >= 1"),
    # RHT
    "rht_signs_reversed": ("rht", "RHT sign vector applied in reverse order"),
    "rht_no_bf16": ("rht", "RHT output not rounded to BF16 when rht_bf16 is set"),
    "rht_wrong_axis": ("rht", "RHT applied along the rows (axis 0) instead of the reduction axis"),
    "rht_seed_stream": ("rht", "seeded RHT signs drawn from the quantizer's stream instead of RHT1"),
    # HiF4
    "hif4_rne": ("hif4", "HiF4 elements round half to even instead of half up"),
    "hif4_level_gt": ("hif4", "HiF4 level thresholds > instead of >="),
    "hif4_rec_fp32": ("hif4", "HiF4 REC = 1/E6M2 kept in FP32 instead of BF16"),
    "hif4_seventh_fp32": ("hif4", "HiF4 1/7 taken in FP32 instead of BF16(1/7)"),
    "hif4_level_bits_swapped": ("hif4", "HiF4 level bits stored MSB-first (bit 15-k / 31-j)"),
    "hif4_e6m2_rz": ("hif4", "HiF4 E6M2 scale truncated to 3 significant bits instead of RNE"),
}

FLT_MAX = np.float32(np.finfo(np.float32).max)


# ----------------------------------------------------------------------------------------------
# Element / scale types

class Fmt:
    """A minifloat: `bits` wide (sign in the top bit when signed), exponent/mantissa widths, bias."""

    def __init__(self, name, ebits, mbits, bias, signed=True, nan_code=None, inf_code=None, drop=()):
        self.name, self.ebits, self.mbits, self.bias, self.signed = name, ebits, mbits, bias, signed
        self.bits = ebits + mbits + (1 if signed else 0)
        self.nan_code, self.inf_code = nan_code, inf_code
        self.emin = 1 - bias
        ncodes = 1 << (ebits + mbits)
        vals = []
        for c in range(ncodes):
            if c in drop:
                break
            e, m = c >> mbits, c & ((1 << mbits) - 1)
            vals.append(math.ldexp(m, self.emin - mbits) if e == 0 else math.ldexp((1 << mbits) + m, e - bias - mbits))
        self.values = np.array(vals)          # value of magnitude code c (finite codes only)
        self.max_code = len(vals) - 1
        self.max = vals[-1]
        self.sign_bit = (1 << (self.bits - 1)) if signed else 0


E2M1 = Fmt("e2m1", 2, 1, 1)
E2M3 = Fmt("e2m3", 2, 3, 1)
E3M2 = Fmt("e3m2", 3, 2, 3)
E4M3 = Fmt("e4m3", 4, 3, 7, nan_code=0x7F, drop=(0x7F,))
E5M2 = Fmt("e5m2", 5, 2, 15, nan_code=0x7E, inf_code=0x7C, drop=(0x7C,))
UE4M3 = Fmt("ue4m3", 4, 3, 7, signed=False, nan_code=0x7F, drop=(0x7F,))
ELEMS = {f.name: f for f in (E2M1, E2M3, E3M2, E4M3, E5M2)}
EMAX = {"e2m1": 2, "e2m3": 2, "e3m2": 4, "e4m3": 8, "e5m2": 15}   # OCP MX emax_elem


def _round_up(t, rounding, rbytes, bugs):
    """Exact rounding decision for t >= 0 (float64, exact): integer count of grid steps."""
    n = np.floor(t)
    f = t - n                                   # exact: t and floor(t) share the binade
    if rounding == "rne":
        up = (f > 0.5) | ((f == 0.5) & (np.fmod(n, 2.0) == 1.0))
    elif rounding == "rna":
        up = f >= 0.5
    elif rounding == "rz":
        up = np.zeros(t.shape, bool)
    elif rounding == "sr":
        # floor(t + r/256): carry iff frac*256 + r >= 256 (frac*256 is exact).
        fr = f * 256.0
        lim = 256.0 - rbytes.astype(np.float64)
        up = (fr > lim) if "sr_gt" in bugs else (fr >= lim)
    else:
        raise ValueError(f"unknown rounding {rounding!r}")
    return n + up


def encode(x, fmt: Fmt, rounding="rne", rbytes=None, saturate=True, bugs=frozenset(), ftz=False, sign_of=None):
    """Codes of float64 values x (exact) in `fmt`. Sign bit iff x < 0; NaN -> NaN code (+max if
    none); overflow after rounding -> +-max (saturate) or Inf/NaN."""
    x = np.asarray(x, dtype=np.float64)
    finite = np.isfinite(x)
    a = np.where(finite, np.abs(x), 0.0)
    _, ex = np.frexp(a)
    e = np.maximum(ex - 1, fmt.emin)            # binade exponent; subnormals share emin's step
    sexp = e - fmt.mbits
    t = np.ldexp(a, -sexp)
    n = _round_up(t, rounding, rbytes, bugs)
    val = np.ldexp(n, sexp)
    if ftz:
        val = np.where(val < math.ldexp(1.0, fmt.emin), 0.0, val)
    over = val > fmt.max
    mag = np.searchsorted(fmt.values, np.minimum(val, fmt.max)).astype(np.int64)
    big = fmt.max_code
    if not saturate:
        big_over = fmt.inf_code if fmt.inf_code is not None else (fmt.nan_code if fmt.nan_code is not None else big)
    else:
        big_over = big
    mag = np.where(over, big_over, mag)
    isinf = np.isinf(x)
    if fmt.inf_code is not None and not saturate:
        mag = np.where(isinf, fmt.inf_code, mag)
    else:
        mag = np.where(isinf, big if saturate or fmt.nan_code is None else fmt.nan_code, mag)
    isnan = np.isnan(x)
    sx = x if sign_of is None else np.asarray(sign_of, dtype=np.float64)   # the sign is the input's
    neg = (np.signbit(sx) if "neg_zero_signed" in bugs else (sx < 0)) & ~isnan
    if "neg_underflow_plus0" in bugs:
        neg &= val != 0
    code = mag | np.where(neg, fmt.sign_bit, 0)
    if isnan.any():
        code = np.where(isnan, fmt.nan_code if fmt.nan_code is not None else big, code)
    return code.astype(np.uint8)


# ----------------------------------------------------------------------------------------------
# Philox4x32-10 SR bytes (SPEC §3)

_M0, _M1 = np.uint64(0xD2511F53), np.uint64(0xCD9E8D57)
_W0, _W1 = 0x9E3779B9, 0xBB67AE85
_MASK = np.uint64(0xFFFFFFFF)


def philox4x32_10(c0, c1, c2, c3, k0, k1):
    """Random123 Philox4x32-10 on uint64 arrays holding 32-bit words; returns 4 uint32 arrays."""
    c0, c1, c2, c3 = (np.asarray(v, dtype=np.uint64) & _MASK for v in (c0, c1, c2, c3))
    k0, k1 = int(k0) & 0xFFFFFFFF, int(k1) & 0xFFFFFFFF
    for rnd in range(10):
        p0 = c0 * _M0
        p1 = c2 * _M1
        hi0, lo0 = p0 >> np.uint64(32), p0 & _MASK
        hi1, lo1 = p1 >> np.uint64(32), p1 & _MASK
        c0, c1, c2, c3 = hi1 ^ c1 ^ np.uint64(k0), lo1, hi0 ^ c3 ^ np.uint64(k1), lo0
        if rnd < 9:
            k0, k1 = (k0 + _W0) & 0xFFFFFFFF, (k1 + _W1) & 0xFFFFFFFF
    return [v.astype(np.uint32) for v in (c0, c1, c2, c3)]


def sr_bytes(seed, stream, n, bugs=frozenset()):
    """r for element indices 0..n-1: byte (i mod 16), little-endian, of Philox(key = seed,
    counter = (i/16, stream, 0))."""
    seed = int(seed) & 0xFFFFFFFFFFFFFFFF
    if "sr_stream_ignored" in bugs:
        stream = 0
    i = np.arange(n, dtype=np.uint64)
    if "sr_counter_i" in bugs:
        ub, inv = i, np.arange(n)
    else:
        ub, inv = np.arange((n + 15) // 16, dtype=np.uint64), (i >> np.uint64(4)).astype(np.int64)
    w = philox4x32_10(ub & _MASK, ub >> np.uint64(32), np.full(ub.shape, int(stream) & 0xFFFFFFFF, np.uint64),
                      np.zeros(ub.shape, np.uint64), seed & 0xFFFFFFFF, seed >> 32)
    words = np.stack(w, axis=1)                                   # [blocks, 4] uint32
    byts = words.astype("<u4").view(np.uint8).reshape(-1, 16)     # little-endian bytes
    pos = (i % np.uint64(16)).astype(np.int64)
    if "sr_byte_be" in bugs:
        pos = (pos // 4) * 4 + (3 - pos % 4)
    return byts[inv, pos]


# ----------------------------------------------------------------------------------------------
# Random Hadamard transform (SPEC §2.4, docs/rng_and_transforms.md)

TE_SIGNS16 = np.array([1, 1, 1, -1, 1, -1, -1, -1, -1, -1, -1, 1, -1, 1, -1, -1])
RHT_STREAM = 0x52485431


def rht_signs(quant, bugs=frozenset()):
    n = int(quant["rht"])
    src = quant.get("rht_signs", "seeded" if n != 16 else "te-fixed-16")
    if src == "te-fixed-16":
        s = TE_SIGNS16.copy()
    else:
        stream = int(quant.get("stream", 0)) if "rht_seed_stream" in bugs else RHT_STREAM
        seed = quant.get("rht_seed", quant.get("seed", 0))     # suites may give the signs their own seed
        r = sr_bytes(int(seed), stream, n, frozenset(b for b in bugs if b.startswith("sr_")))
        s = np.where(r & 1, -1, 1)
    if "rht_signs_reversed" in bugs:
        s = s[::-1].copy()
    return s


def hadamard(n):
    i = np.arange(n)
    pc = np.vectorize(lambda v: bin(v).count("1"))(i[:, None] & i[None, :])
    return np.where(pc % 2 == 1, -1, 1)


def _f32_from_int(mag_signed: int, q: int, k_half: int, odd: bool) -> float:
    """RN to float32 of S * 2^q / sqrt(N), N = 4^k_half (or 2*4^k_half when odd), exactly."""
    if mag_signed == 0:
        return 0.0
    neg = mag_signed < 0
    mag = -mag_signed if neg else mag_signed
    if not odd:
        q2 = q - k_half
        bl = mag.bit_length()
        qexp = max(bl - 1 + q2 - 23, -149)
        if qexp <= q2:
            mant = mag << (q2 - qexp)
        else:
            d = qexp - q2
            mant, rem, half = mag >> d, mag & ((1 << d) - 1), 1 << (d - 1)
            if rem > half or (rem == half and (mant & 1)):
                mant += 1
        v = math.ldexp(mant, qexp)
        if v >= 2.0 ** 128:
            v = math.inf
        return -v if neg else v
    # odd log2 N: t = mag * 2^q / (2^k * sqrt 2) is irrational, never a tie; compare squares.
    t2 = Fraction(mag * mag) * Fraction(2) ** (2 * q - 2 * k_half - 1)
    f = np.float32(math.sqrt(float(t2)) if float(t2) != math.inf else np.inf)
    up, dn = np.float32(np.inf), np.float32(0)

    def exact(v):
        return v if isinstance(v, Fraction) else (Fraction(2) ** 128 if np.isinf(v) else Fraction(float(v)))

    def mid2(a, b):
        m = (exact(a) + exact(b)) / 2
        return m * m

    while True:
        nu = np.nextafter(f, up)
        if not np.isinf(f) and t2 > mid2(f, nu):
            f = nu
            continue
        nd = np.nextafter(f, dn) if f > 0 else None
        if nd is not None and t2 < mid2(nd, f):
            f = nd
            continue
        break
    v = float(f)
    return -v if neg else v


def rht_apply(x, quant, bugs=frozenset()):
    """Forward RHT along the last axis in tiles of N: each output the exact sum rounded once to
    FP32 (+0.0 for an exact zero), then optionally RN to BF16."""
    n = int(quant["rht"])
    x = np.asarray(x, dtype=np.float32)
    if "rht_wrong_axis" in bugs:
        rows = (x.shape[0] // n) * n
        out = x.copy()
        if rows:
            out[:rows] = _rht_last(x[:rows].T.copy(), n, quant, bugs).T
        return out
    return _rht_last(x, n, quant, bugs)


def _rht_last(x, n, quant, bugs):
    R, K = x.shape
    if K % n:
        raise ValueError(f"RHT size {n} does not divide {K} columns")
    lg = n.bit_length() - 1
    odd, k_half = bool(lg % 2), lg // 2
    mat = (rht_signs(quant, bugs)[:, None] * hadamard(n)).astype(np.float64)   # D . H
    tiles = x.reshape(-1, n)
    S = tiles.astype(np.float64) @ mat + 0.0       # the +0.0 turns an all -0 sum into +0
    # certificate (docs/rng_and_transforms.md): exponent spread small enough that every partial
    # sum is an integer below 2^53 times the tile's quantum, so the float64 sum is exact.
    bits = tiles.view(np.uint32) & np.uint32(0x7FFFFFFF)
    ef = (bits >> np.uint32(23)).astype(np.int64)
    E = ef.max(axis=1)
    e = np.where(bits == 0, 1 << 20, np.maximum(ef, 1)).min(axis=1)
    finite = E < 255
    cert = finite & (E - np.minimum(e, E) <= 29 - lg)
    out = np.empty(S.shape, np.float32)
    if not odd:
        y = np.ldexp(S, -k_half)
        with np.errstate(over="ignore"):
            out[:] = y.astype(np.float32)
    else:
        # N = 2*4^k: y is within 2^-51 relative of t = S/sqrt(N); where the bracket y(1 -+ 2^-50)
        # rounds to two floats, t may lie on either side of a midpoint: decide exactly.
        with np.errstate(over="ignore", invalid="ignore"):
            y = S / (math.sqrt(2.0) * 2.0 ** k_half)
            out[:] = y.astype(np.float32)
            lo = (y * (1 - 2.0 ** -50)).astype(np.float32)
            hi = (y * (1 + 2.0 ** -50)).astype(np.float32)
            amb = (lo != hi) & cert[:, None]
        for t, j in zip(*np.nonzero(amb)):
            num, den = Fraction(float(S[t, j])).as_integer_ratio()
            out[t, j] = _f32_from_int(num, -(den.bit_length() - 1), k_half, True)
    slow = np.nonzero(finite & ~cert)[0]
    if slow.size:
        imat = mat.astype(np.int64)
        for t in slow:
            mant, ex = np.frexp(tiles[t].astype(np.float64))
            ints = [int(m * 2 ** 53) for m in mant]
            exps = [int(v) - 53 for v in ex]
            q = min(exps)
            vals = [iv << (ev - q) for iv, ev in zip(ints, exps)]
            for j in range(n):
                s = sum(v * int(imat[i, j]) for i, v in enumerate(vals))
                out[t, j] = _f32_from_int(s, q, k_half, odd)
    out = out.reshape(R, K)
    if quant.get("rht_bf16") and "rht_no_bf16" not in bugs:
        out = to_bf16(out)
    return out


def to_bf16(x):
    b = np.asarray(x, dtype=np.float32).view(np.uint32).astype(np.uint64)
    r = ((b + 0x7FFF + ((b >> 16) & 1)) & 0xFFFF0000).astype(np.uint32).view(np.float32)
    return np.where(np.isnan(x), x, r).astype(np.float32)


# ----------------------------------------------------------------------------------------------
# NVFP4 (SPEC §2.2): TE's FP32 formulas

def _fmax_abs(a, axis):
    return np.fmax.reduce(np.abs(a), axis=axis, initial=np.float32(0))


def nvfp4_quantize(x, quant, rbytes, bugs, x_pre_rht=None):
    f = np.float32
    R, K = x.shape
    with np.errstate(all="ignore"):
        if quant.get("pts", "on") == "on":
            src = x_pre_rht if ("nvfp4_pts_pre_rht" in bugs and x_pre_rht is not None) else x
            amax = _fmax_abs(src.ravel(), 0)
            s_enc = f(448.0 * 6.0) / amax
            if "nvfp4_no_senc_clamp" not in bugs:
                s_enc = min(s_enc, FLT_MAX)
            if (amax == 0 and "nvfp4_amax0_senc" not in bugs) or s_enc == 0:
                s_enc = f(1.0)
            s_dec = amax / f(2688.0) if "nvfp4_sdec_2688" in bugs else f(1.0) / s_enc
        else:
            s_enc = s_dec = f(1.0)
        s_enc, s_dec = f(s_enc), f(s_dec)
        blocks = x.reshape(R, K // 16, 16)
        if quant.get("2d") and "nvfp4_2d_as_1d" not in bugs:
            bam = np.empty((R, K // 16), np.float32)
            for r0 in range(0, R, 16):
                t = _fmax_abs(blocks[r0:r0 + 16], (0, 2))
                bam[r0:r0 + 16] = t[None, :]
        else:
            bam = _fmax_abs(blocks, 2)
        sixth = f(1.0) / f(6.0)
        if "nvfp4_scale_div6_first" in bugs:
            sdec_b = (bam / f(6.0)) * s_enc
        elif "nvfp4_scale_torchao" in bugs:
            sdec_b = (bam / f(6.0)) / s_dec
        else:
            sdec_b = bam * (s_enc * sixth)
        sdec_b = sdec_b.astype(np.float32)
        if "nvfp4_min_scale_clamp" in bugs:
            sdec_b = np.maximum(sdec_b, f(2.0 ** -6))
        scodes = encode(sdec_b.astype(np.float64), UE4M3, "rz" if "ue4m3_rz" in bugs else "rne")
        sval = np.where(scodes == 0x7F, np.nan, UE4M3.values[np.minimum(scodes, UE4M3.max_code)]).astype(np.float32)
        denom = (sval * s_dec).astype(np.float32)
        if "nvfp4_divide" in bugs:
            v = (blocks / denom[:, :, None]).astype(np.float32)
        else:
            inv = (f(1.0) / denom).astype(np.float32)
            if "nvfp4_no_inv_clamp" not in bugs:
                inv = np.minimum(inv, FLT_MAX)
            v = (blocks * inv[:, :, None]).astype(np.float32)
    v = v.reshape(R, K)
    rnd = quant.get("rounding", "rne")
    if rnd == "rne" and "nvfp4_rna" in bugs:
        rnd = "rna"
    if rnd == "rne" and "nvfp4_rz" in bugs:
        rnd = "rz"
    # sign from x itself: x*inv may underflow to -0.0 for a negative x (SPEC §1 sign rule)
    codes = encode(v.astype(np.float64), E2M1, rnd, rbytes, saturate=True, bugs=bugs, sign_of=x)
    if "nvfp4_nan_zero" in bugs:
        codes = np.where(np.isnan(v), 0, codes).astype(np.uint8)
    return codes, scodes.astype(np.uint8), s_dec


# ----------------------------------------------------------------------------------------------
# MX (SPEC §2.1)

def mx_quantize(x, elem: str, quant, rbytes, bugs):
    fmt = ELEMS[elem]
    R, K = x.shape
    xb = x.reshape(R, K // 32, 32).astype(np.float64)
    nan_blk = np.isnan(xb).any(axis=2)
    inf_blk = np.isinf(xb).any(axis=2)
    bad = (nan_blk | inf_blk) if "mx_nan_not_flagged" not in bugs else inf_blk
    amax = np.where(np.isfinite(xb), np.abs(xb), 0.0).max(axis=2)
    # "rceil" (torchao's and NVIDIA's name for the truncation-free rule); "ceil" is its alias.
    rule = {"ceil": "rceil"}.get(quant.get("scale_rule", "floor"), quant.get("scale_rule", "floor"))
    if "mx_scale_rule_swap" in bugs:
        rule = {"floor": "rceil", "rceil": "floor"}[rule]
    emax = 2 if (elem == "e3m2" and "mx_emax_e3m2" in bugs) else EMAX[elem]
    _, ex = np.frexp(amax)
    L = ex.astype(np.int64) - 1
    if "mx_log2_f32" in bugs:
        with np.errstate(divide="ignore"):
            lg = np.log2(amax.astype(np.float32))
        L = np.where(amax > 0, np.floor(np.where(np.isfinite(lg), lg, 0)), 0).astype(np.int64)
    if rule == "floor":
        e = L - emax
    elif rule == "rceil":
        lm = math.frexp(fmt.max)[1] - 1
        e = L - lm
        e = np.where(np.ldexp(fmt.max, e) >= amax, e, e + 1)
    else:
        raise ValueError(f"unknown scale rule {rule!r}")
    zero = amax == 0
    e = np.where(zero, -127, e)
    if "mx_no_m127_clamp" in bugs:
        code = ((e + 127) & 0xFF)
        e_el = e
    else:
        e = np.clip(e, -127, 127)
        code, e_el = e + 127, e
    if "mx_zero_scale_127" in bugs:
        code = np.where(zero, 127, code)
        e_el = np.where(zero, 0, e_el)
    v = np.ldexp(xb, -e_el[:, :, None])
    rnd = quant.get("rounding", "rne")
    if rnd == "rne":
        w = {"e2m1": "mx_fp4_rna", "e2m3": "mx_fp6_rna", "e3m2": "mx_fp6_rna",
             "e4m3": "mx_fp8_rna", "e5m2": "mx_fp8_rna"}[elem]
        if w in bugs:
            rnd = "rna"
        elif "mx_rz" in bugs:
            rnd = "rz"
    sat = not ("fp8_no_sat" in bugs and fmt.bits == 8)
    ftz = "mx_subnormal_ftz" in bugs and fmt.bits > 4
    rb = None if rbytes is None else rbytes.reshape(v.shape)
    codes = encode(np.where(np.isnan(v), 0.0, v) if "mx_nan_not_flagged" in bugs else v,
                   fmt, rnd, rb, saturate=sat, bugs=bugs, ftz=ftz)
    codes = np.where(bad[:, :, None], 0, codes).astype(np.uint8)
    scales = np.where(bad, 0xFF, code).astype(np.uint8)
    return codes.reshape(R, K), scales


# ----------------------------------------------------------------------------------------------
# HiF4 (SPEC §2.3): the official library's To_HiFX, exact

def _bf16_round64(v):
    """RNE of positive float64 values to 8 significant bits (BF16 normal range)."""
    m, ex = np.frexp(v)
    return np.ldexp(np.rint(np.ldexp(m, 8)), ex - 8)


def _e6m2_of(sf, rz=False):
    m, ex = np.frexp(sf)                           # sf = m 2^ex, m in [0.5, 1)
    q = np.floor(np.ldexp(m, 3)) if rz else np.rint(np.ldexp(m, 3))   # 3 significant bits (RNE)
    val = np.ldexp(q, ex - 3)
    _, ex2 = np.frexp(val)
    E = ex2 - 1
    M = (np.ldexp(val, -E) * 4 - 4).astype(np.int64)
    return ((E + 48) << 2 | M).astype(np.int64), val


def hif4_quantize(x, quant, rbytes, bugs):
    R, K = x.shape
    G = K // 64
    xb = x.reshape(R, G, 64).astype(np.float64)
    bad = ~np.isfinite(xb).all(axis=2)
    a = np.where(np.isfinite(xb), np.abs(xb), 0.0)
    v16 = a.reshape(R, G, 16, 4).max(axis=3)
    v8 = v16.reshape(R, G, 8, 2).max(axis=3)
    vmax = v8.max(axis=2)
    if "hif4_seventh_fp32" in bugs:   # FP32 1/7 and an FP32 product, then BF16
        prod = (vmax.astype(np.float32) * (np.float32(1.0) / np.float32(7.0))).astype(np.float64)
    else:
        prod = vmax * (73.0 / 512.0)    # BF16(1/7) = 73/512; exact (24 + 7 bits)
    sf = _bf16_round64(prod)
    sf = np.clip(sf, 2.0 ** -48, 49152.0)
    code, e6 = _e6m2_of(sf, rz="hif4_e6m2_rz" in bugs)
    if "hif4_rec_fp32" in bugs:
        rec = (np.float32(1.0) / e6.astype(np.float32)).astype(np.float64)
    else:
        rec = _bf16_round64(1.0 / e6)           # 1/E6M2 is 2^-E * {1, 4/5, 2/3, 4/7}: never near a BF16 tie
    gt = "hif4_level_gt" in bugs
    p8 = v8 * rec[:, :, None]
    l8 = (p8 > 4) if gt else (p8 >= 4)
    p16 = v16 * rec[:, :, None] * np.ldexp(1.0, -np.repeat(l8, 2, axis=2).astype(np.int64))
    l16 = (p16 > 2) if gt else (p16 >= 2)
    lev = np.repeat(l8, 8, axis=2).astype(np.int64) + np.repeat(l16, 4, axis=2).astype(np.int64)
    t = np.ldexp(4.0 * a * rec[:, :, None], -lev)        # exact: 24-bit x 8-bit products
    rnd = quant.get("rounding", "rna")
    if rnd == "sr":
        c = _round_up(t, "sr", rbytes.reshape(t.shape), bugs)
    elif rnd in ("rna", "rne"):
        c = _round_up(t, "rne" if "hif4_rne" in bugs else "rna", None, bugs)
    else:
        raise ValueError(f"hif4 rounding {rnd!r} is not defined")
    c = np.minimum(c, 7).astype(np.int64)
    neg = (np.signbit(xb) if "neg_zero_signed" in bugs else (xb < 0))
    if "neg_underflow_plus0" in bugs:
        neg &= c != 0
    codes = (c | np.where(neg, 8, 0)).astype(np.int64)
    codes = np.where(bad[:, :, None], 0, codes).astype(np.uint8)
    k8 = np.arange(8)
    j16 = np.arange(16)
    if "hif4_level_bits_swapped" in bugs:
        b8, b16 = 15 - k8, 31 - j16
    else:
        b8, b16 = 8 + k8, 16 + j16
    word = (code.astype(np.uint64)
            | (l8.astype(np.uint64) << b8.astype(np.uint64)).sum(axis=2).astype(np.uint64)
            | (l16.astype(np.uint64) << b16.astype(np.uint64)).sum(axis=2).astype(np.uint64))
    word = np.where(bad, 0xFF, word).astype(np.uint32)
    return codes.reshape(R, K), word


# ----------------------------------------------------------------------------------------------
# Layouts (docs/vectors.md, docs/rng_and_transforms.md)

def pack_nibbles(codes, bugs=frozenset()):
    R, K = codes.shape
    c = codes
    if K % 2:
        c = np.concatenate([c, np.zeros((R, 1), np.uint8)], axis=1)
    lo, hi = c[:, 0::2] & 0xF, c[:, 1::2] & 0xF
    if "nibble_swap" in bugs:
        lo, hi = hi, lo
    return (lo | (hi << 4)).astype(np.uint8)


def scales_atom(scales, one_code=0, bugs=frozenset()):
    """Row-major [rows, scols] 8-bit scales -> the 128x4 atom byte buffer."""
    rows, scols = scales.shape
    rt, ct = -(-rows // 128), -(-scols // 4)
    fill = one_code if "atom_pad_nonzero" in bugs else 0
    out = np.full(rt * ct * 512, fill, np.uint8)
    r = np.arange(rows)[:, None]
    c = np.arange(scols)[None, :]
    tile = ((c // 4) * rt + r // 128) if "atom_col_major" in bugs else ((r // 128) * ct + c // 4)
    if "atom_rc_swap" in bugs:
        inner = (r % 32) * 16 + (c % 4) * 4 + (r % 128) // 32
    else:
        inner = (r % 32) * 16 + ((r % 128) // 32) * 4 + (c % 4)
    out[(tile * 512 + inner).ravel()] = scales.ravel()
    return out


# ----------------------------------------------------------------------------------------------
# Entry point

FORMAT_ELEM = {"nvfp4": "e2m1", "mxfp4": "e2m1", "mxfp6-e2m3": "e2m3", "mxfp6-e3m2": "e3m2",
               "mxfp8-e4m3": "e4m3", "mxfp8-e5m2": "e5m2", "hif4": "s1p2"}


def quantize(x, quant, bugs=frozenset()):
    """Quantize float32 [rows, K] with a manifest `quant` object. Returns dict with codes (uint8
    [rows, K]), scales (uint8 [rows, K/block], or uint32 words for hif4), s_dec (NVFP4 S_dec,
    float32; None otherwise)."""
    fmt = quant["format"]
    recipe = quant.get("convention", quant.get("recipe", "te"))
    if recipe not in (None, "te"):
        raise NotImplementedError(f"quantizer recipe {recipe!r}: ref_quant implements TE's (SPEC §2) only")
    if fmt not in FORMAT_ELEM:
        raise ValueError(f"unknown format {fmt!r}")
    x = np.ascontiguousarray(x, dtype=np.float32)
    x_pre = x
    if int(quant.get("rht", 0) or 0):
        x = rht_apply(x, quant, bugs)
    rbytes = None
    if quant.get("rounding") == "sr":
        rbytes = sr_bytes(int(quant.get("seed", 0)), int(quant.get("stream", 0)), x.size, bugs).reshape(x.shape)
    s_dec = None
    if fmt == "nvfp4":
        codes, scales, s_dec = nvfp4_quantize(x, quant, rbytes, bugs, x_pre)
    elif fmt == "hif4":
        codes, scales = hif4_quantize(x, quant, rbytes, bugs)
    else:
        codes, scales = mx_quantize(x, FORMAT_ELEM[fmt], quant, rbytes, bugs)
    return {"codes": codes, "scales": scales, "s_dec": s_dec}
