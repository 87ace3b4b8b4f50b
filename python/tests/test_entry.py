"""Python as an entry point of its own: fp4sim.vectors (the suites of `fp4sim vectors`),
check(allow_missing=), save_result of ml_dtypes arrays, packed E2M1 input, the rceil scale rule."""

import json
import shutil

import numpy as np
import pytest

import fp4sim
from conftest import run_cli

ml = pytest.importorskip("ml_dtypes")

# Suites and the options that keep them small (random: M = N = 8; llm: 64 tokens).
SUITES = [("smoke", ["--seed", "3"], {"seed": 3}), ("corners", [], {}),
          ("random", ["--seed", "9", "--size", "8"], {"seed": 9, "size": 8}),
          ("llm", ["--seed", "2", "--size", "64"], {"seed": 2, "size": 64}),
          ("quant", ["--seed", "5"], {"seed": 5}),
          ("quant", ["--convention", "torchao"], {"convention": "torchao"}),
          ("quant", ["--convention", "modelopt"], {"convention": "modelopt"})]


@pytest.mark.parametrize("name,args,kw", SUITES, ids=[" ".join([s[0]] + s[1]) for s in SUITES])
def test_vectors_writes_the_clis_files_byte_for_byte(cli, tmp_path, name, args, kw):
    run_cli(cli, "vectors", "--suite", name, "--out", tmp_path / "cli", *args)
    suite = fp4sim.vectors(name, tmp_path / "py", **kw)
    assert isinstance(suite, fp4sim.Suite) and len(suite) > 0
    want = sorted(p.relative_to(tmp_path / "cli") for p in (tmp_path / "cli").rglob("*") if p.is_file())
    got = sorted(p.relative_to(tmp_path / "py") for p in (tmp_path / "py").rglob("*") if p.is_file())
    assert got == want
    for rel in want:
        if rel.name != "manifest.json":
            assert (tmp_path / "py" / rel).read_bytes() == (tmp_path / "cli" / rel).read_bytes(), rel
    m_cli = json.loads((tmp_path / "cli" / "manifest.json").read_text())
    m_py = json.loads((tmp_path / "py" / "manifest.json").read_text())
    assert m_py["command_line"] != m_cli["command_line"]
    assert m_py["command_line"][0].startswith(f"fp4sim.vectors(suite='{name}'")
    for m in (m_cli, m_py):
        del m["command_line"]
    assert m_py == m_cli


VECTOR_ERRORS = [
    ({"suite": "tiny"}, ["--suite", "tiny"]),
    ({"suite": "corners", "seed": 1}, ["--suite", "corners", "--seed", "1"]),
    ({"suite": "smoke", "size": 4}, ["--suite", "smoke", "--size", "4"]),
    ({"suite": "llm", "size": 100}, ["--suite", "llm", "--size", "100"]),
    ({"suite": "random", "size": 0}, ["--suite", "random", "--size", "0"]),
    ({"suite": "random", "seed": -1}, ["--suite", "random", "--seed", "-1"]),
    ({"suite": "random", "threads": 2000}, ["--suite", "random", "--threads", "2000"]),
    ({"suite": "quant", "convention": "tf"}, ["--suite", "quant", "--convention", "tf"]),
    ({"suite": "smoke", "convention": "torchao"}, ["--suite", "smoke", "--convention", "torchao"]),
]


@pytest.mark.parametrize("kw,args", VECTOR_ERRORS, ids=[" ".join(e[1]) for e in VECTOR_ERRORS])
def test_vectors_errors_have_the_cli_message(cli, tmp_path, kw, args):
    p = run_cli(cli, "vectors", "--out", tmp_path / "cli", *args, ok=False)
    assert p.returncode == 2 and p.stderr.startswith("fp4sim: error: ")
    with pytest.raises(ValueError) as e:
        fp4sim.vectors(out=tmp_path / "py", **kw)
    assert str(e.value) == p.stderr.strip().removeprefix("fp4sim: error: ")
    assert not (tmp_path / "py").exists()


