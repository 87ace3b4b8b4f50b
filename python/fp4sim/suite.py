"""Golden vector suites (docs/vectors.md) from Python: load_suite() reads a suite that `fp4sim
vectors` wrote, checking every file against its manifest record (size, zlib CRC-32, dtype, shape)
before use; check() compares a results directory (your kernel's outputs, laid out like the suite)
with the suite's expected outputs, bit for bit, with the C++ checker of `fp4sim check`.
"""

from __future__ import annotations

import io
import json
import os
import zlib
from pathlib import Path
from typing import Iterator

import numpy as np

from . import _core

SUITE_SCHEMA = 1
_DTYPES = {"float32": np.dtype("<f4"), "uint8": np.dtype("u1"), "uint16": np.dtype("<u2"), "uint32": np.dtype("<u4")}


class SuiteError(ValueError):
    """A suite that cannot be used: unreadable manifest, or a file that does not match its record.
    The message is one line naming the file."""


class Operand:
    """One operand (a or b) of a case: codes uint8 [rows, K], scales (uint8 [rows, K/block] or
    uint32 HiF4 words), and where the suite has them packed, scales_atom, input (float32, cases
    made from floats) and quant (the quantize options that produced them, or None)."""

    def __init__(self, meta: dict, load):
        self.source: str = meta["source"]
        self.quant: dict | None = meta.get("quant")
        self.paths = {k: meta.get(k) for k in ("codes", "packed", "scales", "scales_atom", "input")}
        for k, p in self.paths.items():
            setattr(self, k, None if p is None else load(p))
        # The redundant forms must agree, as `fp4sim replay` demands.
        if self.packed is not None and not np.array_equal(self.packed, _core.pack_nibbles_rows(self.codes)):
            raise SuiteError(f"{self.paths['packed']}: differs from the packed codes of {self.paths['codes']}")
        if self.scales_atom is not None and not np.array_equal(self.scales_atom, _core.scales_to_atom(self.scales)):
            raise SuiteError(f"{self.paths['scales_atom']}: differs from the atom layout of {self.paths['scales']}")

    def quantize_kwargs(self) -> dict:
        """The fp4sim.quantize() keywords that reproduce this operand from `input` (source "float")."""
        if not self.quant:
            raise ValueError("operand was not quantized from floats")
        q = self.quant
        fmt = q["format"]
        kw = {"format": fmt, "rounding": q["rounding"], "seed": q["seed"], "stream": q["stream"],
              "rht": q["rht"], "rht_bf16": q["rht_bf16"]}
        if fmt not in ("nvfp4", "hif4"):
            kw["scale_rule"] = q["scale_rule"]
        if fmt == "nvfp4":
            kw["pts"] = q["pts"]
            kw["two_d"] = q["2d"]
        if "convention" in q:  # whose quantizer (te, torchao, modelopt)
            kw["convention"] = q["convention"]
        if fmt == "hif4" and kw["rounding"] == "rna":
            kw["rounding"] = "rne"  # hif4 reports its half-up rounding as rna; rne selects it
        return kw


