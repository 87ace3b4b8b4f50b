// Blackwell K=64 FP4 slice, sum (second half of MMA-Sim nv_fused_dot_add_with_block_scale; the
// first is bs_k64_scale): aligns the four group terms and C to the largest exponent with Frac = 35
// fraction bits (each term truncated toward zero), sums exactly and truncates to FP32.
// Combinational. NaN / Inf are the caller's (its special-value outcome).
module bs_k64_sum #(
  parameter int unsigned ScaleFmt = 0   // 0: UE4M3, 1: UE8M0 (sets the scale significand bits)
) (
  input  logic [4*20-1:0] n_mag_i,
  input  logic [3:0]      n_neg_i,
  input  logic [4*6-1:0]  g_sh_i,
  input  logic [23:0]     c_mag_i,  // C's significand with the hidden bit
  input  logic            c_neg_i,
  input  logic [5:0]      c_sh_i,
  input  logic [11:0]     max_e_i,
  output logic [31:0]     d_o
);

  localparam int unsigned Frac = 35;
  // Group term = N * 2^(eA + eB - Off) with N = sum * mA * mB (mA, mB integer significands).
  localparam int unsigned Off  = (ScaleFmt == 0) ? 8 : 2;  // 2 + 2 * mbits(scale)
  localparam int unsigned Lsh  = Frac - Off;               // N's shift when e_g == max_e
  localparam int unsigned NW   = 20;
  localparam int unsigned XW   = NW + Lsh;                 // aligned group term
  localparam int unsigned CW   = 24 + Frac - 23;           // aligned C (C's LSB is 2^(ec-23))
  localparam int unsigned TW   = XW + 3;                   // signed sum of four terms and C

  logic [XW-1:0]        x_mag;
  logic [CW-1:0]        xc_mag;
  logic signed [TW-1:0] total;
  logic                 t_neg;
  logic [TW-1:0]        t_mag;

  always_comb begin
    xc_mag = {c_mag_i, {(Frac - 23){1'b0}}} >> c_sh_i;
    total  = (TW'(xc_mag) ^ {TW{c_neg_i}}) + TW'(c_neg_i);
    for (int g = 0; g < 4; g++) begin
      x_mag = {n_mag_i[g*NW +: NW], {Lsh{1'b0}}} >> g_sh_i[g*6 +: 6];
      total = total + (TW'(x_mag) ^ {TW{n_neg_i[g]}}) + TW'(n_neg_i[g]);
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
