#!/usr/bin/env bash
# Formal proofs of the RTL with yosys (its SAT solver) and yosys-smtbmc with z3 (Debian's yosys and
# z3; scripts/setup.sh). docs/rtl.md ("Formal proofs") explains each proof and why the pieces compose.
#   1. the pipeline shell (fp4sim_pipe_chain of fp4sim_pipe_reg stages): its properties under
#      `ifdef FORMAL` (no transaction lost or duplicated, order kept, at most one per stage, valid
#      exactly when holding one, output held under back-pressure) proven by k-induction for chain
#      depths 1 to 5 (the units' output chains have PipeDepth - 2 <= 3 stages; 4 and 5 are margin),
#      with BMC from reset as the induction's base case.
#   2. the HiF4 element array: hif4_dot64 (level shifts moved up the tree) == hif4_dot64_ref (each
#      lane shifted on its own) for all inputs, as two structural proofs and five lemmas
#      (rtl/formal/hif4_dot64_steps.sv has the argument).
#   3. every decoder the units use == golden's decode, for every code: the references are written by
#      gen_decode_ref (rtl/formal/gen_decode_ref.cpp, linked with the golden library; CMake target
#      gen_decode_ref), the checks are rtl/formal/decode_checks.sv.
#   4. the arithmetic and special-value leaves == behavioural references written from golden's
#      functions line by line (rtl/formal/arith_ref.sv; checks rtl/formal/arith_checks.sv,
#      special_checks.sv, nvfp4_scale_steps.sv; scale and lane values from gen_decode_ref's golden
#      decoders), for every input within the callers' invariants: fp4sim_fix_to_fp32_rz (three
#      parameter sets), bs_k64_sum, bs_k64_align, bs_k64_term, the 3:2 counter rows of bs_k64_csa,
#      hif4_scale, nvfp4_scale by its four group steps, the FP32 adder pair stage by stage (prepare
#      == its stage reference; round == golden round_to_fp32 RN, also as nvfp4_pts_mul's back end),
#      fp4sim_special + fp4sim_special_apply as each unit wires them, bs_k32_front's special
#      outcome, bs_k32_combine by its lane steps (yosys sat), fp4_dot16's sum and flags and the round stages
#      (ABC's iprove on miters, rtl/formal/arith_miters.sv). docs/rtl.md composes them per unit.
#      Opt-in: ARITH="add_round_nvfp4" (the round stage at W 49, about 90 s CPU), "fix_add"
#      (fp4sim_fix_add_rne == golden add_rn, ABC, about 6 minutes), "k32_front" (bs_k32_front's
#      lane terms, one sat per lane, about 45 s each; K32_LANES="0 5" a subset), "k64_csa_ue4m3"
#      (bs_k64_csa whole, about 3 minutes). Written, open: "k32_front_max" (bs_k32_front's max tree
#      against golden's scan). Written but open: "nvfp4_scale k64_scale_ue4m3 k64_scale_ue8m0
#      k64_csa_ue8m0" (whole modules, composed from their leaves instead), "add_compose_hif4
#      add_compose_nvfp4" (the adder's stage references composed == add_rn, ABC), "add_hif4
#      add_nvfp4" (the adder pair as one miter, ABC).
#   MUTANTS=1: instead, plants one arithmetic bug at a time into a copy of the RTL (sed, in
#      OUTDIR/mutants/, rtl/*.sv untouched) and checks that the proof of that leaf FAILS for each.
# Prints one line per proof and the count; exit 0 when all hold, 1 otherwise (2: tools missing).
#
# Usage: scripts/formal.sh [OUTDIR [GEN_DECODE_REF]]   (default build-formal; docs/rtl.md has the times)
#        GEN_DECODE_REF=path scripts/formal.sh   (the generator if not an argument; default
#                                                  build/rtl/gen_decode_ref)
#        DEPTHS="1 2" scripts/formal.sh          (a subset of the shell proofs)
#        PARTS="hif4 decode" scripts/formal.sh   (a subset of the parts: shell hif4 decode arith)
#        MUTANTS=1 scripts/formal.sh [OUTDIR [GEN_DECODE_REF]]  (the arith proofs, then the planted
#                                                  bugs: each must fail; PARTS defaults to arith)
#        JOBS=1 scripts/formal.sh                (proofs at a time, default 2)
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${1:-build-formal}
GEN=${2:-${GEN_DECODE_REF:-build/rtl/gen_decode_ref}}
DEPTHS=${DEPTHS:-"1 2 3 4 5"}
MUTANTS=${MUTANTS:-0}
if [ "$MUTANTS" = 0 ]; then PARTS=${PARTS:-"shell hif4 decode arith"}; else PARTS=${PARTS:-arith}; fi
JOBS=${JOBS:-2}
mkdir -p "$OUT"
for t in yosys yosys-smtbmc yosys-abc z3; do
  command -v "$t" >/dev/null || { echo "formal.sh: $t not found (scripts/setup.sh installs it)" >&2; exit 2; }
done

