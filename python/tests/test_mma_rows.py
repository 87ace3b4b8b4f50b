"""fp4sim.mma with C as FP32 bits, fp4sim.mma_rows (a batch of paired-row instructions with their
exception flags) and fp4sim.explain_mma (docs/python.md, "One instruction per row")."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

import fp4sim

BW = dict(kind="mxf8f6f4", elem="e2m1", scale_type="ue8m0", block=32, model="blackwell")

# (kind, keywords): every kind, its element / scale / block choices, and every model that runs it.
CONFIGS = [
    ("mxf4", {}),
    ("mxf4nvf4", {"scale_type": "ue4m3", "block": 16}),
    ("mxf4nvf4", {"scale_type": "ue8m0", "block": 32}),
    ("mxf4nvf4", {"scale_type": "ue8m0", "block": 16}),
    ("mxf8f6f4", {"elem_a": "e4m3", "elem_b": "e5m2"}),
    ("mxf8f6f4", {"elem_a": "e2m3", "elem_b": "e3m2"}),
    ("mxf8f6f4", {"elem": "e2m1"}),
    ("hif4", {}),
]
MODELS = {"mxf4": ["blackwell", "exact", "fp32-seq"], "mxf4nvf4": ["blackwell", "exact", "fp32-seq"],
          "mxf8f6f4": ["blackwell", "exact", "fp32-seq"], "hif4": ["ascend-hif4", "exact", "fp32-seq"]}


def _elem_bits(kind: str, kw: dict, side: str) -> int:
    k = fp4sim.KINDS[kind]
    name = kw.get(f"elem_{side}") or kw.get("elem") or k["elems"][0]
    return int(fp4sim._core.elem_info(name)["bits"])


def random_rows(rng, kind: str, kw: dict, n: int):
    """n random instructions: every code of the element widths, scales anywhere (a few NaN), C
    mostly near the products with zeros, subnormals, Inf and NaN mixed in."""
    k = fp4sim.KINDS[kind]
    K = k["k"]
    block = kw.get("block") or k["blocks"][0]
    A = rng.integers(0, 1 << _elem_bits(kind, kw, "a"), (n, K), dtype=np.uint8)
    B = rng.integers(0, 1 << _elem_bits(kind, kw, "b"), (n, K), dtype=np.uint8)
    if k["scale_word32"]:
        # E6M2 byte near 1.0 (bias 48: 0xC0) mostly, level bits anywhere
        low = rng.integers(0xB8, 0xC8, (n, K // block), dtype=np.uint32)
        SA = (rng.integers(0, 1 << 24, (n, K // block), dtype=np.uint32) << 8) | low
        SB = (rng.integers(0, 1 << 24, (n, K // block), dtype=np.uint32) << 8) | low[::-1]
    else:
        SA = rng.integers(0, 256, (n, K // block), dtype=np.uint8)
        SB = rng.integers(0, 256, (n, K // block), dtype=np.uint8)
        near = rng.random((n, K // block)) < 0.8
        if (kw.get("scale_type") or k["scales"][0]) == "ue8m0":
            SA = np.where(near, rng.integers(117, 138, SA.shape), SA).astype(np.uint8)
            SB = np.where(near, rng.integers(117, 138, SB.shape), SB).astype(np.uint8)
        else:
            SA = np.where(near, rng.integers(0x30, 0x40, SA.shape), SA).astype(np.uint8)
            SB = np.where(near, rng.integers(0x30, 0x40, SB.shape), SB).astype(np.uint8)
    C = rng.integers(0, 1 << 32, n, dtype=np.uint64).astype(np.uint32)
    near_c = ((rng.integers(100, 150, n, dtype=np.uint32) << 23) | (C & 0x807FFFFF)).astype(np.uint32)
    r = rng.random(n)
    C = np.where(r < 0.7, near_c, np.where(r < 0.8, C & 0x80000000, np.where(r < 0.85, C & 0x807FFFFF, C)))
    return A, B, SA, SB, C.astype(np.uint32)


def _per_instruction(A, B, SA, SB, C, kind, kw, model):
    out = np.empty(A.shape[0], np.uint32)
    for i in range(A.shape[0]):
        d = fp4sim.mma(A[i:i + 1], B[i:i + 1], SA[i:i + 1], SB[i:i + 1], C[i:i + 1].reshape(1, 1), kind=kind,
                       model=model, **kw)
        out[i] = d.view(np.uint32)[0, 0]
    return out


# ---- C as bits ----

@pytest.mark.parametrize("kind,kw", CONFIGS)
def test_mma_takes_c_as_bits(kind, kw):
    rng = np.random.default_rng(3)
    k = fp4sim.KINDS[kind]
    A, B, SA, SB, _ = random_rows(rng, kind, kw, 8)
    # Specials and odd encodings included: a NaN payload, -0, a subnormal, Inf.
    C = np.array([[0x7FA00001, 0x80000000, 0x00000123, 0xFF800000, 0x3F800000, 0xC2C80000, 0x00800000, 0x1]] * 8,
                 dtype=np.uint32)
    d_bits = fp4sim.mma(A, B, SA, SB, C, kind=kind, model=k["hardware_model"], **kw)
    d_float = fp4sim.mma(A, B, SA, SB, C.view(np.float32), kind=kind, model=k["hardware_model"], **kw)
    assert d_bits.dtype == np.float32
    np.testing.assert_array_equal(d_bits.view(np.uint32), d_float.view(np.uint32))


def test_mma_c_bits_hand_case():
    # 6 * 6 + C, C = -(2 + 2^-21) (0xC0000002): the alignment grid is 2^(4 - 25) = 2^-21, C is on it,
    # so the sum is exactly 34 - 2^-21; truncated to FP32 (ulp 2^-18 at 32): 34 - 2^-18 = 0x4207FFFF.
    a = np.zeros((1, 32), np.uint8)
    a[0, 0] = 0x7
    s = np.full((1, 1), 127, np.uint8)
    d = fp4sim.mma(a, a, s, s, np.array([[0xC0000002]], np.uint32), **BW)
    assert int(d.view(np.uint32)[0, 0]) == 0x4207FFFF


def test_mma_c_wrong_dtype_has_the_cli_message():
    # The CLI reads float32 only, and its message stays the API's (test_layout_mma.py compares them).
    a = np.zeros((1, 32), np.uint8)
    s = np.full((1, 1), 127, np.uint8)
    with pytest.raises(ValueError, match=r"^c: C must be float32, got int64$"):
        fp4sim.mma(a, a, s, s, np.zeros((1, 1), np.int64), **BW)


# ---- mma_rows ----

@pytest.mark.parametrize("kind,kw", CONFIGS)
def test_mma_rows_equals_mma_per_instruction(kind, kw):
    rng = np.random.default_rng(11)
    A, B, SA, SB, C = random_rows(rng, kind, kw, 150)
    for model in MODELS[kind]:
        r = fp4sim.mma_rows(A, B, SA, SB, C, kind=kind, model=model, **kw)
        assert r.d_bits.dtype == np.uint32 and r.d_bits.shape == (150,)
        assert r.flags.dtype == np.uint8 and r.flags.shape == (150,)
        want = _per_instruction(A, B, SA, SB, C, kind, kw, model)
        bad = np.flatnonzero(r.d_bits != want)
        assert bad.size == 0, f"{model}: row {bad[:5]}: {r.d_bits[bad[:5]]} vs {want[bad[:5]]}"
        # C given as float32 is the same instruction
        r2 = fp4sim.mma_rows(A, B, SA, SB, C.view(np.float32), kind=kind, model=model, flags=False, **kw)
        np.testing.assert_array_equal(r2.d_bits, r.d_bits)
        assert r2.flags is None
        np.testing.assert_array_equal(r.d.view(np.uint32), r.d_bits)


def test_mma_rows_threads_do_not_change_bits():
    rng = np.random.default_rng(5)
    A, B, SA, SB, C = random_rows(rng, "mxf8f6f4", {"elem": "e2m1"}, 9000)
    one = fp4sim.mma_rows(A, B, SA, SB, C, threads=1, **BW)
    many = fp4sim.mma_rows(A, B, SA, SB, C, threads=4, **BW)
    np.testing.assert_array_equal(one.d_bits, many.d_bits)
    np.testing.assert_array_equal(one.flags, many.flags)


def _one(a: dict, b: dict, sa: int, sb: int, c: int, elem="e2m1", **kw):
    A = np.zeros((1, 32), np.uint8)
    B = np.zeros((1, 32), np.uint8)
    for k, v in a.items():
        A[0, k] = v
    for k, v in b.items():
        B[0, k] = v
    cfg = dict(BW, elem=elem, **kw)
    r = fp4sim.mma_rows(A, B, np.array([[sa]], np.uint8), np.array([[sb]], np.uint8), np.array([c], np.uint32), **cfg)
    return int(r.d_bits[0]), int(r.flags[0])


ALL6 = {k: 0x7 for k in range(32)}  # E2M1 6.0 everywhere


@pytest.mark.parametrize("a,b,sa,sb,c,elem,d,flags,why", [
    ({0: 0x2}, {0: 0x2}, 127, 127, 0, "e2m1", 0x3F800000, 0x00, "1 * 1 + 0 = 1: exact"),
    ({0: 0x7}, {0: 0x7}, 127, 127, 0xC0000002, "e2m1", 0x4207FFFF, 0x01,
     "34 - 2^-21 truncated to 34 - 2^-18: inexact"),
    (ALL6, ALL6, 254, 254, 0, "e2m1", 0x7F800000, 0x05, "32 * 36 * 2^254 >= 2^128: Inf, overflow + inexact"),
    (ALL6, ALL6, 0, 0, 0, "e2m1", 0x00000000, 0x03,
     "32 * 36 * 2^-254 < 2^-149: +0, tiny and inexact: underflow + inexact"),
    ({0: 0x7C}, {0: 0x00}, 127, 127, 0, "e5m2", 0x7FFFFFFF, 0x10, "Inf * 0: NaN, invalid"),
    ({0: 0xFC}, {0: 0x3C}, 127, 127, 0x7F800000, "e5m2", 0x7FFFFFFF, 0x10, "-Inf * 1 + Inf: NaN, invalid"),
    ({0: 0x7}, {0: 0x7}, 127, 127, 0x7FC00000, "e2m1", 0x7FFFFFFF, 0x00, "NaN C passed on: no flag"),
    ({0: 0x7}, {0: 0x7}, 255, 127, 0, "e2m1", 0x7FFFFFFF, 0x00, "NaN scale passed on: no flag"),
    ({0: 0x7}, {0: 0x7}, 127, 127, 0xFF800000, "e2m1", 0xFF800000, 0x00, "-Inf C passed on: no flag"),
])
def test_mma_rows_flags_hand_derived(a, b, sa, sb, c, elem, d, flags, why):
    assert _one(a, b, sa, sb, c, elem=elem) == (d, flags), why


def test_mma_rows_errors():
    a = np.zeros((2, 32), np.uint8)
    s = np.full((2, 1), 127, np.uint8)
    c = np.zeros(2, np.uint32)
    with pytest.raises(ValueError, match=r"a: A must be \[N, 32\] \(one mxf8f6f4 instruction of K = 32 per row\)"):
        fp4sim.mma_rows(np.zeros((2, 64), np.uint8), a, s, s, c, **BW)
    with pytest.raises(ValueError, match=r"b: B has shape \(1, 32\), expected \(2, 32\)"):
        fp4sim.mma_rows(a, a[:1], s, s, c, **BW)
    with pytest.raises(ValueError, match=r"sfb: SB has shape \(2, 2\), expected \(2, 1\)"):
        fp4sim.mma_rows(a, a, s, np.full((2, 2), 127, np.uint8), c, **BW)
    with pytest.raises(ValueError, match=r"c: C has shape \(3,\), expected \(2,\)"):
        fp4sim.mma_rows(a, a, s, s, np.zeros(3, np.uint32), **BW)
    with pytest.raises(ValueError, match=r"c: C must be uint32 \(FP32 bits\) or float32, got float64"):
        fp4sim.mma_rows(a, a, s, s, np.zeros(2), **BW)
    with pytest.raises(ValueError, match=r"a: code 0x10 at \[0, 0\] does not fit 4-bit e2m1"):
        fp4sim.mma_rows(np.full((2, 32), 0x10, np.uint8), a, s, s, c, **BW)
    with pytest.raises(ValueError, match=r"--model ascend-hif4"):
        fp4sim.mma_rows(a, a, s, s, c, kind="mxf8f6f4", model="ascend-hif4")


# ---- explain_mma ----

def test_explain_rounding_decided():
    # tb_dot32.sv's instruction 5: 6 * 6 - (2 + 2^-21). Nothing lies below the grid 2^-21, so
    # T = S = 34 - 2^-21, D = RZ(T) = 34 - 2^-18; RNE(S) = 34 (2^-21 < half an ulp, 2^-19).
    a = [0x7] + [0] * 31
    e = fp4sim.explain_mma(a, a, [127], [127], 0xC0000002, got=0x42080000, **BW)
    assert e["expected_bits"] == 0x4207FFFF and e["flags"] == 0x01
    assert e["exact"] == Fraction(34) - Fraction(1, 1 << 21)
    assert e["exact_rne_bits"] == 0x42080000
    assert e["max_exp"] == 4 and e["lsb_exp"] == -21
    assert e["ulps"] == 1 and e["diff"] == Fraction(1, 1 << 18)
    assert "RNE(exact)" in e["matches"]
    assert "no term had bits below 2^-21" in e["rule"]
    assert "differs from RNE(exact) 0x42080000 by 1 ulp" in e["rule"]
    assert "got      D = 0x42080000 (34.0): 1 ulp above" in e["text"]


def test_explain_truncation_decided():
    # 6 * 6 + (1 + 2^-23): C's last bit lies below the grid 2^(4 - 25) = 2^-21 and is truncated:
    # T = 37, D = 37 (0x42140000); the exact value 37 + 2^-23 rounds to 37 too.
    a = [0x7] + [0] * 31
    e = fp4sim.explain_mma(a, a, [127], [127], 0x3F800001, got=np.float32(37.0), **BW)
    assert e["expected_bits"] == 0x42140000 and e["flags"] == 0x01
    assert e["truncated_sum"] == 37 and e["exact"] == 37 + Fraction(1, 1 << 23)
    assert "terms below 2^-21 were truncated in 1 term(s): C 1.0000001192092896 -> 1.0" in e["rule"]
    assert "D equals the exact value rounded to nearest even" in e["rule"]
    assert e["ulps"] == 0 and e["matches"] == []
    assert "got      D = 0x42140000: equal" in e["text"]


def test_explain_specials():
    a = [0x7] + [0] * 31
    e = fp4sim.explain_mma(a, a, [255], [127], 0, **BW)
    assert e["expected_bits"] == 0x7FFFFFFF and e["exact"] is None
    assert "NaN in an A scale" in e["rule"]
    e = fp4sim.explain_mma([0x7C] + [0] * 31, [0] * 32, [127], [127], 0, kind="mxf8f6f4", elem="e5m2")
    assert e["flags"] == 0x10 and "infinite" in e["rule"]


@pytest.mark.parametrize("kind,kw", CONFIGS)
def test_explain_reconstructs_golden(kind, kw):
    """The Python reconstruction of each model's rule gives golden's D on random instructions, and
    the exact value rounded here (Fraction, round to nearest even) equals golden's exact model."""
    rng = np.random.default_rng(17)
    A, B, SA, SB, C = random_rows(rng, kind, kw, 40)
    for model in MODELS[kind]:
        exact_model = fp4sim.mma_rows(A, B, SA, SB, C, kind=kind, model="exact", flags=False, **kw).d_bits
        for i in range(A.shape[0]):
            e = fp4sim.explain_mma(A[i], B[i], SA[i], SB[i], int(C[i]), got=int(C[i]), kind=kind, model=model, **kw)
            assert "please report" not in e["rule"], e["text"]
            if e["exact"] is not None and e["exact"] != 0:
                assert e["exact_rne_bits"] == exact_model[i], e["text"]
            if model == "blackwell" and e["exact"] is not None:
                assert e["truncated_sum"] is not None


def test_explain_diagnoses_a_narrower_window():
    # 6 * 6 - 6 * 6 + (1 + 2^-21): the products set the alignment at 2^4, so 25 fractional bits keep
    # C's 2^-21 bit (D = 1 + 2^-21, 0x3F800004) and a DUT with 24 (grid 2^-20) gives 1.0.
    a = [0x7, 0x7] + [0] * 30
    b = [0x7, 0xF] + [0] * 30
    e = fp4sim.explain_mma(a, b, [127], [127], 0x3F800004, got=0x3F800000, **BW)
    assert e["expected_bits"] == 0x3F800004 and e["flags"] == 0x00
    assert e["matches"] == ["blackwell with 24 fractional bits"]
    assert e["ulps"] == 4 and e["diff"] == -Fraction(1, 1 << 21)
