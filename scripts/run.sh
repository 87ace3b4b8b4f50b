#!/usr/bin/env bash
# The main job on its embedded default: builds fp4sim if needed, then runs `fp4sim run`: an
# LLM-like linear layer quantized by the golden library, run on the SystemC tensor-core (NVFP4,
# MXFP4) and cube (HiF4) models, checked bit for bit against golden; writes out/report.{json,md}
# and out/vectors, replacing an earlier out/ (--force: run.sh is meant to be run again and again).
# Extra arguments go to `fp4sim run` (see `fp4sim run --help`); `fp4sim quality` prints the
# per-format quantization quality table.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ ! -x build/bin/fp4sim ]; then
  bash scripts/setup.sh
  GEN=(); command -v ninja >/dev/null 2>&1 && GEN=(-G Ninja)
  cmake -S . -B build "${GEN[@]}" -DCMAKE_BUILD_TYPE=Release >/dev/null
  cmake --build build -j "$(nproc)" --target fp4sim
fi
FORCE=(--force)
for a in "$@"; do [ "$a" = --force ] && FORCE=(); done
exec build/bin/fp4sim run "${FORCE[@]}" "$@"
