#!/usr/bin/env bash
# Area (and, with --json, stage timing) of the RTL datapaths with yosys 0.23. Two modes:
#
# Generic gates (default; no liberty file): for every top
#   1. coarse pass  (proc; opt; wreduce per module): the word-level multipliers ($mul) and widths
#   2. `synth -top X; stat -tech cmos`: gate counts by type, flip-flops, yosys' CMOS transistor
#      estimate (combinational gates only; flip-flops are reported separately and counted in the
#      total at an assumed 24 transistors each: a static master-slave DFF with an enable mux)
# then prints one table, the per-block breakdown of hif4_pe and nvfp4_pe64 (equal throughput:
# one 64-element dot product per cycle each) and writes the raw yosys reports to OUTDIR.
#
# Cell library (--json FILE): for every top, flattened, flops (dfflibmap) and logic (abc, with a
# driving cell and load for buffering / sizing) mapped to the OSU 0.18 um standard cells of
# Debian's qflow-tech-osu018; `stat -liberty` gives um^2 and cells; OpenSTA (`sta`) times the
# mapped netlist per pipeline stage (input -> u_in, u_in -> u_mid, u_mid -> u_out, u_out -> output;
# the flops keep their register names through flattening); scripts/area_cells.py writes FILE as
# {unit: {area_um2, cells, flops, stages: [{name, delay_ns, datapath_ns, worst_from}], fmax_mhz,
# source: "opensta" | "abc", synth_s, ...}} and prints a table. Where `sta` is missing or fails,
# the timing is abc's whole-netlist delay estimate and "source" says "abc". A top whose yosys run
# exceeds SYNTH_TIMEOUT seconds (default 300) is reported as {"skipped": reason}.
#
# Usage: scripts/area.sh [OUTDIR]       (default: build-area; about 4 min on 2 cores)
#        JOBS=N scripts/area.sh         (parallel yosys runs, default 2)
#        TOPS="hif4_pe nvfp4_pe64" scripts/area.sh   (a subset; names from the list below)
#        TOPS="... bs_dot_k32"          (opt-in in this generic mode; it is in the --json run, about
#                                        1-2 min since its elements are decoded by fields)
#        REPORT_ONLY=1 scripts/area.sh  (re-print the tables from the reports already in OUTDIR)
#        scripts/area.sh --json out/area.json [OUTDIR]   (cell library; default OUTDIR
#                                        build-area-cells; bs_dot_k32 is included and skipped when
#                                        it exceeds SYNTH_TIMEOUT; about 5 min on 2 cores)
#        LIBERTY=/path/x.lib scripts/area.sh --json F    (another liberty; default: OSU 0.18 um)
#        scripts/area.sh --rehash rtl/area.json  (only rewrite the JSON's "_provenance" hash; honest
#                                        only when no file that a reported unit reads has changed)
# The JSON's "_provenance" holds the files this flow reads ($SV, this script, area_cells.py) and
# the sha256 of their contents concatenated in that order; CTest area_json_current recomputes it
# (python3 scripts/area_cells.py check rtl/area.json) so that rtl/area.json, which `fp4sim whatif`
# builds in, is proven current without re-running synthesis.
# docs/area.md explains the results.
set -euo pipefail
cd "$(dirname "$0")/.."
JSON=""
REHASH=""
if [ "${1:-}" = "--rehash" ]; then
  [ -n "${2:-}" ] && [ -f "$2" ] || { echo "area.sh: --rehash needs an existing JSON file" >&2; exit 1; }
  REHASH=$2
elif [ "${1:-}" = "--json" ]; then
  [ -n "${2:-}" ] || { echo "area.sh: --json needs a file name" >&2; exit 1; }
  JSON=$2
  shift 2
fi
if [ -n "$JSON" ]; then OUT=${1:-build-area-cells}; else OUT=${1:-build-area}; fi
JOBS=${JOBS:-2}
if [ -z "$REHASH" ]; then
  mkdir -p "$OUT"
  command -v yosys >/dev/null || { echo "area.sh: yosys not found (scripts/setup.sh installs it)" >&2; exit 1; }
fi

