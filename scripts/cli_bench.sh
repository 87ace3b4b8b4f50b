#!/usr/bin/env bash
# Whole-process speed of the command line (issue 13; docs/performance.md "Command line").
#
#   scripts/cli_bench.sh [FP4SIM] [RUNS] [DIR]
#
# FP4SIM: the binary (default build/bin/fp4sim); RUNS: repetitions, medians reported (default 15);
# DIR: scratch folder, on the disk to measure (default a fresh folder under build/). Measures, in one
# run of this script:
#   quantize  `fp4sim quantize --format nvfp4` of a 1024 x 4096 float32 tensor, start to exit (wall),
#   in-mem    the in-memory quantize + dequantize time that the same runs print ("quantized in X ms"),
#   cp        `cp -r` of the same output folder (the same bytes, the same disk) to a new folder,
#   ratio     quantize / (in-mem + cp): the goal is <= 2,
#   --version wall time and peak resident memory of `fp4sim --version`.
# Extra options for quantize come from FP4SIM_BENCH_ARGS (e.g. "--durable" or "--threads 1").
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${1:-build/bin/fp4sim}
RUNS=${2:-15}
DIR=${3:-}
[ -x "$BIN" ] || { echo "cli_bench.sh: $BIN: no such executable (build fp4sim first)" >&2; exit 2; }
if [ -z "$DIR" ]; then
  mkdir -p build
  DIR=$(mktemp -d build/cli_bench.XXXXXX)
  trap 'rm -rf "$DIR"' EXIT
fi
BIN=$(realpath "$BIN")
exec python3 - "$BIN" "$RUNS" "$DIR" "${FP4SIM_BENCH_ARGS:-}" <<'PY'
import os, re, resource, shutil, statistics, subprocess, sys, time
import numpy as np

bin_, runs, d, extra = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4].split()
os.chdir(d)
# An LLM-like tensor: Gaussian values, a few outlier channels (no NaN / Inf).
rng = np.random.default_rng(0)
x = rng.standard_normal((1024, 4096), dtype=np.float32)
x[:, ::128] *= 50
np.save("x.npy", x)

def timed(cmd):
    t0 = time.perf_counter()
    p = subprocess.run(cmd, capture_output=True, text=True)
    dt = time.perf_counter() - t0
    if p.returncode != 0:
        sys.exit(f"cli_bench.sh: {' '.join(cmd)} failed: {p.stderr.strip()}")
    return dt, p.stdout

whole, inmem, cp = [], [], []
for i in range(runs + 1):  # the first run warms the page cache and is dropped
    for p in ("o", "o_cp"):
        shutil.rmtree(p, ignore_errors=True)
    dt, out = timed([bin_, "quantize", "--format", "nvfp4", "--input", "x.npy", "--out", "o", *extra])
    m = re.search(r"quantized in ([0-9.]+) ms", out)
    dc, _ = timed(["cp", "-r", "o", "o_cp"])
    if i == 0:
        continue
    whole.append(dt * 1e3)
    inmem.append(float(m.group(1)) if m else float("nan"))
    cp.append(dc * 1e3)

out_bytes = sum(os.path.getsize(os.path.join("o", f)) for f in os.listdir("o"))
ver = []
for i in range(runs):
    dt, _ = timed([bin_, "--version"])
    ver.append(dt * 1e3)
rss_kb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss  # the largest child: quantize
p = subprocess.run(["/usr/bin/time", "-f", "%M", bin_, "--version"], capture_output=True, text=True)
ver_rss = p.stderr.strip().splitlines()[-1] if p.returncode == 0 else "?"

med = statistics.median
print(f"fp4sim quantize nvfp4 1024x4096 float32 ({out_bytes / 1e6:.1f} MB out) {' '.join(extra)}".rstrip())
print(f"  median of {runs} runs: whole process {med(whole):.1f} ms, in-memory quantize {med(inmem):.1f} ms, "
      f"cp -r of the output {med(cp):.1f} ms")
print(f"  ratio whole / (in-memory + cp) = {med(whole) / (med(inmem) + med(cp)):.2f}  (goal <= 2)")
print(f"  fp4sim --version: median {med(ver):.1f} ms, peak RSS {ver_rss} KB")
PY
