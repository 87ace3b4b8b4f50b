"""`python -m fp4sim.train` (and `fp4sim train`): train the small GPT under FP4 recipes, or run
the stabilizer study. docs/training.md."""

from __future__ import annotations

import argparse
import dataclasses
import importlib.util
import os
import sys

PROG = "fp4sim train"


def _fail(msg: str, code: int = 2) -> int:
    """One line on stderr: exit 2 for a usage error, 1 for a runtime one (docs/cli.md)."""
    sys.stderr.write(f"{PROG}: error: {' '.join(msg.split())}\n")
    return code


def parser() -> argparse.ArgumentParser:
    from .recipe import PRESETS, TRAIN_FORMATS
    from .study import STUDIES

    p = argparse.ArgumentParser(prog=PROG, description="Hardware-exact FP4 training emulation of a small byte-level "
                                "GPT on the Python standard library's sources (docs/training.md).")
    g = p.add_argument_group("recipe")
    g.add_argument("--recipe", default="nvfp4-paper",
                   help=f"preset or comma-separated presets, trained one after the other ({', '.join(PRESETS)}); "
                        "default nvfp4-paper")
    g.add_argument("--baseline", action="store_true", help="also train the unquantized model (none) first and "
                   "report every recipe relative to it")
    g.add_argument("--format", choices=list(TRAIN_FORMATS), help="operand format (overrides the preset's)")
    g.add_argument("--sr", action=argparse.BooleanOptionalAction, default=None,
                   help="stochastic rounding on the gradient operands")
    g.add_argument("--rht", type=int, metavar="N", help="random Hadamard size on the Wgrad operands (0 = off)")
    g.add_argument("--pts", action=argparse.BooleanOptionalAction, default=None, help="nvfp4 per-tensor scale")
    g.add_argument("--2d", dest="two_d", action=argparse.BooleanOptionalAction, default=None,
                   help="nvfp4 16x16 weight scales")
    g.add_argument("--scale-rule", choices=["floor", "rceil", "ceil"],
                   help="MX scale rule (rceil = ceil: truncation-free)")
    g.add_argument("--bf16-layers", default="lm_head", metavar="NAMES",
                   help="comma-separated layer-name prefixes kept in BF16 (default lm_head; '' for none)")
    g.add_argument("--gemm", choices=["float32", "hardware"], default="float32",
                   help="float32: torch GEMM of the fake-quantized operands; hardware: the bit-accurate MMA model")
    m = p.add_argument_group("model and data")
    m.add_argument("--steps", type=int, help="optimizer steps (default 600; a study 150)")
    m.add_argument("--batch", type=int, help="sequences per step (default 16; a study 8)")
    m.add_argument("--context", type=int, default=128)
    m.add_argument("--layers", type=int, default=4)
    m.add_argument("--d-model", type=int, default=128)
    m.add_argument("--heads", type=int, default=4)
    m.add_argument("--lr", type=float, default=3e-3)
    m.add_argument("--warmup", type=int, default=30)
    m.add_argument("--seed", type=int, default=0)
    m.add_argument("--threads", type=int, default=1, help="torch and fp4sim threads per run (bits do not change)")
    m.add_argument("--corpus-bytes", type=int, default=8 << 20)
    m.add_argument("--eval-every", type=int, help="steps between validations (default 100; a study 50)")
    m.add_argument("--eval-batches", type=int, default=8)
    m.add_argument("--bench", type=int, metavar="ROUNDS",
                   help="time steps instead of training: ROUNDS rounds of one step per recipe, side by side "
                        "(with --gemm hardware, each 4-bit recipe in both GEMM modes)")
    o = p.add_argument_group("output")
    o.add_argument("--out", default="fp4sim-train", help="folder for the JSON, table and PNG (default fp4sim-train)")
    o.add_argument("--no-png", action="store_true", help="skip the PNG (no matplotlib needed)")
    o.add_argument("--quiet", action="store_true", help="no progress bar")
    s = p.add_argument_group("study")
    s.add_argument("--study", choices=list(STUDIES), help="run a grid of recipes x seeds instead of --recipe")
    s.add_argument("--seeds", type=int, default=3, help="seeds per configuration (study)")
    s.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="runs in parallel (study)")
    s.add_argument("--study-gemm", default="float32",
                   help="GEMM modes of the study, comma-separated (hardware: the paper presets only)")
    return p