# Every proof runs as a background job, JOBS at a time (the deepest shell proofs, the slowest,
# start first; the rest fill the other core). Each job leaves its line in $OUT/result.NNN;
# the lines are printed in that order at the end.
rm -f "$OUT"/result.*
nres=0
spawn() {  # name, log (shown on failure), command...: passes when the command exits 0
  local name=$1 log=$2
  shift 2
  nres=$((nres + 1))
  local res
  res="$OUT/result.$(printf %03d "$nres")"
  while [ "$(jobs -rp | wc -l)" -ge "$JOBS" ]; do wait -n; done
  (
    t0=$SECONDS
    if "$@"; then
      echo "formal: PROVED  $name ($((SECONDS - t0)) s)"
    else
      echo "formal: FAILED  $name ($((SECONDS - t0)) s), log $log:"
      tail -n 15 "$log" | sed 's/^/    /'
    fi >"$res"
  ) &
}
smtbmc_passes() {  # log, yosys-smtbmc arguments: exit 0 and "Status: PASSED"
  local log=$1
  shift
  yosys-smtbmc -s z3 "$@" >"$log" 2>&1 && grep -q "Status: PASSED" "$log"
}
run_smtbmc() {  # name, log, yosys-smtbmc arguments
  local name=$1 log=$2
  shift 2
  spawn "$name" "$log" smtbmc_passes "$log" "$@"
}
ys_passes() {  # log, script
  yosys -q -l "$1" -p "$2" >/dev/null 2>&1
}
run_ys() {  # name, log, yosys script with `sat -verify` (a failed proof stops yosys with an error)
  spawn "$1" "$2" ys_passes "$2" "$3"
}
fail_now() {  # a failed step before any proof could run
  nres=$((nres + 1))
  echo "formal: FAILED  $1" >"$OUT/result.$(printf %03d "$nres")"
}
has_part() { case " $PARTS " in *" $1 "*) return 0 ;; esac; return 1; }

# --- 1. pipeline shell ---------------------------------------------------------------------------
if has_part shell; then
  for d in $(echo "$DEPTHS" | tr ' ' '\n' | sort -rn); do  # the deepest (slowest) first
    # Tags mod 2^w must tell apart the <= d transactions in flight and the next one.
    w=1
    while [ $((1 << (w - 1))) -le "$d" ]; do w=$((w + 1)); done
    smt="$OUT/pipe_chain_d$d.smt2"
    if ! yosys -q -l "$OUT/pipe_chain_d$d.yosys.log" -p "
        read_verilog -sv -formal rtl/fp4sim_pipe_reg.sv rtl/fp4sim_pipe_chain.sv rtl/formal/pipe_chain_formal.sv
        chparam -set Depth $d -set Width $w pipe_chain_formal
        prep -top pipe_chain_formal
        async2sync
        dffunmap
        write_smt2 -wires $smt" >/dev/null 2>&1; then
      fail_now "pipe_chain depth $d: yosys could not read it (log $OUT/pipe_chain_d$d.yosys.log)"
      continue
    fi
    # Induction: the properties hold in every state where they held for the 2 steps before.
    # --unroll: each step's signals become plain bit-vector constants, with the define-funs inlined,
    # instead of an uninterpreted state sort with accessor functions. With pure bit-vector queries
    # z3 proves depth 3 in a second; without, its first induction query alone took 2.5 minutes.
    run_smtbmc "pipe_chain depth $d, width $w: shell properties by 2-induction" \
      "$OUT/pipe_chain_d$d.induction.log" --unroll -i -t 2 "$smt"
    # Base: from reset, 2 d + 4 cycles (past filling the chain and draining it again; more than the
    # induction's 2 steps).
    run_smtbmc "pipe_chain depth $d, width $w: BMC $((2 * d + 4)) cycles from reset" \
      "$OUT/pipe_chain_d$d.bmc.log" --unroll -t $((2 * d + 4)) "$smt"
  done
fi

# --- 2. HiF4 element array: hif4_dot64 == hif4_dot64_ref ----------------------------------------
# (a), (b): both designs equal chains of lane / quad / group steps (the same netlists once
# flattened); (c), (d): an invariant relating the two chains' states holds across every step, for
# every state and input; by induction over the lanes the two sums are equal.
if has_part hif4; then
  HSV="rtl/fp4sim_pkg.sv rtl/formal/hif4_dot64_ref.sv rtl/hif4_dot64.sv rtl/formal/hif4_dot64_steps.sv"
  miter() {  # gold gate: two modules with the same ports are equal for all inputs
    echo "read_verilog -sv $HSV; hierarchy -check; proc; opt_clean
          miter -equiv -flatten $1 $2 miter; hierarchy -top miter; opt
          sat -verify -prove trigger 0 -show-inputs miter"
  }
  run_ys "hif4 (a): hif4_dot64_ref == 64 reference lane steps" "$OUT/hif4_ref_chain.log" \
    "$(miter hif4_dot64_ref hif4_ref_chain)"
  run_ys "hif4 (b): hif4_dot64 == its lane / quad / group steps" "$OUT/hif4_new_chain.log" \
    "$(miter hif4_dot64 hif4_new_chain)"
  for j in 0 1 2 3; do
    # z3 proves the lemma in seconds (yosys' SAT takes about a minute); yosys first checks that the
    # lemma's assumption can hold (a vacuous lemma would prove anything).
    smt="$OUT/hif4_lane_j$j.smt2"
    if yosys -q -l "$OUT/hif4_lane_j$j.yosys.log" -p "
        read_verilog -sv -formal $HSV
        chparam -set J $j hif4_lane_lemma
        hierarchy -check -top hif4_lane_lemma; proc; flatten; opt
        sat -falsify -prove pre_o 0 hif4_lane_lemma
        write_smt2 -wires $smt" >/dev/null 2>&1; then
      run_smtbmc "hif4 (c): lane $j of a quad keeps the invariant (every state and input)" \
        "$OUT/hif4_lane_j$j.log" -t 1 "$smt"
    else
      fail_now "hif4 (c): lane $j of a quad: yosys or the non-vacuity check failed (log $OUT/hif4_lane_j$j.yosys.log)"
    fi
  done
  run_ys "hif4 (d): the invariant at a group's start and across a quad's end" "$OUT/hif4_book.log" "
    read_verilog -sv $HSV
    hierarchy -check -top hif4_book_lemma; proc; flatten; opt
    sat -verify -prove ok_o 1 -show-inputs hif4_book_lemma
    sat -falsify -prove pre_o 0 hif4_book_lemma"
