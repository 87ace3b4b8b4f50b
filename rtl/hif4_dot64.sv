// HiF4 PE front end: the exact integer dot product of 64 S1P2 x S1P2 pairs with the micro-exponent
// levels of both scale words, sum_o = sum over k of (+-cA << lvA) * (+-cB << lvB), where
// lv = E1_8[k/8] + E1_16[k/4] (scale-word bits 8 + k/8 and 16 + k/4, SPEC section 2.3).
//
// Drawn as the format allows (HiF4 paper): the level-3 bits (E1_16) are shared by 4 lanes and the
// level-2 bits (E1_8) by 8, so the shifts move up the tree instead of sitting in every lane:
//   64 lanes: 3x3-bit magnitude products (<= 49), sign applied     -> 16 sums of 4   (|.| <= 196)
//   shift by E1_16_A + E1_16_B (0..2) on each sum of 4             -> 16 x (<= 784)
//   pairwise add                                                    -> 8 sums of 8    (<= 1568)
//   shift by E1_8_A + E1_8_B (0..2) on each sum of 8               -> 8 x (<= 6272)
//   8-input adder tree                                              -> sum_o (<= 50176 < 2^16)
// 24 small shifters (0..2 positions) instead of 64 lane shifters (0..4), and the lanes' products
// stay 7 bits wide up to the first adders. Same integer as the lane-shift form by distributivity
// (tests/rtl: bit-exact against golden, every HiF4 level pattern). Combinational.
module hif4_dot64 (
  input  logic [255:0]       a_i,    // 64 S1P2 codes, element k in bits 4k+3:4k (sign bit 3)
  input  logic [255:0]       b_i,
  input  logic [23:0]        lva_i,  // scale-word bits 31:8 of A (level bits)
  input  logic [23:0]        lvb_i,
  output logic [16:0]        sum_o   // two's complement
);

  // Loops over locals, no per-lane vectors: Verilator keeps the values in registers (about twice as
  // fast as storing 64 products into a wide vector first); yosys builds the same netlist.
  logic signed [7:0]  prod;   // 0..49
  logic               neg;
  logic signed [9:0]  sum4;   // +-196
  logic signed [12:0] sum8;   // +-1568 after the level-3 shifts
  logic signed [16:0] acc;    // +-50176

  always_comb begin
    acc = '0;
    for (int h = 0; h < 8; h++) begin           // level-2 groups of 8 lanes
      sum8 = '0;
      for (int q = 0; q < 2; q++) begin         // level-3 groups of 4 lanes
        sum4 = '0;
        for (int l = 0; l < 4; l++) begin     // lane k = 8h + 4q + l, code bits 4k+3:4k
          prod = 8'(6'(fp4sim_pkg::S1p2Mag[{a_i[(h*32 + q*16 + l*4) +: 3], 2'd0} +: 3]) *
                    6'(fp4sim_pkg::S1p2Mag[{b_i[(h*32 + q*16 + l*4) +: 3], 2'd0} +: 3]));
          neg  = a_i[h*32 + q*16 + l*4 + 3] ^ b_i[h*32 + q*16 + l*4 + 3];
          // Sign-magnitude to two's complement as invert + carry-in: one multi-operand adder.
          sum4 = sum4 + (10'(prod) ^ {10{neg}}) + 10'(neg);
        end
        sum8 = sum8 + (13'(sum4) <<< (2'(lva_i[8 + h*2 + q]) + 2'(lvb_i[8 + h*2 + q])));
      end
      acc = acc + (17'(sum8) <<< (2'(lva_i[h]) + 2'(lvb_i[h])));
    end
    sum_o = acc;
  end

endmodule
