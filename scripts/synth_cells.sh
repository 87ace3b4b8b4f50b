# Sourced by scripts/area.sh and scripts/gatesim.sh (and so by energy.sh): the one yosys script that
# maps a unit to the liberty's standard cells, so that the netlist area and timing describe is the
# netlist gate-level simulation checks and energy is measured on. Needs SV and LIBERTY set.

# cells_constr FILE: the conditions abc sizes against and OpenSTA times under: inputs driven by the
# liberty's smallest buffer (looked up, so another liberty is a drop-in), outputs loaded with about
# one flop input.
cells_constr() {
  local buf
  buf=$(python3 scripts/liberty_cells.py --buffer "$LIBERTY") || return 1
  printf 'set_driving_cell %s\nset_load 0.009\n' "$buf" > "$1"
}

# cells_script MODULE PARAMS CONSTR STAT OUT.v [OUT.json]: the yosys script.
# The design is synthesized with its hierarchy kept and flattened only once it is gates: yosys
# 0.23's fine-grained `opt` (opt_expr on undefined shifter fill bits) run on the flattened word-level
# design changes bs_dot_k64's function where fp4_dot16 feeds bs_k64_scale (docs/rtl.md, "Gate-level
# simulation"); each module alone maps correctly. Identical instances are also mapped once.
# rename -wire: each flop is named after the register bit it drives (u_mid.g_reg.data_q[12]_reg);
# every other name is hidden so that the netlist is plain.
cells_script() {
  local module=$1 params=$2 constr=$3 stat=$4 outv=$5 outj=${6:-}
  echo "read_verilog -sv $SV
      chparam $params $module
      hierarchy -check -top $module
      synth -top $module
      flatten
      opt_clean
      rename -wire -suffix _reg t:\$_*DFF*
      dfflibmap -liberty $LIBERTY
      abc -liberty $LIBERTY -constr $constr
      opt_clean
      tee -q -o $stat stat -liberty $LIBERTY
      rename -hide w:*
      opt_clean -purge
      write_verilog -noattr -noexpr -nohex -nodec -simple-lhs $outv"
  [ -z "$outj" ] || echo "      write_json $outj"
}
