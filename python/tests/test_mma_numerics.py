"""numerics= on fp4sim.mma / mma_rows and fp4sim.mma_numerics: golden numerics a designer sets
(docs/numerics.md). The values are the hand-derived WindowCase of tests/golden/test_mma_numerics.cpp:
E4M3 products 2^16, -61440 and 1.5 * 2^-9 (scales 1). blackwell's 25-bit window truncates the last to
2^-9; rounding each term to nearest gives 2^-8 (a tie, to even); a 26-bit window keeps it."""
import numpy as np
import pytest

import fp4sim


def window_case():
    a = np.zeros((1, 32), np.uint8)
    b = np.zeros((1, 32), np.uint8)
    a[0, :3] = [0x78, 0xF7, 0x0C]
    b[0, :3] = [0x78, 0x78, 0x20]
    s = np.full((1, 1), 127, np.uint8)
    return a, b, s


@pytest.mark.parametrize("numerics, want", [
    (None, 4096 + 2.0 ** -9),
    ("term_round=rne", 4096 + 2.0 ** -8),
    ({"term_round": "rne"}, 4096 + 2.0 ** -8),
    ({"frac_bits": 26}, 4096 + 3 * 2.0 ** -10),
])
def test_mma_and_mma_rows_take_numerics(numerics, want):
    a, b, s = window_case()
    d = fp4sim.mma(a, b, s, s, kind="mxf8f6f4", elem="e4m3", numerics=numerics)
    assert d[0, 0] == np.float32(want)
    r = fp4sim.mma_rows(a, b, s, s, kind="mxf8f6f4", elem="e4m3", numerics=numerics)
    assert r.d[0] == np.float32(want)
    # flags against the exact value 4096 + 1.5 * 2^-9 (representable): inexact unless the window keeps it
    assert r.flags[0] == (0 if want == 4096 + 3 * 2.0 ** -10 else 1)


def test_presets_and_parameters():
    p = fp4sim.mma_numerics("mxf8f6f4")
    assert (p["k"], p["group"], p["frac_bits"], p["align"], p["term_round"], p["out_round"]) == \
        ("32", "1", "25", "product", "rz", "rz")
    assert fp4sim.mma_numerics("mxf4")["group"] == "16"
    assert fp4sim.mma_numerics("mxf4", model="exact")["frac_bits"] == "0"
    assert fp4sim.mma_numerics("hif4")["accumulate"] == "fp32"
    assert fp4sim.mma_numerics("mxf4", numerics={"flush_subnormals": True})["flush_subnormals"] == "yes"


def test_preset_spelled_out_gives_the_model_bits():
    rng = np.random.default_rng(5)
    a = rng.integers(0, 16, (8, 128), dtype=np.uint8)
    b = rng.integers(0, 16, (6, 128), dtype=np.uint8)
    sa = rng.integers(110, 140, (8, 4), dtype=np.uint8)
    sb = rng.integers(110, 140, (6, 4), dtype=np.uint8)
    c = rng.standard_normal((8, 6)).astype(np.float32)
    spec = ",".join(f"{k}={v}" for k, v in fp4sim.mma_numerics("mxf4").items())
    want = fp4sim.mma(a, b, sa, sb, c, kind="mxf4")
    got = fp4sim.mma(a, b, sa, sb, c, kind="mxf4", numerics=spec)
    assert np.array_equal(want.view(np.uint32), got.view(np.uint32))


@pytest.mark.parametrize("numerics, message", [
    ("frac_bit=3", "--numerics: numerics: unknown key 'frac_bit'"),
    ({"group": 64}, "--numerics: numerics: group 64 must divide the block 32"),
    ("term_round=up", "--numerics: numerics: term_round=up (expected rz|rne)"),
])
def test_bad_numerics(numerics, message):
    a, b, s = window_case()
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)").replace("|", r"\|")):
        fp4sim.mma(a, b, s, s, kind="mxf8f6f4", elem="e4m3", numerics=numerics)
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)").replace("|", r"\|")):
        fp4sim.mma_rows(a, b, s, s, kind="mxf8f6f4", elem="e4m3", numerics=numerics)
    with pytest.raises(TypeError):
        fp4sim.mma(a, b, s, s, kind="mxf8f6f4", elem="e4m3", numerics=25)
