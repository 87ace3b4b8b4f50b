"""Fixtures: the fp4sim CLI (to compare the package with) and a smoke suite made by it.

The CLI is $FP4SIM_CLI, else <repo>/build/bin/fp4sim; tests that need it skip without it.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def _cli() -> str | None:
    c = os.environ.get("FP4SIM_CLI") or str(REPO / "build" / "bin" / "fp4sim")
    return c if Path(c).is_file() and os.access(c, os.X_OK) else None


@pytest.fixture(scope="session")
def cli():
    c = _cli()
    if c is None:
        pytest.skip("fp4sim CLI not built (set FP4SIM_CLI)")
    return c


def run_cli(cli: str, *args: str, ok: bool = True) -> subprocess.CompletedProcess:
    p = subprocess.run([cli, *map(str, args)], capture_output=True, text=True)
    if ok and p.returncode != 0:
        raise AssertionError(f"fp4sim {' '.join(map(str, args))} failed ({p.returncode}): {p.stderr}")
    return p


@pytest.fixture(scope="session")
def smoke_suite(cli, tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("suite") / "smoke"
    run_cli(cli, "vectors", "--suite", "smoke", "--seed", "5", "--out", d)
    return d


@pytest.fixture
def suite_copy(smoke_suite, tmp_path) -> Path:
    d = tmp_path / "smoke"
    shutil.copytree(smoke_suite, d)
    return d
