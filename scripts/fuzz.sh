#!/usr/bin/env bash
# Fuzzes the readers of untrusted files with libFuzzer under ASan + UBSan (leak checking on):
#   fuzz_npy           fp4sim::io::parse_npy
#   fuzz_manifest      a suite's manifest.json: read_manifest, verify_manifest, SuiteReader, check_suite
#   fuzz_suite_loader  one suite file replaced (its CRC updated): SuiteReader::load, check_suite
#   fuzz_suite_reader  the header-only fp4sim/suite_reader.hpp: .npy, JSON, manifest, a whole suite
# Usage: scripts/fuzz.sh [SECONDS]   (per target, default 60; JOBS targets at a time, default nproc).
# Builds with clang in build-fuzz/, seeds from tests/fuzz/corpus/<name>/ (committed;
# tests/fuzz/make_corpus.sh regenerates it), keeps what it finds in build-fuzz/corpus/<name>/.
# Exits non-zero on any crash, leak, timeout or sanitizer report; the input that triggered it is
# left in build-fuzz/artifacts/ (replay: build-fuzz/tests/fuzz/TARGET FILE).
set -euo pipefail
cd "$(dirname "$0")/.."
SECS=${1:-60}
case "$SECS" in '' | *[!0-9]*) echo "fuzz.sh: SECONDS must be a whole number, not '$SECS'" >&2; exit 2 ;; esac
B=build-fuzz
TARGETS=(fuzz_npy fuzz_manifest fuzz_suite_loader fuzz_suite_reader)
GEN=()
command -v ninja >/dev/null 2>&1 && GEN=(-G Ninja)

# Warnings are not errors here: clang's set differs from the g++ build that enforces them.
# -g1: line tables only, enough for file:line in the sanitizers' stack traces, at half the build
# time of -g.
CC=clang CXX=clang++ cmake -S . -B "$B" "${GEN[@]}" -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG="-O1 -g1" \
  -DFP4SIM_GOLDEN_ONLY=ON -DFP4SIM_SANITIZE=ON -DFP4SIM_FUZZ=ON -DFP4SIM_WERROR=OFF -DFP4SIM_BENCH=OFF >/dev/null
cmake --build "$B" -j "${JOBS:-$(nproc)}" --target "${TARGETS[@]}"

mkdir -p "$B/artifacts"
# One target per core at a time (libFuzzer is single-threaded): each still gets SECS of its own.
# Each job leaves its lines in $B/$t.result; they are printed in the targets' order.
fuzz_one() {  # target: exit 0 when it ran SECS without a finding
  local t=$1 name=${1#fuzz_}
  local log="$B/$t.log"
  mkdir -p "$B/corpus/$name"
  rm -f "$B/artifacts/$name-"*
  # -timeout: one input taking > 10 s is a finding; -rss_limit_mb: so is a runaway allocation.
  if ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
     "$B/tests/fuzz/$t" -max_total_time="$SECS" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
       -artifact_prefix="$B/artifacts/$name-" "$B/corpus/$name" "tests/fuzz/corpus/$name" >"$log" 2>&1; then
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
    echo "fuzz.sh: $t: 0 crashes, 0 leaks in ${runs:-?} inputs (${SECS} s); corpus $(ls "$B/corpus/$name" | wc -l) files"
  else
    echo "fuzz.sh: $t: FAILED: $(grep -m1 -E 'ERROR: (AddressSanitizer|LeakSanitizer|libFuzzer)|runtime error|deadly signal' "$log" || echo 'see log')"
    echo "fuzz.sh:   log $log; input: $(ls "$B/artifacts/$name-"* 2>/dev/null | tr '\n' ' ')"
    return 1
  fi
}
FJOBS=${JOBS:-$(nproc)}
for t in "${TARGETS[@]}"; do
  while [ "$(jobs -rp | wc -l)" -ge "$FJOBS" ]; do wait -n || true; done
  { fuzz_one "$t" || echo FAILED; } >"$B/$t.result" &
done
wait
fail=0
for t in "${TARGETS[@]}"; do
  grep -v '^FAILED$' "$B/$t.result" || true
  if grep -q '^FAILED$' "$B/$t.result"; then fail=1; fi
done
if [ "$fail" -ne 0 ]; then
  echo "fuzz.sh: findings above" >&2
  exit 1
fi
echo "fuzz.sh: ${#TARGETS[@]} targets, ${SECS} s each: 0 crashes, 0 leaks"
