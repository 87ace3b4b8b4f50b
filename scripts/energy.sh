#!/usr/bin/env bash
# Energy per operation of the mapped netlists (docs/area.md "Energy").
#
# For every unit: the mapped netlist of scripts/gatesim.sh (its own `netlist` function, read from
# gatesim.sh, so the netlist is the one gate-level simulation checks and area.sh measures; the same
# cache directory, so either script reuses the other's netlist), flattened to yosys JSON, then
# scripts/energy.py: operand streams of several data distributions quantized by golden (through the
# fp4sim CLI), simulated cycle by cycle on the netlist with toggles counted per net, and priced with
# the liberty's internal-power, pin-capacitance and leakage tables.
#
# Usage: scripts/energy.sh [--json FILE] [--out DIR] [--netlist-only] [UNIT...]
#   UNIT            names of area.sh's --json table (default: all)
#   --json FILE     write the results there (rtl/energy.json in the repository)
#   --out DIR       netlists and work files (default build-gatesim, shared with gatesim.sh)
#   --netlist-only  synthesize (or reuse) the netlists and their JSON, nothing else
# Environment: LIBERTY, SYNTH_TIMEOUT (s, default 1800), ENERGY_STREAM (the stream tool; default
#   build/tests/energy/energy_stream), ENERGY_INSTR (instructions per distribution, a multiple of
#   1024, default 2048).
# Exit status: 0 when every unit was measured, 1 otherwise.
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=build-gatesim
JSON=""
NETONLY=""
UNITS=()
while [ $# -gt 0 ]; do
  case "$1" in
    --json) [ -n "${2:-}" ] || { echo "energy.sh: --json needs a file name" >&2; exit 1; }; JSON=$2; shift 2 ;;
    --out) [ -n "${2:-}" ] || { echo "energy.sh: --out needs a directory" >&2; exit 1; }; OUT=$2; shift 2 ;;
    --netlist-only) NETONLY=1; shift ;;
    -*) echo "energy.sh: unknown option $1" >&2; exit 1 ;;
    *) UNITS+=("$1"); shift ;;
  esac
done
for t in yosys python3; do
  command -v $t >/dev/null || { echo "energy.sh: $t not found (scripts/setup.sh installs it)" >&2; exit 1; }
done
LIBERTY=${LIBERTY:-/usr/share/qflow/tech/osu018/osu018_stdcells.lib}
[ -f "$LIBERTY" ] || { echo "energy.sh: $LIBERTY not found (scripts/setup.sh installs qflow-tech-osu018)" >&2; exit 1; }
SYNTH_TIMEOUT=${SYNTH_TIMEOUT:-1800}

# area.sh's sources and top table, and gatesim.sh's netlist function, read from the scripts
# themselves: a change to either flow changes the netlists measured here too.
eval "$(sed -n '/^SV="/,/"$/p' scripts/area.sh)"
SV=$(echo $SV)
eval "$(sed -n '/^declare -A TOP=(/,/^)/p' scripts/area.sh)"
eval "$(sed -n '/^netlist() {/,/^}/p' scripts/gatesim.sh)"
eval "$(sed -n '/^hash_of() {/p' scripts/gatesim.sh)"
. scripts/synth_cells.sh
declare -F netlist >/dev/null && [ -n "$SV" ] && [ "${#TOP[@]}" -gt 0 ] \
  || { echo "energy.sh: cannot read SV / TOP from scripts/area.sh or netlist() from scripts/gatesim.sh" >&2; exit 1; }
ALL="hif4_pe nvfp4_pe64 nvfp4_pe64_fixed nvfp4_pts_mul bs_dot_k64_ue4m3_b16 bs_dot_k64_ue8m0_b32 bs_dot_k32"
[ ${#UNITS[@]} -gt 0 ] || UNITS=($ALL)
for u in "${UNITS[@]}"; do
  [ -n "${TOP[$u]:-}" ] || { echo "energy.sh: unknown unit $u (one of: $ALL)" >&2; exit 1; }
done
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)

# The netlist flattened (a hierarchical netlist too) into yosys JSON, the cells read as liberty
# black boxes so that every pin has its direction.
flat_json() {
  local dir=$1 module=$2
  if [ -f "$dir/netlist.json" ] && [ "$dir/netlist.json" -nt "$dir/netlist.v" ]; then return 0; fi
  yosys -q -l "$dir/flat.log" -p "read_liberty -lib $LIBERTY; read_verilog $dir/netlist.v;
      hierarchy -top $module; flatten; opt_clean; write_json $dir/netlist.json.partial" >/dev/null 2>&1 \
    || { echo "yosys could not flatten $dir/netlist.v, see $dir/flat.log"; return 1; }
  mv "$dir/netlist.json.partial" "$dir/netlist.json"
}

fails=0
done_units=()
for name in "${UNITS[@]}"; do
  module=${TOP[$name]%%|*}
  dir=$OUT/$name
  mkdir -p "$dir"
  if ! msg=$(netlist "$name" "$dir"); then
    echo "energy: $name FAIL (netlist: $msg)"; fails=$((fails + 1)); continue
  fi
  if ! msg=$(flat_json "$dir" "$module"); then
    echo "energy: $name FAIL ($msg)"; fails=$((fails + 1)); continue
  fi
  echo "energy: $name netlist ready ($(cat "$dir/synth.state"))"
  done_units+=("$name")
done
[ -n "$NETONLY" ] && { [ $fails -eq 0 ]; exit; }

# Operand streams (golden's quantizer and mma_dot) and the measurement.
STREAM=${ENERGY_STREAM:-build/tests/energy/energy_stream}
[ -x "$STREAM" ] || { echo "energy.sh: $STREAM not built (cmake --build build --target energy_stream)" >&2; exit 1; }
N=${ENERGY_INSTR:-2048}
DISTS="llm gaussian outlier sparse zeros"
measured=()
for name in "${done_units[@]}"; do
  module=${TOP[$name]%%|*}
  dir=$OUT/$name
  k=64
  case "$name" in bs_dot_k32) k=32 ;; nvfp4_pts_mul) k=1 ;; esac
  su=$name
  [ "$name" = nvfp4_pe64_fixed ] && su=nvfp4_pe64
  period=$(python3 -c "import json,sys; print(round(1000.0 / json.load(open('rtl/area.json'))[sys.argv[1]]['fmax_mhz'], 4))" "$name") \
    || { echo "energy: $name FAIL (no fmax_mhz in rtl/area.json)"; fails=$((fails + 1)); continue; }
  streams=()
  for d in $DISTS; do
    "$STREAM" "$su" "$d" "$N" 1 "$dir/$d.stream" || { echo "energy: $name FAIL (stream $d)"; fails=$((fails + 1)); continue 2; }
    streams+=("$dir/$d.stream")
  done
  if python3 scripts/energy.py measure --liberty "$LIBERTY" --netlist "$dir/netlist.json" --top "$module" \
      --period "$period" --k "$k" --out "$dir/energy.json" "${streams[@]}"; then
    measured+=("$name")
  else
    echo "energy: $name FAIL (measurement)"; fails=$((fails + 1))
  fi
done
if [ -n "$JSON" ] && [ ${#measured[@]} -gt 0 ]; then
  python3 scripts/energy.py report --liberty "$LIBERTY" "$OUT" "$JSON" "${measured[@]}" || fails=$((fails + 1))
fi
[ $fails -eq 0 ]
