// Blackwell K=64 FP4 slice, sum (second half of MMA-Sim nv_fused_dot_add_with_block_scale; the
// first, bs_k64_scale, aligned the four group terms and C to 2^(max_e - 35) and reduced them to
// carry-save form): the one carry-propagate add, and the truncation to FP32. Combinational.
// NaN / Inf are the caller's (its special-value outcome).
module bs_k64_sum #(
  parameter int unsigned ScaleFmt = 0   // 0: UE4M3, 1: UE8M0 (sets the scale significand bits)
) (
  input  logic [(58-((ScaleFmt == 0) ? 8 : 2))-1:0] sum_i,  // bs_k64_scale's carry-save pair
  input  logic [(58-((ScaleFmt == 0) ? 8 : 2))-1:0] carry_i,
  input  logic [11:0]     max_e_i,
  output logic [31:0]     d_o
);

  localparam int unsigned Frac = 35;
  localparam int unsigned TW   = 58 - ((ScaleFmt == 0) ? 8 : 2);  // as bs_k64_scale

  // The carry-propagate adds are parallel-prefix adders (on this stage's critical path). Beside
  // sum + carry, -(sum + carry) = ~sum + ~carry + 2 is formed (one more 3:2 counter for the 2), so
  // the magnitude costs no second carry chain after the first, only the select.
  logic [TW-1:0] total, total_n, ns, nc;
  logic          t_neg;
  logic [TW-1:0] t_mag;

  assign ns = ~sum_i ^ ~carry_i ^ TW'(2);
  assign nc = ((~sum_i & ~carry_i) | (~sum_i & TW'(2)) | (~carry_i & TW'(2))) << 1;

  fp4sim_prefix_add #(.Width(TW)) u_add_p (.a_i(sum_i), .b_i(carry_i), .sum_o(total));
  fp4sim_prefix_add #(.Width(TW)) u_add_n (.a_i(ns), .b_i(nc), .sum_o(total_n));

  assign t_neg = total[TW-1];
  assign t_mag = t_neg ? total_n : total;

  fp4sim_fix_to_fp32_rz #(
    .MagW (TW),
    .Frac (Frac),
    .ExpW (12)
  ) u_rz (
    .neg_i   (t_neg),
    .mag_i   (t_mag),
    .max_e_i (max_e_i),
    .d_o     (d_o)
  );

endmodule
