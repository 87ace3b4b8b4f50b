"""fp4sim.vectors_from: the suite `fp4sim vectors --from` writes from the caller's own tensors,
byte for byte, with the CLI's messages and output policy."""

import json

import numpy as np
import pytest

import fp4sim
from conftest import run_cli

ml = pytest.importorskip("ml_dtypes")
RNG = np.random.default_rng(20261203)


def operand(rows, K):
    x = RNG.standard_normal((rows, K)).astype(np.float32)
    x.reshape(-1)[::53] *= np.float32(30.0)  # outliers, so blocks differ in scale
    x[0, :16] = 0.0                           # a zero block
    x[-1, 5] = -0.0
    return x


def cli_from(cli, tmp_path, a, b, fmt, args, name="cli", ok=True):
    np.save(tmp_path / "a.npy", a)
    cmd = ["vectors", "--from", tmp_path / "a.npy", "--format", fmt, "--out", tmp_path / name, *args]
    if b is not None:
        np.save(tmp_path / "b.npy", b)
        cmd[3:3] = ["--b", tmp_path / "b.npy"]
    return run_cli(cli, *cmd, ok=ok)


def assert_same_files(cli_dir, py_dir):
    want = sorted(p.relative_to(cli_dir) for p in cli_dir.rglob("*") if p.is_file())
    got = sorted(p.relative_to(py_dir) for p in py_dir.rglob("*") if p.is_file())
    assert got == want
    for rel in want:
        if rel.name != "manifest.json":
            assert (py_dir / rel).read_bytes() == (cli_dir / rel).read_bytes(), rel
    m_cli = json.loads((cli_dir / "manifest.json").read_text())
    m_py = json.loads((py_dir / "manifest.json").read_text())
    assert m_py["command_line"][0].startswith("fp4sim.vectors_from(a")
    assert m_cli["from"]["a"].endswith("a.npy") and m_py["from"]["a"] == "a"
    assert (m_cli["from"]["b"] is None) == (m_py["from"]["b"] is None)
    for m in (m_cli, m_py):
        del m["command_line"], m["from"]
    assert m_py == m_cli


# (format, M, N (None: B = A), K, CLI options, the same as keywords)
FROM = [
    ("nvfp4", 8, None, 128, [], {}),
    ("nvfp4", 4, 6, 256, ["--rounding", "sr", "--seed", "11", "--rht", "16"], {"rounding": "sr", "seed": 11, "rht": 16}),
    ("nvfp4", 4, 4, 64, ["--convention", "torchao"], {"convention": "torchao"}),
    ("mxfp4", 6, 4, 128, ["--scale-rule", "rceil"], {"scale_rule": "rceil"}),
    ("mxfp4", 4, None, 64, ["--convention", "modelopt", "--scale-rule", "rceil"],
     {"convention": "modelopt", "scale_rule": "rceil"}),
    ("hif4", 4, 5, 128, [], {}),
]


@pytest.mark.parametrize("fmt,M,N,K,args,kw", FROM, ids=[f"{f[0]}{''.join(f[4])}-{f[2] or 'a'}" for f in FROM])
def test_vectors_from_writes_the_clis_files_byte_for_byte(cli, tmp_path, fmt, M, N, K, args, kw):
    a = operand(M, K)
    b = None if N is None else operand(N, K)
    cli_from(cli, tmp_path, a, b, fmt, args)
    suite = fp4sim.vectors_from(a, b, format=fmt, out=tmp_path / "py", **kw)
    assert_same_files(tmp_path / "cli", tmp_path / "py")
    assert isinstance(suite, fp4sim.Suite) and len(suite) == 1
    case = suite[0]
    assert case.id.endswith("-from") and (case.M, case.N, case.K) == (M, N or M, K)
    # The operands are what quantize() makes of the tensors (B's SR bits from the same stream).
    q = fp4sim.quantize(a, format=fmt, **kw)
    assert case.a.codes.tobytes() == q.codes.tobytes() and case.a.scales.tobytes() == q.scales.tobytes()
    assert case.a.input.tobytes() == a.tobytes()
    assert case.a.quantize_kwargs().get("convention", "te") == kw.get("convention", "te")
    r = fp4sim.quantize(case.b.input, **case.b.quantize_kwargs())
    assert r.codes.tobytes() == case.b.codes.tobytes() and r.scales.tobytes() == case.b.scales.tobytes()
    # The suite checks equal against its own expected outputs.
    assert fp4sim.check(suite, suite.path)["passed"]


def test_bf16_operands_as_uint16_bfloat16_and_torch(cli, tmp_path):
    bits = operand(4, 64).astype(ml.bfloat16).view(np.uint16)
    cli_from(cli, tmp_path, bits, None, "nvfp4", [])
    fp4sim.vectors_from(bits, format="nvfp4", out=tmp_path / "u16")
    assert_same_files(tmp_path / "cli", tmp_path / "u16")
    fp4sim.vectors_from(bits.view(ml.bfloat16), format="nvfp4", out=tmp_path / "bf16")
    assert_same_files(tmp_path / "cli", tmp_path / "bf16")
    try:
        import torch
    except ImportError:
        return
    t = torch.from_numpy(bits.view(np.int16)).view(torch.bfloat16)
    fp4sim.vectors_from(t, format="nvfp4", out=tmp_path / "torch")
    assert_same_files(tmp_path / "cli", tmp_path / "torch")