class Case:
    """One case: D[M,N] = alpha * (C + A . B^T) with the kind's conventions. `expected` maps each
    model name (blackwell / ascend-hif4, exact, fp32-seq) to its float32 [M, N] array; `alpha` is
    the FP32 value of alpha_bits. mma_kwargs() gives fp4sim.mma()'s configuration keywords."""

    def __init__(self, meta: dict, load):
        self.meta = meta
        self.id: str = meta["id"]
        self.dir: str = meta["dir"]
        self.cls: str = meta["class"]
        self.description: str = meta.get("description", "")
        self.kind: str = meta["kind"]
        self.elem_a: str = meta["elem_a"]
        self.elem_b: str = meta["elem_b"]
        self.scale_type: str = meta["scale_type"]
        self.block: int = meta["block"]
        self.M, self.N, self.K = meta["M"], meta["N"], meta["K"]
        self.alpha = float(np.uint32(int(meta["alpha_bits"], 16)).view(np.float32))
        self.a = Operand(meta["a"], load)
        self.b = Operand(meta["b"], load)
        self.c = load(meta["c"])
        self.expected: dict[str, np.ndarray] = {m: load(p) for m, p in meta["expected"].items()}

    @property
    def hardware_model(self) -> str:
        """The kind's hardware model (blackwell, or ascend-hif4 for hif4): the model whose D a
        kernel for this case's instruction must reproduce, d_<hardware_model>.npy."""
        return _core_kinds()[self.kind]

    def mma_kwargs(self) -> dict:
        return {"kind": self.kind, "elem_a": self.elem_a, "elem_b": self.elem_b, "scale_type": self.scale_type,
                "block": self.block, "alpha": self.alpha}

    def __repr__(self) -> str:
        return f"<fp4sim.Case {self.id} {self.M}x{self.N}x{self.K}>"


class Suite:
    """A loaded suite: path, manifest (the parsed manifest.json), cases (list of Case); iterate
    over it, index by position or case id."""

    def __init__(self, path: Path, manifest: dict, cases: list[Case]):
        self.path = path
        self.manifest = manifest
        self.name: str = manifest.get("suite", "")
        self.cases = cases
        self._by_id = {c.id: c for c in cases}

    def __iter__(self) -> Iterator[Case]:
        return iter(self.cases)

    def __len__(self) -> int:
        return len(self.cases)

    def __getitem__(self, key: int | str) -> Case:
        return self._by_id[key] if isinstance(key, str) else self.cases[key]

    def __repr__(self) -> str:
        return f"<fp4sim.Suite {self.name} {len(self.cases)} cases at {self.path}>"


def _core_kinds() -> dict[str, str]:
    global _KIND_MODELS
    if _KIND_MODELS is None:
        _KIND_MODELS = {k["name"]: k["hardware_model"] for k in _core.mma_kinds()}
    return _KIND_MODELS


_KIND_MODELS: dict[str, str] | None = None


def _load_npy(path: Path, rel: str, rec: dict | None) -> np.ndarray:
    if not rel or rel.startswith("/") or ".." in Path(rel).parts:
        raise SuiteError(f"{rel or '(empty path)'}: not a path inside the suite")
    if rec is None:
        raise SuiteError(f"{path}: not listed in the manifest's files (no CRC to check it against)")
    try:
        data = path.read_bytes()
    except OSError as e:
        raise SuiteError(f"{path}: cannot read ({e.strerror or e})") from None
    if len(data) != rec.get("bytes"):
        raise SuiteError(f"{path}: {len(data)} bytes, the manifest records {rec.get('bytes')}")
    crc = f"{zlib.crc32(data):08x}"
    if crc != rec.get("crc32"):
        raise SuiteError(f"{path}: CRC-32 {crc}, the manifest records {rec.get('crc32')}")
    try:
        a = np.load(io.BytesIO(data), allow_pickle=False)
    except Exception as e:  # numpy raises several kinds for a malformed file
        raise SuiteError(f"{path}: not a valid .npy file ({e})") from None
    want = _DTYPES.get(rec.get("dtype"))
    if want is None or a.dtype != want:
        raise SuiteError(f"{path}: dtype {a.dtype}, the manifest records {rec.get('dtype')}")
    if list(a.shape) != list(rec.get("shape", [])):
        raise SuiteError(f"{path}: shape {tuple(a.shape)}, the manifest records {tuple(rec.get('shape', []))}")
    return a