def test_vectors_output_policy_is_the_clis(cli, tmp_path):
    out = tmp_path / "v"
    fp4sim.vectors("smoke", out)
    before = (out / "manifest.json").read_bytes()
    p = run_cli(cli, "vectors", "--suite", "smoke", "--out", out, ok=False)
    assert p.returncode != 0
    with pytest.raises(OSError) as e:  # an existing OUT needs force
        fp4sim.vectors("smoke", out, seed=1)
    assert "--force" in p.stderr
    assert str(e.value) == p.stderr.strip().removeprefix("fp4sim: error: ").replace("--force", "force=True")
    assert (out / "manifest.json").read_bytes() == before
    s = fp4sim.vectors("smoke", out, seed=1, force=True)
    assert s.manifest["seed"] == 1 and (out / "manifest.json").read_bytes() != before
    p = run_cli(cli, "vectors", "--suite", "smoke", "--out", tmp_path / "no" / "v", ok=False)
    with pytest.raises(OSError) as e:  # the parent folder must exist
        fp4sim.vectors("smoke", tmp_path / "no" / "v")
    assert str(e.value) == p.stderr.strip().removeprefix("fp4sim: error: ")
    assert sorted(x.name for x in tmp_path.iterdir()) == ["v"]  # nothing staged left behind


@pytest.fixture(scope="module")
def py_smoke(tmp_path_factory):
    return fp4sim.vectors("smoke", tmp_path_factory.mktemp("py") / "smoke", seed=4)


def test_every_case_names_its_kinds_hardware_model(py_smoke):
    hw = {"mxf8f6f4": "blackwell", "mxf4": "blackwell", "mxf4nvf4": "blackwell", "hif4": "ascend-hif4"}
    assert fp4sim.SUITES[:4] == ("smoke", "corners", "random", "llm")
    kinds = {c.kind for c in py_smoke}
    assert "hif4" in kinds and kinds - {"hif4"}
    for case in py_smoke:
        assert case.hardware_model == hw[case.kind]
        assert case.hardware_model in case.expected


def _kernel_outputs(case, ml_types: bool):
    """The case's D from fp4sim.mma and, for float-sourced operands, the quantizer outputs; element
    and scale arrays as ml_dtypes where the type has one (ml_types)."""
    out = {f"d_{case.hardware_model}": fp4sim.mma(case.a.codes, case.b.codes, case.a.scales, case.b.scales, case.c,
                                                  model=case.hardware_model, **case.mma_kwargs())}
    for name, op in (("a", case.a), ("b", case.b)):
        if op.source != "float":
            continue
        q = fp4sim.quantize(op.input, **op.quantize_kwargs())
        has_ml = fp4sim.ml_dtype(q.element_type) is not None and not fp4sim.FORMATS[q.format]["scale_word32"]
        if ml_types and has_ml:
            out[f"{name}_codes"] = q.codes_as_ml_dtypes()
            out[f"{name}_scales"] = q.scales_as_ml_dtypes()
            if q.packed is not None:
                out[f"{name}_packed"] = q.codes_as_ml_dtypes()  # one code per byte: save_result packs them
        else:
            out[f"{name}_codes"], out[f"{name}_scales"] = q.codes, q.scales
    return out


def test_save_result_of_ml_dtypes_arrays_checks_equal(py_smoke, tmp_path):
    n_ml = 0
    for case in py_smoke:
        for output, arr in _kernel_outputs(case, ml_types=True).items():
            n_ml += arr.dtype.name.startswith("float") and arr.dtype != np.float32
            p = fp4sim.save_result(tmp_path / "r", case, output, arr)
            assert np.load(p).dtype == np.load(py_smoke.path / "cases" / case.id / f"{output}.npy").dtype
    assert n_ml > 0
    r = fp4sim.check(py_smoke, tmp_path / "r")
    assert r["all_equal"] and r["passed"] and r["equal"] == len(py_smoke), "\n".join(r["lines"])
    assert r["lines"][-1].startswith(f"check {py_smoke.path} against {tmp_path / 'r'}: {len(py_smoke)} cases")


