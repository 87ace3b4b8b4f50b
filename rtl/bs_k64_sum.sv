// Blackwell K=64 FP4 slice, sum (second half of MMA-Sim nv_fused_dot_add_with_block_scale; the
// first, bs_k64_scale, aligned the four group terms and C to 2^(max_e - 35)): the exact signed sum
// of the five and its truncation to FP32. Combinational. NaN / Inf are the caller's (its
// special-value outcome).
module bs_k64_sum #(
  parameter int unsigned ScaleFmt = 0   // 0: UE4M3, 1: UE8M0 (sets the scale significand bits)
) (
  input  logic [4*(55-((ScaleFmt == 0) ? 8 : 2))-1:0] x_mag_i,  // bs_k64_scale's aligned terms
  input  logic [3:0]      n_neg_i,
  input  logic [35:0]     xc_mag_i,
  input  logic            c_neg_i,
  input  logic [11:0]     max_e_i,
  output logic [31:0]     d_o
);

  localparam int unsigned Frac = 35;
  localparam int unsigned XW   = 55 - ((ScaleFmt == 0) ? 8 : 2);  // as bs_k64_scale
  localparam int unsigned TW   = XW + 3;                          // signed sum of four terms and C

  logic signed [TW-1:0] total;
  logic                 t_neg;
  logic [TW-1:0]        t_mag;

  always_comb begin
    total = (TW'(xc_mag_i) ^ {TW{c_neg_i}}) + TW'(c_neg_i);
    for (int g = 0; g < 4; g++) begin
      total = total + (TW'(x_mag_i[g*XW +: XW]) ^ {TW{n_neg_i[g]}}) + TW'(n_neg_i[g]);
    end
    t_neg = total[TW-1];
    t_mag = t_neg ? TW'(-total) : TW'(total);
  end

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
