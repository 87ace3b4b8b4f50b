"""The independent reference quantizer (ref_quant) against `fp4sim quantize`, bit for bit, on
stress inputs (BF16 grids, exact ties, signed zeros, NaN/Inf, zero / subnormal blocks, extreme
magnitudes, values a few ulps below powers of two) for every format and option; and its Philox
against Random123's known-answer vectors.

    python3 -m pytest tests/mutants/test_ref_quant.py     (needs build/bin/fp4sim or $FP4SIM)
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import zlib

import numpy as np
import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import ref_quant as rq  # noqa: E402

FP4SIM = os.environ.get("FP4SIM_CLI", os.path.join(HERE, "..", "..", "build", "bin", "fp4sim"))


def stress_input(rows, cols, seed):
    """Rows of different kinds; every kind lands in whole blocks (cols a multiple of 64)."""
    r = np.random.default_rng(seed)
    x = np.empty((rows, cols), np.float32)
    kinds = 10
    for i in range(rows):
        k = i % kinds
        g = r.standard_normal(cols)
        if k == 0:      # Gaussian, random magnitude in 2^[-140, 120]
            v = g * 2.0 ** r.integers(-140, 120)
        elif k == 1:    # BF16 grid
            v = rq.to_bf16((g * 2.0 ** r.integers(-20, 20)).astype(np.float32))
        elif k == 2:    # exact ties of every element grid: small odd multiples of 2^-j
            v = r.choice([-1, 1], cols) * r.integers(0, 64, cols) * 2.0 ** r.integers(-6, 3)
            v = v / 2.0 ** r.integers(0, 4, cols)
        elif k == 3:    # signed zeros, tiny negatives, mixed with normal values
            v = np.where(r.random(cols) < 0.5, r.choice([0.0, -0.0], cols), g * 1e-3)
            v[: cols // 4] = -0.0
        elif k == 4:    # specials in some blocks
            v = g.copy()
            for j in r.choice(cols, 3, replace=False):
                v[j] = r.choice([np.nan, np.inf, -np.inf])
        elif k == 5:    # subnormal float32 values
            v = g * 2.0 ** -140
        elif k == 6:    # a few ulps below powers of two, and exact powers of two
            v = (2.0 ** r.integers(-10, 10, cols)) * (1 - r.integers(0, 4, cols) * 2.0 ** -24)
            v *= r.choice([-1, 1], cols)
        elif k == 7:    # huge values near FLT_MAX
            v = g * 2.0 ** 125
        elif k == 8:    # all-zero row
            v = np.zeros(cols)
        else:           # BF16 grid of narrow range: many element ties after scaling
            v = rq.to_bf16((r.integers(-96, 96, cols) * 2.0 ** -4).astype(np.float32))
        with np.errstate(over="ignore"):
            x[i] = np.asarray(v, np.float64).astype(np.float32)
    return x


def run_cli(x, fmt, opts, tmp):
    inp = os.path.join(tmp, "x.npy")
    out = os.path.join(tmp, "out")
    np.save(inp, x)
    cmd = [FP4SIM, "quantize", "--format", fmt, "--input", inp, "--out", out, "--force"] + opts
    subprocess.run(cmd, check=True, capture_output=True)
    man = json.load(open(os.path.join(out, "manifest.json")))
    res = {k: np.load(os.path.join(out, k + ".npy")) for k in ("codes", "scales")}
    if os.path.exists(os.path.join(out, "packed.npy")):
        res["packed"] = np.load(os.path.join(out, "packed.npy"))
    if fmt == "nvfp4":
        res["global_scale"] = np.load(os.path.join(out, "global_scale.npy"))
    return res, man


def quant_obj(fmt, man_opts):
    q = dict(man_opts)
    q["format"] = fmt
    return q


CONFIGS = (
    [("nvfp4", o) for o in ([], ["--rounding", "rna"], ["--rounding", "rz"], ["--rounding", "sr", "--seed", "7",
                                                                            "--stream", "3"],
                            ["--pts", "off"], ["--2d"], ["--rht", "16"], ["--rht", "16", "--rht-bf16"],
                            ["--rht", "64", "--seed", "5"], ["--rht", "32", "--seed", "9"])]
    + [(f, o) for f in ("mxfp4", "mxfp6-e2m3", "mxfp6-e3m2", "mxfp8-e4m3", "mxfp8-e5m2")
       for o in ([], ["--scale-rule", "rceil"], ["--scale-rule", "ceil"], ["--rounding", "rna"], ["--rounding", "rz"],
                 ["--rounding", "sr", "--seed", "11", "--stream", "2"])]
    + [("mxfp4", ["--rht", "64", "--seed", "3"]), ("mxfp4", ["--rht", "128", "--seed", "3", "--rht-bf16"])]
    + [("hif4", o) for o in ([], ["--rounding", "sr", "--seed", "13", "--stream", "1"], ["--rht", "64", "--seed", "2"])]
)


@pytest.mark.skipif(not os.path.exists(FP4SIM), reason="fp4sim CLI not built")
@pytest.mark.parametrize("fmt,opts", CONFIGS, ids=[f + "".join(o) for f, o in CONFIGS])
def test_matches_fp4sim_quantize(fmt, opts):
    x = stress_input(40, 256, zlib.crc32((fmt + " ".join(opts)).encode()))
    if "--rht" in opts:      # RHT mixes specials into a whole tile; keep those rows finite
        x = np.where(np.isfinite(x), x, np.float32(1.5))
    with tempfile.TemporaryDirectory() as tmp:
        cli, man = run_cli(x, fmt, opts, tmp)
    got = rq.quantize(x, quant_obj(fmt, man["options"]))
    for k in ("codes", "scales"):
        bad = np.argwhere(cli[k] != got[k])
        assert bad.size == 0, f"{k}: {len(bad)} differ, first {bad[0].tolist()}: fp4sim {cli[k][tuple(bad[0])]:#x}, ref {got[k][tuple(bad[0])]:#x}"
    if "packed" in cli:
        assert np.array_equal(cli["packed"], rq.pack_nibbles(got["codes"]))
    if fmt == "nvfp4":
        assert cli["global_scale"].view(np.uint32)[0] == np.float32(got["s_dec"]).view(np.uint32)


def test_philox_known_answers():
    # Random123 kat_vectors, philox4x32 10
    kat = [((0, 0, 0, 0), (0, 0), (0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8)),
           ((0xffffffff,) * 4, (0xffffffff,) * 2, (0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd)),
           ((0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344), (0xa4093822, 0x299f31d0),
            (0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1))]
    for ctr, key, want in kat:
        got = rq.philox4x32_10(*[[c] for c in ctr], *key)
        assert tuple(int(w[0]) for w in got) == want


def test_sr_bytes_layout():
    # byte i of the stream is byte (i mod 16), little-endian, of block i/16's output
    seed, stream = 0x123456789ABCDEF0, 5
    r = rq.sr_bytes(seed, stream, 40)
    w = rq.philox4x32_10([2], [0], [stream], [0], seed & 0xFFFFFFFF, seed >> 32)
    assert r[32 + 5] == (int(w[1][0]) >> 8) & 0xFF


def test_atom_offsets_by_definition():
    s = np.arange(200 * 6, dtype=np.uint32).reshape(200, 6) % 251 + 1
    atom = rq.scales_atom(s.astype(np.uint8))
    assert atom.size == 2 * 2 * 512
    for r, c in [(0, 0), (1, 0), (0, 1), (31, 3), (32, 0), (127, 3), (128, 4), (199, 5)]:
        off = ((r // 128) * 2 + c // 4) * 512 + (r % 32) * 16 + ((r % 128) // 32) * 4 + c % 4
        assert atom[off] == s[r, c]
    assert (atom == 0).sum() == atom.size - s.size


def test_rht_exact_zero_and_tiny():
    # an exactly cancelling tile gives +0.0; a huge exponent spread goes the integer path
    x = np.zeros((1, 16), np.float32)
    x[0, 0], x[0, 1] = 1.0, 1.0
    q = {"rht": 16, "rht_signs": "te-fixed-16", "seed": 0}
    y = rq.rht_apply(x, q)
    assert not np.signbit(y).any() or (y != 0).all()
    x2 = np.zeros((1, 16), np.float32)
    x2[0, 0], x2[0, 1] = 2.0 ** 100, 2.0 ** -149
    y2 = rq.rht_apply(x2, q)
    # output 0: (2^100 + 2^-149)/4 rounds to 2^98
    assert y2[0, 0] == np.float32(2.0 ** 98)


@pytest.mark.skipif(not os.path.exists(FP4SIM), reason="fp4sim CLI not built")
def test_kernel_bug_free_passes_and_a_mutant_is_caught():
    """The bug-free kernel's every file is EQUAL on the smoke suite; a planted bug is not."""
    import kernel
    with tempfile.TemporaryDirectory() as tmp:
        suite = os.path.join(tmp, "smoke")
        subprocess.run([FP4SIM, "vectors", "--suite", "smoke", "--out", suite], check=True, capture_output=True)
        for bugs, want in ((frozenset(), 0), (frozenset({"nibble_swap"}), 1)):
            res = os.path.join(tmp, "res" + str(want))
            n = kernel.run_kernel(suite, res, bugs)
            assert n > 0
            r = subprocess.run([FP4SIM, "check", suite, "--results", res, "--allow-missing", "--quiet"],
                               capture_output=True, text=True)
            assert r.returncode == want, r.stdout + r.stderr


