#!/usr/bin/env bash
# GPU check (issue 6): build with CUDA, run the kernel-vs-golden test, replay the smoke, corners and
# random golden vector suites on the GPU target, and benchmark. Meant for a machine with an NVIDIA
# GPU (target: H200, sm_90); budget < 8 minutes. Results go to $OUT_DIR (default ./gpu-check-out).
#   scripts/gpu_check.sh [BUILD_DIR]
# Exit status: 0 all passed, 1 a check failed, 77 no GPU present (nothing was run on a GPU).
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
BUILD="${1:-$ROOT/build-gpu-check}"
OUT_DIR="${OUT_DIR:-$PWD/gpu-check-out}"
JOBS="${JOBS:-$(nproc)}"
mkdir -p "$OUT_DIR"
log() { echo "[gpu_check $(date +%H:%M:%S)] $*" | tee -a "$OUT_DIR/summary.txt"; }
export PATH="$PATH:/usr/local/cuda/bin"

log "start; $(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null || echo 'nvidia-smi unavailable')"
ARCH="${CUDA_ARCH:-90}"
# Only what the check needs: no RTL / SystemC / benchmarks of other parts. The fp4sim command line
# (for the replays) and gpu_hd_tests need Boost, nlohmann-json and GoogleTest; a bare GPU image may
# have none of them, and then the FP4SIM_GPU_ONLY build still runs the device test and the benchmark.
FULL=1
if ! timeout 240 cmake -S "$ROOT" -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release -DFP4SIM_CUDA=ON \
  -DCMAKE_CUDA_ARCHITECTURES="$ARCH" -DFP4SIM_SYSTEMC=OFF -DFP4SIM_VERILATOR=OFF -DFP4SIM_BENCH=OFF \
  > "$OUT_DIR/configure.log" 2>&1; then
  FULL=0
  log "full configure failed ($(grep -m1 -iE 'could not find|error' "$OUT_DIR/configure.log" | cut -c1-160)); GPU-only build, no replays"
  rm -rf "$BUILD"
  timeout 240 cmake -S "$ROOT" -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release -DFP4SIM_CUDA=ON \
    -DCMAKE_CUDA_ARCHITECTURES="$ARCH" -DFP4SIM_GPU_ONLY=ON > "$OUT_DIR/configure-gpu-only.log" 2>&1
fi
targets="gpu_device_tests fp4sim_gpu_bench"
[ "$FULL" = 1 ] && targets="$targets fp4sim gpu_hd_tests"
timeout 300 cmake --build "$BUILD" -j"$JOBS" --target $targets > "$OUT_DIR/build.log" 2>&1
log "build done (full=$FULL)"

status=0
set +e
"$BUILD/tests/gpu/gpu_device_tests" > "$OUT_DIR/device_tests.txt" 2>&1
rc=$?
set -e
tail -n 3 "$OUT_DIR/device_tests.txt" | tee -a "$OUT_DIR/summary.txt"
if [ "$rc" = 77 ]; then log "no GPU: nothing was run on a GPU"; exit 77; fi
[ "$rc" = 0 ] || status=1
log "kernel tests rc=$rc"
if [ "$FULL" = 1 ]; then
  "$BUILD/tests/gpu/gpu_hd_tests" --gtest_brief=1 > "$OUT_DIR/hd_tests.txt" 2>&1 || status=1
  log "host-arithmetic tests done"
fi

FP4SIM="$BUILD/bin/fp4sim"
[ "$FULL" = 1 ] || log "replays skipped: no fp4sim command line in a GPU-only build"
for suite in smoke corners random; do
  [ "$FULL" = 1 ] || break
  dir="$OUT_DIR/suite-$suite"
  rm -rf "$dir"
  timeout 120 "$FP4SIM" vectors --suite "$suite" --out "$dir" --seed 1 > "$OUT_DIR/vectors-$suite.txt" 2>&1 || { log "vectors $suite FAILED"; status=1; continue; }
  if timeout 120 "$FP4SIM" replay "$dir" --target gpu > "$OUT_DIR/replay-$suite.txt" 2>&1; then
    log "replay $suite on gpu: $(tail -n 1 "$OUT_DIR/replay-$suite.txt")"
  else
    log "replay $suite on gpu FAILED: $(tail -n 2 "$OUT_DIR/replay-$suite.txt" | tr '\n' ' ')"
    status=1
  fi
done

timeout 150 "$BUILD/bin/fp4sim_gpu_bench" > "$OUT_DIR/bench.md" 2>&1 || { log "benchmark FAILED"; status=1; }
cat "$OUT_DIR/bench.md" | tee -a "$OUT_DIR/summary.txt"
log "done, status $status (copy bench.md, the GPU and the date into docs/performance.md)"
exit $status
