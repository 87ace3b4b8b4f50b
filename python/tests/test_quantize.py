"""fp4sim.quantize / dequantize against the `fp4sim quantize` binary, and the CLI's messages."""

import json
import warnings

import numpy as np
import pytest

import fp4sim
from conftest import run_cli

RNG = np.random.default_rng(20261201)


def llm_like(shape, scale=1.0):
    x = RNG.standard_normal(shape).astype(np.float32) * np.float32(scale)
    x.reshape(-1)[::97] *= np.float32(40.0)  # outliers, so blocks differ in scale
    return x


# (format, CLI options, the same as fp4sim.quantize keywords)
CONFIGS = [
    ("nvfp4", [], {}),
    ("nvfp4", ["--pts", "off"], {"pts": "off"}),
    ("nvfp4", ["--2d"], {"two_d": True}),
    ("nvfp4", ["--rht", "16", "--rht-bf16"], {"rht": 16, "rht_bf16": True}),
    ("nvfp4", ["--rounding", "sr", "--seed", "7", "--stream", "3"], {"rounding": "sr", "seed": 7, "stream": 3}),
    ("mxfp4", ["--scale-rule", "rceil"], {"scale_rule": "rceil"}),
    ("mxfp6-e3m2", ["--scale-rule", "ceil"], {"scale_rule": "ceil"}),  # the alias of rceil
    ("mxfp4", ["--rounding", "rz"], {"rounding": "rz"}),
    ("mxfp4", ["--rounding", "sr", "--seed", "0x1234", "--rht", "32"], {"rounding": "sr", "seed": "0x1234", "rht": 32}),
    ("mxfp6-e2m3", [], {}),
    ("mxfp6-e3m2", ["--rounding", "rna"], {"rounding": "rna"}),
    ("mxfp8-e4m3", [], {}),
    ("mxfp8-e5m2", ["--scale-rule", "floor"], {"scale_rule": "floor"}),
    ("hif4", [], {}),
    ("hif4", ["--rht", "64", "--seed", "5"], {"rht": 64, "seed": 5}),
]


def cli_quantize(cli, tmp_path, x, fmt, args):
    inp = tmp_path / "x.npy"
    np.save(inp, x)
    out = tmp_path / "out"
    run_cli(cli, "quantize", "--format", fmt, "--input", inp, "--out", out, *args)
    return out


def assert_same_as_cli(q, out, fmt):
    files = json.loads((out / "manifest.json").read_text())["files"]
    expect = {"codes": q.codes, "scales": q.scales, "dequant": q.dequant, "packed": q.packed,
              "global_scale": q.global_scale}
    for name, got in expect.items():
        if f"{name}.npy" not in files:
            assert got is None, f"{fmt}: {name} should be None"
            continue
        want = np.load(out / f"{name}.npy")
        assert got is not None, f"{fmt}: {name} missing"
        assert got.dtype == want.dtype and got.shape == want.shape, (fmt, name, got.dtype, got.shape, want.shape)
        # Bit patterns: NaN payloads and -0 count.
        assert got.tobytes() == want.tobytes(), f"{fmt}: {name} differs from fp4sim quantize"


@pytest.mark.parametrize("fmt,args,kw", CONFIGS, ids=[f"{c[0]}{''.join(c[1])}" for c in CONFIGS])
def test_quantize_equals_cli(cli, tmp_path, fmt, args, kw):
    x = llm_like((3, 2, 128))  # rank 3: leading axes are rows, as for the CLI
    q = fp4sim.quantize(x, format=fmt, **kw)
    assert_same_as_cli(q, cli_quantize(cli, tmp_path, x, fmt, args), fmt)


def test_bf16_inputs_equal_cli(cli, tmp_path):
    ml = pytest.importorskip("ml_dtypes")
    bits = llm_like((4, 64)).astype(ml.bfloat16).view(np.uint16)
    out = cli_quantize(cli, tmp_path, bits, "nvfp4", [])
    assert_same_as_cli(fp4sim.quantize(bits), out, "nvfp4 uint16")
    assert_same_as_cli(fp4sim.quantize(bits.view(ml.bfloat16)), out, "nvfp4 bfloat16")


