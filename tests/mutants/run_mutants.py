"""Mutation score of the golden vector suites.

Generates the default suites with the CLI (or takes --suites DIR...), runs the bug-free reference
kernel (kernel.py: ref_quant + ref_mma) on each and `fp4sim check` (it must be all equal), then
every mutant of the catalogue (ref_quant.QUANT_MUTANTS + ref_mma.MUTANTS): a mutant is KILLED
when check reports a difference in any suite. Prints one line per mutant and
`mutation score: K/N (P %)`; exit 1 when the bug-free kernel fails or the score is below
--min-score.

    python3 tests/mutants/run_mutants.py [--fp4sim build/bin/fp4sim] [--jobs 2] [--min-score 100]
    python3 tests/mutants/run_mutants.py --markdown       # the catalogue table
"""
from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import kernel  # noqa: E402
import ref_quant  # noqa: E402

DEFAULT_SUITES = ["smoke", "corners", "random", "quant", "llm"]


def catalogue():
    cat = {}
    for name, (cls, desc) in ref_quant.QUANT_MUTANTS.items():
        cat[name] = ("quantizer", cls, desc)
    for name, (cls, desc) in kernel.MMA_MUTANTS.items():
        if name in cat:
            raise SystemExit(f"run_mutants.py: error: mutant name {name!r} defined twice")
        cat[name] = ("mma", cls, desc)
    return cat


def markdown(cat):
    lines = ["| mutant | side | class | bug |", "|---|---|---|---|"]
    for name, (side, cls, desc) in cat.items():
        lines.append(f"| `{name}` | {side} | {cls} | {desc} |")
    return "\n".join(lines)


def generate_suites(fp4sim, root, names):
    helptext = subprocess.run([fp4sim, "vectors", "--help"], capture_output=True, text=True).stdout
    m = re.search(r"--suite ([A-Za-z0-9_|-]+)", helptext)
    offered = set(m.group(1).split("|")) if m else set()
    out = []
    for s in names:
        if s not in offered:
            print(f"note: suite {s!r} not offered by this fp4sim; skipped")
            continue
        d = os.path.join(root, s)
        r = subprocess.run([fp4sim, "vectors", "--suite", s, "--out", d], capture_output=True, text=True)
        if r.returncode != 0:
            raise SystemExit(f"run_mutants.py: error: fp4sim vectors --suite {s}: {r.stderr.strip()}")
        out.append(d)
    return out


def check(fp4sim, suite, results, report):
    r = subprocess.run([fp4sim, "check", suite, "--results", results, "--json", report, "--force",
                        "--allow-missing", "--quiet"], capture_output=True, text=True)
    if not os.path.exists(report):
        raise RuntimeError(f"fp4sim check {suite}: no report ({r.stderr.strip()})")
    with open(report) as f:
        rep = json.load(f)
    return rep


def first_difference(rep):
    """(case id, file) of the first output check found different (or in error); a quantizer file
    is named in preference to the D it feeds."""
    for c in rep.get("cases", []):
        if c.get("status") in ("differ", "error"):
            bad = [f for f in c.get("files", []) if f.get("status") in ("differ", "error")]
            bad.sort(key=lambda f: os.path.basename(f.get("path", "")).startswith("d_"))
            if bad:
                return c["id"], os.path.basename(bad[0].get("path", "?"))
            return c["id"], "?"
    return None


_G = {}   # worker globals (inherited through fork)


def evaluate(bugs, label):
    """Run the kernel with `bugs` on every suite; stop at the first suite that kills it.
    Returns (label, status, detail, seconds)."""
    t0 = time.time()
    for suite in _G["suites"]:
        res = tempfile.mkdtemp(prefix="res-", dir=_G["tmp"])
        try:
            try:
                skipped = []
                kernel.run_kernel(suite, res, frozenset(bugs), _G["memo"], skipped)
                if not bugs:
                    for cid, why in skipped:
                        print(f"note: {os.path.basename(suite)}/{cid} not run by the reference kernel: {why}")
            except Exception as e:   # a crashing mutant is not a detection by the suites
                return label, "CRASHED", f"{os.path.basename(suite)}: {type(e).__name__}: {e}", time.time() - t0
            rep = check(_G["fp4sim"], suite, res, res + ".json")
        finally:
            shutil.rmtree(res, ignore_errors=True)
            if os.path.exists(res + ".json"):
                os.remove(res + ".json")
        if rep.get("differ", 0) or rep.get("error", 0):
            fd = first_difference(rep) or ("?", "?")
            return label, "KILLED", f"{os.path.basename(suite)}/{fd[0]}/{fd[1]}", time.time() - t0
        if not bugs and not rep.get("passed", rep.get("all_present_equal", False)):
            return label, "FAILED", f"{os.path.basename(suite)}: check did not pass", time.time() - t0
    return label, "SURVIVED", "", time.time() - t0


