// Blackwell K=64 FP4 slice, scale application and alignment (MMA-Sim
// nv_fused_dot_add_with_block_scale, first half; the second is bs_k64_sum): applies the block scales
// to the four exact group sums as integers N_g with exponents, finds the largest exponent among
// them and C, shifts each term and C to the grid 2^(max_e - 35), truncating toward zero, and
// compresses the five signed terms to two in carry-save form (three levels of 3:2 counters, no
// carry chain): the register after this block holds sum + carry, bs_k64_sum adds them.
// Combinational: bs_k64_align (scale decode, exponents, alignment distances, the C term), four
// bs_k64_term, bs_k64_csa; each is proven against golden on its own (scripts/formal.sh, docs/rtl.md).
//   group term g: s * sig(sA) * sig(sB) * 2^(exp(sA) + exp(sB)), s = sum_i[g] / 4; the exponent
//   counts even when every product of the group is zero (a zero UE4M3 scale counts as -126).
//   NaN in any scale sets nan_o.
module bs_k64_scale #(
  parameter int unsigned ScaleFmt = 0,   // 0: UE4M3 (sign bit ignored), 1: UE8M0
  parameter int unsigned Block    = 16   // elements per scale: 16 or 32
) (
  input  logic [4*13-1:0]       sum_i,  // four signed group sums of (2a)(2b)
  input  logic [64/Block*8-1:0] sfa_i,  // scale codes, scale j covers elements j*Block ..
  input  logic [64/Block*8-1:0] sfb_i,
  input  logic [31:0]           c_i,
  // The exact sum of the five aligned terms (TW = 20 + 35 - Off + 3 bits, two's complement, Off:
  // bs_k64_align) as sum_o + carry_o mod 2^TW.
  output logic [(58-((ScaleFmt == 0) ? 8 : 2))-1:0] sum_o,
  output logic [(58-((ScaleFmt == 0) ? 8 : 2))-1:0] carry_o,
  output logic [11:0]           max_e_o,  // signed
  output logic                  nan_o
);

  localparam int unsigned Off = (ScaleFmt == 0) ? 8 : 2;  // 2 + 2 * mbits(scale)
  localparam int unsigned TW  = 58 - Off;

  logic [4*4-1:0]  sig_a, sig_b;
  logic [4*6-1:0]  sh;
  logic [5*TW-1:0] t;      // the five terms in ones' complement when negative
  logic [2:0]      ncnt;   // their +1 carry-ins: how many terms are negative

  bs_k64_align #(
    .ScaleFmt (ScaleFmt),
    .Block    (Block)
  ) u_align (
    .neg_i   ({sum_i[3*13+12], sum_i[2*13+12], sum_i[1*13+12], sum_i[12]}),
    .sfa_i   (sfa_i),
    .sfb_i   (sfb_i),
    .c_i     (c_i),
    .sig_a_o (sig_a),
    .sig_b_o (sig_b),
    .sh_o    (sh),
    .t_c_o   (t[4*TW +: TW]),
    .ncnt_o  (ncnt),
    .max_e_o (max_e_o),
    .nan_o   (nan_o)
  );

  for (genvar g = 0; g < 4; g++) begin : g_term
    bs_k64_term #(
      .Lsh (35 - Off),
      .TW  (TW)
    ) u_term (
      .sum_i   (sum_i[g*13 +: 13]),
      .sig_a_i (sig_a[g*4 +: 4]),
      .sig_b_i (sig_b[g*4 +: 4]),
      .sh_i    (sh[g*6 +: 6]),
      .t_o     (t[g*TW +: TW])
    );
  end

  bs_k64_csa #(
    .TW (TW)
  ) u_csa (
    .t_i     (t),
    .ncnt_i  (ncnt),
    .sum_o   (sum_o),
    .carry_o (carry_o)
  );

endmodule