# Same order as rtl/CMakeLists.txt: the package first.
SV="rtl/fp4sim_pkg.sv rtl/fp4sim_dp_pkg.sv rtl/fp4sim_pipe_reg.sv rtl/fp4sim_pipe_chain.sv
    rtl/fp4sim_pe_shell.sv rtl/fp4sim_special.sv rtl/fp4sim_special_apply.sv rtl/fp4sim_lzc.sv
    rtl/fp4sim_prefix_add.sv rtl/fp4sim_fix_to_fp32_rz.sv rtl/fp4sim_fp32_add_prep.sv
    rtl/fp4sim_fp32_add_round.sv rtl/fp4sim_fix_add_rne.sv rtl/fp4_dot16.sv rtl/bs_k64_align.sv rtl/bs_k64_term.sv
    rtl/fp4sim_csa_3to2.sv rtl/bs_k64_csa.sv rtl/bs_k64_scale.sv rtl/bs_k64_sum.sv
    rtl/bs_dot_k64.sv rtl/bs_k32_front.sv rtl/bs_k32_combine.sv rtl/bs_dot_k32.sv rtl/hif4_dot64.sv
    rtl/hif4_scale.sv rtl/hif4_pe.sv rtl/nvfp4_scale.sv rtl/nvfp4_pe64.sv rtl/nvfp4_pts_mul.sv"
SV=$(echo $SV)
# What the JSON's provenance hash covers (scripts/area_cells.py).
export AREA_INPUTS="$SV scripts/area.sh scripts/synth_cells.sh scripts/liberty_cells.py scripts/area_cells.py"
if [ -n "$REHASH" ]; then
  LIBERTY=${LIBERTY:-/usr/share/qflow/tech/osu018/osu018_stdcells.lib} exec python3 scripts/area_cells.py rehash "$REHASH"
fi

# name -> "module|chparam arguments". PipeDepth 3 (input, mid and output registers) for every
# 64-length unit, so that their register sets are comparable.
declare -A TOP=(
  [hif4_pe]="hif4_pe|-set PipeDepth 3"
  [nvfp4_pe64]="nvfp4_pe64|-set PipeDepth 3"
  [nvfp4_pe64_fixed]="nvfp4_pe64|-set PipeDepth 3 -set BackEnd 1"
  [nvfp4_pts_mul]="nvfp4_pts_mul|"  # PipeDepth 3 is its default (chparam would rename the top)
  [bs_dot_k64_ue4m3_b16]="bs_dot_k64|-set ScaleFmt 0 -set Block 16 -set PipeDepth 3"
  [bs_dot_k64_ue8m0_b32]="bs_dot_k64|-set ScaleFmt 1 -set Block 32 -set PipeDepth 3"
  [bs_dot_k32]="bs_dot_k32|-set PipeDepth 2"
)
if [ -n "$JSON" ]; then
  NAMES=${TOPS:-"hif4_pe nvfp4_pe64 nvfp4_pe64_fixed nvfp4_pts_mul bs_dot_k64_ue4m3_b16 bs_dot_k64_ue8m0_b32 bs_dot_k32"}
else
  NAMES=${TOPS:-"hif4_pe nvfp4_pe64 bs_dot_k64_ue4m3_b16 bs_dot_k64_ue8m0_b32"}
fi