@pytest.mark.skipif(not os.path.exists(FP4SIM), reason="fp4sim CLI not built")
@pytest.mark.parametrize("n", [16, 32, 64])
def test_rht_wide_exponent_spread_matches_fp4sim(n):
    """Tiles whose exponent spread defeats a float64 sum (the exact integer path), and near-ties."""
    r = np.random.default_rng(n)
    x = (r.standard_normal((16, 128)) * 2.0 ** r.integers(-60, 60, (16, 128))).astype(np.float32)
    x[1] = np.where(np.arange(128) % 2, 2.0 ** 40, 2.0 ** -40 * 3)       # huge + tiny per tile
    x[2, ::n] = 2.0 ** 60
    x[2, 1::n] = -(2.0 ** 60)                                             # cancel, leaving the tiny rest
    x[2, 2::n] = 2.0 ** -30
    x[3] = rq.to_bf16(x[3])
    with tempfile.TemporaryDirectory() as tmp:
        cli, man = run_cli(x, "mxfp8-e4m3", ["--rht", str(n), "--seed", "4"], tmp)
    got = rq.quantize(x, quant_obj("mxfp8-e4m3", man["options"]))
    assert np.array_equal(cli["codes"], got["codes"])
    assert np.array_equal(cli["scales"], got["scales"])
