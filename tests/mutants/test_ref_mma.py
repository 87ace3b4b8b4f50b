"""Checks of the independent MMA reference (ref_mma.py).

1. Bit for bit against every case of the four standard suites (`fp4sim vectors`), using the
   stored codes, scales, C and alpha: the flagless reference must equal d_blackwell.npy /
   d_ascend-hif4.npy everywhere, and its per-instruction accumulators the suite's
   d_<model>_steps.npy.
2. One hand-derived witness per mutant (values worked out from SPEC §4 in the comments): the
   flagless reference gives the spec's bits and the mutant the bits its bug gives, so no mutant
   is a no-op even where the suites do not (yet) catch it.

The CLI comes from env FP4SIM_CLI, default build/bin/fp4sim under the repository root.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
import ref_mma  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
CLI = Path(os.environ.get("FP4SIM_CLI", REPO / "build" / "bin" / "fp4sim"))
SUITES = ["smoke", "corners", "random", "llm"]


def load_suite(d: Path):
    man = json.loads((d / "manifest.json").read_text())
    for c in man["cases"]:
        def ld(p):
            return np.load(d / p)
        model = "ascend-hif4" if c["kind"] == "hif4" else "blackwell"
        steps = (c.get("expected_steps") or {}).get(model)
        yield c, dict(a=ld(c["a"]["codes"]), b=ld(c["b"]["codes"]),
                      sa=ld(c["a"]["scales"]).astype(np.uint32), sb=ld(c["b"]["scales"]).astype(np.uint32),
                      c=ld(c["c"]), alpha=np.float32(c["alpha"]), expected=ld(c["expected"][model]),
                      expected_steps=None if steps is None else ld(steps))


def run_case(c, x, bugs=frozenset()):
    return ref_mma.hardware_d(c["kind"], c["elem_a"], c["elem_b"], c["scale_type"], c["block"],
                              x["a"], x["b"], x["sa"], x["sb"], x["c"], x["alpha"], bugs)


@pytest.fixture(scope="module")
def suite_dirs(tmp_path_factory):
    if not CLI.exists():
        pytest.skip(f"fp4sim CLI not built: {CLI} (set FP4SIM_CLI)")
    out = {}
    for s in SUITES:
        d = tmp_path_factory.mktemp(s)
        subprocess.run([str(CLI), "vectors", "--suite", s, "--out", str(d / "suite")], check=True,
                       stdout=subprocess.DEVNULL)
        out[s] = d / "suite"
    return out


@pytest.mark.parametrize("suite", SUITES)
def test_every_case_bit_for_bit(suite_dirs, suite):
    n = n_steps = 0
    bad = []
    for c, x in load_suite(suite_dirs[suite]):
        d, steps = run_case(c, x)
        assert d.dtype == np.float32 and d.shape == (c["M"], c["N"])
        diff = d.view(np.uint32) != x["expected"].view(np.uint32)
        if diff.any():
            i = tuple(np.argwhere(diff)[0])
            bad.append(f"{c['id']}: {int(diff.sum())} differ, first {i}: expected "
                       f"{x['expected'].view(np.uint32)[i]:#010x}, got {d.view(np.uint32)[i]:#010x}")
        S = c["K"] // c["instruction_k"]
        if S == 1:
            assert steps is None
        else:
            assert steps.shape == (S, c["M"], c["N"])
            if x["expected_steps"] is not None:  # the suite's per-instruction accumulators
                n_steps += 1
                sd = steps.view(np.uint32) != x["expected_steps"].view(np.uint32)
                if sd.any():
                    i = tuple(np.argwhere(sd)[0])
                    bad.append(f"{c['id']} steps: {int(sd.sum())} differ, first {i}")
            with np.errstate(over="ignore", invalid="ignore"):
                last = (np.float32(x["alpha"]) * steps[-1]).astype(np.float32)
            last.view(np.uint32)[np.isnan(last)] = 0x7FFFFFFF
            assert (last.view(np.uint32) == d.view(np.uint32)).all(), c["id"]
        n += 1
    assert n > 0
    assert n_steps > 0  # every suite has chained cases (corners: k_chaining)
    assert not bad, "\n".join(bad)


def test_steps_are_the_chain_of_single_instructions(suite_dirs):
    """steps[i] = one instruction on K slice i with C = steps[i-1] (alpha 1)."""
    for c, x in load_suite(suite_dirs["random"]):
        _, steps = run_case(c, x)
        k = c["instruction_k"]
        cols = k // c["block"]
        acc = x["c"]
        for i in range(c["K"] // k):
            one = dict(x, a=x["a"][:, i * k:(i + 1) * k], b=x["b"][:, i * k:(i + 1) * k],
                       sa=x["sa"][:, i * cols:(i + 1) * cols], sb=x["sb"][:, i * cols:(i + 1) * cols],
                       c=acc, alpha=np.float32(1))
            acc, none = run_case(c, one)
            assert none is None
            assert (acc.view(np.uint32) == steps[i].view(np.uint32)).all(), (c["id"], i)


# ------------------------------------------------------------------------------------------
# Hand witnesses. Codes: E2M1 1 = 0x2, 0.5 = 0x1, 1.5 = 0x3, 6 = 0x7, sign 0x8; E4M3 1 = 0x38,
# 2^-9 = 0x01; E5M2 +Inf = 0x7C; UE8M0 2^e = e + 127; UE4M3 1 = 0x38, 2 = 0x40; S1P2 c = 4 is
# 1.0; E6M2 2^(E-48) = E << 2.

CFG = {
    "mxf4": ("mxf4", "e2m1", "e2m1", "ue8m0", 32),
    "nvf4": ("mxf4nvf4", "e2m1", "e2m1", "ue4m3", 16),
    "e4m3": ("mxf8f6f4", "e4m3", "e4m3", "ue8m0", 32),
    "e5m2": ("mxf8f6f4", "e5m2", "e5m2", "ue8m0", 32),
    "hif4": ("hif4", "s1p2", "s1p2", "e6m2", 64),
}
UNIT = {"ue8m0": 127, "ue4m3": 0x38, "e6m2": 0xC0}


def witness(cfg, K, a=None, b=None, sa=None, sb=None, c=0.0, alpha=1.0):
    kind, ea, eb, st, blk = CFG[cfg]
    A = np.zeros((1, K), np.uint8)
    B = np.zeros((1, K), np.uint8)
    for k, v in (a or {}).items():
        A[0, k] = v
    for k, v in (b or {}).items():
        B[0, k] = v
    SA = np.full((1, K // blk), UNIT[st], np.uint32)
    SB = np.full((1, K // blk), UNIT[st], np.uint32)
    for j, v in (sa or {}).items():
        SA[0, j] = v
    for j, v in (sb or {}).items():
        SB[0, j] = v
    C = np.array([[c]], np.float32)
    return (kind, ea, eb, st, blk, A, B, SA, SB, C, np.float32(alpha))


def bits(v):
    return int(np.array(v, np.float32).view(np.uint32))


NAN = 0x7FFFFFFF
ONE = bits(1.0)
ONE_MINUS = bits(1 - 2.0**-24)  # 0x3F7FFFFF
ONE_PLUS = bits(1 + 2.0**-23)  # 0x3F800001

# mutant: (case, flagless bits, mutant bits). Every value follows from SPEC §4 by hand.
WITNESSES = {
    # C = 1 + term 1.5·2^-24: 1 + 0.75 ulp; RZ -> 1, RN -> 1 + 2^-23
    "rn-final": (witness("mxf4", 64, {0: 0x3}, {0: 0x2}, {0: 103}, c=1.0), ONE, ONE_PLUS),
    # term -2^-40 under max_e = 0 truncates to 0 -> 1; exact 1 - 2^-40 RZ -> 1 - 2^-24
    "no-truncation": (witness("mxf4", 64, {0: 0xA}, {0: 0x2}, {0: 87}, c=1.0), ONE, ONE_MINUS),
    # term -2^-30 is inside 35 bits (-> 1 - 2^-24) but below 25 bits (-> 1)
    "window-25-f4": (witness("mxf4", 64, {0: 0xA}, {0: 0x2}, {0: 97}, c=1.0), ONE_MINUS, ONE),
    # product -2^-30 is below 25 bits (-> 1) but inside 35 bits (-> 1 - 2^-24)
    "window-35-f8": (witness("e4m3", 32, {0: 0xB8}, {0: 0x38}, {0: 97}, c=1.0), ONE, ONE_MINUS),
    # zero groups under unit scales align at 2^0: C = 2^-36 truncates to +0; without them it stays
    "zero-groups-no-align": (witness("mxf4", 64, c=2.0**-36), 0, bits(2.0**-36)),
    # 2^-9·1 aligns at -6: grid 2^-31, C = -3·2^-33 -> 0, D = 2^-9; at -7 C -> -2^-32
    "fp8-subnormal-exp": (witness("e4m3", 32, {0: 0x01}, {0: 0x38}, c=-3 * 2.0**-33),
                          bits(2.0**-9), bits(2.0**-9 - 2.0**-32)),
    # zero elements at -126 leave C = 2^-40 alone; at -6 (products 2^-12) the grid is 2^-37
    "zero-elem-exp": (witness("e4m3", 32, c=2.0**-40), bits(2.0**-40), 0),
    # two terms 2^-24 with C = 1: fused 1 + 2^-23; one FP32 add each: two ties to even -> 1
    "fp32-seq-accum": (witness("mxf4", 64, {0: 0x2, 16: 0x2}, {0: 0x2, 16: 0x2}, {0: 103}, c=1.0),
                       ONE_PLUS, ONE),
    # fused: 1 - 2^-25 RZ -> 1 - 2^-24; products alone -2^-25, then RN(1 - 2^-25) tie -> 1
    "c-after-round": (witness("mxf4", 64, {0: 0xA}, {0: 0x2}, {0: 102, 1: 102}, c=1.0), ONE_MINUS, ONE),
    # 1 + 2^-24 per instruction: RZ drops each; kept exactly between them -> 1 + 2^-23
    "chain-fp64": (witness("mxf4", 128, {0: 0x2, 64: 0x2}, {0: 0x2, 64: 0x2}, {0: 103, 2: 103}, c=1.0),
                   ONE, ONE_PLUS),
    # chained: 1 - 2^-26 RZ -> 1 - 2^-24; split: 1 + (-2^-26) in FP32 RN -> 1
    "split-k": (witness("mxf4", 128, {64: 0xA}, {64: 0x2}, {2: 101}, c=1.0), ONE_MINUS, ONE),
    # -2^-25 then +2^-24: (1 - 2^-24) + 2^-24 = 1; reversed: 1, then 1 - 2^-25 -> 1 - 2^-24
    "k-reversed": (witness("mxf4", 128, {0: 0xA, 64: 0x2}, {0: 0x2, 64: 0x2}, {0: 102, 2: 103}, c=1.0),
                   ONE, ONE_MINUS),
    # 0.5·2^-35 in groups 0 and 1, max_e = 0: each truncates to 0; one group of 32: 2^-35 kept
    "group-32": (witness("mxf4", 64, {0: 0x1, 16: 0x1}, {k: 0x2 for k in range(64)}, {0: 92}),
                 0, bits(2.0**-35)),
    # x = 1 + 1.75·2^-23, alpha = 2 - 2^-23: RN(alpha·RZ(x)) = 2; RZ(alpha·x) = 2 + 2^-22
    "alpha-before-round": (witness("mxf4", 64, {0: 0x3, 1: 0x1}, {0: 0x2, 1: 0x1}, {0: 104}, c=1.0,
                                   alpha=2 - 2.0**-23), bits(2.0), bits(2 + 2.0**-22)),
    # C = 1, alpha = 2: D = 2; with C scaled too: 4
    "alpha-on-c": (witness("mxf4", 64, c=1.0, alpha=2.0), bits(2.0), bits(4.0)),
    # NaN scale -> NaN; decoded as 2^128 it aligns at 2^128 and C = 1 truncates to +0
    "nan-scale-ignored": (witness("mxf4", 64, sa={0: 0xFF}, c=1.0), NAN, 0),
    # Blackwell zero result is +0 even for C = -0
    "negzero-kept": (witness("mxf4", 64, c=-0.0), 0, 0x80000000),
    # 6·6·2^127·2^127 >= 2^128 -> +Inf
    "overflow-saturate": (witness("mxf4", 64, {0: 0x7}, {0: 0x7}, {0: 254}, {0: 254}), bits(np.inf),
                          bits(np.finfo(np.float32).max)),
    # zero products under 2^-127 scales align at -254; C = 2^-130 (subnormal) is kept
    "ftz-result": (witness("mxf4", 64, sa={0: 0, 1: 0}, sb={0: 0, 1: 0}, c=2.0**-130), bits(2.0**-130), 0),
    "c-daz": (witness("mxf4", 64, sa={0: 0, 1: 0}, sb={0: 0, 1: 0}, c=2.0**-130), bits(2.0**-130), 0),
    # E5M2 +Inf times +0 -> NaN; as 0, D = C = 1
    "inf-times-zero": (witness("e5m2", 32, {0: 0x7C}, c=1.0), NAN, ONE),
    # UE4M3 0xB8 is 1.0 (sign ignored) -> 1; signed: -1
    "ue4m3-sign": (witness("nvf4", 64, {0: 0x2}, {0: 0x2}, {0: 0xB8}), ONE, bits(-1.0)),
    # 2^-127 · 2^127 · 1 = 1; with code 0 as zero: 0
    "ue8m0-zero": (witness("mxf4", 64, {0: 0x2}, {0: 0x2}, {0: 0}, {0: 254}), ONE, 0),
    # element 16 is in block 1 (scale 2): D = 2; with scale k/32 = 0 (1.0): 1
    "scale-b16-as-b32": (witness("nvf4", 64, {16: 0x2}, {16: 0x2}, {1: 0x40}), bits(2.0), ONE),
    # two groups of 2^-24 (16·16·2^(24+48-104)) onto C = 1: per-group ties -> 1; once: 1 + 2^-23
    "hif4-one-round": (witness("hif4", 128, {0: 4, 64: 4}, {0: 4, 64: 4}, {0: 0x60, 1: 0x60}, c=1.0),
                       ONE, ONE_PLUS),
    # group -2^-25 onto 1: RN tie -> 1 (even); RZ -> 1 - 2^-24
    "hif4-rz": (witness("hif4", 64, {0: 0xC}, {0: 4}, {0: 0x5C}, c=1.0), ONE, ONE_MINUS),
    # level-2 bit 8 doubles elements 0..7: 2·1 = 2; ignored: 1
    "hif4-no-levels": (witness("hif4", 64, {0: 4}, {0: 4}, {0: 0xC0 | 0x100}), bits(2.0), ONE),
    # read MSB-first, element 0 looks at bit 15 (clear): 1
    "hif4-level-order": (witness("hif4", 64, {0: 4}, {0: 4}, {0: 0xC0 | 0x100}), bits(2.0), ONE),
}


def test_every_mutant_has_a_witness():
    assert set(WITNESSES) == set(ref_mma.MUTANTS)
    assert len(ref_mma.MUTANTS) >= 15


@pytest.mark.parametrize("name", sorted(WITNESSES))
def test_mutant_witness(name):
    case, good, bad = WITNESSES[name]
    d, _ = ref_mma.hardware_d(*case)
    assert int(d.view(np.uint32)[0, 0]) == good, f"flagless: {int(d.view(np.uint32)[0, 0]):#010x}"
    m, _ = ref_mma.hardware_d(*case, bugs=frozenset({name}))
    assert int(m.view(np.uint32)[0, 0]) == bad, f"{name}: {int(m.view(np.uint32)[0, 0]):#010x}"


def test_hif4_zero_sum_is_plus_zero_and_negzero_mutant():
    case = witness("hif4", 64, c=-0.0)
    d, _ = ref_mma.hardware_d(*case)
    m, _ = ref_mma.hardware_d(*case, bugs=frozenset({"negzero-kept"}))
    assert int(d.view(np.uint32)[0, 0]) == 0 and int(m.view(np.uint32)[0, 0]) == 0x80000000


def test_unknown_mutant_is_refused():
    with pytest.raises(ValueError, match="unknown mutant"):
        ref_mma.hardware_d(*witness("mxf4", 64), bugs=frozenset({"no-such-bug"}))


def test_exact_sum_equals_python_integers():
    """_exact_round (the no-truncation and hif4-one-round paths) against Python big integers:
    wide exponent spans, exact and near cancellations, both roundings."""
    rng = np.random.default_rng(5)
    checked = 0
    for trial in range(60):
        M, T = 40, int(rng.integers(2, 34))
        Nt = rng.integers(-(1 << 20), 1 << 20, (M, T)).astype(np.float64)
        Nt[rng.random((M, T)) < 0.3] = 0
        span = int(rng.choice([10, 40, 100, 400]))
        vl = rng.integers(-span // 2, span // 2, (M, T)) + int(rng.integers(-150, 100))
        if trial % 3 == 0:  # an exactly cancelling pair and a half-cancelling one
            Nt[:, 1], vl[:, 1] = -Nt[:, 0], vl[:, 0]
            Nt[:, -1], vl[:, -1] = np.trunc(-Nt[:, -2] / 2), vl[:, -2] + 1
        for rn in (False, True):
            out, _, _ = ref_mma._exact_round(Nt, vl, rn, frozenset())
            for i in range(M):
                nz = Nt[i] != 0
                lmin = int(vl[i][nz].min()) if nz.any() else 0
                tot = sum(int(n) << int(v - lmin) for n, v in zip(Nt[i][nz], vl[i][nz]))
                want = np.float32(ref_mma._py_round(tot, lmin, rn))
                assert want.view(np.uint32) == out[i].view(np.uint32), (trial, rn, i)
                checked += 1
    assert checked == 60 * 2 * 40