def test_save_result_stores_code_bits():
    """E2M1 by its definition (sign, 2 exponent bits, 1 mantissa bit): -6 = 1111, 0.5 = 0001,
    -0 = 1000, 3 = 0101; E8M0 2^-3 = 127 - 3 = 124; E4M3 448 = 0 1111 110."""
    import tempfile
    from pathlib import Path

    with tempfile.TemporaryDirectory() as d:
        e2m1 = np.array([[-6.0, 0.5, -0.0, 3.0]], np.float32).astype(ml.float4_e2m1fn)
        p = fp4sim.save_result(d, "c0", "a_codes", e2m1)
        assert np.load(p).dtype == np.uint8 and np.load(p).tolist() == [[0x0F, 0x01, 0x08, 0x05]]
        p = fp4sim.save_result(d, "c0", "a_packed", e2m1)
        assert np.load(p).tolist() == [[0x1F, 0x58]]  # low nibble = even element
        p = fp4sim.save_result(d, "c0", "a_scales", np.array([[0.125]], np.float32).astype(ml.float8_e8m0fnu))
        assert np.load(p).tolist() == [[124]]
        p = fp4sim.save_result(d, "c0", "b_codes", np.array([[448.0]], np.float32).astype(ml.float8_e4m3fn))
        assert np.load(p).tolist() == [[0x7E]]
        d32 = np.array([[1.5, -0.0]], np.float32)
        p = fp4sim.save_result(d, "c0", "d_exact", d32)
        assert np.load(p).dtype == np.float32 and np.load(p).tobytes() == d32.tobytes()
        assert Path(p) == Path(d) / "cases" / "c0" / "d_exact.npy"


def test_check_allow_missing_is_the_clis(cli, py_smoke, tmp_path):
    results = tmp_path / "r"
    shutil.copytree(py_smoke.path / "cases", results / "cases")
    victim = py_smoke[0].id
    shutil.rmtree(results / "cases" / victim)

    def cli_rc(*extra):
        return run_cli(cli, "check", py_smoke.path, "--results", results, "--quiet", *extra, ok=False).returncode

    r = fp4sim.check(py_smoke, results)
    assert (r["passed"], r["all_equal"], r["missing"], r["allow_missing"]) == (False, False, 1, False)
    assert cli_rc() == 1
    r = fp4sim.check(py_smoke, results, allow_missing=True)
    assert (r["passed"], r["all_equal"], r["missing"], r["allow_missing"]) == (True, False, 1, True)
    assert [c["id"] for c in r["cases"] if c["status"] == "missing"] == [victim]
    assert cli_rc("--allow-missing") == 0
    # A difference still fails, missing cases allowed or not.
    d = next((results / "cases" / py_smoke[1].id).glob("d_*.npy"))
    a = np.load(d)
    a.view(np.uint32).reshape(-1)[0] ^= 1
    np.save(d, a)
    assert fp4sim.check(py_smoke, results, allow_missing=True)["passed"] is False
    assert cli_rc("--allow-missing") == 1
    # Nothing at all compared: not a pass either.
    empty = tmp_path / "empty"
    empty.mkdir()
    assert fp4sim.check(py_smoke, empty, allow_missing=True)["passed"] is False


