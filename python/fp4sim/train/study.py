"""The stabilizer study: a grid of recipes x seeds trained in parallel processes, every curve in
study.json, a relative-loss table with paired-difference confidence intervals (study.md) and the
mean validation curves (study.png)."""

from __future__ import annotations

import concurrent.futures as cf
import dataclasses
import hashlib
import json
import math
import multiprocessing
import os
import sys
import time

from . import recipe as R

STUDIES = ("hif4-paper", "fig4", "ablation", "smoke")
_PAPER = ("nvfp4-paper", "hif4-paper", "mxfp4-paper")  # the rows that also run with hardware GEMMs

# RHT size per format in the grids: the presets' (golden) sizes.
_RHT = {"nvfp4": 16, "mxfp4": 64, "hif4": 64}


def _sig(r: R.Recipe) -> tuple:
    return (r.format, r.pts, r.two_d, r.sr, r.rht, r.scale_rule)


def fig4_grid() -> list[R.Recipe]:
    """The HiFloat4 paper's Figure 4 grid: format x SR x RHT x (PTS for nvfp4, truncation-free
    scales for mxfp4); 1D scales throughout."""
    out = []
    for fmt in ("nvfp4", "mxfp4", "hif4"):
        stabs = (False, True) if fmt != "hif4" else (False,)
        for stab in stabs:
            for sr in (False, True):
                for rht in (0, _RHT[fmt]):
                    kw = {"sr": sr, "rht": rht}
                    parts = [fmt]
                    if fmt == "nvfp4":
                        kw["pts"] = stab
                        parts.append("pts" if stab else "no-pts")
                    elif fmt == "mxfp4":
                        kw["scale_rule"] = "rceil" if stab else "floor"
                        parts.append("rceil" if stab else "floor")
                    parts += ["sr" if sr else "rne", f"rht{rht}" if rht else "no-rht"]
                    r = R.Recipe(name=" ".join(parts), format=fmt)
                    out.append(R.with_switches(r, name=" ".join(parts), **kw))
    return out


def grid(name: str) -> list[R.Recipe]:
    """The recipes of study `name`, the unquantized baseline first, without duplicates (a grid
    point equal to an ablation row keeps the ablation's name)."""
    if name not in STUDIES:
        raise ValueError(f"--study: unknown study '{name}' (expected one of: {', '.join(STUDIES)})")
    rows = [R.preset("none")]
    if name in ("hif4-paper", "ablation"):
        rows += R.ablation_grid()
    if name in ("hif4-paper", "fig4"):
        rows += fig4_grid()
    if name == "smoke":
        rows += [R.preset(p) for p in ("nvfp4-paper", "hif4-paper", "mxfp4-paper")]
        rows.append(R.with_switches(R.preset("nvfp4-paper"), pts=False))
    seen, out = set(), []
    for r in rows:
        if _sig(r) not in seen:
            seen.add(_sig(r))
            out.append(r)
    return out


# Two-sided 95 % Student t quantiles, df = 1..30 (larger df: 1.96).
_T95 = (12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160, 2.145, 2.131,
        2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042)


def paired(rel: list[float]) -> tuple[float, float | None]:
    """Mean of the per-seed relative differences and the half-width of its 95 % t interval (None
    for one seed)."""
    n = len(rel)
    m = sum(rel) / n
    if n < 2:
        return m, None
    sd = math.sqrt(sum((x - m) ** 2 for x in rel) / (n - 1))
    t = _T95[n - 2] if n - 1 <= len(_T95) else 1.96
    return m, t * sd / math.sqrt(n)


def summarize(runs: list[dict], baseline_label: str) -> list[dict]:
    """Per configuration (label, gemm): mean final validation loss and the paired relative
    difference against the baseline of the same seed."""
    base = {r["seed"]: r["final_val_loss"] for r in runs if r["label"] == baseline_label and r["gemm"] == "float32"}
    groups: dict = {}
    for r in runs:
        groups.setdefault((r["label"], r["gemm"]), []).append(r)
    out = []
    for (label, gemm), rs in groups.items():
        rs = sorted(rs, key=lambda r: r["seed"])
        losses = [r["final_val_loss"] for r in rs]
        rel = [r["final_val_loss"] / base[r["seed"]] - 1 for r in rs if r["seed"] in base]
        is_base = label == baseline_label and gemm == "float32"
        m, ci = paired(rel) if rel and not is_base else (None, None)
        row = {"label": label, "gemm": gemm, "seeds": [r["seed"] for r in rs], "baseline": is_base,
               "mean_val_loss": sum(losses) / len(losses), "rel_mean": m, "rel_ci95": ci,
               "resolved": ci is not None and m is not None and abs(m) > ci,
               "step_ms": sum(r["step_ms"] for r in rs) / len(rs)}
        if gemm == "hardware":  # against the same recipe with float32 GEMMs, seed by seed
            f32 = {r["seed"]: r["final_val_loss"] for r in groups.get((label, "float32"), [])}
            hw = [r["final_val_loss"] / f32[r["seed"]] - 1 for r in rs if r["seed"] in f32]
            row["vs_float32"], row["vs_float32_ci95"] = paired(hw) if hw else (None, None)
        out.append(row)
    return out


