#!/usr/bin/env bash
# Benchmark of the scale-out (docs/scale-out.md), not a test: the parallel efficiency of
# `fp4sim regress` at 2 MPI ranks on this machine, the per-rank rate of every unit, and the cost of
# the gather to rank 0 at 2, 4 and 8 ranks (4 and 8 oversubscribed: only the gather is timed).
#
#   scripts/scaleout_bench.sh [FP4SIM] [CASES ...]     defaults: build/bin/fp4sim 200000 1000000
#   REPS=3 (repetitions of each 1-rank / 2-rank pair; the table shows the median)
#
# Efficiency = T1 / (2 * T2), T1 / T2 the wall time of one process / of mpirun -n 2, same options
# and byte-identical outputs (checked). "compute" is the same ratio over the shard phase alone
# (one rank's compute time / the slower rank's with two), "CPU" over its CPU time (what the ranks
# computed, whatever else ran on their cores: the efficiency on cores of their own, i.e. the cost of
# duplicated start-up and of imbalance). Other load on the two cores lowers the wall-time numbers.
# On a shared machine note that Linux splits the CPU fairly between sessions (autogroups,
# /proc/sys/kernel/sched_autogroup_enabled), not between processes: a second rank in the same
# session gets no extra CPU while other sessions are busy, whatever `nice` says. AUTOGROUP_NICE=-15
# (root) raises this session's share (written to /proc/self/autogroup) for the benchmark.
set -euo pipefail
cd "$(dirname "$0")/.."
F=$(realpath "${1:-build/bin/fp4sim}")
shift || true
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
if [ -n "${AUTOGROUP_NICE:-}" ]; then echo "$AUTOGROUP_NICE" > /proc/self/autogroup; fi
exec /usr/bin/python3 -I - "$F" "$@" <<'EOF'
import json, os, re, shutil, signal, statistics, subprocess, sys, tempfile, time

F = sys.argv[1]
sizes = [int(x) for x in sys.argv[2:]] or [200000, 1000000]
reps = int(os.environ.get("REPS", "3"))
W = tempfile.mkdtemp(prefix="fp4sim-bench.")

def run(cmd, env=None, check=True):
    t0 = time.monotonic()
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    t = time.monotonic() - t0
    if check and p.returncode != 0:
        sys.exit(f"failed ({p.returncode}): {' '.join(cmd)}\n{p.stderr}")
    return p, t

def timing(err):
    line = [l for l in err.splitlines() if "regress: timing" in l][-1]
    f = dict(re.findall(r"(\S+)=(\S+)", line))
    ranks = [tuple(float(v) for v in r.split("/")) for r in f["compute_s/cpu_s/shards"].split(",")]
    return f, ranks  # per rank: (wall s, CPU s, shards)

def same(a, b):
    return subprocess.run(["diff", "-r", a, b], stdout=subprocess.DEVNULL).returncode == 0