synth_one() {
  local name=$1 module=${TOP[$1]%%|*} params=${TOP[$1]#*|}
  local t0=$SECONDS
  yosys -q -l "$OUT/$name.log" -p "
    read_verilog -sv $SV
    chparam $params $module
    hierarchy -check -top $module
    design -save src
    proc; opt_expr; opt_clean; wreduce; opt_clean
    tee -q -o $OUT/$name.coarse.txt stat -width
    design -load src
    synth -top $module
    tee -q -o $OUT/$name.cmos.txt stat -tech cmos
  " >/dev/null
  echo "area.sh: $name synthesized in $((SECONDS - t0)) s" >&2
}
export -f synth_one
export OUT SV
for n in $NAMES; do
  [ -n "${TOP[$n]:-}" ] || { echo "area.sh: unknown top $n" >&2; exit 1; }
done

# Cell-library mode: flatten, map to the liberty, time every pipeline stage with OpenSTA.
if [ -n "$JSON" ]; then
  export LIBERTY=${LIBERTY:-/usr/share/qflow/tech/osu018/osu018_stdcells.lib}
  [ -f "$LIBERTY" ] || { echo "area.sh: $LIBERTY not found (scripts/setup.sh installs qflow-tech-osu018)" >&2; exit 1; }
  command -v sta >/dev/null || echo "area.sh: OpenSTA (sta) not found: stage delays fall back to abc's estimate" >&2
  SYNTH_TIMEOUT=${SYNTH_TIMEOUT:-300}
  # abc buffers and sizes against these; the same conditions are given to OpenSTA.
  . scripts/synth_cells.sh
  cells_constr "$OUT/abc.constr" || { echo "area.sh: no buffer cell in $LIBERTY" >&2; exit 1; }
  cells_one() {
    local name=$1 module=${TOP[$1]%%|*} params=${TOP[$1]#*|}
    local t0=$SECONDS rc=0
    rm -f "$OUT/$name.skip" "$OUT/$name.time"
    timeout "$SYNTH_TIMEOUT" yosys -q -l "$OUT/$name.log" \
      -p "$(cells_script $module "$params" $OUT/abc.constr $OUT/$name.stat.txt $OUT/$name.v $OUT/$name.json)" >/dev/null || rc=$?
    if [ $rc -eq 124 ]; then
      echo "yosys did not finish within SYNTH_TIMEOUT=${SYNTH_TIMEOUT} s" > "$OUT/$name.skip"
      echo "area.sh: $name skipped (yosys > ${SYNTH_TIMEOUT} s)" >&2
      return 0
    elif [ $rc -ne 0 ]; then
      echo "yosys failed (exit $rc), see $OUT/$name.log" > "$OUT/$name.skip"
      echo "area.sh: $name: yosys failed (exit $rc)" >&2
      return 0
    fi
    echo "$((SECONDS - t0))" > "$OUT/$name.time"
    python3 scripts/area_cells.py sta "$OUT" "$name" "$module" "$LIBERTY"
    echo "area.sh: $name synthesized in $(cat "$OUT/$name.time") s, timed in $((SECONDS - t0 - $(cat "$OUT/$name.time"))) s" >&2
  }
  # The element arrays alone (area_cells.py ELEM_BLOCK): mapped the same way, area only.
  block_one() {
    local blk=$1
    yosys -q -l "$OUT/_block_$blk.log" -p "
      read_verilog -sv $SV
      hierarchy -check -top $blk
      synth -top $blk -flatten
      abc -liberty $LIBERTY -constr $OUT/abc.constr
      opt_clean
      tee -q -o $OUT/_block_$blk.stat.txt stat -liberty $LIBERTY
    " >/dev/null || echo "area.sh: element block $blk failed, see $OUT/_block_$blk.log" >&2
  }
  if [ -z "${REPORT_ONLY:-}" ]; then
    # bs_dot_k32 (the slow one) first, so that the others run beside it; JOBS at a time.
    order=""
    for n in $NAMES; do
      if [ "$n" = bs_dot_k32 ]; then order="$n $order"; else order="$order $n"; fi
    done
    for n in $order; do
      while [ "$(jobs -rp | wc -l)" -ge "$JOBS" ]; do wait -n || true; done
      cells_one "$n" &
    done
    for blk in hif4_dot64 fp4_dot16; do
      while [ "$(jobs -rp | wc -l)" -ge "$JOBS" ]; do wait -n || true; done
      block_one "$blk" &
    done
    wait
  fi
  exec python3 scripts/area_cells.py report "$OUT" "$JSON" $NAMES
fi
# Run JOBS yosys processes at a time.
if [ -z "${REPORT_ONLY:-}" ]; then
  pids=()
  for n in $NAMES; do
    synth_one "$n" &
    pids+=($!)
    if [ ${#pids[@]} -ge "$JOBS" ]; then wait "${pids[0]}"; pids=("${pids[@]:1}"); fi
  done
  for p in "${pids[@]}"; do wait "$p"; done
fi

python3 - "$OUT" $NAMES <<'PY'
import re, sys
out, names = sys.argv[1], sys.argv[2:]
DFF_T = 24  # assumed transistors per flip-flop (yosys' cmos estimate leaves flops out)

def blocks(path):
    """stat output -> {module: {cells, transistors, types{}}} plus the hierarchy instance counts."""
    mods, cur, hier = {}, None, {}
    in_hier = False
    for line in open(path):
        m = re.match(r"=== (.*) ===", line.strip())
        if m:
            cur = m.group(1)
            in_hier = cur == "design hierarchy"
            mods[cur] = {"cells": 0, "tr": 0, "types": {}}
            continue
        if cur is None:
            continue
        s = line.strip()
        m = re.match(r"Number of cells:\s+(\d+)", s)
        if m:
            mods[cur]["cells"] = int(m.group(1)); continue
        m = re.match(r"Estimated number of transistors:\s+(\d+)", s)
        if m:
            mods[cur]["tr"] = int(m.group(1)); continue
        m = re.match(r"(\S+)\s+(\d+)$", s)
        if m and in_hier and not m.group(1).startswith("$_"):  # an instance count ($paramod names too)
            hier[m.group(1)] = int(m.group(2)); continue
        m = re.match(r"(\$\S+)\s+(\d+)$", s)
        if m:
            mods[cur]["types"][m.group(1)] = int(m.group(2))
    return mods, hier

def short(mod):
    mod = re.sub(r"^\$paramod\$[0-9a-f]+\\", "", mod)
    mod = re.sub(r"^\$paramod\\", "", mod)
    return mod.split("\\")[0]

def flops(types):
    return sum(v for k, v in types.items() if "DFF" in k or "DLATCH" in k)

rows, per = [], {}
for n in names:
    cm, hier = blocks(f"{out}/{n}.cmos.txt")
    co, _ = blocks(f"{out}/{n}.coarse.txt")
    tot = cm["design hierarchy"]
    ff = flops(tot["types"])
    gates = {k: v for k, v in tot["types"].items() if k.startswith("$_") and "DFF" not in k}
    # multipliers per module (coarse, before techmap), times the module's instance count
    mults = {}
    for mod, d in co.items():
        if mod == "design hierarchy":
            continue
        inst = 1 if not hier else next((c for h, c in hier.items() if h == mod or short(h) == short(mod)), 1)
        for k, v in d["types"].items():
            if k.startswith("$mul"):
                key = (short(mod), k.replace("$mul_", "Y"))
                mults[key] = mults.get(key, 0) + v * inst
    nmul = sum(mults.values())
    rows.append((n, tot["cells"], ff, tot["tr"], tot["tr"] + DFF_T * ff, nmul, gates, mults))
    per[n] = (cm, hier)

print(f"\n## Totals (yosys synth; transistors: yosys cmos estimate of the gates, total adds {DFF_T} per flop)\n")
print("| unit | cells | flops | gate transistors | total transistors | ~NAND2 eq. (total / 4) | multipliers |")
print("|---|---:|---:|---:|---:|---:|---:|")
for n, cells, ff, tr, ttot, nmul, _, _ in rows:
    print(f"| {n} | {cells} | {ff} | {tr} | {ttot} | {ttot // 4} | {nmul} |")

print("\n## Gate types\n")
kinds = sorted({k for r in rows for k in r[6]})
print("| unit | " + " | ".join(k.strip("$_") for k in kinds) + " |")
print("|---|" + "---:|" * len(kinds))
for r in rows:
    print(f"| {r[0]} | " + " | ".join(str(r[6].get(k, 0)) for k in kinds) + " |")

print("\n## Multipliers (word-level $mul cells before techmap: block, output width Y, count)\n")
for r in rows:
    items = ", ".join(f"{c} x {m} {y}" for (m, y), c in sorted(r[7].items()))
    print(f"- {r[0]}: {r[5]} = {items}")

def breakdown(n, groups):
    cm, hier = per[n]
    res = {}
    for mod, d in cm.items():
        if mod == "design hierarchy":
            continue
        inst = next((c for h, c in hier.items() if h == mod or short(h) == short(mod)), 1) if hier else 1
        g = next((gname for gname, pats in groups.items() if any(p in short(mod) for p in pats)), "other")
        ff = flops(d["types"])
        a = res.setdefault(g, [0, 0, 0])
        a[0] += d["cells"] * inst; a[1] += ff * inst; a[2] += (d["tr"] + DFF_T * ff) * inst
    return res

cols = [n for n in ("hif4_pe", "nvfp4_pe64", "bs_dot_k64_ue4m3_b16") if n in per]
if "hif4_pe" in per and len(cols) > 1:
    groups = {
        "element products + integer tree": ["hif4_dot64", "fp4_dot16"],
        "scale products, application, alignment, FP32 accumulate / round":
            ["hif4_scale", "nvfp4_scale", "fp4sim_fp32_add", "fp4sim_fix_add", "bs_k64_", "fp4sim_csa_",
             "fp4sim_special", "fp4sim_fix_to_fp32_rz", "fp4sim_lzc", "fp4sim_prefix_add"],
        "pipeline registers": ["fp4sim_pipe_reg", "fp4sim_pipe_chain", "fp4sim_pe_shell"],
    }
    bd = {n: breakdown(n, groups) for n in cols}
    print("\n## 64-length PEs by block: transistors incl. flops (cells / flops), ratio hif4_pe / other\n")
    print("| block | " + " | ".join(cols) + " | " + " | ".join(f"hif4 / {c}" for c in cols[1:]) + " |")
    print("|---|" + "---:|" * (2 * len(cols) - 1))
    for g in groups:
        vals = [bd[n].get(g, [0, 0, 0]) for n in cols]
        cells = " | ".join(f"{v[2]} ({v[0]} / {v[1]})" for v in vals)
        ratios = " | ".join(f"{vals[0][2] / v[2]:.2f}" if v[2] else "-" for v in vals[1:])
        print(f"| {g} | {cells} | {ratios} |")
    tots = [sum(x[2] for x in bd[n].values()) for n in cols]
    print("| total | " + " | ".join(str(t) for t in tots) + " | " +
          " | ".join(f"{tots[0] / t:.2f}" for t in tots[1:]) + " |")
PY
