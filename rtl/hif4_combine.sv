// HiF4 PE back end (fp4sim's `ascend-hif4` model, one 64-element group): the exact group sum times
// the two E6M2 level-1 scales, added to the FP32 accumulator C with one round-to-nearest-even.
//   E6M2 = (4 + M) / 4 * 2^(E - 48) and the element products sum to S / 16 (elements are c / 4), so
//   term = S * (4 + MA) * (4 + MB) * 2^(EA + EB - 104). fp4sim_pkg::DecE6m2 holds sig = 4 + M and
//   exp = E - 48, so the term's LSB exponent is expA + expB - 8, in [-104, 22], and
//   |S * sigA * sigB| < 2^16 * 49 < 2^22: one 16x6-bit multiplier after one 3x3-bit multiplier.
//   NaN E6M2 (0xFF) in either scale or NaN C -> 0x7FFFFFFF; C = +-Inf -> C; a zero S gives the
//   term +0 (so C = -0 gives +0).
module hif4_combine (
  input  logic [16:0]        sum_i,  // two's complement
  input  logic [7:0]         sea_i,  // E6M2 byte of the A scale word
  input  logic [7:0]         seb_i,
  input  logic [31:0]        c_i,
  output logic [31:0]        d_o
);

  /* verilator lint_off UNUSEDSIGNAL */
  logic [15:0]     ta, tb;  // E6M2 entries: no inf / sign, sig < 8
  /* verilator lint_on UNUSEDSIGNAL */
  logic [5:0]      sprod;
  logic [15:0]     s_mag;
  logic [21:0]     p_mag;
  logic [9:0]      p_exp;  // signed: EA + EB - 8 in [-104, 22]

  assign ta    = fp4sim_pkg::DecE6m2[{sea_i, 4'd0} +: 16];
  assign tb    = fp4sim_pkg::DecE6m2[{seb_i, 4'd0} +: 16];
  assign sprod = 6'(ta[2:0]) * 6'(tb[2:0]);                    // the one scale multiplier
  assign s_mag = sum_i[16] ? 16'(-$signed(sum_i)) : sum_i[15:0];
  assign p_mag = 22'(s_mag) * 22'(sprod);                      // the one application multiplier
  assign p_exp = 10'($signed(ta[12:4])) + 10'($signed(tb[12:4])) - 10'd8;

  logic c_nan, c_inf;
  logic [31:0] d_fin;

  assign c_nan = (c_i[30:23] == 8'hFF) & (c_i[22:0] != 23'd0);
  assign c_inf = (c_i[30:23] == 8'hFF) & (c_i[22:0] == 23'd0);

  fp4sim_fp32_add_rne #(
    .TermW (22),
    .ExpW  (10)
  ) u_add (
    .c_i     (c_i),
    .t_neg_i (sum_i[16]),
    .t_mag_i (p_mag),
    .t_exp_i (p_exp),
    .d_o     (d_fin)
  );

  always_comb begin
    if (ta[15] || tb[15] || c_nan) begin
      d_o = 32'h7FFF_FFFF;
    end else if (c_inf) begin
      d_o = c_i;
    end else begin
      d_o = d_fin;
    end
  end

endmodule
