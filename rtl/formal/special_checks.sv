// The special-value logic == golden's special outcomes (scripts/formal.sh, part "arith", proofs
// special_*). Every unit decides NaN / +-Inf from its operands with fp4sim_special and applies it
// with fp4sim_special_apply; these checks hold the pair against the early returns of golden's
// instruction functions, each written from golden line by line (the comment names the line).
// d_i stands for the datapath's result: whatever it is, the pair must pass it through exactly when
// golden goes on to the finite computation.

// The grouped units (bs_dot_k64, hif4_pe, nvfp4_pe64): golden bw_grouped_step (mma_core.hpp) and
// dot_ascend_hif4 (mma.cpp) return NaN for a NaN scale or C and C itself for an infinite C (+-Inf
// plus finite terms, in dot_ascend_hif4's float sum). scale_nan_i is the unit's scale block's NaN
// output (proven equal to golden's "any scale decodes to NaN" by the scale proofs).
module chk_special_grouped (
  input  logic [31:0] c_i,
  input  logic        scale_nan_i,
  input  logic [31:0] d_i,
  output logic        ok_o
);
  logic [1:0]  sp;
  logic [31:0] d, want;
  fp4sim_special u_sp (.c_i(c_i), .nan_i(scale_nan_i), .pinf_i(1'b0), .ninf_i(1'b0), .special_o(sp));
  fp4sim_special_apply u_ap (.special_i(sp), .d_i(d_i), .d_o(d));
  always_comb begin
    if (scale_nan_i) want = 32'h7FFF_FFFF;                                // sa / sb NaN: kNaNBits
    else if (c_i[30:23] == 8'hFF && c_i[22:0] != 23'd0) want = 32'h7FFF_FFFF;  // is_nan_bits(cbits)
    else if (c_i[30:0] == 31'h7F80_0000) want = c_i;                      // is_inf_bits: return cbits
    else want = d_i;                                                      // the finite path
  end
  assign ok_o = (d == want);
endmodule

// bs_dot_k32 (kind mxf8f6f4): bs_k32_front's special outcome, applied, == golden bw_fused_step's
// IEEE outcome on the operands (mma_core.hpp): NaN for a NaN scale, C or element, for Inf * 0 and
// for infinite terms of both signs; else +-Inf for an infinite term; else the finite path. The
// scales are decoded by gen_decode_ref's golden decoder (ref_dec_ue8m0); the elements by
// bs_k32_dec, which the decoder proof shows equal to golden's (ref_k32_dec) on every field read
// here: nan, inf and zero for every code, neg for every code but NaN. (With ref_k32_dec's 64 ROMs
// in the problem the solver took 6.5 minutes; with bs_k32_dec, seconds.)
module chk_special_k32 (
  input  logic [255:0] a_i,
  input  logic [255:0] b_i,
  input  logic [2:0]   fmt_a_i,
  input  logic [2:0]   fmt_b_i,
  input  logic [7:0]   sfa_i,
  input  logic [7:0]   sfb_i,
  input  logic [31:0]  c_i,
  input  logic [31:0]  d_i,
  output logic         ok_o
);
  /* verilator lint_off UNUSEDSIGNAL */
  logic [32*8-1:0]  p_mag;
  logic [31:0]      p_neg;
  logic [32*6-1:0]  p_sh;
  logic [23:0]      c_mag;
  logic             c_neg;
  logic [5:0]       c_sh;
  logic [11:0]      max_e;
  /* verilator lint_on UNUSEDSIGNAL */
  logic [1:0]       sp;
  logic [31:0]      d, want;
  logic [32*13-1:0] ra, rb;
  logic [15:0]      rsa, rsb, csa, csb;
  logic             nan, pinf, ninf;
  logic [12:0]      ea, eb;

  bs_k32_front u_front (.a_i(a_i), .b_i(b_i), .fmt_a_i(fmt_a_i), .fmt_b_i(fmt_b_i), .sfa_i(sfa_i),
    .sfb_i(sfb_i), .c_i(c_i), .p_mag_o(p_mag), .p_neg_o(p_neg), .p_sh_o(p_sh), .c_mag_o(c_mag),
    .c_neg_o(c_neg), .c_sh_o(c_sh), .max_e_o(max_e), .special_o(sp));
  fp4sim_special_apply u_ap (.special_i(sp), .d_i(d_i), .d_o(d));

  for (genvar k = 0; k < 32; k++) begin : g_ref
    bs_k32_dec u_ra (.fmt_i(fmt_a_i), .code_i(a_i[k*8 +: 8]), .dec_o(ra[k*13 +: 13]));
    bs_k32_dec u_rb (.fmt_i(fmt_b_i), .code_i(b_i[k*8 +: 8]), .dec_o(rb[k*13 +: 13]));
  end
  ref_dec_ue8m0 u_rsa (.code_i(sfa_i), .dec_o(rsa), .care_o(csa));
  ref_dec_ue8m0 u_rsb (.code_i(sfb_i), .dec_o(rsb), .care_o(csb));

  // k32_dec_t's fields: {nan 12, inf 11, zero 10 (a finite zero: m == 0), neg 9, exp, sig}
  always_comb begin
    nan  = rsa[15] | rsb[15] | (c_i[30:23] == 8'hFF && c_i[22:0] != 23'd0);  // sa / sb / C NaN
    pinf = (c_i[30:0] == 31'h7F80_0000) & ~c_i[31];                          // is_inf_bits(cbits)
    ninf = (c_i[30:0] == 31'h7F80_0000) & c_i[31];
    for (int k = 0; k < 32; k++) begin
      ea = ra[k*13 +: 13];
      eb = rb[k*13 +: 13];
      if (ea[12] | eb[12]) nan = 1'b1;                                // a or b NaN
      else if (ea[11] | eb[11]) begin                                 // not both finite
        if (ea[10] | eb[10]) nan = 1'b1;                              // Inf * 0
        else if (ea[9] ^ eb[9]) ninf = 1'b1;
        else pinf = 1'b1;
      end
    end
    if (nan || (pinf && ninf)) want = 32'h7FFF_FFFF;
    else if (pinf) want = 32'h7F80_0000;
    else if (ninf) want = 32'hFF80_0000;
    else want = d_i;
  end
  assign ok_o = (d == want);
endmodule

// nvfp4_pts_mul (acc * alpha, no addend) and fp4sim_special on its own: the IEEE outcome of a sum
// of terms, C among them: NaN for a NaN (or invalid) operand and for +Inf + -Inf, else the sign of
// the infinite terms, else the finite path.
module chk_special_ieee (
  input  logic [31:0] c_i,
  input  logic        nan_i,
  input  logic        pinf_i,
  input  logic        ninf_i,
  input  logic [31:0] d_i,
  output logic        ok_o
);
  logic [1:0]  sp;
  logic [31:0] d, want;
  logic        cnan, cinf;
  fp4sim_special u_sp (.c_i(c_i), .nan_i(nan_i), .pinf_i(pinf_i), .ninf_i(ninf_i), .special_o(sp));
  fp4sim_special_apply u_ap (.special_i(sp), .d_i(d_i), .d_o(d));
  always_comb begin
    cnan = (c_i[30:23] == 8'hFF) && (c_i[22:0] != 23'd0);
    cinf = (c_i[30:0] == 31'h7F80_0000);
    if (nan_i || cnan) want = 32'h7FFF_FFFF;
    else if ((pinf_i || (cinf && !c_i[31])) && (ninf_i || (cinf && c_i[31]))) want = 32'h7FFF_FFFF;
    else if (pinf_i || (cinf && !c_i[31])) want = 32'h7F80_0000;
    else if (ninf_i || (cinf && c_i[31])) want = 32'hFF80_0000;
    else want = d_i;
  end
  assign ok_o = (d == want);
endmodule