def main(argv=None):
    ap = argparse.ArgumentParser(description="mutation score of the golden vector suites")
    ap.add_argument("--fp4sim", default=os.path.join(HERE, "..", "..", "build", "bin", "fp4sim"))
    ap.add_argument("--suites", nargs="+", metavar="DIR", help="existing suite directories (default: generate)")
    ap.add_argument("--suite-names", nargs="+", default=DEFAULT_SUITES, help="suites to generate")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--min-score", type=float, default=100.0, help="percent (default 100)")
    ap.add_argument("--only", nargs="+", metavar="MUTANT", help="run these mutants only")
    ap.add_argument("--no-memo", action="store_true",
                    help="recompute the MMA for every mutant even where its inputs equal the bug-free run's")
    ap.add_argument("--markdown", action="store_true", help="print the catalogue table and exit")
    ap.add_argument("--json", metavar="FILE", help="write the per-mutant results as JSON")
    a = ap.parse_args(argv)

    cat = catalogue()
    if a.markdown:
        print(markdown(cat))
        return 0
    if a.only:
        unknown = [m for m in a.only if m not in cat]
        if unknown:
            print(f"run_mutants.py: error: unknown mutant(s): {', '.join(unknown)}", file=sys.stderr)
            return 2
        names = a.only
    else:
        names = list(cat)
    if kernel.ref_mma is None:
        print("note: ref_mma not importable: MMA outputs skipped, MMA mutants not run")
    fp4sim = os.path.abspath(a.fp4sim)
    if not os.access(fp4sim, os.X_OK):
        print(f"run_mutants.py: error: {a.fp4sim}: no fp4sim executable (--fp4sim PATH)", file=sys.stderr)
        return 2

    for d in a.suites or []:
        if not os.path.isfile(os.path.join(d, "manifest.json")):
            print(f"run_mutants.py: error: {d}: not a suite (no manifest.json)", file=sys.stderr)
            return 2
    t0 = time.time()
    tmp = tempfile.mkdtemp(prefix="fp4sim-mutants-")
    try:
        suites = [os.path.abspath(s) for s in a.suites] if a.suites else generate_suites(fp4sim, tmp, a.suite_names)
        t_gen = time.time() - t0
        _G.update(suites=suites, fp4sim=fp4sim, tmp=tmp, memo=None if a.no_memo else {})
        # bug-free kernel: every written file must be EQUAL; fills the MMA memo before the fork
        label, status, detail, dt = evaluate(frozenset(), "bug-free")
        ok = status == "SURVIVED"
        what = {"SURVIVED": "all equal", "KILLED": "DIFFERS at " + detail}.get(status, status + " " + detail)
        print(f"bug-free kernel: {what} "
              f"({len(suites)} suites: {', '.join(os.path.basename(s) for s in suites)}; {dt:.1f} s)")
        if not ok:
            return 1
        results = {}
        ctx = mp.get_context("fork")
        with ctx.Pool(max(1, a.jobs)) as pool:
            for label, status, detail, dt in pool.starmap(evaluate, [((n,), n) for n in names]):
                results[label] = (status, detail, dt)
        killed = 0
        for n in names:
            status, detail, dt = results[n]
            side, cls, desc = cat[n]
            killed += status == "KILLED"
            print(f"{n:28s} {side:9s} {cls:13s} {status:8s} {detail}")
        score = 100.0 * killed / len(names) if names else 0.0
        wall = time.time() - t0
        print(f"mutation score: {killed}/{len(names)} ({score:.1f} %)  "
              f"[{wall:.1f} s wall, suites generated in {t_gen:.1f} s, --jobs {a.jobs}]")
        if a.json:
            with open(a.json, "w") as f:
                json.dump({"score": score, "killed": killed, "total": len(names), "seconds": wall,
                           "mutants": {n: {"side": cat[n][0], "class": cat[n][1], "description": cat[n][2],
                                           "status": results[n][0], "detail": results[n][1]} for n in names}},
                          f, indent=1)
        return 0 if score >= a.min_score else 1
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
