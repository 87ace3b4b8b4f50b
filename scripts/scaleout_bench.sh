#!/usr/bin/env bash
# Benchmark of the scale-out (docs/scale-out.md), not a test: the parallel efficiency of
# `fp4sim regress` at 2 MPI ranks on this machine, the per-rank rate of every unit, and the cost of
# the gather to rank 0 at 2, 4 and 8 ranks (the last two oversubscribed: only the gather is timed).
#
#   scripts/scaleout_bench.sh [FP4SIM] [CASES ...]     defaults: build/bin/fp4sim 200000 2000000
#
# Efficiency = T1 / (2 * T2), T1 / T2 the wall time of one process / of mpirun -n 2, same options
# and byte-identical outputs (checked). "compute" is the same ratio over the shard phase alone
# (rank 0's compute time with one rank / the slower rank's with two). Run it on a quiet machine:
# other load on the two cores lowers every number here.
set -euo pipefail
cd "$(dirname "$0")/.."
F=$(realpath "${1:-build/bin/fp4sim}")
shift || true
SIZES=("$@")
[ ${#SIZES[@]} -gt 0 ] || SIZES=(200000 2000000)
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
W=$(mktemp -d /tmp/fp4sim-bench.XXXXXX)
trap 'rm -rf "$W"' EXIT
now() { date +%s.%N; }
field() { sed -n "s/.*$1=\([^ ]*\).*/\1/p" "$2" | tail -n 1; }

echo "# fp4sim scale-out benchmark: $(nproc) cores, $(uptime | sed 's/.*load average/load average/')"
echo
echo "## Per-unit rate on one rank (regress --units U --cases 400000)"
echo
echo "| unit | cases | compute s | cases/s |"
echo "|---|---:|---:|---:|"
# The unit names, as the usage error lists them.
units=$({ "$F" regress --units '?' 2>&1 || true; } | sed -n 's/.*or one of: \(.*\))$/\1/p' | tr -d ',')
for u in $units; do
  if "$F" regress --units "$u" --cases 400000 --out "$W/u-$u" >/dev/null 2>"$W/u-$u.err"; then
    c=$(field 'compute_s\/shards' "$W/u-$u.err" | cut -d/ -f1)
    n=$(python3 -c "import json;print(json.load(open('$W/u-$u/report.json'))['outputs_checked'])")
    echo "| $u | $n | $c | $(python3 -c "print(f'{$n/$c:,.0f}')") |"
  else
    echo "| $u | - | - | $(tail -n 1 "$W/u-$u.err") |"
  fi
done

echo
echo "## regress, one process vs mpirun -n 2 (all units, seed 7)"
echo
echo "| cases/unit | T1 s | T2 s | efficiency | compute T1 s | compute T2 s (rank 0, rank 1) | compute efficiency | gather | merge s |"
echo "|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
for n in "${SIZES[@]}"; do
  t0=$(now)
  "$F" regress --cases "$n" --seed 7 --out "$W/p$n" >"$W/p$n.out" 2>"$W/p$n.err"
  t1=$(now)
  mpirun -n 2 "$F" regress --cases "$n" --seed 7 --out "$W/m$n" >"$W/m$n.out" 2>"$W/m$n.err"
  t2=$(now)
  cmp -s "$W/p$n.out" "$W/m$n.out" && diff -r "$W/p$n" "$W/m$n" >/dev/null || { echo "outputs differ for $n" >&2; exit 1; }
  c1=$(field 'compute_s\/shards' "$W/p$n.err" | cut -d/ -f1)
  c2=$(field 'compute_s\/shards' "$W/m$n.err")
  python3 - "$n" "$t0" "$t1" "$t2" "$c1" "$c2" "$(field gather_bytes "$W/m$n.err")" "$(field gather_s "$W/m$n.err")" \
    "$(field merge_s "$W/m$n.err")" <<'EOF'
import sys
n, t0, t1, t2, c1, c2, gb, gs, ms = sys.argv[1:]
T1, T2 = float(t1) - float(t0), float(t2) - float(t1)
ranks = [float(x.split('/')[0]) for x in c2.split(',')]
print(f"| {int(n):,} | {T1:.2f} | {T2:.2f} | {100*T1/(2*T2):.0f} % | {float(c1):.2f} | "
      f"{max(ranks):.2f} ({', '.join(f'{r:.2f}' for r in ranks)}) | {100*float(c1)/(2*max(ranks)):.0f} % | "
      f"{int(gb):,} B in {1e3*float(gs):.2f} ms | {float(ms):.2f} |")
EOF
done

echo
echo "## The gather alone (regress --cases 20000 --shard-size 256: 790 shards)"
echo
echo "| ranks | gather bytes | gather ms |"
echo "|---:|---:|---:|"
for r in 2 4 8; do
  mpirun -n "$r" --oversubscribe "$F" regress --cases 20000 --shard-size 256 --seed 7 --out "$W/g$r" >/dev/null 2>"$W/g$r.err"
  echo "| $r | $(field gather_bytes "$W/g$r.err") | $(python3 -c "print(f'{1e3*$(field gather_s "$W/g$r.err"):.3f}')") |"
done

echo
echo "## Resume scan (rank 0 reads every shard file of an interrupted run)"
echo
FP4SIM_TEST_KILL_AFTER_SHARDS=780 "$F" regress --cases 20000 --shard-size 256 --seed 7 --out "$W/r" >/dev/null 2>&1 || true
t0=$(now)
"$F" regress --cases 20000 --shard-size 256 --seed 7 --out "$W/r" --resume >/dev/null 2>"$W/r.err"
t1=$(now)
echo "$(grep 'shards were done' "$W/r.err"): the scan took $(field prepare_s "$W/r.err") s, the whole resumed run $(python3 -c "print(f'{$t1-$t0:.2f}')") s"
