#!/usr/bin/env bash
# The packages as a user gets them (docs/install.md, docs/python.md), run by scripts/test.sh after the
# main build:
#   1. pytest python/tests against the build tree's module (build/python), comparing with build/bin/fp4sim
#   2. cmake --install build into build/install; examples/cpp_consumer configured and built against
#      it (find_package), and once more with pkg-config alone; both run on a smoke suite
#   3. `pip install .` into a venv (build/venv, --no-build-isolation: the pinned build tools of
#      scripts/setup.sh, no network), which also installs the `fp4sim` command into the venv's bin/;
#      then, with only that venv's bin/ added to PATH and no FP4SIM_CLI, every code block of
#      docs/python.md and docs/vectors.md (python/tests/test_docs.py), examples/python/full_loop.py
#      and a short `fp4sim train` (table, JSON, PNG)
# Usage: scripts/package_check.sh [BUILD_DIR]   (default build; must be configured and built)
set -euo pipefail
cd "$(dirname "$0")/.."
B=${1:-build}
ROOT=$PWD
PY=${PYTHON:-python3}
CLI=$ROOT/$B/bin/fp4sim
t0=$(date +%s)

if ! ls "$B"/python/fp4sim/_core*.so >/dev/null 2>&1; then
  echo "package_check: $B has no Python module (FP4SIM_PYTHON: run scripts/setup.sh, reconfigure)" >&2
  exit 1
fi
# pytest exits 5 when it collects nothing: that is a failure here too (set -e).
FP4SIM_CLI=$CLI PYTHONPATH=$ROOT/$B/python "$PY" -m pytest -q -p no:cacheprovider python/tests

# A fresh prefix each time, so a file no longer installed cannot linger.
rm -rf "$B/install" "$B/consumer" "$B/pkg-suite"
cmake --install "$B" --prefix "$ROOT/$B/install" >/dev/null
"$CLI" vectors --suite smoke --out "$B/pkg-suite" >/dev/null
GEN=()
command -v ninja >/dev/null 2>&1 && GEN=(-G Ninja)
cmake -S examples/cpp_consumer -B "$B/consumer" "${GEN[@]}" -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_PREFIX_PATH="$ROOT/$B/install" -DCMAKE_CXX_FLAGS="-Wall -Wextra -Werror" >/dev/null
cmake --build "$B/consumer" >/dev/null
"$B/consumer/fp4sim_consumer" "$B/pkg-suite"
# pkg-config: the same program with nothing but the .pc file.
PKG_CONFIG_PATH=$ROOT/$B/install/lib/pkgconfig
export PKG_CONFIG_PATH
# shellcheck disable=SC2046  # word splitting of the flags is intended
"${CXX:-c++}" -std=c++20 -O1 -DFP4SIM_CONSUMER_SUITE_READER=1 examples/cpp_consumer/main.cpp \
  $(pkg-config --cflags --libs fp4sim) -o "$B/consumer/pc_consumer"
"$B/consumer/pc_consumer" >/dev/null
echo "package_check: cmake --install, find_package and pkg-config consumers OK"

# The documented `pip install .`, into a venv that sees the pinned packages of the interpreter.
[ -x "$B/venv/bin/python" ] || "$PY" -m venv --system-site-packages "$B/venv"
"$B/venv/bin/python" -m pip install --disable-pip-version-check --no-build-isolation -q .
(cd / && "$ROOT/$B/venv/bin/python" -c "import fp4sim; print('package_check: pip-installed fp4sim', fp4sim.__version__, 'from', fp4sim.__file__)")
# The user's view: the venv's bin/ on PATH, nothing pointing into the build tree. The command found
# must be the one pip installed, and the module imported the venv's.
(
  unset FP4SIM_CLI PYTHONPATH
  PATH=$ROOT/$B/venv/bin:$PATH
  export PATH
  found=$(command -v fp4sim || true)
  if [ "$found" != "$ROOT/$B/venv/bin/fp4sim" ]; then
    echo "package_check: pip install . did not install the fp4sim command into $B/venv/bin (found: ${found:-none})" >&2
    exit 1
  fi
  fp4sim --version
  cd /tmp
  python -c "import fp4sim, sys; sys.exit(0 if fp4sim.__file__.startswith('$ROOT/$B/venv/') else 'package_check: fp4sim imported from ' + fp4sim.__file__)"
  python -m pytest -q -p no:cacheprovider --rootdir "$ROOT/python/tests" "$ROOT/python/tests/test_docs.py"
  python "$ROOT/examples/python/full_loop.py"
  # `fp4sim train` from the venv (the command runs the venv's python3 beside it): a few steps of the
  # HiF4 paper recipe against the unquantized baseline, with its table, JSON and PNG.
  tdir=$(mktemp -d)
  fp4sim train --recipe hif4-paper --baseline --steps 4 --batch 2 --context 32 --layers 1 --d-model 64 --heads 2 \
    --corpus-bytes 262144 --eval-every 2 --eval-batches 1 --warmup 1 --out "$tdir" > "$tdir/table.txt"
  grep -q '^| hif4-paper ' "$tdir/table.txt"
  python -c "import json, sys; d = json.load(open(sys.argv[1])); assert [r['label'] for r in d['runs']] == ['none', 'hif4-paper']" "$tdir/train.json"
  [ "$(head -c 8 "$tdir/train.png" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ] || { echo "package_check: fp4sim train wrote no PNG" >&2; exit 1; }
  rm -rf "$tdir"
)
echo "package_check: all passed in $(( $(date +%s) - t0 )) s"
