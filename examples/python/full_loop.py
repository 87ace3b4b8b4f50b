#!/usr/bin/env python3
"""The kernel team's loop (docs/python.md, docs/vectors.md), end to end:

  1. generate a golden vector suite      `fp4sim vectors --suite smoke`
  2. run "your kernel" on every case     here fp4sim's own golden model stands in for it: the
                                         hardware model's D, and the operands quantized from floats
  3. write its outputs in the suite's layout   results/cases/<id>/d_<model>.npy, a_codes.npy, ...
  4. check them                          fp4sim.check(suite, results): every case equal
  5. flip one bit of one output          the check names that case and fails

Exit status 0 when step 4 passed and step 5 failed as it should.

    python3 examples/python/full_loop.py [--fp4sim PATH/TO/fp4sim] [--keep DIR]
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

import fp4sim


def find_cli(given: str | None) -> str:
    here = Path(__file__).resolve().parents[2] / "build" / "bin" / "fp4sim"
    for c in (given, os.environ.get("FP4SIM_CLI"), shutil.which("fp4sim"), str(here)):
        if c and Path(c).is_file():
            return c
    sys.exit("full_loop: no fp4sim binary (build it, or pass --fp4sim PATH)")


def my_kernel(case: fp4sim.Case) -> dict[str, np.ndarray]:
    """Stand-in for the kernel under test: returns the outputs it would produce for one case."""
    out = {}
    hw = fp4sim.KINDS[case.kind]["hardware_model"]
    # The GEMM: D = alpha * (C + A . B^T) on the case's block-scaled operands.
    out[f"d_{hw}"] = fp4sim.mma(case.a.codes, case.b.codes, case.a.scales, case.b.scales, case.c, model=hw,
                                **case.mma_kwargs())
    # The quantizer, for operands the suite made from floats.
    for name, op in (("a", case.a), ("b", case.b)):
        if op.source == "float":
            q = fp4sim.quantize(op.input, **op.quantize_kwargs())
            out[f"{name}_codes"] = q.codes
            out[f"{name}_scales"] = q.scales
            if q.packed is not None:
                out[f"{name}_packed"] = q.packed
            if op.scales_atom is not None:
                out[f"{name}_scales_atom"] = q.scales_atom()
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--fp4sim", help="the fp4sim binary (default: $FP4SIM_CLI, PATH, build/bin/fp4sim)")
    ap.add_argument("--keep", help="work in this new directory and keep it (default: a temporary one)")
    args = ap.parse_args()
    cli = find_cli(args.fp4sim)
    work = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="fp4sim-loop-"))
    try:
        work.mkdir(parents=True, exist_ok=True)
        suite_dir, results = work / "suite", work / "results"
        subprocess.run([cli, "vectors", "--suite", "smoke", "--seed", "1", "--out", str(suite_dir)], check=True,
                       stdout=subprocess.DEVNULL)
        suite = fp4sim.load_suite(suite_dir)  # every file CRC-checked against the manifest
        print(f"1. suite: {len(suite)} cases in {suite_dir}")

        written = 0
        for case in suite:
            for output, array in my_kernel(case).items():
                fp4sim.save_result(results, case, output, array)
                written += 1
        print(f"2-3. kernel outputs: {written} files in {results}")

        report = fp4sim.check(suite, results)
        print(f"4. check: {report['equal']} equal, {report['differ']} differ, {report['missing']} missing "
              f"({report['files_compared']} files compared)")
        ok_before = report["all_equal"]

        victim = suite[len(suite) // 2]
        model = fp4sim.KINDS[victim.kind]["hardware_model"]
        path = fp4sim.result_path(results, victim, f"d_{model}")
        d = np.load(path)
        d.view(np.uint32).reshape(-1)[0] ^= 1 << 3  # one bit of the first element
        np.save(path, d)
        report = fp4sim.check(suite, results)
        bad = [c["id"] for c in report["cases"] if c["status"] != "equal"]
        print(f"5. after flipping bit 3 of {path.relative_to(results)}[0, 0]: all_equal = {report['all_equal']}, "
              f"failing cases: {bad}")
        for line in report["lines"]:
            if victim.id in line or line.startswith(" "):
                print("   " + line)
        ok_after = not report["all_equal"] and bad == [victim.id]
        print("full_loop: OK" if ok_before and ok_after else "full_loop: FAILED")
        return 0 if ok_before and ok_after else 1
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