def test_packed_bytes_viewed_as_float4_are_refused_not_halved():
    """Packed nibbles viewed as float4_e2m1fn read (in ml_dtypes) as their low nibbles only: passed
    as codes they would make K half the element count. fp4sim refuses them, naming the packing."""
    rng = np.random.default_rng(1)
    codes = rng.integers(0, 16, (2, 128), dtype=np.uint8)
    codes[:, 1] = 0x9  # an odd element with a non-zero nibble in every row
    packed = fp4sim.pack_nibbles(codes)  # [2, 64]: 64 bytes would pass for K = 64 codes
    view = packed.view(ml.float4_e2m1fn)
    scales = np.full((2, 4), 127, np.uint8)
    with pytest.raises(ValueError, match=r"^a: float4_e2m1fn byte 0x9.* at \[0, 0\] has bits above its 4-bit code: "
                                         r"two E2M1 codes packed per byte"):
        fp4sim.mma(view, view, scales[:, :2], scales[:, :2], kind="mxf4")
    with pytest.raises(ValueError, match="codes packed per byte"):
        fp4sim.dequantize(view, scales[:, :2], format="mxfp4")
    with pytest.raises(ValueError, match=r"codes must be unpacked, one per byte"):
        fp4sim.mma(packed, packed, scales[:, :2], scales[:, :2], kind="mxf4")
    # Unpacked, the same bytes are the 128 codes they hold: D equals the uint8-codes product.
    unpacked = fp4sim.unpack_nibbles(packed, dtype="e2m1")
    assert unpacked.shape == (2, 128)
    d = fp4sim.mma(unpacked, unpacked, scales, scales, kind="mxf4")
    assert np.array_equal(d, fp4sim.mma(codes, codes, scales, scales, kind="mxf4", elem="e2m1"))


def test_torch_float4_x2_is_two_codes_per_byte():
    torch = pytest.importorskip("torch")
    if not hasattr(torch, "float4_e2m1fn_x2"):
        pytest.skip("this torch has no float4_e2m1fn_x2")
    rng = np.random.default_rng(2)
    codes = rng.integers(0, 16, (3, 64), dtype=np.uint8)
    packed = fp4sim.pack_nibbles(codes)
    t = torch.from_numpy(packed).view(torch.float4_e2m1fn_x2)
    sa = np.full((3, 2), 126, np.uint8)
    d = fp4sim.mma(t, t, sa, sa, kind="mxf4")  # K = 64 elements, not 32 bytes
    assert np.array_equal(d, fp4sim.mma(codes, codes, sa, sa, kind="mxf4", elem="e2m1"))
    assert np.array_equal(fp4sim.dequantize(t, sa, format="mxfp4"), fp4sim.dequantize(codes, sa, format="mxfp4"))
    assert np.array_equal(fp4sim.unpack_nibbles(t), codes)


def test_rceil_is_the_smallest_power_of_two_that_does_not_saturate():
    """Block amax 6.5 (E2M1 max 6): floor gives 2^(floor(log2 6.5) - 2) = 2^0, so 6.5 saturates to 6
    (code 0111); rceil gives the smallest 2^e >= 6.5 / 6, 2^1 (UE8M0 128), and 6.5 / 2 = 3.25 rounds
    to 3 (code 0101). "ceil" is the same rule; options and manifests name it rceil."""
    x = np.zeros((1, 32), np.float32)
    x[0, 0] = 6.5
    f = fp4sim.quantize(x, format="mxfp4")
    assert (int(f.scales[0, 0]), int(f.codes[0, 0])) == (127, 0x7)
    for name in ("rceil", "ceil"):
        q = fp4sim.quantize(x, format="mxfp4", scale_rule=name)
        assert (int(q.scales[0, 0]), int(q.codes[0, 0])) == (128, 0x5)
        assert q.options["scale_rule"] == "rceil"
    with pytest.raises(ValueError, match=r"^--scale-rule: unknown rule 'RCEIL' \(expected floor or rceil\)"):
        fp4sim.quantize(x, format="mxfp4", scale_rule="RCEIL")


def test_cli_takes_rceil_and_records_it(cli, tmp_path):
    x = np.zeros((1, 32), np.float32)
    x[0, 0] = 6.5
    np.save(tmp_path / "x.npy", x)
    for name in ("rceil", "ceil"):
        out = tmp_path / name
        run_cli(cli, "quantize", "--format", "mxfp4", "--scale-rule", name, "--input", tmp_path / "x.npy", "--out", out)
        assert np.load(out / "scales.npy").tolist() == [[128]]
        assert json.loads((out / "manifest.json").read_text())["options"]["scale_rule"] == "rceil"