def test_special_values_equal_cli(cli, tmp_path):
    x = llm_like((2, 64))
    x[0, 3], x[0, 20], x[1, 40], x[1, 41] = np.nan, np.inf, -np.inf, -0.0
    for fmt in ("nvfp4", "mxfp8-e5m2", "hif4"):
        (tmp_path / fmt).mkdir()
        with pytest.warns(RuntimeWarning, match=r"^x: 1 NaN and 2 Inf of 128 values; quantized as"):
            q = fp4sim.quantize(x, format=fmt)
        assert_same_as_cli(q, cli_quantize(cli, tmp_path / fmt, x, fmt, []), fmt)


def test_same_bits_for_any_thread_count():
    x = llm_like((64, 256))
    a = fp4sim.quantize(x, format="nvfp4", rounding="sr", seed=3, threads=1)
    b = fp4sim.quantize(x, format="nvfp4", rounding="sr", seed=3, threads=4)
    assert a.codes.tobytes() == b.codes.tobytes() and a.scales.tobytes() == b.scales.tobytes()


def test_results_are_views_of_the_computed_buffers():
    q = fp4sim.quantize(llm_like((2, 3, 32)), format="mxfp4")
    assert q.codes.shape == (2, 3, 32) and q.scales.shape == (2, 3, 1) and q.packed.shape == (2, 3, 16)
    assert q.codes.dtype == np.uint8 and q.dequant.dtype == np.float32
    # Reshaped views of the arrays the C++ side handed over (owned by a capsule, not copied).
    assert q.codes.base is not None and not q.codes.flags.owndata


def test_ml_dtypes_views_hold_the_same_values():
    ml = pytest.importorskip("ml_dtypes")
    x = llm_like((4, 64))
    q = fp4sim.quantize(x, format="mxfp4")
    c = q.codes_as_ml_dtypes()
    s = q.scales_as_ml_dtypes()
    assert c.dtype == ml.float4_e2m1fn and s.dtype == ml.float8_e8m0fnu
    # element value x block scale (exact in float64) is the dequantized value
    want = c.astype(np.float64) * np.repeat(s.astype(np.float64), 32, axis=-1)
    assert np.array_equal(want.astype(np.float32), q.dequant)
    # dequantize() takes the ml_dtypes arrays as they are
    assert np.array_equal(fp4sim.dequantize(c, s, format="mxfp4"), q.dequant)

    n = fp4sim.quantize(x, format="nvfp4")
    assert n.scales_as_ml_dtypes().dtype == ml.float8_e4m3fn
    # nvfp4's dequant includes the global scale S_dec (each product is exact in float64)
    want = (n.codes_as_ml_dtypes().astype(np.float64) * np.repeat(n.scales_as_ml_dtypes().astype(np.float64), 16, axis=-1)
            * np.float64(n.global_scale[0])).astype(np.float32)
    assert np.array_equal(want, n.dequant)
    for fmt, dt in (("mxfp6-e2m3", ml.float6_e2m3fn), ("mxfp6-e3m2", ml.float6_e3m2fn),
                    ("mxfp8-e4m3", ml.float8_e4m3fn), ("mxfp8-e5m2", ml.float8_e5m2)):
        assert fp4sim.quantize(x, format=fmt).codes_as_ml_dtypes().dtype == dt
    with pytest.raises(ValueError, match="s1p2 has no ml_dtypes dtype"):
        fp4sim.quantize(x, format="hif4").codes_as_ml_dtypes()