# Mistakes in the data: (A shape, B shape or None, format, CLI options, keywords). The CLI names
# the file (and its option, --from / --b); Python names the argument.
DATA_ERRORS = [
    ((64,), None, "nvfp4", [], {}),
    ((2, 3, 64), None, "nvfp4", [], {}),
    ((0, 64), None, "mxfp4", [], {}),
    ((4, 64), (4,), "nvfp4", [], {}),
    ((4, 64), (4, 128), "nvfp4", [], {}),
    ((4, 40), None, "nvfp4", [], {}),
    ((4, 32), None, "mxfp4", [], {}),
    ((4, 32), None, "hif4", [], {}),
    ((4, 64), None, "mxfp4", ["--rht", "128"], {"rht": 128}),
]


@pytest.mark.parametrize("sa,sb,fmt,args,kw", DATA_ERRORS,
                         ids=[f"{e[2]}-{e[0]}-{e[1]}{''.join(e[3])}" for e in DATA_ERRORS])
def test_data_errors_have_the_cli_message(cli, tmp_path, sa, sb, fmt, args, kw):
    a = np.ones(sa, np.float32)
    b = None if sb is None else np.ones(sb, np.float32)
    p = cli_from(cli, tmp_path, a, b, fmt, args, ok=False)
    assert p.returncode == 1 and p.stderr.startswith("fp4sim: error: ")
    want = (p.stderr.strip().removeprefix("fp4sim: error: ").replace(f"{tmp_path / 'a.npy'}: --from ", "a: ")
            .replace(f"{tmp_path / 'b.npy'}: --b ", "b: ").replace(str(tmp_path / "a.npy"), "a")
            .replace(str(tmp_path / "b.npy"), "b"))
    with pytest.raises(ValueError) as e:
        fp4sim.vectors_from(a, b, format=fmt, out=tmp_path / "py", **kw)
    assert str(e.value) == want
    assert sorted(x.name for x in tmp_path.iterdir()) == sorted(["a.npy"] + (["b.npy"] if sb else []))


OPTION_ERRORS = [
    ({"format": "nvfp5"}, ["--format", "nvfp5"]),
    ({"format": "mxfp4", "pts": "off"}, ["--format", "mxfp4", "--pts", "off"]),
    ({"format": "hif4", "convention": "torchao"}, ["--format", "hif4", "--convention", "torchao"]),
    ({"format": "nvfp4", "convention": "modelopt", "rounding": "sr"},
     ["--format", "nvfp4", "--convention", "modelopt", "--rounding", "sr"]),
    ({"format": "nvfp4", "threads": 5000}, ["--format", "nvfp4", "--threads", "5000"]),
]


@pytest.mark.parametrize("kw,args", OPTION_ERRORS, ids=[" ".join(e[1]) for e in OPTION_ERRORS])
def test_option_errors_have_the_cli_message(cli, tmp_path, kw, args):
    a = operand(4, 64)
    np.save(tmp_path / "a.npy", a)
    p = run_cli(cli, "vectors", "--from", tmp_path / "a.npy", "--out", tmp_path / "cli", *args, ok=False)
    assert p.returncode == 2 and p.stderr.startswith("fp4sim: error: ")
    with pytest.raises(ValueError) as e:
        fp4sim.vectors_from(a, out=tmp_path / "py", **kw)
    assert str(e.value) == p.stderr.strip().removeprefix("fp4sim: error: ")
    assert not (tmp_path / "py").exists()


def test_output_policy_is_the_clis(cli, tmp_path):
    a = operand(4, 64)
    out = tmp_path / "v"
    fp4sim.vectors_from(a, format="nvfp4", out=out)
    before = (out / "manifest.json").read_bytes()
    np.save(tmp_path / "a.npy", a)
    p = run_cli(cli, "vectors", "--from", tmp_path / "a.npy", "--format", "nvfp4", "--out", out, ok=False)
    assert p.returncode != 0 and "--force" in p.stderr
    with pytest.raises(OSError) as e:  # an existing OUT needs force, and is checked before the data
        fp4sim.vectors_from(np.ones((4, 40), np.float32), format="nvfp4", out=out)
    assert str(e.value) == p.stderr.strip().removeprefix("fp4sim: error: ").replace("--force", "force=True")
    assert (out / "manifest.json").read_bytes() == before
    s = fp4sim.vectors_from(a, format="mxfp4", out=out, force=True)
    assert s.manifest["suite"] == "from" and s[0].block == 32
    assert (out / "manifest.json").read_bytes() != before
    with pytest.raises(ValueError):  # a failure with force leaves the old suite in place
        fp4sim.vectors_from(np.ones((4, 40), np.float32), format="nvfp4", out=out, force=True)
    assert fp4sim.load_suite(out)[0].block == 32
    p = run_cli(cli, "vectors", "--from", tmp_path / "a.npy", "--format", "nvfp4", "--out", tmp_path / "no" / "v",
                ok=False)
    with pytest.raises(OSError) as e:  # the parent folder must exist
        fp4sim.vectors_from(a, format="nvfp4", out=tmp_path / "no" / "v")
    assert str(e.value) == p.stderr.strip().removeprefix("fp4sim: error: ")
    assert sorted(x.name for x in tmp_path.iterdir()) == ["a.npy", "v"]  # nothing staged left behind
