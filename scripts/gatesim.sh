#!/usr/bin/env bash
# Gate-level simulation of the mapped netlists (docs/rtl.md "Gate-level simulation").
#
# For every unit: the netlist of scripts/area.sh's cell-library flow (the same sources, chparam,
# yosys commands and OSU 0.18 um liberty; the same top table, read from area.sh), Verilog models of
# the cells it uses generated from the liberty (scripts/liberty_cells.py), both Verilated together
# under the unit's RTL tests: the C++ driver of rtl/driver (rtl_driver.cpp, unchanged, compiled
# through rtl/gatesim/gate_driver.cpp) sees the netlist model in place of the RTL model
# (rtl/gatesim/alias.h.in), and the tests of tests/rtl
# (unchanged) check it bit for bit against golden: every corner case they hold plus 10^5 seeded
# random instructions per unit. One line per unit: PASS / FAIL with the counts.
#
# Usage: scripts/gatesim.sh [--plant] [--out DIR] [UNIT...]
#   UNIT       names of area.sh's --json table (default: all): hif4_pe nvfp4_pe64 nvfp4_pe64_fixed
#              nvfp4_pts_mul bs_dot_k64_ue4m3_b16 bs_dot_k64_ue8m0_b32 bs_dot_k32
#   --plant    a planted defect: one gate of the netlist changed (the middle AND2X2 instance becomes
#              an OR2X2, same pins); the unit's line must then say FAIL
#   --out DIR  netlists, cell models, builds and logs (default build-gatesim); reruns reuse the
#              netlist while its inputs' hash is unchanged, and Verilator's build while its inputs are
# Environment: GATESIM_RANDOM (random instructions per unit, default 100000), GATESIM_GOLDEN_LIB
#   (a built libfp4sim_golden.a; default: built here in DIR/golden), LIBERTY, SYNTH_TIMEOUT (s,
#   default 1800), JOBS (compile jobs, default 2), GATESIM_GTEST (GoogleTest's gtest_main and gtest
#   libraries; default -lgtest_main -lgtest), GATESIM_OPT (C++ optimization of the netlist model,
#   default -O0).
# Exit status: 0 when every unit passed, 1 when one failed or a step could not run.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
OUT=build-gatesim
PLANT=""
UNITS=()
while [ $# -gt 0 ]; do
  case "$1" in
    --plant) PLANT=1; shift ;;
    --out) [ -n "${2:-}" ] || { echo "gatesim.sh: --out needs a directory" >&2; exit 1; }; OUT=$2; shift 2 ;;
    -*) echo "gatesim.sh: unknown option $1" >&2; exit 1 ;;
    *) UNITS+=("$1"); shift ;;
  esac
done
for t in yosys verilator python3; do
  command -v $t >/dev/null || { echo "gatesim.sh: $t not found (scripts/setup.sh installs it)" >&2; exit 1; }
done
LIBERTY=${LIBERTY:-/usr/share/qflow/tech/osu018/osu018_stdcells.lib}
[ -f "$LIBERTY" ] || { echo "gatesim.sh: $LIBERTY not found (scripts/setup.sh installs qflow-tech-osu018)" >&2; exit 1; }
RANDOM_N=${GATESIM_RANDOM:-100000}
[[ "$RANDOM_N" =~ ^[0-9]+$ ]] || { echo "gatesim.sh: GATESIM_RANDOM must be a number" >&2; exit 1; }
SYNTH_TIMEOUT=${SYNTH_TIMEOUT:-1800}
JOBS=${JOBS:-2}
OPT=${GATESIM_OPT:--O0}

# area.sh's source list and top table, taken from area.sh itself so that the netlists here are the
# ones rtl/area.json describes.
eval "$(sed -n '/^SV="/,/"$/p' scripts/area.sh)"
SV=$(echo $SV)
eval "$(sed -n '/^declare -A TOP=(/,/^)/p' scripts/area.sh)"
[ -n "$SV" ] && [ "${#TOP[@]}" -gt 0 ] || { echo "gatesim.sh: cannot read SV / TOP from scripts/area.sh" >&2; exit 1; }
ALL="hif4_pe nvfp4_pe64 nvfp4_pe64_fixed nvfp4_pts_mul bs_dot_k64_ue4m3_b16 bs_dot_k64_ue8m0_b32 bs_dot_k32"
[ ${#UNITS[@]} -gt 0 ] || UNITS=($ALL)
for u in "${UNITS[@]}"; do
  [ -n "${TOP[$u]:-}" ] || { echo "gatesim.sh: unknown unit $u (one of: $ALL)" >&2; exit 1; }
done
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)

# Which tests of tests/rtl check a unit, and the driver's unit name it runs as (the netlist model
# stands in for that unit's RTL model; the tests of other units are filtered out).
tests_of() {
  case "$1" in
    hif4_pe) echo "test_rtl_hif4.cpp test_rtl_cancel.cpp|RtlHif4.*:RtlCancel.Hif4*" ;;
    nvfp4_pe64|nvfp4_pe64_fixed)
      echo "test_rtl_fp4.cpp test_rtl_cancel.cpp|Units/RtlFp4.*/nvfp4_pe64:RtlCancel.Nvfp4Pe64*" ;;
    bs_dot_k64_ue4m3_b16|bs_dot_k64_ue8m0_b32) echo "test_rtl_fp4.cpp|Units/RtlFp4.*/$1" ;;
    bs_dot_k32) echo "test_rtl_k32.cpp|RtlK32.*" ;;
    nvfp4_pts_mul) echo "test_rtl_pts.cpp|RtlPts.*" ;;
  esac
}