def load_suite(path: str | os.PathLike) -> Suite:
    """Reads a suite written by `fp4sim vectors` (or `run`, `regress`): the manifest and every
    case's arrays, each file checked against its manifest record first. Raises SuiteError naming
    the file on the first problem."""
    root = Path(path)
    mpath = root / "manifest.json"
    try:
        manifest = json.loads(mpath.read_text())
    except OSError as e:
        raise SuiteError(f"{mpath}: cannot read ({e.strerror or e})") from None
    except ValueError as e:
        raise SuiteError(f"{mpath}: not valid JSON ({e})") from None
    if not isinstance(manifest, dict) or manifest.get("suite_schema") != SUITE_SCHEMA:
        raise SuiteError(f"{mpath}: not a vector suite of schema {SUITE_SCHEMA}")
    files = manifest.get("files", {})

    def load(rel: str) -> np.ndarray:
        return _load_npy(root / rel, rel, files.get(rel))

    try:
        cases = [Case(c, load) for c in manifest.get("cases", [])]
    except (KeyError, TypeError, ValueError) as e:
        if isinstance(e, SuiteError):
            raise
        raise SuiteError(f"{mpath}: malformed case entry ({e!r})") from None
    return Suite(root, manifest, cases)


def result_path(results: str | os.PathLike, case: Case | str, output: str) -> Path:
    """Where a kernel's output goes in a results directory: results/cases/<case id>/<output>.npy,
    output being d_<model> (d_blackwell, d_exact, ...) or a quantizer output (a_codes, b_scales, ...)."""
    cid = case.id if isinstance(case, Case) else case
    return Path(results) / "cases" / cid / f"{output}.npy"


def save_result(results: str | os.PathLike, case: Case | str, output: str, array) -> Path:
    """np.save of one output at result_path(), creating the case's directory. Stored as the suite
    stores it, so that check() compares bits, not dtypes: ml_dtypes element and scale arrays
    (float4_e2m1fn, float6_*, float8_*) become their uint8 code containers; torch tensors are
    read as their bits; packed E2M1 (torch.float4_e2m1fn_x2) is unpacked for a *_codes output and
    kept as bytes for a *_packed one, where one-per-byte E2M1 codes are packed (low nibble = even
    element). Anything else (a float32 D, uint8 codes, uint32 HiF4 scale words) is saved as is."""
    from . import _as_result_array  # the dtype tables live in the package's __init__

    a = _as_result_array(array, output)
    p = result_path(results, case, output)
    p.parent.mkdir(parents=True, exist_ok=True)
    np.save(p, a, allow_pickle=False)
    return p


def check(suite: Suite | str | os.PathLike, results: str | os.PathLike, allow_missing: bool = False) -> dict:
    """`fp4sim check SUITE --results DIR [--allow-missing]` from Python: every expected output found
    under results (same relative paths as in the suite) is compared bit for bit. Returns the JSON
    report of `fp4sim check --json` as a dict: all_equal, counts, per case its status and first
    difference with its inputs, bits and ULP distance, plus "allow_missing", "passed" (the CLI's
    exit status: all_equal, or with allow_missing every case found equal and at least one file
    compared) and "lines", what the CLI prints. Raises OSError when the suite's manifest is unusable
    or results is not a directory."""
    spath = suite.path if isinstance(suite, Suite) else Path(suite)
    report_json, all_equal, present_equal, lines = _core.check_suite(str(spath), str(results))
    report = json.loads(report_json)
    report["all_equal"] = bool(all_equal)
    report["allow_missing"] = bool(allow_missing)
    report["passed"] = bool(present_equal if allow_missing else all_equal)
    lines = list(lines)
    unexpected = report.get("unexpected", [])
    for u in unexpected[:10]:
        lines.append(f"note: {Path(results) / u} is no file of the suite (ignored)")
    if len(unexpected) > 10:
        lines.append(f"note: ... and {len(unexpected) - 10} more files the suite does not have")
    lines.append(f"check {spath} against {results}: {len(report['cases'])} cases, {report['equal']} equal, "
                 f"{report['differ']} differ, {report['missing']} missing, {report['error']} error; "
                 f"{report['files_compared']} result files compared bit for bit")
    report["lines"] = lines
    return report
