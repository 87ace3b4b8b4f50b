// Blackwell K=32 slice (kind mxf8f6f4), back end: the 32 product terms and C, each truncated
// toward zero to 25 fraction bits below the largest exponent, summed exactly and truncated to
// FP32 (MMA-Sim nv_fused_dot_add). Combinational.
module bs_k32_combine (
  input  logic [32*8-1:0]    p_mag_i,
  input  logic [31:0]        p_neg_i,
  input  logic [32*6-1:0]    p_sh_i,
  input  logic [23:0]        c_mag_i,
  input  logic               c_neg_i,
  input  logic [5:0]         c_sh_i,
  input  logic [11:0]        max_e_i,  // signed
  input  logic [1:0]         special_i,  // fp4sim_dp_pkg::special_e
  output logic [31:0]        d_o
);

  localparam int unsigned XW = 8 + 23;  // aligned product term (< 2^31)
  localparam int unsigned TW = 39;      // signed sum: 32 * 2^31 + 2^26 < 2^37

  logic [32*XW-1:0]     x_mag;
  logic [25:0]          xc_mag;
  logic signed [TW-1:0] total;
  logic                 t_neg;
  logic [TW-2:0]        t_mag;

  always_comb begin
    xc_mag = {c_mag_i, 2'b00} >> c_sh_i;
    total  = (TW'(xc_mag) ^ {TW{c_neg_i}}) + TW'(c_neg_i);
    for (int k = 0; k < 32; k++) begin
      x_mag[k*XW +: XW] = {p_mag_i[k*8 +: 8], 23'd0} >> p_sh_i[k*6 +: 6];
      total = total + (TW'(x_mag[k*XW +: XW]) ^ {TW{p_neg_i[k]}}) + TW'(p_neg_i[k]);
    end
    t_neg = total[TW-1];
    t_mag = t_neg ? (TW-1)'(-total) : (TW-1)'(total);
  end

  logic [31:0] d_fin;

  fp4sim_fix_to_fp32_rz #(
    .MagW (TW - 1),
    .Frac (25),
    .ExpW (12)
  ) u_rz (
    .neg_i   (t_neg),
    .mag_i   (t_mag),
    .max_e_i (max_e_i),
    .d_o     (d_fin)
  );

  fp4sim_special_apply u_apply (
    .special_i (special_i),
    .d_i       (d_fin),
    .d_o       (d_o)
  );

endmodule
