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

// The adders == golden add_rn: bad_o = the check's assumptions (its `assume`s, which yosys drops
// when it writes the graph) hold and the outputs differ. Here the sweep has no lane order to
// follow, but it still closes fp4sim_fix_add_rne (about 8 minutes of ABC): opt-in, not in CTest.
module miter_fix_add_rne (
  input  logic [31:0] c_i,
  input  logic        t_neg_i,
  input  logic [48:0] t_mag_i,
  output logic        bad_o
);
  logic ok;
  chk_fix_add_rne u_chk (.c_i(c_i), .t_neg_i(t_neg_i), .t_mag_i(t_mag_i), .ok_o(ok));
  assign bad_o = (c_i[30:23] != 8'hFF) & !ok;  // c finite
endmodule

module miter_fp32_add_hif4 (
  input  logic [31:0] c_i,
  input  logic        t_neg_i,
  input  logic [21:0] t_mag_i,
  input  logic [9:0]  t_exp_i,
  output logic        bad_o
);
  logic ok;
  chk_fp32_add_hif4 u_chk (.c_i(c_i), .t_neg_i(t_neg_i), .t_mag_i(t_mag_i), .t_exp_i(t_exp_i),
    .ok_o(ok));
  // c finite, t_exp in [-104, 22]
  assign bad_o = (c_i[30:23] != 8'hFF) & ($signed(t_exp_i) >= -104) & ($signed(t_exp_i) <= 22) & !ok;
endmodule

module miter_fp32_add_nvfp4 (
  input  logic [31:0] c_i,
  input  logic        t_neg_i,
  input  logic [48:0] t_mag_i,
  input  logic [7:0]  t_exp_i,
  output logic        bad_o
);
  logic ok;
  chk_fp32_add_nvfp4 u_chk (.c_i(c_i), .t_neg_i(t_neg_i), .t_mag_i(t_mag_i), .t_exp_i(t_exp_i),
    .ok_o(ok));
  assign bad_o = (c_i[30:23] != 8'hFF) & !ok;  // c finite (every 8-bit t_exp)
endmodule

// The FP32 adder's round stage == ref_fp32_add_round (check (R) of rtl/formal/arith_checks.sv):
// bad_o = the check's assumptions hold (pre) and the outputs differ.
module miter_fp32_add_round_hif4 (
  input  logic [23:0] big_i, sml_i,
  input  logic [13:0] big_lead_i,
  input  logic [7:0]  dist_i,
  input  logic [8:0]  d_true_i,
  input  logic        big_neg_i, eff_sub_i, zero_i, zero_neg_i,
  output logic        bad_o
);
  logic pre, ok;
  chk_fp32_add_round_hif4 u_chk (.pre_o(pre), .ok_o(ok), .*);
  assign bad_o = pre & !ok;
endmodule

module miter_fp32_add_round_nvfp4 (
  input  logic [48:0] big_i, sml_i,
  input  logic [13:0] big_lead_i,
  input  logic [7:0]  dist_i,
  input  logic [8:0]  d_true_i,
  input  logic        big_neg_i, eff_sub_i, zero_i, zero_neg_i,
  output logic        bad_o
);
  logic pre, ok;
  chk_fp32_add_round_nvfp4 u_chk (.pre_o(pre), .ok_o(ok), .*);
  assign bad_o = pre & !ok;
endmodule

// The stage references composed == golden add_rn (check (C)): reference against reference, the
// step the stage proofs leave (docs/rtl.md).
module miter_fp32_add_compose_hif4 (
  input  logic [31:0] c_i,
  input  logic        t_neg_i,
  input  logic [21:0] t_mag_i,
  input  logic [9:0]  t_exp_i,
  output logic        bad_o
);
  logic ok;
  chk_fp32_add_compose_hif4 u_chk (.*, .ok_o(ok));
  assign bad_o = (c_i[30:23] != 8'hFF) & ($signed(t_exp_i) >= -104) & ($signed(t_exp_i) <= 22) & !ok;
endmodule

module miter_fp32_add_compose_nvfp4 (
  input  logic [31:0] c_i,
  input  logic        t_neg_i,
  input  logic [48:0] t_mag_i,
  input  logic [7:0]  t_exp_i,
  output logic        bad_o
);
  logic ok;
  chk_fp32_add_compose_nvfp4 u_chk (.*, .ok_o(ok));
  assign bad_o = (c_i[30:23] != 8'hFF) & !ok;
endmodule

// nvfp4_scale == golden's exact sum of the scaled group terms (check chk_nvfp4_scale): bad_o = the
// group sums are in fp4_dot16's range and the outputs differ.
module miter_nvfp4_scale (
  input  logic [4*13-1:0] sum_i,
  input  logic [3:0]      all_zero_i,
  input  logic [3:0]      all_neg_i,
  input  logic [31:0]     sfa_i,
  input  logic [31:0]     sfb_i,
  output logic            bad_o
);
  logic ok, pre;
  chk_nvfp4_scale u_chk (.*, .ok_o(ok));
  always_comb begin
    pre = 1'b1;
    for (int g = 0; g < 4; g++)
      pre = pre & ($signed(sum_i[g*13 +: 13]) >= -2304) & ($signed(sum_i[g*13 +: 13]) <= 2304);
  end
  assign bad_o = pre & !ok;
endmodule
