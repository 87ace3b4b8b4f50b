#!/usr/bin/env python3
"""Two builds of a ratio benchmark (bench_quant, bench_rht, ...) measured in the same run.

    scripts/bench_ab.py [--rounds N] [--filter REGEX] [--min-time S] BEFORE AFTER

Runs BEFORE and AFTER alternately, N rounds each (default 3), each run with
--benchmark_repetitions=3; a row's rate in a run is the median of its repetitions and its ratio is
that rate over the same run's memcpy (rows named *_mt over memcpy_mt; rows that report a
memcpy_items_per_second counter over that copy, timed in the same iterations), so machine load
that changes between runs hits both builds alike. Prints a Markdown table of the medians over the rounds: rate
(M elements/s) and % of memcpy for each build, and the load average before the first and after the
last round. Rows present in only one build are shown with a dash for the other.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile


def run_once(binary, flt, min_time):
    with tempfile.NamedTemporaryFile(suffix=".json") as f:
        cmd = [binary, f"--benchmark_min_time={min_time}", "--benchmark_repetitions=3",
               "--benchmark_report_aggregates_only=true", f"--benchmark_out={f.name}",
               "--benchmark_out_format=json"]
        if flt:
            cmd.append(f"--benchmark_filter={flt}")
        subprocess.run(cmd, check=True, capture_output=True, text=True)
        report = json.load(f)
    rates, paired = {}, {}
    for b in report["benchmarks"]:
        if b.get("aggregate_name") != "median" or "items_per_second" not in b:
            continue
        name = b["run_name"].split("/real_time")[0].split("/manual_time")[0]
        name = name.split("/", 1)[1] if name.startswith("BM_") and "/" in name else name
        rates[name] = b["items_per_second"]
        if b.get("memcpy_items_per_second"):  # the row times a copy in every iteration
            paired[name] = b["memcpy_items_per_second"]
    ratios = {}
    for name, r in rates.items():
        base = "memcpy_mt" if name.endswith("_mt") else "memcpy"
        if name in paired:
            ratios[name] = r / paired[name]
        elif base in rates:
            ratios[name] = r / rates[base]
    return rates, ratios


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--filter", default="")
    ap.add_argument("--min-time", default="0.3")
    ap.add_argument("before")
    ap.add_argument("after")
    a = ap.parse_args()
    for b in (a.before, a.after):
        if not os.access(b, os.X_OK):
            sys.exit(f"bench_ab.py: {b}: not an executable")
    load0 = os.getloadavg()[0]
    res = {a.before: [], a.after: []}
    for i in range(a.rounds):
        for b in (a.before, a.after):
            res[b].append(run_once(b, a.filter, a.min_time))
            print(f"round {i + 1}/{a.rounds}: {b} done", file=sys.stderr, flush=True)
    load1 = os.getloadavg()[0]

    def med(b, name, idx):
        v = [r[idx][name] for r in res[b] if name in r[idx]]
        return statistics.median(v) if v else None

    names = sorted({n for b in res for r in res[b] for n in r[0]},
                   key=lambda n: (n.startswith("memcpy"), n.endswith("_mt"), n))
    print(f"| row | before Melem/s | before | after Melem/s | after |")
    print("|---|---:|---:|---:|---:|")
    for n in names:
        cells = []
        for b in (a.before, a.after):
            r, q = med(b, n, 0), med(b, n, 1)
            cells += ["—" if r is None else f"{r / 1e6:.0f}", "—" if q is None else f"{100 * q:.1f} %"]
        print(f"| {n} | " + " | ".join(cells) + " |")
    print(f"\nload average {load0:.2f} before, {load1:.2f} after; {a.rounds} rounds each, "
          f"medians of 3 repetitions per run, medians over the rounds")


if __name__ == "__main__":
    main()