def table(summary: list[dict]) -> str:
    rows = ["| configuration | GEMM | seeds | mean val loss | vs baseline (mean ± 95 % CI, paired) | resolved | "
            "hardware vs float32 GEMM |", "|---|---|---:|---:|---:|---|---:|"]
    for s in summary:
        if s["baseline"]:
            rel = "baseline"
        elif s["rel_mean"] is None:
            rel = ""
        elif s["rel_ci95"] is None:
            rel = f"{100 * s['rel_mean']:+.2f} %"
        else:
            rel = f"{100 * s['rel_mean']:+.2f} ± {100 * s['rel_ci95']:.2f} %"
        res = "" if s["rel_ci95"] is None else ("yes" if s["resolved"] else "no")
        hw = ""
        if s.get("vs_float32") is not None:
            ci = s["vs_float32_ci95"]
            hw = f"{100 * s['vs_float32']:+.3f}" + ("" if ci is None else f" ± {100 * ci:.3f}") + " %"
        rows.append(f"| {s['label']} | {s['gemm']} | {len(s['seeds'])} | {s['mean_val_loss']:.4f} | {rel} | {res} | "
                    f"{hw} |")
    return "\n".join(rows)


def _job(args):
    recipe, cfg_dict, label = args
    from .run import Config, train_one

    return train_one(recipe, Config(**cfg_dict), progress=False, label=label)


def run_study(name: str, cfg, seeds: int, jobs: int, gemm_modes: list[str], bf16_layers, out_dir: str,
              png: bool, log=sys.stderr) -> dict:
    """Trains every (recipe, gemm mode, seed) of the study; hardware-GEMM rows only for golden's
    paper presets. Results do not depend on `jobs` (each run is a fresh deterministic process)."""
    from .run import plot, write_json

    recipes = [R.with_switches(r, bf16_layers=bf16_layers) if r.format != "none" else r for r in grid(name)]
    tasks = []
    for r in recipes:
        for mode in gemm_modes:
            if mode == "hardware" and r.name not in _PAPER:
                continue
            for s in range(seeds):
                c = dataclasses.replace(cfg, seed=cfg.seed + s, gemm=mode, threads=cfg.threads)
                tasks.append((r, dataclasses.asdict(c), r.name))
    rank, size = launcher_rank_size()
    mine = [t for i, t in enumerate(tasks) if i % size == rank]
    where = f" (rank {rank} of {size}: {len(mine)} of them)" if size > 1 else ""
    log.write(f"study {name}: {len(recipes)} configurations, {len(tasks)} runs{where}, {jobs} at a time\n")
    t0 = time.perf_counter()
    rank_dir = os.path.join(out_dir, "study-ranks")
    launch = [os.environ.get(v, "") for v in ("PMIX_NAMESPACE", "OMPI_MCA_ess_base_jobid", "SLURM_JOB_ID", "SLURM_STEP_ID")]
    tag = hashlib.sha256(json.dumps([[t[0].name, t[1]] for t in tasks] + [size, launch],
                                    sort_keys=True).encode()).hexdigest()[:12]
    try:
        runs = _run_tasks(mine, jobs, log, t0)
    except Exception as e:  # tell rank 0, which waits for this rank's file, then fail here too
        if size > 1:
            _write_rank(rank_dir, tag, rank, {"error": f"{type(e).__name__}: {e}"})
        raise
    if size > 1:
        _write_rank(rank_dir, tag, rank, {"runs": runs})
        if rank != 0:
            return {"study": name, "rank": rank, "size": size, "runs": runs}
        runs = _gather(rank_dir, tag, size, log)
    order = {(t[0].name, t[1]["gemm"], t[1]["seed"]): i for i, t in enumerate(tasks)}
    runs.sort(key=lambda r: order[(r["label"], r["gemm"], r["seed"])])
    summary = summarize(runs, "none")
    doc = {"study": name, "seeds": seeds, "gemm_modes": gemm_modes, "config": dataclasses.asdict(cfg),
           "wall_s": time.perf_counter() - t0, "summary": summary, "runs": runs}
    os.makedirs(out_dir, exist_ok=True)
    write_json(doc, os.path.join(out_dir, "study.json"))
    md = table(summary)
    with open(os.path.join(out_dir, "study.md.tmp"), "w") as f:
        f.write(md + "\n")
    os.replace(os.path.join(out_dir, "study.md.tmp"), os.path.join(out_dir, "study.md"))
    if png:
        plot(_mean_runs(runs), os.path.join(out_dir, "study.png"), f"study {name}: mean over {seeds} seed(s)")
    return doc


