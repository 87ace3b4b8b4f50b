"""Nibble packing and the scale atom against their definitions; mma / gemm against the suites'
expected outputs and the CLI."""

import json

import numpy as np
import pytest

import fp4sim
from conftest import run_cli

RNG = np.random.default_rng(7)


def test_pack_nibbles_low_nibble_is_the_even_element():
    codes = RNG.integers(0, 16, size=(3, 5, 34), dtype=np.uint8)
    p = fp4sim.pack_nibbles(codes)
    assert p.shape == (3, 5, 17) and p.dtype == np.uint8
    assert np.array_equal(p, codes[..., 0::2] | (codes[..., 1::2] << 4))
    assert np.array_equal(fp4sim.unpack_nibbles(p), codes)
    # odd length: per row, the last high nibble is 0 and dropped again
    odd = codes[..., :33].copy()
    po = fp4sim.pack_nibbles(odd)
    assert po.shape == (3, 5, 17) and not (po[..., -1] >> 4).any()
    assert np.array_equal(fp4sim.unpack_nibbles(po, 33), odd)
    with pytest.raises(ValueError, match="code 0x10 at"):
        fp4sim.pack_nibbles(np.full((1, 2), 16, np.uint8))


def test_unpack_nibbles_to_float4():
    ml = pytest.importorskip("ml_dtypes")
    codes = np.arange(16, dtype=np.uint8).reshape(1, 16)
    f4 = fp4sim.unpack_nibbles(fp4sim.pack_nibbles(codes), dtype="e2m1")
    assert f4.dtype == ml.float4_e2m1fn
    assert f4.astype(np.float32).tolist()[0] == [0, .5, 1, 1.5, 2, 3, 4, 6, -0.0, -.5, -1, -1.5, -2, -3, -4, -6]
    assert np.array_equal(fp4sim.pack_nibbles(f4), fp4sim.pack_nibbles(codes))


