"""fp4sim.train: recipes from golden, the quantized linear layer's operands and GEMMs, determinism
of short trainings per format, and the command's errors. Skipped without torch."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

import fp4sim
from fp4sim.train import recipe as R

torch = pytest.importorskip("torch")

from fp4sim.train import layers as L  # noqa: E402
from fp4sim.train.__main__ import main  # noqa: E402
from fp4sim.train.run import Config, train_one  # noqa: E402
from fp4sim.train.study import grid, paired, summarize  # noqa: E402

# A model whose every reduction axis fits every block, instruction K and RHT size (64).
TINY = dict(steps=6, batch=2, context=32, layers=1, d_model=64, heads=2, corpus_bytes=256 << 10, eval_every=3,
            eval_batches=1, warmup=2)
FORMAT_RECIPES = {
    "nvfp4": R.preset("nvfp4-paper"),
    "mxfp4": R.preset("mxfp4-paper"),
    "hif4": R.preset("hif4-paper"),
    "mxfp8": R.with_switches(R.preset("mxfp4-paper"), format="mxfp8", sr=True, rht=64, scale_rule="rceil"),
    "nvfp4 -pts": R.with_switches(R.preset("nvfp4-paper"), pts=False),
    "bf16": R.preset("bf16"),
    "none": R.preset("none"),
}


def cfg(**kw) -> Config:
    return Config(**{**TINY, **kw})


# ---- recipes ----

def test_presets_are_goldens():
    # linear.hpp: nvfp4-paper = PTS, 2D weights, SR on gradients, RHT-16 on the Wgrad operands.
    r = R.preset("nvfp4-paper")
    assert (r.format, r.pts, r.two_d, r.sr, r.rht, r.scale_rule) == ("nvfp4", True, True, True, 16, "floor")
    r = R.preset("mxfp4-paper")
    assert (r.format, r.sr, r.rht, r.scale_rule) == ("mxfp4", True, 64, "rceil")
    r = R.preset("hif4-paper")
    assert (r.format, r.sr, r.rht) == ("hif4", False, 64)
    assert R.preset("fp32").format == "none"
    names = [x.name for x in R.ablation_grid()]
    assert names[:3] == ["bf16", "nvfp4-paper", "nvfp4-paper -pts"] and "mxfp4-paper -rht" in names


def test_operand_options():
    ops = R.operand_options(R.preset("nvfp4-paper"), sr_seed=11, rht_seed=22)
    (fx, fw), (dg, dw), (wg, wx) = ops
    assert [o["rounding"] for o in (fx, fw, dg, dw, wg, wx)] == ["rne", "rne", "sr", "rne", "sr", "rne"]
    assert (dg["stream"], wg["stream"]) == (R.DGRAD_SR_STREAM, R.WGRAD_SR_STREAM) == (1, 2)
    assert [o["two_d"] for o in (fx, fw, dg, dw, wg, wx)] == [False, True, False, True, False, False]
    assert [o["rht"] for o in (fx, fw, dg, dw, wg, wx)] == [0, 0, 0, 0, 16, 16]
    assert all(o["sr_seed"] == 11 and o["rht_seed"] == 22 and o["pts"] for o in (fx, fw, dg, dw, wg, wx))
    # TE's fixed 16-point signs unless seeded: no rht_seed keyword for them, one for size 64.
    assert "rht_seed" not in R.fake_quantize_kwargs("nvfp4", wg)
    (_, _), (_, _), (mg, mx) = R.operand_options(R.preset("mxfp4-paper"), 1, 5)
    assert R.fake_quantize_kwargs("mxfp4", mg)["rht_seed"] == R.fake_quantize_kwargs("mxfp4", mx)["rht_seed"] == 5
    assert mg["scale_rule"] == "rceil"


def test_seeds_per_step_and_layer():
    s = {R.sr_seed(7, layer, step) for layer in range(3) for step in range(4)}
    assert len(s) == 12
    assert R.sr_seed(7, 1, 2) == R.sr_seed(7, 1, 2) != R.sr_seed(8, 1, 2)
    assert R.rht_seed(7, 0) != R.rht_seed(7, 1)
    assert R.derive_seed(0) == 0xE220A8397B1DCDAF  # splitmix64(0), the reference's first output


def test_bad_recipes():
    with pytest.raises(ValueError, match="unknown recipe 'nvfp5'"):
        R.preset("nvfp5")
    with pytest.raises(ValueError, match="pts applies to nvfp4 only"):
        R.with_switches(R.preset("hif4-paper"), pts=False)
    with pytest.raises(ValueError, match="power of two"):
        R.with_switches(R.preset("hif4-paper"), rht=48)
    with pytest.raises(ValueError, match="scale rule ceil applies to mxfp4 only"):
        R.with_switches(R.preset("nvfp4-paper"), scale_rule="rceil")
    with pytest.raises(ValueError, match="unknown format"):
        R.with_switches(R.preset("hif4-paper"), format="int4")
    with pytest.raises(ValueError, match="--gemm: unknown mode"):
        L.QuantContext(R.preset("hif4-paper"), gemm="fp16")


def test_quantize_rht_seed():
    x = np.random.default_rng(3).standard_normal((8, 128)).astype(np.float32)
    # Signs from rht_seed alone: the SR seed no longer moves them.
    a = fp4sim.quantize(x, "mxfp4", rht=64, seed=5, rht_seed=9).dequant
    b = fp4sim.quantize(x, "mxfp4", rht=64, seed=9).dequant
    assert np.array_equal(a, b)
    assert not np.array_equal(a, fp4sim.quantize(x, "mxfp4", rht=64, seed=5).dequant)
    got = fp4sim.fake_quantize(x, "nvfp4", rounding="sr", sr_seed=5, rht=16, rht_seed=9)
    assert np.array_equal(got, fp4sim.quantize(x, "nvfp4", rounding="sr", seed=5, rht=16, rht_seed=9).dequant)
    with pytest.raises(ValueError, match="--rht_seed"):
        fp4sim.quantize(x, "mxfp4", rht=64, rht_seed=-1)


# ---- the quantized layer ----

def _record(hooks):
    # Copies: the layer reuses its output buffers from one call to the next.
    got = []
    def copy(v):
        return v.clone() if isinstance(v, torch.Tensor) else v.copy() if isinstance(v, np.ndarray) else v

    hooks.append(lambda r: got.append({k: copy(v) for k, v in r.items()}))
    return got


def _expected(rec) -> np.ndarray:
    """fp4sim.quantize(...).dequant of the same tensor along the same axis."""
    x = rec["x"].detach().numpy()
    kw = R.quantize_kwargs(rec["format"], {**_opts_of(rec)})
    if rec["axis"] == -1:
        return fp4sim.quantize(x, rec["format"], **kw).dequant
    return fp4sim.quantize(np.ascontiguousarray(x.T), rec["format"], **kw).dequant.T


def _opts_of(rec):
    kw = dict(rec["kwargs"])
    return {"rounding": kw["rounding"], "sr_seed": kw["sr_seed"], "stream": kw["stream"], "two_d": kw["two_d"],
            "rht": kw["rht"] or 0, "rht_bf16": kw["rht_bf16"], "pts": kw.get("pts", True),
            "scale_rule": kw.get("scale_rule", "floor"), "rht_seed": kw.get("rht_seed", 0),
            "rht_seeded": "rht_seed" in kw}


@pytest.mark.parametrize("fmt", ["nvfp4", "mxfp4", "hif4", "mxfp8", "nvfp4 -pts"])
def test_every_operand_is_quantize_dequant(fmt):
    got = _record(L.QUANT_HOOKS)
    try:
        train_one(FORMAT_RECIPES[fmt], cfg(steps=2, eval_every=2), progress=False)
    finally:
        L.QUANT_HOOKS.clear()
    # Six operands per quantized layer per step (lm_head stays out: not in bf16_layers here, so it
    # counts) plus the evaluation's Fprop operands.
    per_step = [r for r in got if r["step"] == 1]
    assert {(r["gemm"], r["operand"], r["axis"]) for r in per_step} == {
        (0, "a", -1), (0, "b", -1), (1, "a", -1), (1, "b", 0), (2, "a", 0), (2, "b", 0)}
    assert len({r["layer"] for r in per_step}) == 5
    for rec in got:
        assert np.array_equal(rec["out"].numpy(), _expected(rec)), (rec["layer"], rec["gemm"], rec["operand"])
    # SR bits change with the step: the same layer's Dgrad gradient keys differ at steps 0 and 1.
    if FORMAT_RECIPES[fmt].sr:
        keys = {(r["step"], r["kwargs"]["sr_seed"]) for r in got if r["layer"] == "lm_head" and r["gemm"] == 1}
        assert len(keys) == 2 and len({k for _, k in keys}) == 2


def test_bf16_layers_are_rounded_not_quantized():
    r = R.with_switches(R.preset("hif4-paper"), bf16_layers=["lm_head", "blocks.0.attn"])
    got = _record(L.QUANT_HOOKS)
    try:
        train_one(r, cfg(steps=1, eval_every=1), progress=False)
    finally:
        L.QUANT_HOOKS.clear()
    assert {x["layer"] for x in got} == {"blocks.0.mlp.fc", "blocks.0.mlp.proj"}
    q = L.QuantContext(r)
    modes = (q.mode_of("blocks.0.attn.qkv"), q.mode_of("blocks.0.attnx"), q.mode_of("lm_head"))
    assert modes == ("bf16", "hif4", "bf16")
    lin = L.QuantLinear(64, 64, q, "lm_head")
    x = torch.randn(4, 64)
    want = x.to(torch.bfloat16).float() @ lin.weight.detach().to(torch.bfloat16).float().t()
    assert torch.equal(lin(x).detach(), want)


def test_layer_shapes_checked(tmp_path, capsys):
    q = L.QuantContext(R.preset("hif4-paper"))
    with pytest.raises(ValueError, match=r"layer l: in_features \(Fprop reduces over it\) = 96 is not a multiple "
                       r"of 64 \(the hif4 block\)"):
        L.QuantLinear(96, 64, q, "l")
    with pytest.raises(ValueError, match=r"out_features \(Dgrad reduces over it\) = 32 is not a multiple of 64"):
        L.QuantLinear(64, 32, q, "l")
    lin = L.QuantLinear(64, 64, q, "l")
    with pytest.raises(ValueError, match=r"32 tokens \(Wgrad reduces over them\) is not a multiple of 64 "
                       r"\(the hif4 block, RHT 64\)"):
        lin(torch.zeros(32, 64))
    qh = L.QuantContext(R.preset("mxfp4-paper"), gemm="hardware")
    with pytest.raises(ValueError, match=r"= 32 is not a multiple of 64 \(the mxfp4 block, mxf4 instruction K\)"):
        L.QuantLinear(32, 64, qh, "l")
    L.QuantLinear(32, 32, L.QuantContext(R.preset("mxfp4-paper")), "l")  # block 32 is enough for FP32 GEMMs
    assert main(["--recipe", "hif4-paper", "--d-model", "96", "--heads", "2", "--corpus-bytes", "65536", "--no-png",
                 "--out", str(tmp_path)]) == 2
    assert "layer blocks.0.attn.qkv: in_features" in capsys.readouterr().err


def test_none_gradients_equal_nn_linear():
    torch.manual_seed(0)
    q = L.QuantContext(R.preset("none"))
    lin = L.QuantLinear(64, 32, q, "l", bias=True)
    ref = torch.nn.Linear(64, 32)
    with torch.no_grad():
        ref.weight.copy_(lin.weight)
        ref.bias.copy_(torch.randn(32))
        lin.bias.copy_(ref.bias)
    x1 = torch.randn(16, 64, requires_grad=True)
    x2 = x1.detach().clone().requires_grad_(True)
    g = torch.randn(16, 32)
    lin(x1).backward(g)
    ref(x2).backward(g)
    assert torch.equal(x1.grad, x2.grad)
    assert torch.equal(lin.weight.grad, ref.weight.grad)
    assert torch.equal(lin.bias.grad, ref.bias.grad)


@pytest.mark.parametrize("name", ["hif4-paper", "nvfp4 -2d -sr"])
def test_hardware_gemm_equals_fp4sim_gemm(name):
    # Recipes whose two operands of each GEMM share their options (no 2D, no SR), so that
    # fp4sim.gemm's one set of options (its seed = the RHT seed) describes both.
    r = R.preset("hif4-paper") if name == "hif4-paper" else R.with_switches(R.preset("nvfp4-paper"), two_d=False,
                                                                            sr=False)
    got = _record(L.GEMM_HOOKS)
    try:
        train_one(r, cfg(steps=1, eval_every=1, gemm="hardware"), progress=False)
    finally:
        L.GEMM_HOOKS.clear()
    assert {x["gemm"] for x in got} == {0, 1, 2} and len(got) >= 15
    for rec in got:
        oa = rec["oa"]
        kw = {"rht": oa["rht"] or None}
        if oa["rht"] and oa["rht"] != 16:
            kw["seed"] = oa["rht_seed"]
        if rec["format"] == "nvfp4":
            kw["pts"] = oa["pts"]
        want = fp4sim.gemm(rec["a"].numpy(), rec["b"].numpy(), format=rec["format"], **kw)
        assert np.array_equal(rec["d"].view(np.uint32), want.d.view(np.uint32)), (rec["layer"], rec["gemm"])


def test_hardware_gemm_equals_mma_with_sr_and_2d():
    got = _record(L.GEMM_HOOKS)
    try:
        train_one(R.preset("nvfp4-paper"), cfg(steps=1, eval_every=1, gemm="hardware"), progress=False)
    finally:
        L.GEMM_HOOKS.clear()
    for rec in got:
        f = rec["format"]
        qa = fp4sim.quantize(rec["a"].numpy(), f, **R.quantize_kwargs(f, rec["oa"]))
        qb = fp4sim.quantize(rec["b"].numpy(), f, **R.quantize_kwargs(f, rec["ob"]))
        alpha = np.float32(qa.global_scale[0]) * np.float32(qb.global_scale[0])
        want = fp4sim.mma(qa.codes, qb.codes, qa.scales, qb.scales, kind="mxf4nvf4", alpha=float(alpha))
        assert np.array_equal(rec["d"].view(np.uint32), want.view(np.uint32))
        # ... and it is the product of the dequantized operands up to the accumulation's rounding.
        ref = (qa.dequant.astype(np.float64) @ qb.dequant.astype(np.float64).T)
        assert np.allclose(rec["d"], ref, rtol=1e-3, atol=1e-3 * np.abs(ref).max())


# ---- training runs ----

@pytest.mark.parametrize("fmt", ["nvfp4", "mxfp4", "hif4", "mxfp8", "bf16", "none", "nvfp4 hardware"])
def test_training_is_deterministic(fmt):
    r = FORMAT_RECIPES[fmt.split()[0]]
    gemm = "hardware" if fmt.endswith("hardware") else "float32"
    a = train_one(r, cfg(threads=1, gemm=gemm), progress=False)
    b = train_one(r, cfg(threads=2, gemm=gemm), progress=False)
    assert all(math.isfinite(x) for x in a["train_loss"])
    assert a["train_loss"] == b["train_loss"] and a["val_loss"] == b["val_loss"]
    # The loss moves from ln 256 (a uniform byte) within these few steps.
    assert a["train_loss"][-1] < a["train_loss"][0] < math.log(256) + 0.1
    c = train_one(r, cfg(threads=1, seed=1, gemm=gemm), progress=False)
    assert c["train_loss"] != a["train_loss"]


def test_formats_differ_from_fp32():
    base = train_one(R.preset("none"), cfg(), progress=False)["train_loss"]
    for fmt in ("nvfp4", "hif4"):
        got = train_one(FORMAT_RECIPES[fmt], cfg(), progress=False)["train_loss"]
        assert got[0] != base[0]  # step 0's forward already sees quantized operands
        assert abs(got[-1] - base[-1]) < 0.5


# ---- study statistics ----

def test_paired_ci_by_hand():
    m, ci = paired([0.01, 0.03, 0.02])
    assert m == pytest.approx(0.02)
    assert ci == pytest.approx(4.303 * 0.01 / math.sqrt(3))  # sd 0.01, t(0.975, 2)
    assert paired([0.5]) == (0.5, None)
    runs = [{"label": lab, "gemm": "float32", "seed": s, "final_val_loss": v, "step_ms": 1.0}
            for lab, s, v in (("none", 0, 2.0), ("none", 1, 2.2), ("x", 0, 2.02), ("x", 1, 2.2))]
    x = [s for s in summarize(runs, "none") if s["label"] == "x"][0]
    assert x["rel_mean"] == pytest.approx(0.005)
    assert not x["resolved"]  # +1 % and 0 %: the interval [-5.9 %, +6.9 %] holds 0


def test_study_grids():
    g = grid("hif4-paper")
    sig = [(r.format, r.pts, r.two_d, r.sr, r.rht, r.scale_rule) for r in g]
    assert len(sig) == len(set(sig)) and g[0].format == "none"
    names = {r.name for r in g}
    assert {"nvfp4-paper", "hif4-paper", "mxfp4-paper", "nvfp4-paper -pts", "hif4-paper +sr"} <= names
    # Fig. 4: nvfp4 and mxfp4 with 2 x 2 x 2 switches, hif4 2 x 2, minus the points equal to ablation rows.
    assert len(g) == 1 + len(R.ablation_grid()) + 20 - 9


# ---- the command ----

def test_cli_errors(capsys, monkeypatch, tmp_path):
    for argv, msg in ((["--recipe", "nvfp5"], "unknown recipe 'nvfp5'"),
                      (["--recipe", "hif4-paper", "--no-pts"], "pts applies to nvfp4 only"),
                      (["--steps", "0"], "--steps: must be >= 1"),
                      (["--rht", "3"], "power of two")):
        assert main(argv + ["--no-png", "--out", str(tmp_path)]) == 2
        err = capsys.readouterr().err
        assert err.startswith("fp4sim train: error: ") and msg in err and err.count("\n") == 1
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda n, *a: None if n == "matplotlib" else real(n, *a))
    assert main([]) == 2
    assert "needs matplotlib" in capsys.readouterr().err.replace("plot needs", "needs")


def test_without_torch():
    # `import fp4sim` and the recipes work without torch; the command says what is missing.
    import subprocess
    import sys
    from pathlib import Path

    root = str(Path(fp4sim.__file__).resolve().parents[1])
    block = "import sys; sys.modules['torch'] = None; "
    p = subprocess.run([sys.executable, "-c", block + "import fp4sim.train as t; print(t.preset('hif4-paper').rht)"],
                       capture_output=True, text=True, env={"PYTHONPATH": root})
    assert p.returncode == 0 and p.stdout.strip() == "64", p.stderr
    p = subprocess.run([sys.executable, "-c", block + "import runpy; runpy.run_module('fp4sim.train', "
                        "run_name='__main__')", "--recipe", "hif4-paper"], capture_output=True, text=True,
                       env={"PYTHONPATH": root})
    assert p.returncode == 2 and p.stderr == ("fp4sim train: error: needs PyTorch, which is not installed "
                                              "(pip install 'fp4sim[train]')\n")


def test_cli_run(tmp_path, capsys):
    argv = ["--recipe", "hif4-paper", "--baseline", "--no-png", "--quiet", "--out", str(tmp_path)]
    for k, v in TINY.items():
        argv += [f"--{k.replace('_', '-')}", str(v)]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "| none | float32 |" in out and "| hif4-paper | float32 |" in out and "%" in out
    import json

    doc = json.loads((tmp_path / "train.json").read_text())
    assert [r["label"] for r in doc["runs"]] == ["none", "hif4-paper"]
    assert len(doc["runs"][1]["train_loss"]) == TINY["steps"]
    assert dataclasses.asdict(cfg())["d_model"] == doc["runs"][0]["config"]["d_model"]


def test_cli_bench_and_study(tmp_path, capsys):
    tiny = []
    for k, v in TINY.items():
        if k not in ("steps", "eval_every"):
            tiny += [f"--{k.replace('_', '-')}", str(v)]
    assert main(["--recipe", "none,hif4", "--bench", "1", "--no-png", "--out", str(tmp_path)] + tiny) == 0
    out = capsys.readouterr().out
    assert "| none | float32 |" in out and "| hif4 | float32 |" in out and "1.00x" in out
    assert main(["--study", "smoke", "--seeds", "1", "--jobs", "2", "--steps", "2", "--no-png",
                 "--study-gemm", "float32,hardware", "--out", str(tmp_path)] + tiny) == 0
    import json

    doc = json.loads((tmp_path / "study.json").read_text())
    assert len(doc["runs"]) == 5 + 3  # none, three presets, nvfp4 -pts; hardware rows for the presets
    rows = {(s["label"], s["gemm"]): s for s in doc["summary"]}
    assert rows[("none", "float32")]["baseline"] and rows[("hif4-paper", "hardware")]["vs_float32"] is not None
    # The same seed in another process gives the same run as in this one.
    again = train_one(R.with_switches(R.preset("hif4-paper"), bf16_layers=["lm_head"]),
                      Config(**{**doc["runs"][0]["config"], "seed": 0}), progress=False)
    first = [r for r in doc["runs"] if r["label"] == "hif4-paper" and r["gemm"] == "float32"][0]
    assert again["train_loss"] == first["train_loss"]


def test_study_under_a_launcher_gathers_every_rank(tmp_path):
    """Two ranks as mpirun starts them (Open MPI's variables): each trains its share of the runs,
    rank 0 gathers and writes the study; the runs equal those of one process."""
    import json
    import os
    import subprocess
    import sys

    tiny = []
    for k, v in TINY.items():
        if k not in ("steps", "eval_every"):
            tiny += [f"--{k.replace('_', '-')}", str(v)]
    argv = ["--study", "smoke", "--seeds", "1", "--jobs", "1", "--steps", "2", "--no-png"] + tiny
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p), OMPI_COMM_WORLD_SIZE="2",
               OMPI_MCA_ess_base_jobid="4242")
    procs = [subprocess.Popen([sys.executable, "-m", "fp4sim.train", *argv, "--out", str(tmp_path / "mpi")],
                              env=dict(env, OMPI_COMM_WORLD_RANK=str(k)), stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for k in (1, 0)]
    outs = [p.communicate(timeout=300) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], outs
    assert "rank 1 of 2: 2 runs handed to rank 0" in outs[0][0]
    assert "| nvfp4-paper | float32 |" in outs[1][0]
    mpi = json.loads((tmp_path / "mpi" / "study.json").read_text())
    assert [(r["label"], r["gemm"]) for r in mpi["runs"]] == [(r.name, "float32") for r in grid("smoke")]
    # A run trained by rank 1 equals the same run in this process.
    run = mpi["runs"][1]
    again = train_one(R.with_switches(R.preset(run["label"]), bf16_layers=["lm_head"]), Config(**run["config"]),
                      progress=False)
    assert again["train_loss"] == run["train_loss"] and again["val_loss"] == run["val_loss"]
    assert not (tmp_path / "mpi" / "study-ranks").exists()
