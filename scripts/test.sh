#!/usr/bin/env bash
# Setup, configure, build and run every test: the command CI runs (.ci/run).
#   build/        Release, warnings as errors, everything the machine supports
#   build-asan/   the golden library, sim/'s readers and CLI (.npy, manifests, suites, check) and their
#                 tests under AddressSanitizer + UndefinedBehaviorSanitizer
#   build-fuzz/   the readers' libFuzzer targets (clang, ASan + UBSan), a short pass (scripts/fuzz.sh)
set -euo pipefail
cd "$(dirname "$0")/.."
JOBS=${JOBS:-$(nproc)}
GEN=()
command -v ninja >/dev/null 2>&1 && GEN=(-G Ninja)

bash scripts/setup.sh

start=$(date +%s)
mark=$start
phase() {  # one line per phase, so that CI's log says where the time goes
  local now
  now=$(date +%s)
  echo "test.sh: $1 took $((now - mark)) s"
  mark=$now
}
cmake -S . -B build "${GEN[@]}" -DCMAKE_BUILD_TYPE=Release
cmake --build build -j "$JOBS"
phase "the Release build"
ctest --test-dir build --output-on-failure -j "$JOBS"
phase "the Release tests"
# The Python package and the installed C++ package: pytest, cmake --install + examples/cpp_consumer
# (find_package and pkg-config), pip install . into build/venv + examples/python/full_loop.py.
bash scripts/package_check.sh build
phase "the package check"
# The mutation score of the default suites (docs/mutation.md): the independent reference kernel of
# tests/mutants must pass every suite, and fp4sim check must catch every one of its planted bugs.
FP4SIM_CLI=build/bin/fp4sim python3 -m pytest -q tests/mutants
python3 tests/mutants/run_mutants.py --fp4sim build/bin/fp4sim --jobs "$JOBS"
phase "the mutation score"


# -g1 (line tables): stack traces keep file:line, and this build takes less than half the time it
# takes with -g (docs/performance.md, "Build and test time").
cmake -S . -B build-asan "${GEN[@]}" -DCMAKE_BUILD_TYPE=Debug -DFP4SIM_SANITIZE=ON -DFP4SIM_GOLDEN_ONLY=ON \
  -DCMAKE_CXX_FLAGS_DEBUG="-O1 -g1"
cmake --build build-asan -j "$JOBS"
phase "the ASan+UBSan build"
ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
  ctest --test-dir build-asan --output-on-failure -j "$JOBS"
phase "the ASan+UBSan tests"
# A short fuzz pass over the readers: 4 targets x FUZZ_SECONDS (default 45), 0 crashes and 0 leaks.
bash scripts/fuzz.sh "${FUZZ_SECONDS:-45}"
phase "the fuzz build and pass"
echo "test.sh: all tests passed in $(( $(date +%s) - start )) s (after setup)"
