#!/usr/bin/env bash
# The one prepared run for a lent GPU machine (issues 6 and 14): build the CUDA kernels, check them
# against golden on the device, benchmark them, replay the golden vector suites on --target gpu.
# Written for a fresh machine that runs one command of at most 600 s and hands back only what is
# written under $OUT: nothing here may waste that run.
#
#   scripts/gpu_check.sh [--quick] [--gpu-only] [--build-dir DIR] [--bin-dir DIR] [--deadline SECONDS]
#
#   --quick       fewer benchmark iterations and smaller shapes, the smoke suite only
#   --gpu-only    stop after the device tests and the benchmark (no fp4sim command line, no replays)
#   --build-dir   where the builds go (default build-gpu-check/; DIR/gpu-only and DIR/full)
#   --bin-dir     take gpu_device_tests and fp4sim_gpu_bench from an existing build directory
#                 (DIR/tests/gpu/, DIR/bin/) instead of building them
#   --deadline    seconds for the whole run (default 520, below the 540 s asked of it); every step
#                 gets what is left (less a reserve for the summary), capped per step
#
# Steps; a step that fails or times out prints the tail of its log, and the script goes on with
# whatever can still run:
#   1. the GPU-only targets (golden + sim/gpu: gpu_device_tests, fp4sim_gpu_bench) in a build of
#      their own (FP4SIM_GPU_ONLY=ON), first and independently of the rest of the project;
#   2. gpu_device_tests: every kernel, simple (QuantKernel Direct / Staged, GemmKernel Simple) and
#      tuned, against golden bit for bit, then the tuned kernels against the simple ones on larger
#      tensors on the device alone (docs/gpu.md). Exit 77 there means no usable CUDA device: the
#      script says so and exits 77 (nothing was run on a GPU); exit 1 with "FAIL: the CUDA module"
#      means the build's libfp4sim_gpu_cuda.so did not load (a failure, not a missing GPU);
#   3. fp4sim_gpu_bench: quantizers (simple and tuned) vs a device-to-device copy, the GEMM
#      emulation (tuned and simple) vs cuBLAS BF16 on random operands;
#   4. unless --gpu-only: a second build with the fp4sim command line (needs Boost 1.81,
#      nlohmann-json and GoogleTest; a bare GPU image lacks them and the step reports so),
#      gpu_hd_tests, and the vector suites replayed on --target gpu.
# Every build here has warnings as warnings (FP4SIM_WERROR=OFF: a compiler nobody tried may warn).
#
# Output, in $OUT if set (the lent machine's folder that comes back), else $OUT_DIR, else
# <build-dir>/out; two files, rewritten by each run:
#   summary.md    what ran, how long, the device test counts, the benchmark table, failed steps'
#                 log tails, the exit status; appended line by line, also printed on stdout
#   logs.tar.gz   every step's full log, refreshed after each step
# Exit status: 0 everything that ran passed; 1 a check failed or a needed build failed or timed
# out; 77 no usable CUDA device; 2 bad arguments.
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

QUICK=0
GPU_ONLY=0
BIN_DIR=""
BUILD_ROOT="$ROOT/build-gpu-check"
DEADLINE="${GPU_CHECK_DEADLINE:-520}"
while [ $# -gt 0 ]; do
  case "$1" in
    --quick) QUICK=1 ;;
    --gpu-only) GPU_ONLY=1 ;;
    --build-dir) BUILD_ROOT="${2:?--build-dir needs a directory}"; shift ;;
    --bin-dir) BIN_DIR="${2:?--bin-dir needs a directory}"; shift ;;
    --deadline) DEADLINE="${2:?--deadline needs seconds}"; shift ;;
    -h | --help) sed -n '2,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "gpu_check: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
  shift
done
case "$DEADLINE" in '' | *[!0-9]*) echo "gpu_check: --deadline takes whole seconds" >&2; exit 2 ;; esac
mkdir -p "$BUILD_ROOT" || exit 2
BUILD_ROOT="$(cd "$BUILD_ROOT" && pwd)"
[ -z "$BIN_DIR" ] || BIN_DIR="$(cd "$BIN_DIR" && pwd)" || exit 2

OUT_DIR="${OUT:-${OUT_DIR:-$BUILD_ROOT/out}}"
mkdir -p "$OUT_DIR" || exit 2
SUMMARY="$OUT_DIR/summary.md"
rm -f "$SUMMARY" "$OUT_DIR/logs.tar.gz"
WORK="$(mktemp -d "${TMPDIR:-/tmp}/gpu_check.XXXXXX")" || exit 2
LOGS="$WORK/logs"
mkdir -p "$LOGS"