def main(argv: list[str] | None = None) -> int:
    try:
        import torch  # noqa: F401
    except ImportError:
        return _fail("needs PyTorch, which is not installed (pip install 'fp4sim[train]')")
    a = parser().parse_args(argv)
    if not a.no_png and importlib.util.find_spec("matplotlib") is None:
        return _fail("the loss plot needs matplotlib, which is not installed (pip install 'fp4sim[train]', "
                     "or --no-png)")
    try:
        return _run(a)
    except ValueError as e:
        return _fail(str(e))
    except (RuntimeError, OSError) as e:  # a failed run, a rank's error, a file that cannot be written
        return _fail(str(e), 1)


def _run(a) -> int:
    from . import recipe as R
    from .run import Config, plot, table, train_one, write_json

    # A study trains dozens of models: smaller defaults, so that the default grid runs on 2 cores in
    # about 20 minutes (docs/training.md).
    study = a.study is not None
    steps = a.steps if a.steps is not None else (150 if study else 600)
    batch = a.batch if a.batch is not None else (8 if study else 16)
    every = a.eval_every if a.eval_every is not None else (50 if study else 100)
    cfg = Config(steps=steps, batch=batch, context=a.context, layers=a.layers, d_model=a.d_model,
                 heads=a.heads, lr=a.lr, warmup=a.warmup, seed=a.seed, threads=a.threads, gemm=a.gemm,
                 corpus_bytes=a.corpus_bytes, eval_every=min(every, max(1, steps)),
                 eval_batches=a.eval_batches)
    cfg.check()
    if a.seed < 0:
        raise ValueError(f"--seed: must be >= 0, got {a.seed}")
    bf16 = tuple(x for x in a.bf16_layers.split(",") if x)
    os.makedirs(a.out, exist_ok=True)
    if a.study:
        from .study import run_study, table as study_table

        if a.seeds < 1 or a.jobs < 1:
            raise ValueError("--seeds and --jobs must be >= 1")
        modes = [m for m in a.study_gemm.split(",") if m]
        for m in modes:
            if m not in ("float32", "hardware"):
                raise ValueError(f"--study-gemm: unknown mode '{m}' (expected float32 or hardware)")
        doc = run_study(a.study, cfg, a.seeds, a.jobs, modes, bf16, a.out, not a.no_png)
        if "summary" not in doc:  # a rank other than 0 under mpirun / srun: rank 0 writes the results
            print(f"rank {doc['rank']} of {doc['size']}: {len(doc['runs'])} runs handed to rank 0")
            return 0
        print(study_table(doc["summary"]))
        print(f"\nwrote {os.path.join(a.out, 'study.json')}, study.md" + ("" if a.no_png else ", study.png"))
        return 0

    switches = {"format": a.format, "sr": a.sr, "rht": a.rht, "pts": a.pts, "two_d": a.two_d,
                "scale_rule": a.scale_rule}
    recipes = []
    for name in [x for x in a.recipe.split(",") if x]:
        r = R.preset(name)
        if r.format != "none" or a.format not in (None, "none"):
            r = R.with_switches(r, bf16_layers=bf16, **switches)
        recipes.append(r)
    if not recipes:
        raise ValueError("--recipe: no recipe given")
    if a.baseline and not any(r.format == "none" for r in recipes):
        recipes.insert(0, R.preset("none"))
    if a.bench is not None:
        from .run import bench, bench_table

        if a.bench < 1:
            raise ValueError(f"--bench: must be >= 1, got {a.bench}")
        pairs = []
        for r in recipes:
            modes = ["float32"] if r.format in ("none", "bf16") else sorted({"float32", a.gemm})
            pairs += [(r, dataclasses.replace(cfg, gemm=m)) for m in modes]
        rows = bench(pairs, a.bench)
        print(bench_table(rows))
        write_json({"bench": rows, "config": dataclasses.asdict(cfg)}, os.path.join(a.out, "bench.json"))
        return 0
    runs = []
    for r in recipes:
        c = dataclasses.replace(cfg, gemm="float32") if r.format == "none" else cfg
        runs.append(train_one(r, c, progress=not a.quiet))
    base = next((x for x in runs if x["recipe"]["format"] == "none"), None)
    print(table(runs, base))
    write_json({"runs": runs}, os.path.join(a.out, "train.json"))
    if not a.no_png:
        plot(runs, os.path.join(a.out, "train.png"), f"{steps} steps x {batch * a.context} tokens, seed {a.seed}")
    print(f"\nwrote {os.path.join(a.out, 'train.json')}" + ("" if a.no_png else ", train.png"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
