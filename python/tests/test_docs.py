"""Every code block of docs/python.md and docs/vectors.md runs as written.

Per document, one temporary directory; its blocks run in document order, verbatim, with the fp4sim
command on PATH (its folder first, then this interpreter's, so `python3` is this one):
  ```python   a fresh interpreter (`python -c BLOCK`); it must exit 0
  ```pycon    a doctest session (`>>>` lines and the output or exception they print)
  ```sh       bash -euo pipefail; it must exit 0, unless listed in SKIPPED with the reason
Blocks of other languages (cpp, cmake) and untagged blocks (synopses, layouts, sample output) are
not run: a command meant to be run belongs in a ```sh block. SKIPPED must name exactly the blocks it
skips, so that nothing is skipped silently.
"""

from __future__ import annotations

import doctest
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import REPO, _cli

DOCS = ["python.md", "vectors.md"]
RUN = {"python", "pycon", "sh"}

# (document, first line of the block) -> why it is not run here.
SKIPPED = {
    ("python.md", "FP4SIM_CLI=build/bin/fp4sim PYTHONPATH=build/python python3 -m pytest -q python/tests"):
        "this test suite itself",
    ("python.md", "python3 examples/python/full_loop.py"): "a repository path: test_full_loop_example runs it",
    ("vectors.md", "fp4sim vectors --suite corners --out suite          # 1. generate (also smoke, random, llm, quant)"):
        "./my_kernel_test is a placeholder for the reader's kernel",
}


def blocks(doc: str) -> list[tuple[int, str, str]]:
    """(line, language, text) of every fenced block of docs/<doc>, indented ones (in lists) too."""
    out, lines = [], (REPO / "docs" / doc).read_text().splitlines()
    i = 0
    while i < len(lines):
        m = re.match(r"^(\s*)```(\S*)\s*$", lines[i])
        if not m:
            i += 1
            continue
        indent, lang, start, body = m.group(1), m.group(2), i + 1, []
        i += 1
        while i < len(lines) and not re.match(rf"^{indent}```\s*$", lines[i]):
            body.append(lines[i][len(indent):] if lines[i].startswith(indent) else lines[i].lstrip())
            i += 1
        if i == len(lines):
            raise AssertionError(f"docs/{doc}:{start}: unterminated code block")
        out.append((start, lang, "\n".join(body) + "\n"))
        i += 1
    return out


def _docs_cli() -> str | None:
    """$FP4SIM_CLI when set; else the fp4sim on PATH (what pip installed: scripts/package_check.sh
    runs this file that way); else the build tree's."""
    if os.environ.get("FP4SIM_CLI"):
        return _cli()
    return shutil.which("fp4sim") or _cli()


def _env(cli: str | None) -> dict:
    env = dict(os.environ)
    path = [os.path.dirname(sys.executable)] + env.get("PATH", "").split(os.pathsep)
    if cli:
        path.insert(0, os.path.dirname(os.path.abspath(cli)))
    env["PATH"] = os.pathsep.join(path)
    env.pop("FP4SIM_CLI", None)  # the blocks find the command as a user's shell does
    # The package under test (build tree or installed), whatever folder a block runs in.
    import fp4sim

    pp = [str(Path(fp4sim.__file__).resolve().parents[1])]
    pp += [os.path.abspath(p) for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]
    env["PYTHONPATH"] = os.pathsep.join(pp)
    return env


def test_skipped_blocks_exist_and_are_sh():
    listed = {(d, first) for d in DOCS for _, lang, text in blocks(d) if lang == "sh"
              for first in [text.splitlines()[0] if text.strip() else ""]}
    assert set(SKIPPED) <= listed, f"SKIPPED names blocks the docs no longer have: {set(SKIPPED) - listed}"


@pytest.mark.parametrize("doc", DOCS)
def test_every_block_runs_verbatim(doc, tmp_path):
    cli = _docs_cli()
    env = _env(cli)
    ran = []
    for line, lang, text in blocks(doc):
        if lang not in RUN:
            continue
        where = f"docs/{doc}:{line} ({lang})"
        first = text.splitlines()[0] if text.strip() else ""
        if lang == "sh" and (doc, first) in SKIPPED:
            continue
        if lang == "sh" and re.search(r"(^|[\s;&|(])fp4sim\b", text) and cli is None:
            pytest.skip(f"{where} calls the fp4sim command, which is not built (set FP4SIM_CLI)")
        if lang == "python":
            p = subprocess.run([sys.executable, "-c", text], cwd=tmp_path, env=env, capture_output=True, text=True,
                               timeout=600)
        elif lang == "sh":
            p = subprocess.run(["bash", "-euo", "pipefail", "-c", text], cwd=tmp_path, env=env, capture_output=True,
                               text=True, timeout=600)
        else:
            p = _doctest(text, tmp_path, where)
        assert p.returncode == 0, (f"{where} failed ({p.returncode}):\n{text}\n--- stdout\n{p.stdout}\n"
                                   f"--- stderr\n{p.stderr}")
        ran.append(where)
    if doc == "python.md":  # it teaches the loop: at least its Python examples must be there to run
        assert sum("(python)" in w for w in ran) >= 3, ran


class _Result:
    def __init__(self, rc: int, out: str):
        self.returncode, self.stdout, self.stderr = rc, out, ""


def _doctest(text: str, cwd: Path, where: str) -> _Result:
    test = doctest.DocTestParser().get_doctest(text, {}, where, where, 0)
    out: list[str] = []
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    old = os.getcwd()
    try:
        os.chdir(cwd)
        runner.run(test, out=out.append)
    finally:
        os.chdir(old)
    return _Result(1 if runner.failures else 0, "".join(out))


def test_full_loop_example(tmp_path):
    """examples/python/full_loop.py, as docs/python.md runs it (the fp4sim command on PATH)."""
    cli = _docs_cli()
    if cli is None:
        pytest.skip("fp4sim CLI not built (set FP4SIM_CLI)")
    script = REPO / "examples" / "python" / "full_loop.py"
    p = subprocess.run([sys.executable, str(script), "--keep", str(tmp_path / "w")], env=_env(cli), capture_output=True,
                       text=True, timeout=600)
    assert p.returncode == 0 and "full_loop: OK" in p.stdout, p.stdout + p.stderr