T0=$SECONDS
RESERVE=15  # seconds kept back for the summary and the log tarball
JOBS="${JOBS:-$(nproc 2>/dev/null || echo 4)}"
command -v nvcc >/dev/null 2>&1 || export PATH="$PATH:/usr/local/cuda/bin"
GEN=()
KEEP_GOING=(-- -k)
if command -v ninja >/dev/null 2>&1; then
  GEN=(-G Ninja)
  KEEP_GOING=(-- -k 0)
fi

say() { printf '%s\n' "$*" | tee -a "$SUMMARY"; }
note() { say "- $*"; }
pack() {
  tar -czf "$WORK/logs.tar.gz" -C "$WORK" logs 2>/dev/null && cp -f "$WORK/logs.tar.gz" "$OUT_DIR/logs.tar.gz"
}
tail_of() {  # a log's first error (20 lines from it) and its last lines, fenced, into the summary and stdout
  [ -s "$1" ] || { say "  (log $(basename "$1") is empty)"; return; }
  local first
  first="$(grep -n -m1 -E 'FAILED:|[Ee]rror[: ]' "$1" | cut -d: -f1)"
  say '  ```'
  {
    if [ -n "$first" ] && [ "$(wc -l <"$1")" -gt $((first + 25)) ]; then
      sed -n "${first},$((first + 19))p" "$1"
      echo "[...]"
      tail -n 5 "$1"
    else
      tail -n 25 "$1"
    fi
  } | cut -c1-300 | sed 's/^/  /' | tee -a "$SUMMARY"
  say '  ```'
}
left() { echo $((DEADLINE - (SECONDS - T0))); }
limit() {  # seconds a step may take: what is left less the reserve, at most $1
  local b=$(($(left) - RESERVE))
  [ "$b" -gt "$1" ] && b=$1
  echo "$b"
}

# step NAME LIMIT CMD...: runs CMD with its output in $LOGS/NAME.log, under `timeout LIMIT`;
# sets STEP_RC (124: timed out or skipped for lack of time) and notes the result in the summary.
# A failed or timed-out step gets its log's tail (unless STEP_TAIL=0: the caller shows the log).
# Exit 77 is reported, not judged (the caller does).
STEP_RC=0
STEP_PID=""
step() {
  local name="$1" lim="$2" t rc
  shift 2
  local log="$LOGS/$name.log" show="${STEP_TAIL:-1}"
  if [ "$lim" -lt 5 ]; then
    note "$name: SKIPPED, out of time ($(left) s of the ${DEADLINE} s deadline left)"
    STEP_RC=124
    return
  fi
  echo "[gpu_check +$((SECONDS - T0))s] $name (limit $lim s)"
  t=$SECONDS
  # in the background and waited for, so that a TERM to this script is handled at once
  timeout -k 5 "$lim" "$@" >"$log" 2>&1 &
  STEP_PID=$!
  wait "$STEP_PID"
  rc=$?
  STEP_PID=""
  STEP_RC=$rc
  case "$rc" in
    0) note "$name: ok ($((SECONDS - t)) s)" ;;
    77) note "$name: exit 77 ($((SECONDS - t)) s)" ;;
    124 | 137)
      STEP_RC=124
      note "$name: TIMED OUT after $((SECONDS - t)) s (limit $lim s)$([ "$show" = 1 ] && echo '; log tail:')"
      [ "$show" = 1 ] && tail_of "$log"
      ;;
    *)
      note "$name: FAILED, exit $rc ($((SECONDS - t)) s)$([ "$show" = 1 ] && echo '; log tail:')"
      [ "$show" = 1 ] && tail_of "$log"
      ;;
  esac
  pack
}

STATUS=0  # 1 once something fails
finish() {
  local code="$1" why="$2"
  trap - TERM INT
  say ""
  say "## Result"
  say ""
  say "exit $code: $why ($((SECONDS - T0)) s of the ${DEADLINE} s deadline)"
  pack
  rm -rf "$WORK"
  exit "$code"
}
# shellcheck disable=SC2317  # called by the trap
on_signal() {
  [ -z "$STEP_PID" ] || kill -TERM "$STEP_PID" 2>/dev/null
  note "interrupted by a signal"
  finish 1 "interrupted"
}
trap on_signal TERM INT