fi

# --- 3. decoders == golden's decode ---------------------------------------------------------------
if has_part decode; then
  ref="$OUT/decode_ref.sv"
  if [ ! -x "$GEN" ] || ! "$GEN" "$ref" >"$OUT/gen_decode_ref.log" 2>&1; then
    fail_now "decoders: no reference ($GEN missing or failed: build the CMake target gen_decode_ref and pass its path as the second argument or GEN_DECODE_REF)"
  else
    DSV="rtl/fp4sim_pkg.sv rtl/fp4sim_dp_pkg.sv rtl/fp4sim_special.sv rtl/bs_k32_front.sv $ref rtl/formal/decode_checks.sv"
    # memory_map: yosys turns the references' case statements into ROMs, which sat cannot read.
    check() {  # log id, name, top, [Fmt]
      local cp=""
      [ -n "${4:-}" ] && cp="chparam -set Fmt $4 $3"
      run_ys "decoder $2 == golden, every code" "$OUT/decode_$1.log" "
        read_verilog -sv $DSV
        $cp
        hierarchy -check -top $3; proc; flatten; memory_map; opt
        sat -verify -prove ok_o 1 -show-inputs $3"
    }
    check k32 "bs_k32_dec (5 element formats, 8 format codes)" chk_k32_dec
    check ue8m0_fn "dec_ue8m0 (bs_k32_front's scales)" chk_dec_ue8m0_fn
    check ue8m0 "DecUe8m0 (bs_k64_scale)" chk_dec_table 0
    check ue4m3 "DecUe4m3 read with bit 7 ignored (bs_k64_scale, nvfp4_scale)" chk_dec_table 1
    check e6m2 "DecE6m2 (hif4_scale)" chk_dec_table 2
    check e4m3 "DecE4m3" chk_dec_table 3
    check e5m2 "DecE5m2" chk_dec_table 4
    check e2m3 "DecE2m3" chk_dec_table 5
    check e3m2 "DecE3m2" chk_dec_table 6
    check e2m1 "DecE2m1" chk_dec_table 7
    check e2m1_sigsh "E2m1SigSh (fp4_dot16's lanes)" chk_e2m1_sigsh
    check s1p2_mag "S1p2Mag (hif4_dot64's lanes)" chk_s1p2_mag
  fi
fi

