#!/usr/bin/env bash
# Formal proofs of the RTL with yosys-smtbmc and z3 (Debian's yosys and z3; scripts/setup.sh):
#   the pipeline shell (fp4sim_pipe_chain of fp4sim_pipe_reg stages): its properties under
#   `ifdef FORMAL` (no transaction lost or duplicated, order kept, at most one per stage, valid
#   exactly when holding one, output held under back-pressure) proven by k-induction for chain
#   depths 1, 2 and 3 (every output chain the units use: PipeDepth <= 5), with BMC from reset as
#   the induction's base case.
# Prints one line per proof and the count; exit 0 when all hold, 1 otherwise (2: tools missing).
#
# Usage: scripts/formal.sh [OUTDIR]      (default build-formal; about 2 min on 2 cores)
#        DEPTHS="1 2" scripts/formal.sh  (a subset)
# docs/rtl.md explains the properties and why the tags make them complete.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${1:-build-formal}
DEPTHS=${DEPTHS:-"1 2 3"}
mkdir -p "$OUT"
for t in yosys yosys-smtbmc z3; do
  command -v "$t" >/dev/null || { echo "formal.sh: $t not found (scripts/setup.sh installs it)" >&2; exit 2; }
done

proved=0 failed=0
run() {  # name, log, command...
  local name=$1 log=$2
  shift 2
  local t0=$SECONDS
  if "$@" >"$log" 2>&1 && grep -q "Status: PASSED" "$log"; then
    echo "formal: PROVED  $name ($((SECONDS - t0)) s)"
    proved=$((proved + 1))
  else
    echo "formal: FAILED  $name ($((SECONDS - t0)) s), log $log:"
    tail -n 15 "$log" | sed 's/^/    /'
    failed=$((failed + 1))
  fi
}

for d in $DEPTHS; do
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
    echo "formal: FAILED  pipe_chain depth $d: yosys could not read it (log $OUT/pipe_chain_d$d.yosys.log)"
    failed=$((failed + 1))
    continue
  fi
  # Induction: the properties hold in every state where they held for the 2 steps before.
  run "pipe_chain depth $d, width $w: shell properties by 2-induction" "$OUT/pipe_chain_d$d.induction.log" \
    yosys-smtbmc -s z3 -i -t 2 "$smt"
  # Base: from reset, 2 d + 4 cycles (past filling the chain and draining it again; more than the
  # induction's 2 steps).
  run "pipe_chain depth $d, width $w: BMC $((2 * d + 4)) cycles from reset" "$OUT/pipe_chain_d$d.bmc.log" \
    yosys-smtbmc -s z3 -t $((2 * d + 4)) "$smt"
done

echo "formal: $proved proved, $failed failed"
[ "$failed" -eq 0 ]
