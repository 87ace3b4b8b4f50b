// Blackwell K=64 FP4 slice, back end (MMA-Sim nv_fused_dot_add_with_block_scale): applies the
// block scales to the four exact group sums, aligns the four group terms and C to the largest
// exponent with Frac = 35 fraction bits (each term truncated toward zero), sums exactly and
// truncates to FP32. Combinational.
//   group term g: s * sig(sA) * sig(sB) * 2^(exp(sA) + exp(sB)), s = sum_i[g] / 4; the exponent
//   counts even when every product of the group is zero (a zero UE4M3 scale counts as -126).
//   NaN in any scale or in C -> 0x7FFFFFFF (checked first); C = +-Inf -> C (fp4sim choice, MMA-Sim
//   raises there).
module bs_k64_combine #(
  parameter int unsigned ScaleFmt = 0,   // 0: UE4M3 (sign bit ignored), 1: UE8M0
  parameter int unsigned Block    = 16   // elements per scale: 16 or 32
) (
  input  logic [4*13-1:0]       sum_i,  // four signed group sums of (2a)(2b)
  input  logic [64/Block*8-1:0] sfa_i,  // scale codes, scale j covers elements j*Block ..
  input  logic [64/Block*8-1:0] sfb_i,
  input  logic [31:0]        c_i,
  output logic [31:0]        d_o
);

  localparam int unsigned NumSc = 64 / Block;
  localparam int unsigned Frac = 35;
  // Group term = N * 2^(eA + eB - Off) with N = sum * mA * mB (mA, mB integer significands).
  localparam int unsigned Off  = (ScaleFmt == 0) ? 8 : 2;  // 2 + 2 * mbits(scale)
  localparam int unsigned Lsh  = Frac - Off;               // N's shift when e_g == max_e
  localparam int unsigned NW   = 20;                       // |N| <= 2304 * 15 * 15 < 2^19
  localparam int unsigned XW   = NW + Lsh;                 // aligned group term
  localparam int unsigned CW   = 24 + Frac - 23;           // aligned C (C's LSB is 2^(ec-23))
  localparam int unsigned TW   = XW + 3;                   // signed sum of four terms and C
  localparam int unsigned EW   = 12;

  // ---- scale decode (lookup tables of fp4sim_pkg)
  logic [NumSc*16-1:0] ta, tb;
  logic                scale_nan;

  always_comb begin
    scale_nan = 1'b0;
    for (int j = 0; j < NumSc; j++) begin
      if (ScaleFmt == 0) begin
        ta[j*16 +: 16] = fp4sim_pkg::DecUe4m3[{sfa_i[j*8 +: 7], 4'd0} +: 16];
        tb[j*16 +: 16] = fp4sim_pkg::DecUe4m3[{sfb_i[j*8 +: 7], 4'd0} +: 16];
      end else begin
        ta[j*16 +: 16] = fp4sim_pkg::DecUe8m0[{sfa_i[j*8 +: 8], 4'd0} +: 16];
        tb[j*16 +: 16] = fp4sim_pkg::DecUe8m0[{sfb_i[j*8 +: 8], 4'd0} +: 16];
      end
      scale_nan = scale_nan | ta[j*16+15] | tb[j*16+15];
    end
  end

  // ---- C
  logic                c_nan, c_inf, c_neg;
  logic [23:0]         c_mag;
  logic signed [EW-1:0] c_e;

  assign c_nan = (c_i[30:23] == 8'hFF) & (c_i[22:0] != 23'd0);
  assign c_inf = (c_i[30:23] == 8'hFF) & (c_i[22:0] == 23'd0);
  assign c_neg = c_i[31];
  assign c_mag = {c_i[30:23] != 8'd0, c_i[22:0]};
  assign c_e   = (c_i[30:23] == 8'd0) ? EW'(-126) : EW'($signed({1'b0, c_i[30:23]})) - EW'(127);

  // ---- group terms: integer N_g and exponent e_g
  logic [4*NW-1:0]       n_mag;
  logic [3:0]            n_neg;
  logic [4*EW-1:0]       g_e;
  logic [4*12-1:0]       s_mag;
  logic [4*8-1:0]        sprod;
  logic signed [EW-1:0]  max_e;

  always_comb begin
    for (int g = 0; g < 4; g++) begin
      // One block-32 scale serves two groups.
      n_neg[g]            = sum_i[g*13+12];
      s_mag[g*12 +: 12]   = sum_i[g*13+12] ? 12'(-sum_i[g*13 +: 13]) : sum_i[g*13 +: 12];
      sprod[g*8 +: 8]     = 8'(ta[(g*16/Block)*16 +: 4]) * 8'(tb[(g*16/Block)*16 +: 4]);
      n_mag[g*NW +: NW]   = NW'(s_mag[g*12 +: 12]) * NW'(sprod[g*8 +: 8]);
      g_e[g*EW +: EW]     = EW'($signed(ta[(g*16/Block)*16+4 +: 9])) +
                            EW'($signed(tb[(g*16/Block)*16+4 +: 9]));
    end
    max_e = c_e;
    for (int g = 0; g < 4; g++) begin
      if ($signed(g_e[g*EW +: EW]) > max_e) max_e = $signed(g_e[g*EW +: EW]);
    end
  end

  // ---- align to 2^(max_e - Frac), truncating each term toward zero, and sum exactly
  logic [4*XW-1:0]       x_mag;
  logic [CW-1:0]         xc_mag;
  logic [4*6-1:0]        g_sh;
  logic [5:0]            c_sh;
  logic signed [TW-1:0]  total;
  logic                  t_neg;
  logic [TW-1:0]         t_mag;

  always_comb begin
    for (int g = 0; g < 4; g++) begin
      // Distances >= 63 shift every bit out (XW < 63).
      g_sh[g*6 +: 6]    = (max_e - $signed(g_e[g*EW +: EW]) > EW'(62)) ? 6'd63
                                                                        : 6'(max_e - $signed(g_e[g*EW +: EW]));
      x_mag[g*XW +: XW] = {n_mag[g*NW +: NW], {Lsh{1'b0}}} >> g_sh[g*6 +: 6];
    end
    c_sh   = (max_e - c_e > EW'(62)) ? 6'd63 : 6'(max_e - c_e);
    xc_mag = {c_mag, {(Frac - 23){1'b0}}} >> c_sh;
    total  = (TW'(xc_mag) ^ {TW{c_neg}}) + TW'(c_neg);
    for (int g = 0; g < 4; g++) begin
      total = total + (TW'(x_mag[g*XW +: XW]) ^ {TW{n_neg[g]}}) + TW'(n_neg[g]);
    end
    t_neg = total[TW-1];
    t_mag = t_neg ? TW'(-total) : TW'(total);
  end

  logic [31:0] d_fin;

  fp4sim_fix_to_fp32_rz #(
    .MagW (TW),
    .Frac (Frac),
    .ExpW (EW)
  ) u_rz (
    .neg_i   (t_neg),
    .mag_i   (t_mag),
    .max_e_i (max_e),
    .d_o     (d_fin)
  );

  always_comb begin
    if (scale_nan || c_nan) begin
      d_o = 32'h7FFF_FFFF;
    end else if (c_inf) begin
      d_o = c_i;
    end else begin
      d_o = d_fin;
    end
  end

endmodule