# --- 4. arithmetic leaves == references from golden --------------------------------------------
# arith_script ID RTLDIR: the yosys script of proof ID on the RTL files in RTLDIR (rtl/ or a mutant
# copy); the references are rtl/formal/arith_ref.sv (and decode_ref.sv for the lane values).
arith_script() {
  local id=$1 d=$2 aig=${3:-} top cp="" files post=""  # aig: write the miter graph there (engine abc)
  files="$d/fp4sim_pkg.sv $d/fp4sim_lzc.sv"
  case $id in
    rz_k64_ue4m3) top=chk_fix_to_fp32_rz cp="chparam -set MagW 50 -set Frac 35 $top"
                  files="$files $d/fp4sim_fix_to_fp32_rz.sv" ;;
    rz_k64_ue8m0) top=chk_fix_to_fp32_rz cp="chparam -set MagW 56 -set Frac 35 $top"
                  files="$files $d/fp4sim_fix_to_fp32_rz.sv" ;;
    rz_k32)       top=chk_fix_to_fp32_rz cp="chparam -set MagW 38 -set Frac 25 $top"
                  files="$files $d/fp4sim_fix_to_fp32_rz.sv" ;;
    k64_sum_ue4m3) top=chk_bs_k64_sum cp="chparam -set ScaleFmt 0 $top"
                  files="$files $d/fp4sim_prefix_add.sv $d/fp4sim_fix_to_fp32_rz.sv $d/bs_k64_sum.sv" ;;
    k64_sum_ue8m0) top=chk_bs_k64_sum cp="chparam -set ScaleFmt 1 $top"
                  files="$files $d/fp4sim_prefix_add.sv $d/fp4sim_fix_to_fp32_rz.sv $d/bs_k64_sum.sv" ;;
    dot16)        top=$(arith_top "$id" chk_fp4_dot16 miter_fp4_dot16) files="$files $d/fp4_dot16.sv $OUT/decode_ref.sv" ;;
    dot16_flags)  top=chk_fp4_dot16 cp="chparam -set CheckSum 0 $top"
                  files="$files $d/fp4_dot16.sv $OUT/decode_ref.sv" ;;
    add_prep_hif4)  top=chk_fp32_add_prep_hif4 files="$files $d/fp4sim_fp32_add_prep.sv" ;;
    add_prep_nvfp4) top=chk_fp32_add_prep_nvfp4 files="$files $d/fp4sim_fp32_add_prep.sv" ;;
    add_round_hif4)  top=$(arith_top "$id" chk_fp32_add_round_hif4 miter_fp32_add_round_hif4)
                  files="$files $d/fp4sim_fp32_add_round.sv" ;;
    add_round_nvfp4) top=$(arith_top "$id" chk_fp32_add_round_nvfp4 miter_fp32_add_round_nvfp4)
                  files="$files $d/fp4sim_fp32_add_round.sv" ;;
    pts_round)    top=chk_pts_round files="$files $d/fp4sim_fp32_add_round.sv" ;;
    add_compose_hif4)  top=$(arith_top "$id" chk_fp32_add_compose_hif4 miter_fp32_add_compose_hif4) ;;
    add_compose_nvfp4) top=$(arith_top "$id" chk_fp32_add_compose_nvfp4 miter_fp32_add_compose_nvfp4) ;;
    hif4_scale)   top=chk_hif4_scale files="$files $d/hif4_scale.sv $OUT/decode_ref.sv" ;;
    nvfp4_scale)  top=chk_nvfp4_scale files="$files $d/nvfp4_scale.sv $OUT/decode_ref.sv" ;;
    nvfp4_scale_chain) top=chk_nvfp4_scale_chain files="$files $d/nvfp4_scale.sv rtl/formal/nvfp4_scale_steps.sv" ;;
    nvfp4_scale_grp) top=chk_nvfp4_scale_grp files="$files rtl/formal/nvfp4_scale_steps.sv $OUT/decode_ref.sv" ;;
    nvfp4_scale_add) top=chk_nvfp4_scale_add files="$files rtl/formal/nvfp4_scale_steps.sv" ;;
    nvfp4_scale_fin) top=chk_nvfp4_scale_fin files="$files rtl/formal/nvfp4_scale_steps.sv" ;;
    k64_scale_ue4m3) top=chk_bs_k64_scale_ue4m3 files="$files $d/bs_k64_align.sv $d/bs_k64_term.sv $d/fp4sim_csa_3to2.sv $d/bs_k64_csa.sv $d/bs_k64_scale.sv $OUT/decode_ref.sv" ;;
    k64_scale_ue8m0) top=chk_bs_k64_scale_ue8m0 files="$files $d/bs_k64_align.sv $d/bs_k64_term.sv $d/fp4sim_csa_3to2.sv $d/bs_k64_csa.sv $d/bs_k64_scale.sv $OUT/decode_ref.sv" ;;
    add_hif4)     top=$(arith_top "$id" chk_fp32_add_hif4 miter_fp32_add_hif4)
                  files="$files $d/fp4sim_fp32_add_prep.sv $d/fp4sim_fp32_add_round.sv" ;;
    add_nvfp4)    top=$(arith_top "$id" chk_fp32_add_nvfp4 miter_fp32_add_nvfp4)
                  files="$files $d/fp4sim_fp32_add_prep.sv $d/fp4sim_fp32_add_round.sv" ;;
    fix_add)      top=$(arith_top "$id" chk_fix_add_rne miter_fix_add_rne) files="$files $d/fp4sim_fix_add_rne.sv" ;;
    k64_align_ue4m3 | k64_align_ue8m0 | k64_term_ue4m3 | k64_term_ue8m0)
                  top=chk_$id files="$files $d/bs_k64_align.sv $d/bs_k64_term.sv $OUT/decode_ref.sv" ;;
    k64_csa_ue4m3 | k64_csa_ue8m0)
                  top=chk_$id files="$files $d/fp4sim_csa_3to2.sv $d/bs_k64_csa.sv" ;;
    csa_3to2_50)  top=chk_csa_3to2 cp="chparam -set W 50 $top" files="$files $d/fp4sim_csa_3to2.sv" ;;
    csa_3to2_56)  top=chk_csa_3to2 cp="chparam -set W 56 $top" files="$files $d/fp4sim_csa_3to2.sv" ;;
    k32_combine_step | k32_combine_cterm | k32_combine_chain)
                  top=chk_$id files="$files $d/fp4sim_dp_pkg.sv $d/fp4sim_special_apply.sv $d/fp4sim_fix_to_fp32_rz.sv"
                  files="$files $d/bs_k32_combine.sv" post=rtl/formal/k32_combine_steps.sv ;;
    k32_front | k32_front_max)
                  top=chk_$id files="$files $d/fp4sim_dp_pkg.sv $d/fp4sim_special.sv $d/bs_k32_front.sv"
                  files="$files $OUT/decode_ref.sv" ;;
    special_*)    top=chk_$id files="$files $d/fp4sim_dp_pkg.sv $d/fp4sim_special.sv $d/fp4sim_special_apply.sv"
                  files="$files $d/bs_k32_front.sv $OUT/decode_ref.sv rtl/formal/special_checks.sv" ;;
  esac
  if [ "$id" = k32_front ]; then
    # One sat per lane (K32_LANES: a subset; default all 32, about 45 s each): the lanes' terms
    # against golden's with the largest exponent from the DUT (k32_front_max proves it golden's).
    local k sats=""
    for k in ${K32_LANES:-$(seq 0 31)}; do
      sats="$sats
          design -load orig; chparam -set Lane $k chk_k32_front
          hierarchy -check -top chk_k32_front; proc; flatten; memory_map; opt
          sat -set-assumes -verify -prove ok_o 1 chk_k32_front"
    done
    echo "read_verilog -sv -formal $files rtl/formal/arith_ref.sv rtl/formal/arith_checks.sv
          design -save orig$sats"
    return
  fi
  if [ -n "$aig" ]; then
    # The miter as an and-inverter graph for ABC (x bits, none expected, would become free inputs).
    echo "read_verilog -sv -formal $files rtl/formal/arith_ref.sv rtl/formal/arith_checks.sv rtl/formal/arith_miters.sv
          $cp
          hierarchy -check -top $top; proc; flatten; memory_map; opt; chformal -remove
          techmap; opt; setundef -anyseq; opt; aigmap; write_aiger $aig"
  else
    echo "read_verilog -sv -formal $files rtl/formal/arith_ref.sv rtl/formal/arith_checks.sv $post
          $cp
          hierarchy -check -top $top; proc; flatten; memory_map; opt
          sat -set-assumes -verify -prove ok_o 1 -show-inputs $top"
  fi
}
arith_engine() {  # yosys sat, or ABC's iprove on the miter (rtl/formal/arith_miters.sv)
  case $1 in
    dot16 | fix_add | add_hif4 | add_nvfp4 | add_round_* | add_compose_*) echo abc ;;
    *) echo sat ;;
  esac
}
arith_top() {  # id, check top (sat), miter top (abc: arith_script was given a graph to write)
  if [ -n "$aig" ]; then echo "$3"; else echo "$2"; fi
}
abc_result() {  # log, yosys script writing aig, aig: ABC's verdict on the miter, "UNSAT" or "SAT"
  yosys -q -l "$1" -p "$2" >/dev/null 2>&1 || return 1
  yosys-abc -c "read_aiger $3; strash; iprove" >>"$1" 2>&1 || return 1
  if grep -q "^UNSATISFIABLE" "$1"; then echo UNSAT; elif grep -q "^SATISFIABLE" "$1"; then echo SAT; fi
}
abc_passes() { [ "$(abc_result "$@")" = UNSAT ]; }  # log, script, aig
abc_fails() { [ "$(abc_result "$@")" = SAT ]; }     # a counterexample (not a read error)
run_arith() {  # name, log, id, rtl dir: the proof of id by its engine
  if [ "$(arith_engine "$3")" = abc ]; then
    local aig="${2%.log}.aig"
    spawn "$1" "$2" abc_passes "$2" "$(arith_script "$3" "$4" "$aig")" "$aig"
  else
    run_ys "$1" "$2" "$(arith_script "$3" "$4")"
  fi
}
arith_name() {
  case $1 in
    rz_k64_ue4m3) echo "fp4sim_fix_to_fp32_rz (MagW 50, Frac 35: bs_k64_sum UE4M3) == golden round_to_fp32 RZ" ;;
    rz_k64_ue8m0) echo "fp4sim_fix_to_fp32_rz (MagW 56, Frac 35: bs_k64_sum UE8M0) == golden round_to_fp32 RZ" ;;
    rz_k32)       echo "fp4sim_fix_to_fp32_rz (MagW 38, Frac 25: bs_k32_combine) == golden round_to_fp32 RZ" ;;
    k64_sum_ue4m3) echo "bs_k64_sum (UE4M3) == golden from_trunc_sum(sum + carry)" ;;
    k64_sum_ue8m0) echo "bs_k64_sum (UE8M0) == golden from_trunc_sum(sum + carry)" ;;
    dot16)        echo "fp4_dot16 == golden group sum of (2a)(2b), all-zero and all-negative flags" ;;
    dot16_flags)  echo "fp4_dot16's all-zero and all-negative flags == golden's products" ;;
    add_hif4)     echo "fp4sim_fp32_add_prep + _round (hif4_pe) == golden add_rn" ;;
    add_nvfp4)    echo "fp4sim_fp32_add_prep + _round (nvfp4_pe64) == golden add_rn" ;;
    fix_add)      echo "fp4sim_fix_add_rne (nvfp4_pe64) == golden add_rn" ;;
    add_prep_hif4)  echo "fp4sim_fp32_add_prep (hif4_pe: TermW 22) == stage reference, outputs in round's domain" ;;
    add_prep_nvfp4) echo "fp4sim_fp32_add_prep (nvfp4_pe64: TermW 49) == stage reference, outputs in round's domain" ;;
    add_round_hif4)  echo "fp4sim_fp32_add_round (W 24) == golden round_to_fp32 RN of big +- sml (exact tail as sticky)" ;;
    add_round_nvfp4) echo "fp4sim_fp32_add_round (W 49) == golden round_to_fp32 RN of big +- sml (exact tail as sticky)" ;;
    pts_round)    echo "fp4sim_fp32_add_round (W 48: nvfp4_pts_mul's back end) == golden round_to_fp32 RN of the product" ;;
    add_compose_hif4)  echo "stage references composed (TermW 22) == golden add_rn" ;;
    add_compose_nvfp4) echo "stage references composed (TermW 49) == golden add_rn" ;;
    hif4_scale)   echo "hif4_scale == golden dot_ascend_hif4 group term and NaN" ;;
    nvfp4_scale)  echo "nvfp4_scale == golden exact sum of the four scaled group terms, zero sign, NaN" ;;
    nvfp4_scale_chain) echo "nvfp4_scale == its four group steps and final sign / magnitude" ;;
    nvfp4_scale_grp) echo "nvfp4_scale's group step from total 0 == golden group term, zero sign, NaN" ;;
    nvfp4_scale_add) echo "nvfp4_scale's group step: step(total) == total + step(0)" ;;
    nvfp4_scale_fin) echo "nvfp4_scale's final sign / magnitude == the 50-bit total's" ;;
    k64_scale_ue4m3) echo "bs_k64_scale (UE4M3, block 16) == golden bw_grouped_step's max_e and truncated sum t, NaN" ;;
    k64_scale_ue8m0) echo "bs_k64_scale (UE8M0, block 32) == golden bw_grouped_step's max_e and truncated sum t, NaN" ;;
    k64_align_ue4m3) echo "bs_k64_align (UE4M3, block 16) == golden bw_grouped_step's exponents, max_e, alignment distances, significands, C term, NaN" ;;
    k64_align_ue8m0) echo "bs_k64_align (UE8M0, block 32) == golden bw_grouped_step's exponents, max_e, alignment distances, significands, C term, NaN" ;;
    k64_term_ue4m3) echo "bs_k64_term (UE4M3: Lsh 27) == golden shift_trunc(s4 * mA * mB, e - off - lsb), in range" ;;
    k64_term_ue8m0) echo "bs_k64_term (UE8M0: Lsh 33) == golden shift_trunc(s4 * mA * mB, e - off - lsb), in range" ;;
    k64_csa_ue4m3) echo "bs_k64_csa (TW 50): sum + carry == five terms + ncnt mod 2^TW" ;;
    k64_csa_ue8m0) echo "bs_k64_csa (TW 56): sum + carry == five terms + ncnt mod 2^TW" ;;
    csa_3to2_50)  echo "fp4sim_csa_3to2 (W 50, bs_k64_csa UE4M3): x + y + z == sum + carry mod 2^W" ;;
    csa_3to2_56)  echo "fp4sim_csa_3to2 (W 56, bs_k64_csa UE8M0): x + y + z == sum + carry mod 2^W" ;;
    k32_front_max) echo "bs_k32_front's largest exponent == golden bw_fused_step's max_e (finite outcome)" ;;
    k32_front)    echo "bs_k32_front's lane products, signs, alignment distances and C term == golden bw_fused_step's, lane by lane (${K32_LANES:-all 32}; finite outcome)" ;;
    k32_combine_chain) echo "bs_k32_combine == C's term, 32 lane steps, its conversion and special outcome" ;;
    k32_combine_step)  echo "bs_k32_combine's lane step adds golden shift_trunc(p, 23 - p_sh) mod 2^39, in range" ;;
    k32_combine_cterm) echo "bs_k32_combine's C term == golden shift_trunc(mc, 2 - c_sh), in range" ;;
    special_grouped) echo "fp4sim_special + _apply (bs_dot_k64, hif4_pe, nvfp4_pe64) == golden's NaN / Inf returns for scale NaN and C" ;;
    special_k32)  echo "bs_k32_front's special outcome + fp4sim_special_apply == golden bw_fused_step's IEEE outcome on the operands" ;;
    special_ieee) echo "fp4sim_special + _apply == the IEEE outcome of a sum of terms and C (nvfp4_pts_mul's use)" ;;
  esac
}
# The default set (CTest), the slowest first: the ABC proofs, then yosys sat. Opt-in (slow):
# add_round_nvfp4 (about 90 s CPU), fix_add (about 6 minutes).
ARITH=${ARITH:-"dot16 add_round_hif4 k64_align_ue8m0 hif4_scale k64_sum_ue8m0 k64_sum_ue4m3
  k64_align_ue4m3 pts_round add_prep_nvfp4 add_prep_hif4 rz_k64_ue4m3 rz_k64_ue8m0 rz_k32
  special_k32 special_grouped special_ieee
  k64_term_ue4m3 k64_term_ue8m0 csa_3to2_50 csa_3to2_56
  nvfp4_scale_grp nvfp4_scale_chain nvfp4_scale_add nvfp4_scale_fin
  k32_combine_chain k32_combine_step k32_combine_cterm"}
arith_needs_decode() {  # the proofs that read gen_decode_ref's golden decoders
  case $1 in dot16* | hif4_scale | nvfp4_scale | nvfp4_scale_grp* | k64_scale_* | k64_align_* | k64_term_* | k32_* | special_*) return 0 ;; esac; return 1
}
need_decode_ref() {  # the E2M1 value table (dot16) comes from gen_decode_ref
  [ -s "$OUT/decode_ref.sv" ] || { [ -x "$GEN" ] && "$GEN" "$OUT/decode_ref.sv" >"$OUT/gen_decode_ref.log" 2>&1; }
}
if has_part arith; then
  for id in $ARITH; do
    if arith_needs_decode "$id" && ! need_decode_ref; then
      fail_now "$(arith_name "$id"): no reference ($GEN missing or failed)"
      continue
    fi
    run_arith "$(arith_name "$id")" "$OUT/arith_$id.log" "$id" rtl
  done