def test_dequantize_reproduces_dequant_for_every_format():
    x = llm_like((3, 128))
    for fmt in fp4sim.FORMATS:
        q = fp4sim.quantize(x, format=fmt)
        gs = q.global_scale if fmt == "nvfp4" else None
        d = fp4sim.dequantize(q.codes, q.scales, format=fmt, global_scale=gs)
        assert d.tobytes() == q.dequant.tobytes(), fmt
    with pytest.raises(ValueError, match=r"^scales: shape \(3, 4\), expected \(3, 8\)"):
        fp4sim.dequantize(q.codes, np.zeros((3, 4), np.uint8), format="nvfp4")
    with pytest.raises(ValueError, match=r"codes: code 0x10 at \[0, 0\] does not fit 4-bit e2m1"):
        fp4sim.dequantize(np.full((1, 32), 0x10, np.uint8), np.zeros((1, 1), np.uint8), format="mxfp4")


# Bad calls and the CLI arguments that make the same mistake.
BAD = [
    ({"format": "nvfp5"}, ["--format", "nvfp5"]),
    ({"rounding": "up"}, ["--rounding", "up"]),
    ({"format": "hif4", "rounding": "rz"}, ["--format", "hif4", "--rounding", "rz"]),
    ({"seed": -1}, ["--seed", "-1"]),
    ({"seed": "12z"}, ["--seed", "12z"]),
    ({"stream": 1 << 32}, ["--stream", str(1 << 32)]),
    ({"scale_rule": "round"}, ["--format", "mxfp4", "--scale-rule", "round"]),
    ({"scale_rule": "floor"}, ["--scale-rule", "floor"]),
    ({"format": "mxfp4", "pts": "on"}, ["--format", "mxfp4", "--pts", "on"]),
    ({"pts": "maybe"}, ["--pts", "maybe"]),
    ({"format": "hif4", "two_d": True}, ["--format", "hif4", "--2d"]),
    ({"rht": 12}, ["--rht", "12"]),
    ({"rht_bf16": True}, ["--rht-bf16"]),
    ({"convention": "tf"}, ["--convention", "tf"]),
    ({"format": "hif4", "convention": "torchao"}, ["--format", "hif4", "--convention", "torchao"]),
    ({"format": "mxfp6-e2m3", "convention": "modelopt", "scale_rule": "rceil"},
     ["--format", "mxfp6-e2m3", "--convention", "modelopt", "--scale-rule", "rceil"]),
    ({"convention": "torchao", "rounding": "sr"}, ["--convention", "torchao", "--rounding", "sr"]),
    ({"convention": "modelopt", "two_d": True}, ["--convention", "modelopt", "--2d"]),
    ({"format": "mxfp4", "convention": "modelopt"}, ["--format", "mxfp4", "--convention", "modelopt"]),
    ({"format": "mxfp4", "convention": "te", "pts": "off"}, ["--format", "mxfp4", "--convention", "te", "--pts", "off"]),
]


@pytest.mark.parametrize("kw,args", BAD, ids=[" ".join(b[1]) for b in BAD])
def test_option_errors_have_the_cli_message(cli, tmp_path, kw, args):
    x = llm_like((2, 64))
    inp = tmp_path / "x.npy"
    np.save(inp, x)
    if "--format" not in args:
        args = ["--format", kw.get("format", "nvfp4"), *args]
    p = run_cli(cli, "quantize", "--input", inp, "--out", tmp_path / "o", *args, ok=False)
    assert p.returncode == 2 and p.stderr.startswith("fp4sim: error: ")
    cli_msg = p.stderr.strip().removeprefix("fp4sim: error: ")
    with pytest.raises(ValueError) as e:
        fp4sim.quantize(x, **kw)
    assert str(e.value) == cli_msg


@pytest.mark.parametrize("shape,fmt,extra", [((2, 40), "nvfp4", []), ((2, 64), "mxfp4", ["--rht", "128"]),
                                             ((0, 32), "mxfp4", []), ((), "nvfp4", [])])
