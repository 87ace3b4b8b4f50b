"""Reference kernel over a golden vector suite, independent of the fp4sim package: reads only
manifest.json and .npy files (json + numpy), quantizes every float-sourced operand with
ref_quant, runs the kind's hardware model with ref_mma, and writes the outputs under RESULTS with
the suite's relative paths (what `fp4sim check SUITE --results RESULTS` compares).

    python3 tests/mutants/kernel.py SUITE RESULTS [--bugs name,name]
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ref_quant  # noqa: E402

try:
    import ref_mma  # noqa: E402
    MMA_MUTANTS = dict(ref_mma.MUTANTS)
except ImportError:          # MMA side not available: quantizer outputs only
    ref_mma = None
    MMA_MUTANTS = {}

SCALE_ONE = {"ue8m0": 127, "ue4m3": 0x38}   # code of 1.0 (atom_pad_nonzero's fill)


def hw_model(kind):
    return "ascend-hif4" if kind == "hif4" else "blackwell"


def _save(results, rel, arr, written):
    path = os.path.join(results, rel)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    np.save(path, arr)
    written.append(rel)


def _digest(*arrays):
    h = hashlib.blake2b(digest_size=16)
    for a in arrays:
        a = np.ascontiguousarray(a)
        h.update(str((a.dtype.str, a.shape)).encode())
        h.update(a.tobytes())
    return h.hexdigest()


def run_case(suite, case, results, bugs=frozenset(), memo=None):
    """One case: quantizer outputs of float operands, then D (and steps) of the hardware model.
    memo: dict shared across runs, keyed by the exact inputs of hardware_d (a pure function)."""
    qbugs = frozenset(b for b in bugs if b in ref_quant.QUANT_MUTANTS)
    mbugs = frozenset(b for b in bugs if b in MMA_MUTANTS)
    written = []
    ops = {}
    s_dec = {}
    for side in ("a", "b"):
        op = case[side]
        if op["source"] == "float":
            x = np.load(os.path.join(suite, op["input"]))
            if x.dtype == np.uint16:        # BF16 bit patterns
                x = (x.astype(np.uint32) << 16).view(np.float32)
            q = ref_quant.quantize(x, op["quant"], qbugs)
            codes, scales = q["codes"], q["scales"]
            s_dec[side] = q["s_dec"]
            _save(results, op["codes"], codes, written)
            if op.get("packed"):
                _save(results, op["packed"], ref_quant.pack_nibbles(codes, qbugs), written)
            _save(results, op["scales"], scales, written)
            if op.get("scales_atom"):
                _save(results, op["scales_atom"],
                      ref_quant.scales_atom(scales, SCALE_ONE.get(case["scale_type"], 0), qbugs), written)
            gs = op.get("global_scale")
            if isinstance(gs, str) and q["s_dec"] is not None:   # S_dec as a checked output
                _save(results, gs, np.array([q["s_dec"]], np.float32), written)
            ops[side] = (codes, scales.astype(np.uint32))
        else:
            codes = np.load(os.path.join(suite, op["codes"]))
            scales = np.load(os.path.join(suite, op["scales"])).astype(np.uint32)
            ops[side] = (codes, scales)
    if ref_mma is None:
        return written
    model = hw_model(case["kind"])
    if model not in case.get("expected", {}):
        return written
    c = np.load(os.path.join(suite, case["c"])).astype(np.float32)
    if s_dec.get("a") is not None and s_dec.get("b") is not None:
        alpha = np.float32(s_dec["a"]) * np.float32(s_dec["b"])     # RN(S_dec_A * S_dec_B)
    else:
        alpha = np.float32(np.uint32(int(case["alpha_bits"], 16)).view(np.float32)) \
            if "alpha_bits" in case else np.float32(case["alpha"])
    (ac, asc), (bc, bsc) = ops["a"], ops["b"]
    args = (case["kind"], case["elem_a"], case["elem_b"], case["scale_type"], case["block"])
    key = None
    if memo is not None:
        key = (args, _digest(ac, bc, asc, bsc, c, np.float32(alpha)), mbugs)
    if key is not None and key in memo:
        d, steps = memo[key]
    else:
        d, steps = ref_mma.hardware_d(*args, ac, bc, asc, bsc, c, alpha, bugs=mbugs)
        if key is not None:
            memo[key] = (d, steps)
    _save(results, case["expected"][model], np.asarray(d, np.float32), written)
    sp = case.get("expected_steps", {}).get(model) if isinstance(case.get("expected_steps"), dict) else None
    if sp:
        if steps is None:   # one instruction: the step is acc itself (before alpha)
            steps = ref_mma.hardware_d(*args, ac, bc, asc, bsc, c, np.float32(1.0), bugs=mbugs)[0][None]
        _save(results, sp, np.asarray(steps, np.float32), written)
    return written


def run_kernel(suite, results, bugs=frozenset(), memo=None, skipped=None):
    """Every case of the suite; returns the number of files written. A case whose quantize options
    the reference does not implement (NotImplementedError) writes nothing and is appended to
    `skipped` as (id, reason) — `check --allow-missing` then reports it missing, not equal."""
    with open(os.path.join(suite, "manifest.json")) as f:
        man = json.load(f)
    n = 0
    for case in man["cases"]:
        try:
            n += len(run_case(suite, case, results, bugs, memo))
        except NotImplementedError as e:
            if skipped is None:
                raise
            skipped.append((case["id"], str(e)))
    return n


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("suite")
    ap.add_argument("results")
    ap.add_argument("--bugs", default="", help="comma-separated mutant names (default: bug-free)")
    a = ap.parse_args(argv)
    bugs = frozenset(b for b in a.bugs.split(",") if b)
    unknown = bugs - set(ref_quant.QUANT_MUTANTS) - set(MMA_MUTANTS)
    if unknown:
        print(f"kernel.py: error: unknown mutant(s): {', '.join(sorted(unknown))}", file=sys.stderr)
        return 2
    skipped = []
    n = run_kernel(a.suite, a.results, bugs, skipped=skipped)
    for cid, why in skipped:
        print(f"skipped {cid}: {why}")
    print(f"wrote {n} files under {a.results}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