def launcher_rank_size() -> tuple[int, int]:
    """This process's rank and the number of ranks when mpirun (Open MPI, PMI) or srun started it,
    from the variables fp4sim's C++ scale-out reads; (0, 1) otherwise. `fp4sim train` under mpirun
    runs Python in place of the C++ command, so the variables reach this process."""
    def num(name):
        v = os.environ.get(name, "")
        return int(v) if v.isdigit() else None
    for r, n in (("OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"), ("PMI_RANK", "PMI_SIZE"),
                 ("SLURM_PROCID", "SLURM_STEP_NUM_TASKS")):
        rank, size = num(r), num(n)
        if rank is not None and size is not None and 0 <= rank < size:
            return rank, size
    return 0, 1


def _run_tasks(tasks: list, jobs: int, log, t0: float) -> list[dict]:
    runs = []
    if not tasks:
        return runs
    ctx = multiprocessing.get_context("spawn")
    with cf.ProcessPoolExecutor(max_workers=jobs, mp_context=ctx) as ex:
        futs = {ex.submit(_job, t): t for t in tasks}
        for i, f in enumerate(cf.as_completed(futs), 1):
            r = f.result()
            runs.append(r)
            el = time.perf_counter() - t0
            log.write(f"[{i}/{len(tasks)}] {r['label']} ({r['gemm']}) seed {r['seed']}: val {r['final_val_loss']:.4f}"
                      f"  {el:.0f} s elapsed, ~{el / i * (len(tasks) - i):.0f} s left\n")
            log.flush()
    return runs


# Ranks share no MPI communicator here (no mpi4py): each writes its runs into the output folder
# (shared between the nodes, as --out must be) and rank 0 gathers them. The file name carries a
# hash of the whole task list, the rank count and the launcher's job id, so a file of another
# study or of an earlier launch never matches.
def _rank_file(rank_dir: str, tag: str, rank: int) -> str:
    return os.path.join(rank_dir, f"{tag}-rank{rank}.json")


def _write_rank(rank_dir: str, tag: str, rank: int, doc: dict) -> None:
    from .run import write_json

    os.makedirs(rank_dir, exist_ok=True)
    write_json(doc, _rank_file(rank_dir, tag, rank))  # written whole, then renamed into place


def _gather(rank_dir: str, tag: str, size: int, log, poll_s: float = 1.0) -> list[dict]:
    runs, waiting = [], set(range(size))
    said = False
    while waiting:
        for k in sorted(waiting):
            path = _rank_file(rank_dir, tag, k)
            if os.path.exists(path):
                with open(path) as f:
                    doc = json.load(f)
                if "error" in doc:
                    raise RuntimeError(f"study: rank {k} failed: {doc['error']}")
                runs += doc["runs"]
                waiting.discard(k)
        if waiting:
            if not said:
                log.write(f"rank 0: waiting for rank(s) {', '.join(map(str, sorted(waiting)))}\n")
                said = True
            time.sleep(poll_s)
    for k in range(size):
        os.remove(_rank_file(rank_dir, tag, k))
    try:
        os.rmdir(rank_dir)
    except OSError:
        pass
    return runs


def _mean_runs(runs: list[dict]) -> list[dict]:
    """One pseudo-run per configuration with the seed-averaged curves (for the plot)."""
    groups: dict = {}
    for r in runs:
        groups.setdefault((r["label"], r["gemm"]), []).append(r)
    out = []
    for (label, gemm), rs in groups.items():
        n = len(rs)
        tl = [sum(r["train_loss"][i] for r in rs) / n for i in range(len(rs[0]["train_loss"]))]
        vl = [[rs[0]["val_loss"][j][0], sum(r["val_loss"][j][1] for r in rs) / n]
              for j in range(len(rs[0]["val_loss"]))]
        out.append({"label": label, "gemm": gemm, "train_loss": tl, "val_loss": vl})
    return out