# ---- header: what ran where ----
first_line() { "$@" 2>/dev/null | grep -m1 -v '^$' | cut -c1-160 || true; }
gpu_line="$(nvidia-smi --query-gpu=name,driver_version,memory.total,compute_cap --format=csv,noheader 2>/dev/null | head -n 1)"
commit="$(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)"
[ "$commit" = unknown ] || [ -z "$(git -C "$ROOT" status --porcelain -- sim/gpu tests/gpu golden scripts 2>/dev/null)" ] ||
  commit="$commit + local changes"
ARCH="${CUDA_ARCH:-}"
if [ -z "$ARCH" ]; then
  ARCH="$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -n 1 | tr -d '. ')"
  case "$ARCH" in '' | *[!0-9]*) ARCH=90 ;; esac
fi
mode="$([ "$QUICK" = 1 ] && echo quick || echo full)$([ "$GPU_ONLY" = 1 ] && echo ', gpu-only')"
say "# gpu_check $(date -u '+%Y-%m-%d %H:%M UTC')"
say ""
note "mode: $mode; deadline ${DEADLINE} s; sm_$ARCH; commit $commit"
note "GPU: ${gpu_line:-none found by nvidia-smi ($(command -v nvidia-smi >/dev/null && echo 'it answered nothing' || echo 'not installed'))}"
nvcc_ver="$(nvcc --version 2>/dev/null | grep -m1 -o 'release [0-9.]*')"
note "host: $(uname -m), $JOBS jobs; nvcc ${nvcc_ver:-not found}; $(first_line cmake --version); $(first_line "${CXX:-c++}" --version)"
say ""
say "## Steps"
say ""

# ---- 1. the GPU-only targets ----
if [ -n "$BIN_DIR" ]; then
  DEV="$BIN_DIR/tests/gpu/gpu_device_tests"
  BENCH="$BIN_DIR/bin/fp4sim_gpu_bench"
  note "GPU-only targets taken from $BIN_DIR (--bin-dir), not built"
else
  GB="$BUILD_ROOT/gpu-only"
  DEV="$GB/tests/gpu/gpu_device_tests"
  BENCH="$GB/bin/fp4sim_gpu_bench"
  cfg=(cmake -S "$ROOT" -B "$GB" "${GEN[@]}" -DCMAKE_BUILD_TYPE=Release -DFP4SIM_GPU_ONLY=ON -DFP4SIM_CUDA=ON
    -DFP4SIM_WERROR=OFF -DCMAKE_CUDA_ARCHITECTURES="$ARCH")
  step configure-gpu-only "$(limit 200)" "${cfg[@]}"
  if [ "$STEP_RC" != 0 ] && [ "$STEP_RC" != 124 ] && [ -f "$GB/CMakeCache.txt" ]; then
    note "retrying in an empty build directory (a stale cache can fail a configure)"
    rm -rf "$GB"
    step configure-gpu-only-fresh "$(limit 200)" "${cfg[@]}"
  fi
  if [ "$STEP_RC" = 0 ]; then
    rm -f "$DEV" "$BENCH"  # a failed build must not leave an older binary to run
    step build-gpu-only "$(limit 360)" cmake --build "$GB" -j"$JOBS" --target gpu_device_tests fp4sim_gpu_bench "${KEEP_GOING[@]}"
    [ "$STEP_RC" = 0 ] || STATUS=1
    grep -m1 -q 'cuBLAS BF16 reference in fp4sim_gpu_bench OFF' "$LOGS"/configure-gpu-only*.log 2>/dev/null &&
      note "cuBLAS not found: the benchmark has no BF16 reference"
  else
    STATUS=1
  fi
fi
for b in "$DEV" "$BENCH"; do
  [ -x "$b" ] || { note "$(basename "$b"): not available ($b missing)"; STATUS=1; }
done

# ---- 2. kernels vs golden on the device ----
NO_GPU=""
if [ -x "$DEV" ]; then
  STEP_TAIL=0 step device-tests "$(limit "$([ "$QUICK" = 1 ] && echo 120 || echo 180)")" "$DEV"
  grep -E '^(device:|quantizers|gemm:|FAIL|SKIP|[0-9]+ checks)' "$LOGS/device-tests.log" 2>/dev/null | head -n 30 |
    cut -c1-300 | sed 's/^/  /' | tee -a "$SUMMARY"
  case "$STEP_RC" in
    0) ;;
    77) NO_GPU="$(grep -m1 '^SKIP' "$LOGS/device-tests.log" | sed 's/^SKIP: GPU kernels not run: //')" ;;
    *) STATUS=1 ;;
  esac