def test_data_errors_have_the_cli_message(cli, tmp_path, shape, fmt, extra):
    x = np.zeros(shape, np.float32)
    inp = tmp_path / "x.npy"
    np.save(inp, x)
    p = run_cli(cli, "quantize", "--format", fmt, "--input", inp, "--out", tmp_path / "o", *extra, ok=False)
    assert p.returncode == 1
    cli_msg = p.stderr.strip().removeprefix("fp4sim: error: ").replace(str(inp), "x")
    kw = {"rht": int(extra[1])} if extra else {}
    with pytest.raises(ValueError) as e:
        fp4sim.quantize(x, format=fmt, **kw)
    assert str(e.value) == cli_msg


def test_dtype_error_names_the_argument():
    with pytest.raises(ValueError, match=r"^x: input dtype is float64; expected float32 or uint16 \(BF16 bits\)"):
        fp4sim.quantize(np.zeros((1, 16)))


def test_torch_tensors_are_accepted():
    torch = pytest.importorskip("torch")
    x = llm_like((4, 64))
    q = fp4sim.quantize(torch.from_numpy(x))
    assert q.codes.tobytes() == fp4sim.quantize(x).codes.tobytes()
    bf = torch.from_numpy(x).to(torch.bfloat16)
    ref = fp4sim.quantize(bf.view(torch.int16).numpy().view(np.uint16))
    assert fp4sim.quantize(bf).codes.tobytes() == ref.codes.tobytes()


# ---- conventions (torchao, modelopt): the CLI's bits, and dequantization by the definitions ----