# Golden, for the tests' reference results.
GOLDEN_LIB=${GATESIM_GOLDEN_LIB:-}
if [ -z "$GOLDEN_LIB" ]; then
  GOLDEN_LIB=$OUT/golden/golden/libfp4sim_golden.a
  if [ ! -f "$OUT/golden/build.ninja" ]; then
    cmake -S . -B "$OUT/golden" -G Ninja -DCMAKE_BUILD_TYPE=Release -DFP4SIM_GOLDEN_ONLY=ON -DFP4SIM_BENCH=OFF \
      >"$OUT/golden.log" 2>&1 || { echo "gatesim.sh: configuring golden failed, see $OUT/golden.log" >&2; exit 1; }
  fi
  ninja -C "$OUT/golden" -j "$JOBS" fp4sim_golden >>"$OUT/golden.log" 2>&1 \
    || { echo "gatesim.sh: building golden failed, see $OUT/golden.log" >&2; exit 1; }
fi
[ -f "$GOLDEN_LIB" ] || { echo "gatesim.sh: $GOLDEN_LIB not found" >&2; exit 1; }

hash_of() { cat "$@" | sha256sum | cut -c1-16; }

# The netlist of one unit: area.sh's yosys script (scripts/synth_cells.sh).
. scripts/synth_cells.sh
netlist() {
  local name=$1 dir=$2 module=${TOP[$1]%%|*} params=${TOP[$1]#*|}
  local script
  script=$(cells_script $module "$params" $dir/abc.constr $dir/stat.txt $dir/netlist.v.partial)
  local key
  key=$( (echo "$script"; cat $SV "$LIBERTY") | sha256sum | cut -c1-16)
  if [ -f "$dir/netlist.v" ] && [ "$(cat "$dir/netlist.key" 2>/dev/null)" = "$key" ]; then
    echo cached > "$dir/synth.state"
    return 0
  fi
  echo fresh > "$dir/synth.state"
  rm -f "$dir/netlist.v" "$dir/netlist.key"
  cells_constr "$dir/abc.constr" || return 1
  local t0=$SECONDS rc=0
  timeout "$SYNTH_TIMEOUT" yosys -q -l "$dir/yosys.log" -p "$script" >/dev/null 2>&1 || rc=$?
  if [ $rc -ne 0 ]; then
    echo "yosys failed (exit $rc; 124: over SYNTH_TIMEOUT=$SYNTH_TIMEOUT s), see $dir/yosys.log"
    return 1
  fi
  mv "$dir/netlist.v.partial" "$dir/netlist.v"
  echo "$key" > "$dir/netlist.key"
  echo $((SECONDS - t0)) > "$dir/synth.time"
}

# The same numbers as rtl/area.json's entry? (cells and um^2; a difference means the RTL or the
# flow changed since area.json was written, or another yosys.)
area_note() {
  python3 - "$1" "$2/stat.txt" <<'PY'
import json, re, sys
name, stat = sys.argv[1], open(sys.argv[2]).read()
cells = int(re.findall(r"Number of cells:\s+(\d+)", stat)[-1])
area = float(re.findall(r"Chip area for module .*?:\s+([\d.]+)", stat)[-1])
ref = json.load(open("rtl/area.json")).get(name, {})
same = ref.get("cells") == cells and abs(ref.get("area_um2", -1) - area) < 0.5
print(f"{cells} cells, {area:.0f} um^2, {'as' if same else 'NOT as'} rtl/area.json")
PY
}

# Planted defect: the middle AND2X2 instance of the netlist becomes an OR2X2 (same pins A, B, Y).
plant() {
  python3 - "$1" "$2" <<'PY'
import re, sys
src, dst = sys.argv[1], sys.argv[2]
text = open(src).read()
hits = [m for m in re.finditer(r"^(\s*)AND2X2(\s+)(\S+)", text, flags=re.M)]
if not hits:
    sys.exit("gatesim.sh: --plant: the netlist has no AND2X2 instance")
m = hits[len(hits) // 2]
open(dst, "w").write(text[:m.start()] + m.group(1) + "OR2X2" + m.group(2) + m.group(3) + text[m.end():])
print(f"{m.group(3)} (AND2X2 instance {len(hits) // 2 + 1} of {len(hits)}) -> OR2X2")
PY
}

# The generated cell models against yosys' own reading of the liberty (read_liberty, an independent
# parser of the same function / ff strings): one equivalence miter per cell, proven with SAT
# (combinational cells) or induction after async2sync (flip-flops). Tri-state cells are not checked
# (yosys models Z its own way); the units use none.
check_cells() {
  local models=$1 log=$2 s="read_liberty $LIBERTY;" c checked=""
  for c in $(grep -o '^module \w*' "$models" | cut -d' ' -f2); do
    sed -n "/^module $c /,/^endmodule/p" "$models" | grep -q "1'bz" || checked="$checked $c"
  done
  # Every liberty cell renamed first: the generated models take the plain names.
  for c in $(grep -oE '^\s*cell\s*\(\s*"?\w+' "$LIBERTY" | grep -oE '\w+$'); do s="$s rename $c L_$c;"; done
  s="$s read_verilog -sv $models; proc; async2sync;"
  for c in $checked; do s="$s miter -equiv -flatten -make_assert -ignore_gold_x L_$c $c m_$c;"; done
  s="$s flatten; opt_clean;"
  for c in $checked; do s="$s sat -verify -prove-asserts -tempinduct -set-init-zero -seq 1 m_$c;"; done
  yosys -q -l "$log" -p "$s" >/dev/null 2>&1
}

fails=0
for name in "${UNITS[@]}"; do
  module=${TOP[$name]%%|*}
  dir=$OUT/$name
  mkdir -p "$dir"
  tag=$name sfx=""
  if [ -n "$PLANT" ]; then tag="$name+plant" sfx=_plant; fi
  if ! msg=$(netlist "$name" "$dir"); then
    echo "gatesim: $tag FAIL (netlist: $msg)"; fails=$((fails + 1)); continue
  fi
  note=$(area_note "$name" "$dir")
  net=$dir/netlist.v
  obj=$dir/obj
  planted=""
  if [ -n "$PLANT" ]; then
    planted=$(plant "$dir/netlist.v" "$dir/netlist_planted.new.v") || { echo "gatesim: $tag FAIL (plant)"; fails=$((fails + 1)); continue; }
    if cmp -s "$dir/netlist_planted.new.v" "$dir/netlist_planted.v"; then rm "$dir/netlist_planted.new.v"; else mv "$dir/netlist_planted.new.v" "$dir/netlist_planted.v"; fi
    net=$dir/netlist_planted.v
    obj=$dir/obj_plant
    # Start from the clean build's objects (dates kept): only the netlist's model is recompiled.
    if [ ! -d "$obj" ] && [ -d "$dir/obj" ]; then cp -a "$dir/obj" "$obj"; fi
  fi
  if ! msg=$(python3 scripts/liberty_cells.py "$LIBERTY" "$dir/cells.new.v" --used "$dir/netlist.v" 2>&1); then
    echo "gatesim: $tag FAIL (cell models: $msg)"; fails=$((fails + 1)); continue
  fi
  # Rewritten only when changed: Verilator's build is reused while its inputs keep their dates.
  if cmp -s "$dir/cells.new.v" "$dir/cells.v"; then rm "$dir/cells.new.v"; else mv "$dir/cells.new.v" "$dir/cells.v"; fi
  ncells=$(grep -c '^module ' "$dir/cells.v")
  check_cells "$dir/cells.v" "$dir/cells_check.log" \
    || { echo "gatesim: $tag FAIL (cell models differ from yosys' reading of the liberty, see $dir/cells_check.log)"; fails=$((fails + 1)); continue; }
  IFS='|' read -r tfiles filter <<<"$(tests_of "$name")"
  # The driver includes one header per unit (V<unit>.h); each here names the netlist model.
  mkdir -p "$obj/alias"
  for v in bs_dot_k64_ue4m3_b16 bs_dot_k64_ue8m0_b32 bs_dot_k64_ue8m0_b16 bs_dot_k64_ue4m3_b32 bs_dot_k32 \
           hif4_pe nvfp4_pe64 nvfp4_pts_mul; do
    sed "s/@NAME@/V$v/g" rtl/gatesim/alias.h.in > "$obj/alias/V$v.h.new"
    if cmp -s "$obj/alias/V$v.h.new" "$obj/alias/V$v.h"; then rm "$obj/alias/V$v.h.new"; else mv "$obj/alias/V$v.h.new" "$obj/alias/V$v.h"; fi
  done
  srcs=()
  for f in $tfiles; do srcs+=("$ROOT/tests/rtl/$f"); done
  [ "$name" = nvfp4_pts_mul ] || srcs+=("$ROOT/rtl/gatesim/gate_driver.cpp")
  # The netlist model's C++ at $OPT (default -O0): its eval is one long straight-line function that
  # compiles several times faster than at -O1 and still runs the tests in seconds to minutes. No
  # Verilator warning about the netlist (yosys' names, unused cell outputs) is fatal; the tests decide.
  vcmd=(verilator --cc --exe --build -j "$JOBS" -Mdir "$obj" --prefix Vgate --top-module "$module"
      -O3 --x-assign fast --x-initial unique --no-assert -Wno-fatal -Wno-lint -Wno-style
      -MAKEFLAGS "OPT_FAST=$OPT OPT_SLOW=-O0 OPT_GLOBAL=-O1"
      -CFLAGS "-std=c++20 -O1 -I$obj/alias -I$ROOT/rtl/driver -I$ROOT/tests/rtl -I$ROOT/golden/include -I$ROOT/models/include"
      -LDFLAGS "$GOLDEN_LIB ${GATESIM_GTEST:--lgtest_main -lgtest} -pthread"
      "$dir/cells.v" "$net" "${srcs[@]}" -o gatesim_tests)
  # make does not see changed flags: another command line starts the objects afresh.
  if [ "$(cat "$obj/gatesim.cmd" 2>/dev/null)" != "${vcmd[*]}" ]; then
    find "$obj" -maxdepth 1 -name '*.o' -delete
  fi
  t0=$SECONDS
  if ! "${vcmd[@]}" >"$dir/build$sfx.log" 2>&1; then
    rm -f "$obj/gatesim.cmd"
    echo "gatesim: $tag FAIL (Verilator build failed, see $dir/build$sfx.log)"; fails=$((fails + 1)); continue
  fi
  echo "${vcmd[*]}" > "$obj/gatesim.cmd"
  tb=$((SECONDS - t0))
  t0=$SECONDS
  log=$dir/run$sfx.log
  rc=0
  FP4SIM_RTL_RANDOM=$RANDOM_N "$obj/gatesim_tests" --gtest_filter="$filter" >"$log" 2>&1 || rc=$?
  tr=$((SECONDS - t0))
  # Counts: the Checker's "[ rtl ] what: N cases checked" lines and its mismatch reports; the
  # nvfp4_pts_mul test streams its own cases (3600 boundary pairs + 200000 random, see its source).
  read -r checked mism tests_ok tests_all <<<"$(python3 - "$log" <<'PY'
import re, sys
t = open(sys.argv[1], errors="replace").read()
checked = sum(int(n) for n in re.findall(r"\[ rtl +\] .*?: (\d+) cases checked", t))
mism = len(re.findall(r"^RTL MISMATCH #", t, flags=re.M)) + len(re.findall(r"^.*: rtl [0-9a-f]+ ref [0-9a-f]+$", t, flags=re.M))
ok = re.search(r"\[  PASSED  \] (\d+) test", t)
ran = re.search(r"\[==========\] (\d+) tests? from .* ran", t)
print(checked, mism, ok.group(1) if ok else 0, ran.group(1) if ran else 0)
PY
)"
  [ "$name" = nvfp4_pts_mul ] && [ "$checked" = 0 ] && [ "$tests_all" -gt 0 ] && checked="3600+200000(test_rtl_pts)"
  if [ $rc -eq 0 ] && [ "$tests_all" -gt 0 ] && [ "$mism" = 0 ]; then
    verdict=PASS
  else
    verdict=FAIL
    fails=$((fails + 1))
  fi
  extra=""
  [ -n "$planted" ] && extra=", planted: $planted"
  rnd="$RANDOM_N random"
  [ "$name" = nvfp4_pts_mul ] && rnd="its test's own 200000 random"
  echo "gatesim: $tag $verdict: $checked cases checked ($rnd), $mism mismatches reported," \
       "$tests_ok/$tests_all tests passed; netlist $note, $ncells cell models (equal to yosys' read_liberty);" \
       "synth $(cat "$dir/synth.time" 2>/dev/null || echo ?) s ($(cat "$dir/synth.state")), build $tb s, run $tr s$extra (log $log)"
done
[ $fails -eq 0 ]