fi
if [ -z "$NO_GPU" ] && [ ! -x "$DEV" ] && [ -x "$BENCH" ]; then
  # no device test to ask: the benchmark answers 77 as well
  "$BENCH" --deadline 0 >"$LOGS/bench-probe.log" 2>&1
  [ $? = 77 ] && NO_GPU="$(sed -n 's/^SKIP: //p' "$LOGS/bench-probe.log" | head -n 1)"
fi
if [ -n "$NO_GPU" ]; then
  case "$NO_GPU" in *"no usable CUDA device"*) ;; *) NO_GPU="no usable CUDA device: $NO_GPU" ;; esac
  note "$NO_GPU"
  finish 77 "$NO_GPU; nothing was run on a GPU"
fi

# ---- 3. benchmark ----
if [ -x "$BENCH" ]; then
  lim="$(limit "$([ "$QUICK" = 1 ] && echo 120 || echo 240)")"
  qarg=()
  [ "$QUICK" = 1 ] && qarg=(--quick)
  # the benchmark stops starting measurements well before the kill, so its last rows are kept
  STEP_TAIL=0 step benchmark "$lim" "$BENCH" "${qarg[@]}" --deadline $((lim * 2 / 3))
  [ "$STEP_RC" = 0 ] || STATUS=1
  if [ -s "$LOGS/benchmark.log" ]; then
    say ""
    head -n 90 "$LOGS/benchmark.log" | cut -c1-300 | tee -a "$SUMMARY"
    say ""
  fi
fi

# ---- 4. the command line: host-arithmetic tests and the replays ----
if [ "$GPU_ONLY" = 0 ]; then
  FB="$BUILD_ROOT/full"
  step configure-full "$(limit 150)" cmake -S "$ROOT" -B "$FB" "${GEN[@]}" -DCMAKE_BUILD_TYPE=Release \
    -DFP4SIM_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES="$ARCH" -DFP4SIM_WERROR=OFF -DFP4SIM_SYSTEMC=OFF \
    -DFP4SIM_VERILATOR=OFF -DFP4SIM_BENCH=OFF -DFP4SIM_MPI=OFF
  if [ "$STEP_RC" = 124 ]; then
    note "replays and gpu_hd_tests not run: out of time"
  elif [ "$STEP_RC" != 0 ]; then
    # expected on a bare GPU image (no Boost 1.81 / nlohmann-json / GoogleTest): not counted as a failure
    note "no fp4sim command line here (its configure failed, as expected where Boost 1.81, nlohmann-json or GoogleTest is missing; not counted as a failure): replays and gpu_hd_tests not run"
  else
    rm -f "$FB/bin/fp4sim" "$FB/tests/gpu/gpu_hd_tests"
    step build-full "$(limit 300)" cmake --build "$FB" -j"$JOBS" --target fp4sim gpu_hd_tests "${KEEP_GOING[@]}"
    [ "$STEP_RC" = 0 ] || STATUS=1
    if [ -x "$FB/tests/gpu/gpu_hd_tests" ]; then
      step gpu-hd-tests "$(limit 120)" "$FB/tests/gpu/gpu_hd_tests" --gtest_brief=1
      [ "$STEP_RC" = 0 ] || STATUS=1
    fi
    if [ -x "$FB/bin/fp4sim" ]; then
      suites="smoke corners random"
      [ "$QUICK" = 1 ] && suites="smoke"
      for s in $suites; do
        dir="$WORK/suite-$s"
        step "vectors-$s" "$(limit 90)" "$FB/bin/fp4sim" vectors --suite "$s" --out "$dir" --seed 1
        [ "$STEP_RC" = 0 ] || { STATUS=1; continue; }
        step "replay-$s" "$(limit 120)" "$FB/bin/fp4sim" replay "$dir" --target gpu
        if [ "$STEP_RC" = 0 ]; then say "  $(tail -n 1 "$LOGS/replay-$s.log" | cut -c1-300)"; else STATUS=1; fi
        rm -rf "$dir"
      done
    else
      note "fp4sim not built: replays not run"
    fi
  fi
fi

if [ "$STATUS" = 0 ]; then
  finish 0 "every step that ran passed (copy the table, the GPU and the date into docs/performance.md)"
else
  finish 1 "a step failed or could not run (see above and logs.tar.gz)"
fi
