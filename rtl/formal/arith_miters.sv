// Miters of the arithmetic proofs that ABC proves (scripts/formal.sh, part "arith", engine abc):
// bad_o = the check's assumptions hold and its outputs differ. ABC's `iprove` (SAT sweeping:
// it merges internal nodes that are equal) proves bad_o == 0 for every input; the check tops are
// those of rtl/formal/arith_checks.sv, so yosys `sat` and ABC read the same proof obligation.

// fp4_dot16's sum and flags == golden's. Both sides add the 16 lane values in the same lane order,
// so after each lane the two partial sums are equal words: SAT sweeping proves them equal lane by
// lane, where one SAT query over the whole 128-bit input (yosys sat, z3) does not finish.
module miter_fp4_dot16 (
  input  logic [63:0] a_i,
  input  logic [63:0] b_i,
  output logic        bad_o
);
  logic ok;
  chk_fp4_dot16 u_chk (.a_i(a_i), .b_i(b_i), .ok_o(ok));
  assign bad_o = !ok;
endmodule

// fp4sim_fix_add_rne == golden add_rn (chk_fix_add_rne), one case of a split on C's exponent field:
// c_i = {sign, Ef, mantissa}. With Ef fixed every shift of C (the RTL's into its window, the
// reference's into the exact sum) has a constant distance and folds away; the 255 finite cases
// Ef = 0..254 together cover every finite C (the check's only assumption).
module miter_fix_add_ef #(
  parameter int unsigned Ef = 0
) (
  input  logic        c_neg_i,
  input  logic [22:0] c_man_i,
  input  logic        t_neg_i,
  input  logic [48:0] t_mag_i,
  output logic        bad_o
);
  logic ok;
  chk_fix_add_rne u_chk (.c_i({c_neg_i, 8'(Ef), c_man_i}), .t_neg_i(t_neg_i), .t_mag_i(t_mag_i),
    .ok_o(ok));
  assign bad_o = !ok;
endmodule
