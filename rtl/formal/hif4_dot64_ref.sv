// HiF4 PE front end: the exact integer dot product of 64 S1P2 x S1P2 pairs with the micro-exponent
// levels of both scale words, sum_o = sum over k of (+-cA << lvA) * (+-cB << lvB), where
// lv = E1_8[k/8] + E1_16[k/4] (scale-word bits 8 + k/8 and 16 + k/4, SPEC section 2.3).
// |sum_o| <= 64 * (7*4) * (7*4) = 50176 < 2^16. Each lane is a 3x3-bit multiplier and a shift by
// 0..4; the adder tree is pure integer. Combinational.
module hif4_dot64_ref (
  input  logic [255:0]       a_i,    // 64 S1P2 codes, element k in bits 4k+3:4k (sign bit 3)
  input  logic [255:0]       b_i,
  input  logic [23:0]        lva_i,  // scale-word bits 31:8 of A (level bits)
  input  logic [23:0]        lvb_i,
  output logic [16:0]        sum_o   // two's complement
);

  // One loop, no per-lane vectors: Verilator then keeps the lane values in registers (about twice
  // as fast as storing 64 products into a 640-bit vector first); yosys builds the same netlist.
  logic [9:0] pmag;  // |product| <= 49 << 4 = 784
  logic       pneg;

  always_comb begin
    sum_o = '0;
    for (int k = 0; k < 64; k++) begin
      pmag  = 10'(6'(fp4sim_pkg::S1p2Mag[{a_i[k*4 +: 3], 2'd0} +: 3]) *
                  6'(fp4sim_pkg::S1p2Mag[{b_i[k*4 +: 3], 2'd0} +: 3]))
              << (3'(lva_i[k/8]) + 3'(lva_i[8 + k/4]) + 3'(lvb_i[k/8]) + 3'(lvb_i[8 + k/4]));
      pneg  = a_i[k*4+3] ^ b_i[k*4+3];
      // Sign-magnitude to two's complement as invert + carry-in: one multi-operand adder.
      sum_o = sum_o + (17'(pmag) ^ {17{pneg}}) + 17'(pneg);
    end
  end

endmodule
