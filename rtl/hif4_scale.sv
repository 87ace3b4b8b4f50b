// HiF4 PE, scale application (fp4sim's `ascend-hif4` model, one 64-element group): the exact group
// sum times the two E6M2 level-1 scales, as an exact sign-magnitude term for the FP32 adder.
//   E6M2 = (4 + M) / 4 * 2^(E - 48) and the element products sum to S / 16 (elements are c / 4), so
//   term = S * (4 + MA) * (4 + MB) * 2^(EA + EB - 104). fp4sim_pkg::DecE6m2 holds sig = 4 + M and
//   exp = E - 48, so the term's LSB exponent is expA + expB - 8, in [-104, 22], and
//   |S * sigA * sigB| < 2^16 * 49 < 2^22: one 16x6-bit multiplier after one 3x3-bit multiplier.
//   NaN E6M2 (0xFF) in either scale sets nan_o. A zero S gives the term +0 (so C = -0 gives +0).
module hif4_scale (
  input  logic [16:0] sum_i,  // two's complement
  input  logic [7:0]  sea_i,  // E6M2 byte of the A scale word
  input  logic [7:0]  seb_i,
  output logic        t_neg_o,
  output logic [21:0] t_mag_o,
  output logic [9:0]  t_exp_o,  // signed: EA + EB - 8 in [-104, 22]
  output logic        nan_o
);

  /* verilator lint_off UNUSEDSIGNAL */
  fp4sim_pkg::dec_t ta, tb;  // E6M2 entries: no inf / sign, sig < 8
  /* verilator lint_on UNUSEDSIGNAL */
  logic [5:0]  sprod;
  logic [15:0] s_mag;

  assign ta      = fp4sim_pkg::DecE6m2[{sea_i, 4'd0} +: 16];
  assign tb      = fp4sim_pkg::DecE6m2[{seb_i, 4'd0} +: 16];
  assign sprod   = 6'(ta.sig[2:0]) * 6'(tb.sig[2:0]);          // the one scale multiplier
  assign s_mag   = sum_i[16] ? 16'(-$signed(sum_i)) : sum_i[15:0];
  assign t_mag_o = 22'(s_mag) * 22'(sprod);                     // the one application multiplier
  assign t_exp_o = 10'($signed(ta.exp)) + 10'($signed(tb.exp)) - 10'd8;
  assign t_neg_o = sum_i[16];
  assign nan_o   = ta.nan | tb.nan;

endmodule
