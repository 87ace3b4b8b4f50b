#!/usr/bin/env bash
# Whole-process speed of the command line (issue 13; docs/performance.md "Command line").
#
#   scripts/cli_bench.sh [--runs N] [--dir DIR] [FP4SIM ...]
#
# FP4SIM: one or more binaries (default build/bin/fp4sim), measured in the same run, their runs
# interleaved so that a change of machine load hits all alike; --runs: repetitions, medians reported
# (default 15); --dir: scratch folder on the disk to measure (default a fresh folder under build/).
# For each binary:
#   whole     `fp4sim quantize --format nvfp4` of a 1024 x 4096 float32 tensor, start to exit (wall),
#   cpu       user + system CPU time of those runs,
#   in-mem    the in-memory quantize + dequantize time that the runs print ("quantized in X ms (cpu
#             Y ms)"; a binary that does not print it is set against the others' in-memory time),
#   cp        `cp -r` of the same output folder (the same bytes, the same disk) to a new folder,
#   ratio     whole / (in-mem + cp), in wall time (the goal is <= 2) and in CPU time (the same
#             ratio, but robust against other processes loading the machine),
#   --version wall time and peak resident memory of `fp4sim --version`.
# Extra options for quantize come from FP4SIM_BENCH_ARGS (e.g. "--durable" or "--threads 1").
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=15
DIR=
BINS=()
while [ $# -gt 0 ]; do
  case "$1" in
    --runs) RUNS=$2; shift 2 ;;
    --dir) DIR=$2; shift 2 ;;
    *) BINS+=("$1"); shift ;;
  esac
done
[ ${#BINS[@]} -gt 0 ] || BINS=(build/bin/fp4sim)
for i in "${!BINS[@]}"; do
  [ -x "${BINS[$i]}" ] || { echo "cli_bench.sh: ${BINS[$i]}: no such executable (build fp4sim first)" >&2; exit 2; }
  BINS[$i]=$(realpath "${BINS[$i]}")
done
if [ -z "$DIR" ]; then
  mkdir -p build
  DIR=$(mktemp -d build/cli_bench.XXXXXX)
  trap 'rm -rf "$DIR"' EXIT
fi
exec python3 - "$RUNS" "$DIR" "${FP4SIM_BENCH_ARGS:-}" "${BINS[@]}" <<'PY'
import os, re, resource, shutil, statistics, subprocess, sys, time
import numpy as np

runs, d, extra, bins = int(sys.argv[1]), sys.argv[2], sys.argv[3].split(), sys.argv[4:]
os.chdir(d)
# An LLM-like tensor: Gaussian values, a few outlier channels (no NaN / Inf).
rng = np.random.default_rng(0)
x = rng.standard_normal((1024, 4096), dtype=np.float32)
x[:, ::128] *= 50
np.save("x.npy", x)

def timed(cmd):
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    p = subprocess.run(cmd, capture_output=True, text=True)
    dt = time.perf_counter() - t0
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    if p.returncode != 0:
        sys.exit(f"cli_bench.sh: {' '.join(cmd)} failed: {p.stderr.strip()}")
    cpu = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
    return dt * 1e3, cpu * 1e3, p.stdout

res = {b: {"whole": [], "cpu": [], "inmem": [], "inmem_cpu": [], "cp": [], "cp_cpu": [], "ver": [], "ver_cpu": []}
       for b in bins}
for i in range(runs + 1):  # the first round warms the page cache and is dropped
    for b in bins:
        for p in ("o", "o_cp"):
            shutil.rmtree(p, ignore_errors=True)
        dt, cpu, out = timed([b, "quantize", "--format", "nvfp4", "--input", "x.npy", "--out", "o", *extra])
        m = re.search(r"quantized in ([0-9.]+) ms \(cpu ([0-9.]+) ms\)", out)
        dc, cc, _ = timed(["cp", "-r", "o", "o_cp"])
        dv, cv, _ = timed([b, "--version"])
        if i == 0:
            continue
        r = res[b]
        r["whole"].append(dt)
        r["cpu"].append(cpu)
        if m:
            r["inmem"].append(float(m.group(1)))
            r["inmem_cpu"].append(float(m.group(2)))
        r["cp"].append(dc)
        r["cp_cpu"].append(cc)
        r["ver"].append(dv)
        r["ver_cpu"].append(cv)
out_bytes = sum(os.path.getsize(os.path.join("o", f)) for f in os.listdir("o"))

med = statistics.median
all_inmem = [v for b in bins for v in res[b]["inmem"]]
all_inmem_cpu = [v for b in bins for v in res[b]["inmem_cpu"]]
print(f"fp4sim quantize nvfp4 1024x4096 float32 ({out_bytes / 1e6:.1f} MB out) {' '.join(extra)}; "
      f"medians of {runs} interleaved runs; load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
for b in bins:
    r = res[b]
    inmem = med(r["inmem"]) if r["inmem"] else med(all_inmem) if all_inmem else float("nan")
    inmem_cpu = med(r["inmem_cpu"]) if r["inmem_cpu"] else med(all_inmem_cpu) if all_inmem_cpu else float("nan")
    note = "" if r["inmem"] else " (in-memory time of the other binaries)"
    p = subprocess.run(["/usr/bin/time", "-f", "%M", b, "--version"], capture_output=True, text=True)
    rss = p.stderr.strip().splitlines()[-1] if p.returncode == 0 else "?"
    print(f"{b}")
    print(f"  wall: whole process {med(r['whole']):.1f} ms, in-memory quantize {inmem:.1f} ms, cp -r {med(r['cp']):.1f} ms: "
          f"ratio {med(r['whole']) / (inmem + med(r['cp'])):.2f} (goal <= 2){note}")
    print(f"  cpu:  whole process {med(r['cpu']):.1f} ms, in-memory quantize {inmem_cpu:.1f} ms, cp -r {med(r['cp_cpu']):.1f} ms: "
          f"ratio {med(r['cpu']) / (inmem_cpu + med(r['cp_cpu'])):.2f}")
    print(f"  --version: wall {med(r['ver']):.1f} ms, cpu {med(r['ver_cpu']):.1f} ms, peak RSS {rss} KB")
PY