def convention_input(nan: bool) -> np.ndarray:
    """BF16-valued rows with what separates the conventions: zero and -0 blocks, ties after
    scaling (block maximum 6, so NVFP4's and MX's scale is 1 x S_dec / 2^0), -0 inside ordinary
    blocks, tiny blocks, and with nan=True a NaN in one block."""
    x = llm_like((4, 128))
    x[0, :32] = 0.0
    x[1, :32] = -0.0
    # Block maximum 6 and the midpoints of consecutive E2M1 magnitudes: every other value a tie.
    ties = [0.25, 0.75, 1.25, 1.75, 2.5, 3.5, 5.0, 6.0]
    x[2, :32] = np.array(ties + [-t for t in ties] + ties[::-1] + [-t for t in ties[::-1]], np.float32)
    x[3, ::7] = -0.0
    x[3, 64:96] = np.float32(2.0 ** -120) * x[3, 64:96]
    if nan:
        x[0, 100] = np.nan
    bits = x.view(np.uint32)
    return ((bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000).view(np.float32)  # RNE to BF16


# (format, convention, scale rule): every quantizer the two libraries have.
CONVENTION_CONFIGS = [
    ("nvfp4", "torchao", None), ("nvfp4", "modelopt", None),
    ("mxfp4", "torchao", "floor"), ("mxfp4", "torchao", "rceil"), ("mxfp6-e2m3", "torchao", None),
    ("mxfp6-e3m2", "torchao", "rceil"), ("mxfp8-e4m3", "torchao", None), ("mxfp8-e5m2", "torchao", "rceil"),
    ("mxfp4", "modelopt", "rceil"), ("mxfp8-e4m3", "modelopt", "rceil"),
]


@pytest.mark.parametrize("nan", [False, True], ids=["ties-zeros", "nan"])
@pytest.mark.parametrize("fmt,conv,rule", CONVENTION_CONFIGS,
                         ids=[f"{c[0]}-{c[1]}-{c[2] or 'default'}" for c in CONVENTION_CONFIGS])
def test_convention_equals_cli(cli, tmp_path, fmt, conv, rule, nan):
    x = convention_input(nan)
    kw = {"scale_rule": rule} if rule else {}
    args = ["--convention", conv] + (["--scale-rule", rule] if rule else [])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # the NaN warning (tested above)
        q = fp4sim.quantize(x, format=fmt, convention=conv, **kw)
    out = cli_quantize(cli, tmp_path, x, fmt, args)
    assert_same_as_cli(q, out, f"{fmt} {conv}")
    assert q.options["convention"] == conv
    assert json.loads((out / "manifest.json").read_text())["options"]["convention"] == conv
    # dequantize(convention=) gives quantize's dequant back, NaN payloads and -0 included.
    gs = q.global_scale if fmt == "nvfp4" else None
    d = fp4sim.dequantize(q.codes, q.scales, format=fmt, global_scale=gs, convention=conv)
    assert d.tobytes() == q.dequant.tobytes()


def test_default_convention_is_te_and_recorded():
    x = convention_input(False)
    q = fp4sim.quantize(x)
    assert q.options["convention"] == "te"
    assert fp4sim.quantize(x, convention="te").codes.tobytes() == q.codes.tobytes()
    assert fp4sim.quantize(x, convention="torchao").codes.tobytes() != q.codes.tobytes()


def test_nvfp4_dequantize_follows_the_convention():
    # E2M1 code 0x7 = 6.0 and 0x8 = -0; UE4M3 code 0x7E = 448. docs/formats.md, "NVFP4 dequant":
    # te (q * s) * S_dec; torchao q * RN(s * S_dec); modelopt the same, and code 0x8 decodes as +0.
    s_dec = np.float32(1.0) / np.float32(3.0)
    codes = np.array([[0x7] * 8 + [0x8] * 8], np.uint8)
    scales = np.array([[0x7E]], np.uint8)
    six, s = np.float32(6.0), np.float32(448.0)
    te = (six * s) * s_dec
    scale_first = six * (s * s_dec)
    assert te != scale_first  # this S_dec tells the two orders apart
    for conv, value, zero_sign in (("te", te, True), (None, te, True), ("torchao", scale_first, True),
                                   ("modelopt", scale_first, False)):
        d = fp4sim.dequantize(codes, scales, global_scale=s_dec, convention=conv)
        assert d.dtype == np.float32 and np.all(d[0, :8] == value), conv
        assert np.all(d[0, 8:] == 0) and np.all(np.signbit(d[0, 8:]) == zero_sign), conv
    # MX dequantization is the same for every convention: code value x 2^(scale - 127).
    mx = fp4sim.dequantize(np.array([[0x7] * 32], np.uint8), np.array([[130]], np.uint8), format="mxfp4",
                           convention="torchao")
    assert np.all(mx == np.float32(48.0))
    with pytest.raises(ValueError, match=r"^--convention modelopt: modelopt has no hif4 quantizer$"):
        fp4sim.dequantize(np.zeros((1, 64), np.uint8), np.zeros((1, 1), np.uint32), format="hif4",
                          convention="modelopt")
    with pytest.raises(ValueError, match=r"^--convention: unknown library 'ao'"):
        fp4sim.dequantize(codes, scales, convention="ao")


@pytest.mark.parametrize("fmt,conv,rule", [("nvfp4", "torchao", None), ("nvfp4", "modelopt", None),
                                           ("mxfp4", "modelopt", "rceil")])
def test_gemm_convention_equals_cli(cli, tmp_path, fmt, conv, rule):
    a, b = convention_input(False), llm_like((8, 128))
    np.save(tmp_path / "a.npy", a)
    np.save(tmp_path / "b.npy", b)
    extra = ["--scale-rule", rule] if rule else []
    run_cli(cli, "gemm", "--format", fmt, "--a", tmp_path / "a.npy", "--b", tmp_path / "b.npy",
            "--convention", conv, *extra, "--out", tmp_path / "d.npy")
    r = fp4sim.gemm(a, b, format=fmt, convention=conv, scale_rule=rule)
    assert r.d.tobytes() == np.load(tmp_path / "d.npy").tobytes()
    assert r.options["convention"] == conv
    p = run_cli(cli, "gemm", "--format", "hif4", "--a", tmp_path / "a.npy", "--b", tmp_path / "b.npy",
                "--convention", conv, "--out", tmp_path / "e.npy", ok=False)
    with pytest.raises(ValueError) as e:
        fp4sim.gemm(a, b, format="hif4", convention=conv)
    assert str(e.value) == p.stderr.strip().removeprefix("fp4sim: error: ")