@pytest.mark.parametrize("rows,scols", [(1, 1), (130, 5), (256, 8), (33, 4)])
def test_scale_atom_is_the_documented_layout(rows, scols):
    s = RNG.integers(1, 256, size=(rows, scols), dtype=np.uint8)
    atom = fp4sim.scales_to_atom(s)
    R, C = -(-rows // 128) * 128, -(-scols // 4) * 4
    assert atom.shape == (R * C,)
    # docs/vectors.md: tile (rt, ct) at (rt * ceil(scols/4) + ct) * 512, (r, c) inside at
    # (r mod 32) * 16 + floor((r mod 128) / 32) * 4 + (c mod 4); padding is zero.
    want = np.zeros(R * C, np.uint8)
    r, c = np.meshgrid(np.arange(rows), np.arange(scols), indexing="ij")
    off = ((r // 128) * (C // 4) + c // 4) * 512 + (r % 32) * 16 + ((r % 128) // 32) * 4 + c % 4
    want[off.reshape(-1)] = s.reshape(-1)
    assert np.array_equal(atom, want)
    assert np.array_equal(fp4sim.scales_from_atom(atom, rows, scols), s)


def test_mma_reproduces_every_expected_output_of_a_suite(smoke_suite):
    suite = fp4sim.load_suite(smoke_suite)
    assert len(suite) == 16
    compared = 0
    for case in suite:
        for model, want in case.expected.items():
            d = fp4sim.mma(case.a.codes, case.b.codes, case.a.scales, case.b.scales, case.c, model=model,
                           **case.mma_kwargs())
            assert d.tobytes() == want.tobytes(), (case.id, model)
            compared += 1
    assert compared == 48


def test_suite_operands_reproduce_with_quantize(smoke_suite):
    for case in fp4sim.load_suite(smoke_suite):
        for op in (case.a, case.b):
            if op.source != "float":
                continue
            q = fp4sim.quantize(op.input, **op.quantize_kwargs())
            assert q.codes.tobytes() == op.codes.tobytes() and q.scales.tobytes() == op.scales.tobytes(), case.id
            if op.scales_atom is not None:
                assert np.array_equal(q.scales_atom(), op.scales_atom)


def test_mma_takes_ml_dtypes_and_equals_the_cli(cli, smoke_suite, tmp_path):
    ml = pytest.importorskip("ml_dtypes")
    case = next(c for c in fp4sim.load_suite(smoke_suite) if c.kind == "mxf8f6f4" and c.elem_a == "e5m2")
    for name, arr in (("a", case.a.codes), ("b", case.b.codes), ("sa", case.a.scales), ("sb", case.b.scales),
                      ("c", case.c)):
        np.save(tmp_path / f"{name}.npy", arr)
    run_cli(cli, "mma", "--kind", "mxf8f6f4", "--elem", "e5m2", "--a", tmp_path / "a.npy", "--b", tmp_path / "b.npy",
            "--sfa", tmp_path / "sa.npy", "--sfb", tmp_path / "sb.npy", "--c", tmp_path / "c.npy", "--model", "exact",
            "--out", tmp_path / "d.npy")
    want = np.load(tmp_path / "d.npy")
    # types from the arrays' dtypes: float8_e5m2 codes, float8_e8m0fnu scales
    d = fp4sim.mma(case.a.codes.view(ml.float8_e5m2), case.b.codes.view(ml.float8_e5m2),
                   case.a.scales.view(ml.float8_e8m0fnu), case.b.scales.view(ml.float8_e8m0fnu), case.c,
                   kind="mxf8f6f4", model="exact")
    assert d.tobytes() == want.tobytes()
    with pytest.raises(ValueError, match="holds e5m2 codes, not e4m3"):
        fp4sim.mma(case.a.codes.view(ml.float8_e5m2), case.b.codes, case.a.scales, case.b.scales, kind="mxf8f6f4",
                   elem="e4m3")


MMA_BAD = [
    ({"kind": "mxf9"}, ["--kind", "mxf9"]),
    ({"kind": "mxf4", "elem": "e4m3"}, ["--kind", "mxf4", "--elem", "e4m3"]),
    ({"kind": "mxf8f6f4", "elem": "e4m3", "elem_a": "e5m2"}, ["--kind", "mxf8f6f4", "--elem", "e4m3", "--elem-a", "e5m2"]),
    ({"kind": "mxf4nvf4", "block": 8}, ["--kind", "mxf4nvf4", "--block", "8"]),
    ({"kind": "mxf4", "block": 16}, ["--kind", "mxf4", "--block", "16"]),
    ({"kind": "hif4", "model": "blackwell"}, ["--kind", "hif4", "--model", "blackwell"]),
    ({"kind": "mxf4", "model": "tpu"}, ["--kind", "mxf4", "--model", "tpu"]),
    ({"kind": "mxf4", "block": 0}, ["--kind", "mxf4", "--block", "0"]),
]


@pytest.mark.parametrize("kw,args", MMA_BAD, ids=[" ".join(b[1]) for b in MMA_BAD])
def test_mma_errors_have_the_cli_message(cli, tmp_path, kw, args):
    a = np.zeros((2, 64), np.uint8)
    s = np.zeros((2, 2), np.uint8)
    for n in ("a", "b", "sa", "sb"):
        np.save(tmp_path / f"{n}.npy", a if n in "ab" else s)
    p = run_cli(cli, "mma", *args, "--a", tmp_path / "a.npy", "--b", tmp_path / "b.npy", "--sfa", tmp_path / "sa.npy",
                "--sfb", tmp_path / "sb.npy", "--out", tmp_path / "d.npy", ok=False)
    assert p.returncode == 2
    with pytest.raises(ValueError) as e:
        fp4sim.mma(a, a, s, s, **kw)
    assert str(e.value) == p.stderr.strip().removeprefix("fp4sim: error: ")


def test_mma_data_errors_have_the_cli_message(cli, tmp_path):
    a = np.zeros((2, 64), np.uint8)
    a[1, 3] = 0x21  # packed by mistake
    s = np.full((2, 2), 127, np.uint8)
    for n, v in (("a", a), ("s", s), ("k", a[:, :48].copy()), ("c", np.zeros(4, np.float32)), ("cu", s)):
        np.save(tmp_path / f"{n}.npy", v)
    for args, call in (
        (["--a", "a", "--b", "a", "--sfa", "s", "--sfb", "s"], lambda: fp4sim.mma(a, a, s, s, kind="mxf4")),
        (["--a", "k", "--b", "k", "--sfa", "s", "--sfb", "s"], lambda: fp4sim.mma(a[:, :48], a[:, :48], s, s, kind="mxf4")),
        (["--a", "a", "--b", "a", "--sfa", "k", "--sfb", "s"], lambda: fp4sim.mma(a, a, a[:, :48], s, kind="mxf4")),
        (["--a", "a", "--b", "a", "--sfa", "s", "--sfb", "s", "--c", "c"],
         lambda: fp4sim.mma(a, a, s, s, np.zeros(4, np.float32), kind="mxf4")),
        (["--a", "a", "--b", "a", "--sfa", "s", "--sfb", "s", "--c", "cu"], lambda: fp4sim.mma(a, a, s, s, s, kind="mxf4")),
    ):
        full = [str(tmp_path / f"{x}.npy") if i % 2 else x for i, x in enumerate(args)]
        p = run_cli(cli, "mma", "--kind", "mxf4", *full, "--out", tmp_path / "d.npy", ok=False)
        assert p.returncode == 1
        msg = p.stderr.strip().removeprefix("fp4sim: error: ")
        role = {"--a": "a", "--b": "b", "--sfa": "sfa", "--sfb": "sfb", "--c": "c"}
        for opt, path in zip(full[0::2], full[1::2]):
            if msg.startswith(path):
                msg = role[opt] + msg[len(path):]
                break
        with pytest.raises(ValueError) as e:
            call()
        assert str(e.value) == msg


@pytest.mark.parametrize("fmt,kw,args", [
    ("nvfp4", {}, []),
    ("mxfp4", {"rounding": "sr", "seed": 9, "model": "exact"}, ["--rounding", "sr", "--seed", "9", "--model", "exact"]),
    ("hif4", {"rht": 64}, ["--rht", "64"]),
    ("mxfp8-e4m3", {"model": "fp32-seq"}, ["--model", "fp32-seq"]),
])
def test_gemm_equals_the_cli(cli, tmp_path, fmt, kw, args):
    a = RNG.standard_normal((16, 128)).astype(np.float32)
    b = RNG.standard_normal((8, 128)).astype(np.float32)
    c = RNG.standard_normal((16, 8)).astype(np.float32)
    for n, v in (("a", a), ("b", b), ("c", c)):
        np.save(tmp_path / f"{n}.npy", v)
    run_cli(cli, "gemm", "--format", fmt, "--a", tmp_path / "a.npy", "--b", tmp_path / "b.npy", "--c",
            tmp_path / "c.npy", "--out", tmp_path / "d.npy", "--json", tmp_path / "g.json", *args)
    want = np.load(tmp_path / "d.npy")
    j = json.loads((tmp_path / "g.json").read_text())
    r = fp4sim.gemm(a, b, c, format=fmt, **kw)
    assert r.d.tobytes() == want.tobytes()
    assert np.float32(r.alpha).view(np.uint32) == int(j["alpha_bits"], 16)
    assert (r.kind, r.model, r.stream_a, r.stream_b) == (j["kind"], j["model"], j["options"]["stream_a"],
                                                         j["options"]["stream_b"])
    for key in ("rel_err", "qsnr_db", "max_abs_err", "bias"):
        assert r.error[key] == pytest.approx(j["error"][key], rel=1e-12)
    with pytest.raises(ValueError, match=r"^b: B has shape \(8, 64\) but A has K = 128"):
        fp4sim.gemm(a, b[:, :64], format=fmt)
