#!/usr/bin/env bash
# Coverage of the RTL tests (docs/rtl.md "Coverage (scripts/coverage.sh)"):
#   a separate build with -DFP4SIM_RTL_COVERAGE=ON (Verilator --coverage-line --coverage-toggle in
#   every Verilated unit; the tests also collect functional coverpoint bins from every checked case),
#   runs tests/rtl's rtl_tests once, merges the counters with verilator_coverage and prints per unit
#   and per module: line (block and branch) coverage, toggle coverage over all signals and over the
#   datapath signals, and the functional bins hit. Writes into BUILDDIR/coverage:
#     summary.txt       what is printed
#     <unit>.dat        merged Verilator counters per unit, all.dat for every unit together
#     annotated/        verilator_coverage --annotate: the sources with counts (%000000 = never hit)
#     functional.txt    every functional bin with its count ("unit coverpoint.bin count")
#
# Usage: scripts/coverage.sh [BUILDDIR]        (default build-coverage)
#   FP4SIM_RTL_RANDOM=N   random cases per unit (default 100000, as in CI)
#   GTEST_FILTER=...      a subset of the tests (default: all of rtl_tests)
# Exit status: 0 when the tests pass (the coverage figures are reported, not enforced), 1 on a test
# failure, 2 when a tool is missing.
set -uo pipefail
cd "$(dirname "$0")/.."
B=${1:-build-coverage}
OUT=$B/coverage
for t in cmake verilator verilator_coverage python3; do
  command -v "$t" >/dev/null || { echo "coverage.sh: $t not found (scripts/setup.sh installs it)" >&2; exit 2; }
done

t0=$SECONDS
gen=()
[ -f "$B/CMakeCache.txt" ] || gen=(-G Ninja -DCMAKE_BUILD_TYPE=Release)
mkdir -p "$B"
cmake -S . -B "$B" "${gen[@]}" -DFP4SIM_RTL_COVERAGE=ON -DFP4SIM_SYSTEMC=OFF -DFP4SIM_CUDA=OFF \
  -DFP4SIM_BENCH=OFF >"$B/coverage_configure.log" 2>&1 || { cat "$B/coverage_configure.log"; exit 1; }
cmake --build "$B" -j"$(nproc)" --target rtl_tests || exit 1
t_build=$((SECONDS - t0))

rm -rf "$OUT"
mkdir -p "$OUT/raw"
t1=$SECONDS
export FP4SIM_RTL_RANDOM=${FP4SIM_RTL_RANDOM:-100000}
FP4SIM_RTL_COVERAGE_DIR=$PWD/$OUT/raw "$B/tests/rtl/rtl_tests" --gtest_filter="${GTEST_FILTER:-*}" \
  --gtest_brief=1 >"$OUT/rtl_tests.log" 2>&1
rc=$?
t_run=$((SECONDS - t1))
tail -n 3 "$OUT/rtl_tests.log"
[ $rc -eq 0 ] || echo "coverage.sh: rtl_tests FAILED (rc $rc, see $OUT/rtl_tests.log); figures below are from the partial run" >&2

# Merge: one .dat per unit (the driver writes <unit>.<pid>.dat), then all units together.
units=$(cd "$OUT/raw" && ls ./*.dat 2>/dev/null | sed 's|^\./||; s|\.[0-9]*\.dat$||' | sort -u)
[ -n "$units" ] || { echo "coverage.sh: no coverage data written" >&2; exit 1; }
for u in $units; do
  verilator_coverage --write "$OUT/$u.dat" "$OUT"/raw/"$u".*.dat >/dev/null || exit 1
done
verilator_coverage --write "$OUT/all.dat" "$OUT"/raw/*.dat >/dev/null || exit 1
verilator_coverage --annotate "$OUT/annotated" --annotate-min 1 "$OUT/all.dat" >"$OUT/annotate.log" 2>&1 || exit 1
cat "$OUT"/raw/functional.*.txt 2>/dev/null | sort >"$OUT/functional.txt"

python3 scripts/coverage_report.py "$OUT" $units | tee "$OUT/summary.txt"
{
  echo
  echo "run: FP4SIM_RTL_RANDOM=$FP4SIM_RTL_RANDOM, build $t_build s, tests $t_run s (rc $rc), $(nproc) cores"
} | tee -a "$OUT/summary.txt"
[ $rc -eq 0 ] || exit 1
