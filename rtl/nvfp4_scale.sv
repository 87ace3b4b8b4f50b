// NVFP4 PE, scale application (fp4sim's `exact` model on one K=64 instruction of kind mxf4nvf4
// with UE4M3 scales per 16): the four scaled group terms summed exactly as one fixed-point integer,
// the exact term that the back end adds to C with one round-to-nearest-even.
//   group term g = sum_i[g] * mA * mB * 2^(eA + eB - 8)   (UE4M3 = m * 2^(e - 3), sum = 4 * s)
//   Non-zero UE4M3 exponents lie in [-6, 8], so eA + eB + 12 in [0, 28] and every term is an
//   integer multiple of 2^-20: T = sum of terms < 2^49 * 2^-20, t_mag_o in units of 2^-20.
//   NaN in any scale sets nan_o. A zero T is -0 only if every one of the 64 products is -0 (IEEE's
//   rule for an exact sum of zeros); the back end then gives -0 only with C = -0.
module nvfp4_scale (
  input  logic [4*13-1:0] sum_i,       // four signed group sums of (2a)(2b)
  input  logic [3:0]      all_zero_i,  // group g: every element product is zero
  input  logic [3:0]      all_neg_i,   // group g: every product has a negative sign
  input  logic [31:0]     sfa_i,       // four UE4M3 codes (bit 7 ignored)
  input  logic [31:0]     sfb_i,
  output logic            t_neg_o,
  output logic [48:0]     t_mag_o,     // units of 2^-20
  output logic            nan_o
);

  localparam int unsigned NW = 20;       // |N| = |sum| * mA * mB <= 2304 * 225 < 2^19
  localparam int unsigned XW = NW + 28;  // term shifted by eA + eB + 12 <= 28
  localparam int unsigned TW = XW + 2;   // signed sum of four terms

  /* verilator lint_off UNUSEDSIGNAL */
  fp4sim_pkg::dec_t      ta, tb;  // UE4M3: no inf, no sign
  /* verilator lint_on UNUSEDSIGNAL */
  logic                  neg_zero;
  logic [11:0]           s_mag;
  logic [7:0]            sprod;
  logic [NW-1:0]         n_mag;
  logic [4:0]            sh;
  logic [XW-1:0]         x_mag;
  logic signed [TW-1:0]  total;

  always_comb begin
    nan_o    = 1'b0;
    neg_zero = 1'b1;
    total    = '0;
    for (int g = 0; g < 4; g++) begin
      ta       = fp4sim_pkg::DecUe4m3[{sfa_i[g*8 +: 7], 4'd0} +: 16];
      tb       = fp4sim_pkg::DecUe4m3[{sfb_i[g*8 +: 7], 4'd0} +: 16];
      nan_o    = nan_o | ta.nan | tb.nan;
      s_mag    = sum_i[g*13+12] ? 12'(-sum_i[g*13 +: 13]) : sum_i[g*13 +: 12];
      sprod    = 8'(ta.sig) * 8'(tb.sig);     // 4 scale multipliers
      n_mag    = NW'(s_mag) * NW'(sprod);     // 4 application multipliers
      // A zero scale (significand 0) makes the term 0 whatever its exponent (-126).
      sh       = (sprod == 8'd0) ? 5'd0 : 5'(ta.exp + tb.exp + 9'd12);
      x_mag    = XW'(n_mag) << sh;
      total    = total + (TW'(x_mag) ^ {TW{sum_i[g*13+12]}}) + TW'(sum_i[g*13+12]);
      // Every product of the group is -0: all signs negative and (all elements or a scale) zero.
      neg_zero = neg_zero & all_neg_i[g] & (all_zero_i[g] | (sprod == 8'd0));
    end
    t_neg_o = (total == '0) ? neg_zero : total[TW-1];
    t_mag_o = total[TW-1] ? (TW-1)'(-total) : (TW-1)'(total);
  end

endmodule