fi

# --- planted bugs (MUTANTS=1): each must make its leaf's proof fail -------------------------------
# One line each: proof id # file # sed expression # what the bug is. The sed must change the file.
MUTANT_LIST='add_round_hif4#fp4sim_fp32_add_round.sv#s/assign inc    = rbit \& (sticky | m_pre\[0\]);/assign inc    = rbit \& sticky;/#round half down (ties never to even upward)
add_round_hif4#fp4sim_fp32_add_round.sv#s/assign sticky = |(sum \& lostmask);/assign sticky = 1'"'"'b0;/#sticky below the round bit lost
add_round_hif4#fp4sim_fp32_add_round.sv#s/d_o = 32'"'"'d0;  \/\/ exact cancellation/d_o = {big_neg_i, 31'"'"'d0};  \/\/ exact cancellation/#exact cancellation signed like the big operand (-0)
add_round_hif4#fp4sim_fp32_add_round.sv#s/assign b_sticky = |b_lost;/assign b_sticky = 1'"'"'b0;/#alignment sticky (bits shifted out) lost
add_prep_nvfp4#fp4sim_fp32_add_prep.sv#s/assign ediff      = EW'"'"'(\$signed(big_lead_o) - sml_lead);/assign ediff      = EW'"'"'(\$signed(big_lead_o) - sml_lead + 1);/#alignment distance off by one
fix_add#fp4sim_fix_add_rne.sv#s/assign inc    = rbit \& (sticky | norm\[MW-24\]);/assign inc    = rbit \& sticky;/#round half down
fix_add#fp4sim_fix_add_rne.sv#s/c_rs\[24\] | (|c_rs\[23:0\])/c_rs[24]/#C shifted right without its jammed sticky
rz_k32#fp4sim_fix_to_fp32_rz.sv#s/(e_lead < EW'"'"'(-126)) ? EW'"'"'(-126)/(e_lead < EW'"'"'(-125)) ? EW'"'"'(-125)/#wrong subnormal exponent (-125)
rz_k64_ue4m3#fp4sim_fix_to_fp32_rz.sv#s/e_lead > EW'"'"'(127)/e_lead > EW'"'"'(128)/#overflow to Inf one binade late
rz_k64_ue8m0#fp4sim_fix_to_fp32_rz.sv#s/      d_o = 32'"'"'d0;/      d_o = {neg_i, 31'"'"'d0};/#truncated-to-zero result keeps its sign (-0)
k64_sum_ue4m3#bs_k64_sum.sv#s/assign ns = ~sum_i ^ ~carry_i ^ TW'"'"'(2);/assign ns = ~sum_i ^ ~carry_i ^ TW'"'"'(1);/#negation -(s + c) off by one (a lost +1 carry)
dot16#fp4_dot16.sv#s/ + 13'"'"'(pneg\[i\]);/;/#negative products without their +1 carry-in
dot16_flags#fp4_dot16.sv#s/(pmag == 8'"'"'d0)/(ta[1:0] == 2'"'"'d0)/#all-zero flag ignores B
dot16#fp4_dot16.sv#s/(3'"'"'(ta\[3:2\]) + 3'"'"'(tb\[3:2\]))/(3'"'"'(ta[3:2]) + 3'"'"'(tb[3:2]) + 3'"'"'d1)/#product exponent off by one
add_prep_hif4#fp4sim_fp32_add_prep.sv#s/? EW'"'"'(-149) :/? EW'"'"'(-150) :/#subnormal C read one binade low (LSB 2^-150)
add_round_nvfp4#fp4sim_fp32_add_round.sv#s/(rsh > 8'"'"'d1) ? ~({SW{1'"'"'b1}} << (rsh - 8'"'"'d1))/(rsh > 8'"'"'d2) ? ~({SW{1'"'"'b1}} << (rsh - 8'"'"'d2))/#sticky misses the bit just below the round bit
pts_round#fp4sim_fp32_add_round.sv#s/(e_lead < EW'"'"'(-126)) ? EW'"'"'(-126)/(e_lead < EW'"'"'(-125)) ? EW'"'"'(-125)/#subnormal results at exponent -125
hif4_scale#hif4_scale.sv#s/ - 10'"'"'d8;/ - 10'"'"'d7;/#term exponent off by one
hif4_scale#hif4_scale.sv#s/assign nan_o   = ta.nan | tb.nan;/assign nan_o   = ta.nan;/#NaN of the B scale ignored
nvfp4_scale_chain#nvfp4_scale.sv#s/ + TW'"'"'(sum_i\[g\*13+12\]);/;/#negative group terms without their +1 carry-in
special_ieee#fp4sim_special.sv#s/if (nan || (pinf \&\& ninf)) begin/if (nan) begin/#Inf - Inf gives +Inf instead of NaN
special_grouped#fp4sim_special.sv#s/ninf  = ninf_i || (c_inf \&\& c_i\[31\]);/ninf  = ninf_i;/#C = -Inf loses its sign (+Inf)
special_grouped#fp4sim_special_apply.sv#s/d_o = 32'"'"'h7FFF_FFFF;/d_o = 32'"'"'h7FC0_0000;/#NaN not the canonical 0x7FFFFFFF
special_k32#bs_k32_front.sv#s/ | (da.inf \& db.zero) | (db.inf \& da.zero);/ | (da.inf \& db.zero);/#Inf * 0 missed when B is the infinite operand
k64_align_ue8m0#bs_k64_align.sv#s/nan_o               = nan_o | da.nan | db.nan;/nan_o               = nan_o | da.nan;/#NaN of the B scales ignored
k64_term_ue4m3#bs_k64_term.sv#s/ ^ {TW{sum_i\[12\]}};/;/#negative group terms not inverted
k64_term_ue8m0#bs_k64_term.sv#s/n_mag = NW'"'"'(s_mag) \* NW'"'"'(sprod);/n_mag = NW'"'"'(s_mag) * NW'"'"'(sig_a_i);/#the B scale significand dropped from the product
k64_align_ue4m3#bs_k64_align.sv#s/{c_sig, {(Frac - 23){1'"'"'b0}}} >> shc/{c_sig, {(Frac - 22){1'"'"'b0}}} >> shc/#C term one place too far left
k64_align_ue8m0#bs_k64_align.sv#s/  max_e = c_e;/  max_e = EW'"'"'(-126);/#C left out of the largest exponent
csa_3to2_50#fp4sim_csa_3to2.sv#s/ << 1;/;/#counter carries not moved up one place
k32_combine_chain#bs_k32_combine.sv#s/{p_mag_i\[k\*8 +: 8\], 23'"'"'d0}/{p_mag_i[k*8 +: 8], 22'"'"'d0}/#lane terms one place too far right
k32_combine_chain#bs_k32_combine.sv#s/total  = (TW'"'"'(xc_mag) ^ {TW{c_neg_i}}) + TW'"'"'(c_neg_i);/total  = TW'"'"'(xc_mag) ^ {TW{c_neg_i}};/#negative C without its +1 carry-in'
if [ "$MUTANTS" != 0 ]; then
  need_decode_ref || fail_now "mutants: no decode reference ($GEN missing or failed)"
  n=0
  while IFS='#' read -r id file expr what; do
    n=$((n + 1))
    d="$OUT/mutants/m$(printf %02d $n)"
    rm -rf "$d"; mkdir -p "$d"; cp rtl/*.sv "$d/"
    sed -i "$expr" "$d/$file"
    if cmp -s "rtl/$file" "$d/$file"; then
      fail_now "mutant $n ($file: $what): the sed changed nothing"
      continue
    fi
    # Passes when yosys ran and the proof failed (a counterexample; not a read or elaboration error).
    # ABC's graphs take yosys up to minutes to write: every bug but dot16's is left to yosys sat on
    # its check top (the same obligation), which finds each counterexample in seconds.
    if [ "$id" = dot16 ]; then
      spawn "mutant $n, $file: $what -> proof $id fails" "$d/proof.log" abc_fails "$d/proof.log" \
        "$(arith_script "$id" "$d" "$d/proof.aig")" "$d/proof.aig"
    else
      spawn "mutant $n, $file: $what -> proof $id fails" "$d/proof.log" bash -c '
        ! yosys -q -l "$1" -p "$2" >/dev/null 2>&1 && grep -q "proof did fail" "$1"' _ "$d/proof.log" \
        "$(arith_script "$id" "$d")"
    fi
  done <<<"$MUTANT_LIST"
fi

wait
proved=0 failed=0
for r in "$OUT"/result.*; do
  [ -e "$r" ] || continue
  cat "$r"
  if head -n 1 "$r" | grep -q "^formal: PROVED"; then proved=$((proved + 1)); else failed=$((failed + 1)); fi
done
echo "formal: $proved proved, $failed failed"
[ "$failed" -eq 0 ] && [ "$proved" -gt 0 ]
