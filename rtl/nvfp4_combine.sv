// NVFP4 PE back end (fp4sim's `exact` model on one K=64 instruction of kind mxf4nvf4 with UE4M3
// scales per 16): the four scaled group terms are summed exactly as a fixed-point integer and
// added to the FP32 accumulator C with one round-to-nearest-even. Combinational.
//   group term g = sum_i[g] * mA * mB * 2^(eA + eB - 8)   (UE4M3 = m * 2^(e - 3), sum = 4 * s)
//   Non-zero UE4M3 exponents lie in [-6, 8], so eA + eB + 12 in [0, 28] and every term is an
//   integer multiple of 2^-20: T = sum of terms < 2^49 * 2^-20 fits a 50-bit signed integer.
//   NaN in any scale or in C -> 0x7FFFFFFF; C = +-Inf -> C. A zero result is -0 only if C = -0 and
//   every one of the 64 products is -0 (IEEE's rule for an exact sum of zeros).
module nvfp4_combine (
  input  logic [4*13-1:0] sum_i,       // four signed group sums of (2a)(2b)
  input  logic [3:0]      all_zero_i,  // group g: every element product is zero
  input  logic [3:0]      all_neg_i,   // group g: every product has a negative sign
  input  logic [31:0]     sfa_i,       // four UE4M3 codes (bit 7 ignored)
  input  logic [31:0]     sfb_i,
  input  logic [31:0]     c_i,
  output logic [31:0]     d_o
);

  localparam int unsigned NW = 20;       // |N| = |sum| * mA * mB <= 2304 * 225 < 2^19
  localparam int unsigned XW = NW + 28;  // term shifted by eA + eB + 12 <= 28
  localparam int unsigned TW = XW + 2;   // signed sum of four terms

  logic [4*16-1:0] ta, tb;
  logic            scale_nan, neg_zero;
  logic [4*12-1:0] s_mag;
  logic [4*8-1:0]  sprod;
  logic [4*NW-1:0] n_mag;
  logic [4*5-1:0]  sh;
  logic [4*XW-1:0] x_mag;
  logic signed [TW-1:0] total;
  logic            t_neg;
  logic [TW-2:0]   t_mag;

  always_comb begin
    scale_nan = 1'b0;
    neg_zero  = c_i == 32'h8000_0000;
    total     = '0;
    for (int g = 0; g < 4; g++) begin
      ta[g*16 +: 16]    = fp4sim_pkg::DecUe4m3[{sfa_i[g*8 +: 7], 4'd0} +: 16];
      tb[g*16 +: 16]    = fp4sim_pkg::DecUe4m3[{sfb_i[g*8 +: 7], 4'd0} +: 16];
      scale_nan         = scale_nan | ta[g*16+15] | tb[g*16+15];
      s_mag[g*12 +: 12] = sum_i[g*13+12] ? 12'(-sum_i[g*13 +: 13]) : sum_i[g*13 +: 12];
      sprod[g*8 +: 8]   = 8'(ta[g*16 +: 4]) * 8'(tb[g*16 +: 4]);  // 4 scale multipliers
      n_mag[g*NW +: NW] = NW'(s_mag[g*12 +: 12]) * NW'(sprod[g*8 +: 8]);  // 4 application multipliers
      // A zero scale (significand 0) makes the term 0 whatever its exponent (-126).
      sh[g*5 +: 5]      = (sprod[g*8 +: 8] == 8'd0) ? 5'd0
                          : 5'(ta[g*16+4 +: 9] + tb[g*16+4 +: 9] + 9'd12);
      x_mag[g*XW +: XW] = XW'(n_mag[g*NW +: NW]) << sh[g*5 +: 5];
      total             = total + (TW'(x_mag[g*XW +: XW]) ^ {TW{sum_i[g*13+12]}}) + TW'(sum_i[g*13+12]);
      // Every product of the group is -0: all signs negative and (all elements or a scale) zero.
      neg_zero          = neg_zero & all_neg_i[g] & (all_zero_i[g] | (sprod[g*8 +: 8] == 8'd0));
    end
    t_neg = (total == '0) ? neg_zero : total[TW-1];
    t_mag = total[TW-1] ? (TW-1)'(-total) : (TW-1)'(total);
  end

  logic c_nan, c_inf;
  logic [31:0] d_fin;

  assign c_nan = (c_i[30:23] == 8'hFF) & (c_i[22:0] != 23'd0);
  assign c_inf = (c_i[30:23] == 8'hFF) & (c_i[22:0] == 23'd0);

  fp4sim_fp32_add_rne #(
    .TermW (TW - 1),
    .ExpW  (8)
  ) u_add (
    .c_i     (c_i),
    .t_neg_i (t_neg),
    .t_mag_i (t_mag),
    .t_exp_i (8'hEC),  // -20
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
