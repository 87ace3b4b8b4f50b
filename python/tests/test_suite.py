"""load_suite's integrity checks and check() (the C++ checker of `fp4sim check`)."""

import shutil

import numpy as np
import pytest

import fp4sim
from conftest import run_cli


def test_load_suite_refuses_a_damaged_file_by_name(suite_copy):
    suite = fp4sim.load_suite(suite_copy)
    case = suite[3]
    f = suite_copy / case.meta["expected"][next(iter(case.expected))]
    raw = bytearray(f.read_bytes())
    raw[-1] ^= 0x01
    f.write_bytes(bytes(raw))
    with pytest.raises(fp4sim.SuiteError, match=f"^{f}: CRC-32 [0-9a-f]{{8}}, the manifest records"):
        fp4sim.load_suite(suite_copy)
    f.write_bytes(bytes(raw[:-4]))
    with pytest.raises(fp4sim.SuiteError, match="bytes, the manifest records"):
        fp4sim.load_suite(suite_copy)
    (suite_copy / "manifest.json").write_text("{")
    with pytest.raises(fp4sim.SuiteError, match="manifest.json: not valid JSON"):
        fp4sim.load_suite(suite_copy)


def test_check_passes_on_the_suites_own_outputs_and_names_a_flipped_bit(smoke_suite, tmp_path):
    suite = fp4sim.load_suite(smoke_suite)
    results = tmp_path / "results"
    for case in suite:
        for model, d in case.expected.items():
            fp4sim.save_result(results, case, f"d_{model}", d)
    r = fp4sim.check(suite, results)
    assert r["all_equal"] is True and r["equal"] == len(suite) and r["differ"] == 0
    assert r["files_compared"] == 3 * len(suite)

    victim = suite[5]
    p = fp4sim.result_path(results, victim, "d_exact")
    d = np.load(p)
    d.view(np.uint32)[1, 2] ^= 1  # one bit of one element
    np.save(p, d)
    r = fp4sim.check(suite, results)
    assert r["all_equal"] is False and r["differ"] == 1
    bad = [c for c in r["cases"] if c["status"] != "equal"]
    assert [c["id"] for c in bad] == [victim.id]
    fd = next(f for f in bad[0]["files"] if f["status"] == "differ")["first_difference"]
    assert (fd["row"], fd["col"], fd["ulp"]) == (1, 2, 1)
    assert any(victim.id in line for line in r["lines"])


def test_check_matches_the_cli_verdict(cli, smoke_suite, tmp_path):
    results = tmp_path / "r"
    shutil.copytree(smoke_suite / "cases", results / "cases")
    assert fp4sim.check(smoke_suite, results)["all_equal"]
    assert run_cli(cli, "check", smoke_suite, "--results", results, "--quiet", ok=False).returncode == 0
    shutil.rmtree(results / "cases" / fp4sim.load_suite(smoke_suite)[0].id)
    r = fp4sim.check(smoke_suite, results)
    assert not r["all_equal"] and r["missing"] == 1
    assert run_cli(cli, "check", smoke_suite, "--results", results, "--quiet", ok=False).returncode == 1


def test_check_of_a_missing_suite_raises(tmp_path):
    with pytest.raises(OSError, match="manifest.json"):
        fp4sim.check(tmp_path / "nope", tmp_path)
