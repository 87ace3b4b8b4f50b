#!/usr/bin/env bash
# The main job on its embedded default: builds fp4sim if needed, then runs it.
# Today: quantize an embedded LLM-like tensor in every format and print a quality table.
# Extra arguments go to `fp4sim quality` (see `fp4sim quality --help`).
set -euo pipefail
cd "$(dirname "$0")/.."
if [ ! -x build/bin/fp4sim ]; then
  bash scripts/setup.sh
  GEN=(); command -v ninja >/dev/null 2>&1 && GEN=(-G Ninja)
  cmake -S . -B build "${GEN[@]}" -DCMAKE_BUILD_TYPE=Release >/dev/null
  cmake --build build -j "$(nproc)" --target fp4sim
fi
exec build/bin/fp4sim quality "$@"
