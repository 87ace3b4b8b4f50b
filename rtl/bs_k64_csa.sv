// bs_k64_scale's reduction: five TW-bit terms and the count of their +1 carry-ins compressed to a
// carry-save pair by three levels of 3:2 counters, all mod 2^TW: no carry chain; bs_k64_sum adds the
// pair. Combinational; scripts/formal.sh proves each counter row (csa_3to2_*) and, opt-in, the
// whole identity sum_o + carry_o == the five terms + ncnt_i mod 2^TW (k64_csa_*).
module bs_k64_csa #(
  parameter int unsigned TW = 50
) (
  input  logic [5*TW-1:0] t_i,
  input  logic [2:0]      ncnt_i,
  output logic [TW-1:0]   sum_o,
  output logic [TW-1:0]   carry_o
);

  logic [TW-1:0] s1, c1, s2, c2, s3, c3;

  // Level 1: t0 + t1 + t2 and t3 + t4 + ncnt; level 2: the first pair and the second sum; level 3:
  // that pair and the second carry.
  fp4sim_csa_3to2 #(.W(TW)) u_l1a (
    .x_i (t_i[0*TW +: TW]), .y_i (t_i[1*TW +: TW]), .z_i (t_i[2*TW +: TW]), .sum_o (s1), .carry_o (c1)
  );
  fp4sim_csa_3to2 #(.W(TW)) u_l1b (
    .x_i (t_i[3*TW +: TW]), .y_i (t_i[4*TW +: TW]), .z_i (TW'(ncnt_i)), .sum_o (s2), .carry_o (c2)
  );
  fp4sim_csa_3to2 #(.W(TW)) u_l2 (
    .x_i (s1), .y_i (c1), .z_i (s2), .sum_o (s3), .carry_o (c3)
  );
  fp4sim_csa_3to2 #(.W(TW)) u_l3 (
    .x_i (s3), .y_i (c3), .z_i (c2), .sum_o (sum_o), .carry_o (carry_o)
  );

endmodule