try:
    with open("/proc/loadavg") as fl:
        load = " ".join(fl.read().split()[:3])
    with open("/proc/self/autogroup") as fa:
        group = fa.read().strip()
    print(f"# fp4sim scale-out benchmark: {os.cpu_count()} cores, load average {load}, niceness {os.nice(0)}, {group}\n")
    units = re.search(r"or one of: (.*)\)$", run([F, "regress", "--units", "?"], check=False)[0].stderr.strip()).group(1).split(", ")

    print("## Per-unit rate on one rank (regress --units U --cases 400000)\n")
    print("| unit | cases | compute s | CPU s | cases/s (CPU) |")
    print("|---|---:|---:|---:|---:|")
    for u in units:
        out = f"{W}/u-{u}"
        p, _ = run([F, "regress", "--units", u, "--cases", "400000", "--out", out])
        _, r = timing(p.stderr)
        n = json.load(open(f"{out}/report.json"))["outputs_checked"]
        print(f"| {u} | {n:,} | {r[0][0]:.3f} | {r[0][1]:.3f} | {n / r[0][1]:,.0f} |")

    print("\n## regress, one process vs mpirun -n 2 (all units, seed 7; median of %d pairs)\n" % reps)
    print("| cases/unit | T1 s | T2 s | efficiency | compute T1 s | compute T2 s (rank 0, 1) | compute eff. | "
          "CPU T1 s | CPU T2 s (rank 0, 1) | CPU eff. | gather | merge s |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for n in sizes:
        rows = []
        for k in range(reps):
            a, b = f"{W}/p{n}-{k}", f"{W}/m{n}-{k}"
            p1, t1 = run([F, "regress", "--cases", str(n), "--seed", "7", "--out", a])
            p2, t2 = run(["mpirun", "-n", "2", F, "regress", "--cases", str(n), "--seed", "7", "--out", b])
            if p1.stdout != p2.stdout or not same(a, b):
                sys.exit(f"outputs differ for {n}")
            f1, r1 = timing(p1.stderr)
            f2, r2 = timing(p2.stderr)
            rows.append(dict(t1=t1, t2=t2, eff=t1 / (2 * t2), c1=r1[0][0], c2=[r[0] for r in r2],
                             ceff=r1[0][0] / (2 * max(r[0] for r in r2)), u1=r1[0][1], u2=[r[1] for r in r2],
                             ueff=r1[0][1] / (2 * max(r[1] for r in r2)), gb=int(f2["gather_bytes"]),
                             gs=float(f2["gather_s"]), ms=float(f2["merge_s"])))
            shutil.rmtree(a), shutil.rmtree(b)
        m = sorted(rows, key=lambda r: r["eff"])[len(rows) // 2]  # the median pair by efficiency
        print(f"| {n:,} | {m['t1']:.2f} | {m['t2']:.2f} | {100 * m['eff']:.0f} % "
              f"(min {100 * min(r['eff'] for r in rows):.0f}, max {100 * max(r['eff'] for r in rows):.0f}) | "
              f"{m['c1']:.2f} | {max(m['c2']):.2f} ({', '.join(f'{x:.2f}' for x in m['c2'])}) | {100 * m['ceff']:.0f} % | "
              f"{m['u1']:.2f} | {max(m['u2']):.2f} ({', '.join(f'{x:.2f}' for x in m['u2'])}) | "
              f"{100 * statistics.median(r['ueff'] for r in rows):.0f} % | "
              f"{m['gb']:,} B in {1e3 * m['gs']:.2f} ms | {m['ms']:.2f} |")

    print("\n## The gather alone (regress --cases 20000 --shard-size 256: 790 shards; median of 5)\n")
    print("| ranks | gather bytes | gather ms (median) | gather ms (min) |")
    print("|---:|---:|---:|---:|")
    for r in (2, 4, 8):
        g = []
        for k in range(5):
            p, _ = run(["mpirun", "-n", str(r), "--oversubscribe", F, "regress", "--cases", "20000", "--shard-size", "256",
                        "--seed", "7", "--out", f"{W}/g{r}-{k}"])
            f, _ = timing(p.stderr)
            g.append((float(f["gather_s"]), int(f["gather_bytes"])))
        print(f"| {r} | {g[0][1]:,} | {1e3 * statistics.median(x[0] for x in g):.3f} | {1e3 * min(x[0] for x in g):.3f} |")

    print("\n## Resume scan (rank 0 reads every shard file of an interrupted run)\n")
    env = dict(os.environ, FP4SIM_TEST_KILL_AFTER_SHARDS="780")
    p, _ = run([F, "regress", "--cases", "20000", "--shard-size", "256", "--seed", "7", "--out", f"{W}/r"], env=env, check=False)
    assert p.returncode == -signal.SIGKILL, p.returncode
    p, t = run([F, "regress", "--cases", "20000", "--shard-size", "256", "--seed", "7", "--out", f"{W}/r", "--resume"])
    f, _ = timing(p.stderr)
    print(f"{[l for l in p.stderr.splitlines() if 'were done' in l][0]}: the scan (prepare) took {f['prepare_s']} s, "
          f"the resumed run {t:.2f} s")
finally:
    shutil.rmtree(W, ignore_errors=True)
EOF
