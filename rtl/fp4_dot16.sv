// Exact sum of 16 E2M1 x E2M1 products, as one 16-product group of a Blackwell-style K=64 FP4
// slice or of the NVFP4 PE: sum_o = sum over i of (2*a_i) * (2*b_i), an integer with
// |sum_o| <= 16 * 12 * 12 = 2304. Each lane is a 2x2-bit significand multiplier and a shift
// (2*|E2M1| = sig2 << sh, table fp4sim_pkg::E2m1SigSh).
module fp4_dot16 (
  input  logic [63:0]        a_i,         // 16 E2M1 codes, element i in bits 4i+3:4i
  input  logic [63:0]        b_i,
  output logic [12:0]        sum_o,  // two's complement
  output logic               all_zero_o,  // every product is zero
  output logic               all_neg_o    // every product's sign (a.sign ^ b.sign) is set
);

  logic [3:0]  ta, tb;  // {sh[1:0], sig2[1:0]} of the current lane
  logic [7:0]  pmag;    // |product| <= 144
  logic [15:0] pneg;

  always_comb begin
    sum_o      = '0;
    all_zero_o = 1'b1;
    for (int i = 0; i < 16; i++) begin
      ta         = fp4sim_pkg::E2m1SigSh[{a_i[i*4 +: 3], 2'd0} +: 4];
      tb         = fp4sim_pkg::E2m1SigSh[{b_i[i*4 +: 3], 2'd0} +: 4];
      // 4-bit significand product (<= 9) shifted by the summed exponent offsets (<= 4).
      pmag       = 8'(4'(ta[1:0]) * 4'(tb[1:0])) << (3'(ta[3:2]) + 3'(tb[3:2]));
      pneg[i]    = a_i[i*4+3] ^ b_i[i*4+3];
      // Two's complement of a sign-magnitude product: invert and add the sign as a carry-in;
      // the whole loop becomes one multi-operand adder (yosys $macc, a compressor tree).
      sum_o      = sum_o + (13'(pmag) ^ {13{pneg[i]}}) + 13'(pneg[i]);
      all_zero_o = all_zero_o & (pmag == 8'd0);
    end
  end

  assign all_neg_o = &pneg;

endmodule
