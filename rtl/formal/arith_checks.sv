// Check tops of the arithmetic proofs (scripts/formal.sh, part "arith"): each instantiates one RTL
// leaf and its reference (rtl/formal/arith_ref.sv, from golden) on the same free inputs; ok_o = the
// outputs agree. `sat -prove ok_o 1` proves it for every input (under the assumptions listed in
// each check, the invariants its callers guarantee).

// fp4sim_fix_to_fp32_rz == golden from_trunc_sum(t, lsb) (mma_core.hpp) = round_to_fp32(neg, |t|,
// lsb, false, false) with lsb = max_e - Frac (bw_grouped_step / bw_fused_step), for every sign,
// magnitude and max_e. No assumption.
module chk_fix_to_fp32_rz #(
  parameter int unsigned MagW = 52,
  parameter int unsigned Frac = 35
) (
  input  logic            neg_i,
  input  logic [MagW-1:0] mag_i,
  input  logic [11:0]     max_e_i,
  output logic            ok_o
);
  localparam int FracI = Frac;
  logic [31:0] d_dut, d_ref;
  int          e0;
  assign e0 = $signed(max_e_i) - FracI;  // lsb = max_e - frac_bits
  fp4sim_fix_to_fp32_rz #(.MagW(MagW), .Frac(Frac), .ExpW(12)) u_dut (
    .neg_i(neg_i), .mag_i(mag_i), .max_e_i(max_e_i), .d_o(d_dut));
  ref_round_to_fp32 u_ref (
    .neg(neg_i), .mag(64'(mag_i)), .e0(e0), .sticky(1'b0),
    .rn(1'b0), .bits_o(d_ref));
  assign ok_o = (d_dut == d_ref);
endmodule

// fp4sim_fp32_add_prep + fp4sim_fp32_add_round (W = max(TermW, 24), as hif4_pe and nvfp4_pe64
// wire them) == golden add_rn(c, term) (ref_fp32_add_rn), for every c, term sign and magnitude and
// t_exp in [TLo, THi]. Assumptions (the callers' invariants, `assume`s):
//   - c_i is finite (exponent field != 255): both PEs route NaN / Inf C to their special outcome;
//   - TLo <= t_exp_i <= THi: hif4_pe's t_exp is EA + EB - 8 in [-104, 22] (hif4_scale); nvfp4_pe64
//     ties it to TermLsb = -20 (checked here for the whole 8-bit range).
module chk_fp32_add #(
  parameter int unsigned TermW = 22,
  parameter int unsigned ExpW  = 10,
  parameter int          TLo   = -104,
  parameter int          THi   = 22
) (
  input  logic [31:0]      c_i,
  input  logic             t_neg_i,
  input  logic [TermW-1:0] t_mag_i,
  input  logic [ExpW-1:0]  t_exp_i,
  output logic             ok_o
);
  localparam int unsigned W  = TermW > 24 ? TermW : 24;
  // Window for the exact reference sum: C's LSB >= 2^-149, its top < 2^128; the term's LSB >=
  // 2^TLo, its top < 2^(THi + TermW); two more bits for the carry and the sign.
  localparam int          TermWI = TermW;
  localparam int          Lo  = TLo < -149 ? TLo : -149;
  localparam int          Hi  = (THi + TermWI) > 128 ? (THi + TermWI) : 128;
  localparam int unsigned NW  = Hi - Lo + 2;

  logic [W-1:0]  big, sml;
  logic [13:0]   big_lead;
  logic [7:0]    dist;
  logic          big_neg, eff_sub, zero, zero_neg;
  logic [31:0]   d_dut, d_ref;

  always_comb begin
    assume (c_i[30:23] != 8'hFF);
    assume ($signed(t_exp_i) >= TLo && $signed(t_exp_i) <= THi);
  end

  fp4sim_fp32_add_prep #(.TermW(TermW), .ExpW(ExpW)) u_prep (
    .c_i(c_i), .t_neg_i(t_neg_i), .t_mag_i(t_mag_i), .t_exp_i(t_exp_i), .big_o(big), .sml_o(sml),
    .big_lead_o(big_lead), .dist_o(dist), .big_neg_o(big_neg), .eff_sub_o(eff_sub), .zero_o(zero),
    .zero_neg_o(zero_neg));
  fp4sim_fp32_add_round #(.W(W)) u_round (
    .big_i(big), .sml_i(sml), .big_lead_i(big_lead), .dist_i(dist), .big_neg_i(big_neg),
    .eff_sub_i(eff_sub), .zero_i(zero), .zero_neg_i(zero_neg), .d_o(d_dut));
  ref_fp32_add_rn #(.TermW(TermW), .ExpW(ExpW), .Lo(Lo), .NW(NW)) u_ref (
    .c_i(c_i), .t_neg_i(t_neg_i), .t_mag_i(t_mag_i), .t_exp_i(t_exp_i), .d_o(d_ref));
  assign ok_o = (d_dut == d_ref);
endmodule

// bs_k64_sum == golden from_trunc_sum(t, max_e - 35) (mma_core.hpp, bw_grouped_step's last line) with
// t = sum_i + carry_i read as a TW-bit two's complement integer (bs_k64_scale's carry-save pair of
// the exact truncated sum), for every pair and max_e. No assumption (t = -2^(TW-1) included).
module chk_bs_k64_sum #(
  parameter int unsigned ScaleFmt = 0
) (
  input  logic [(58-((ScaleFmt == 0) ? 8 : 2))-1:0] sum_i,
  input  logic [(58-((ScaleFmt == 0) ? 8 : 2))-1:0] carry_i,
  input  logic [11:0]                                max_e_i,
  output logic                                       ok_o
);
  localparam int unsigned TW = 58 - ((ScaleFmt == 0) ? 8 : 2);
  logic signed [TW-1:0] t;
  logic signed [63:0]   t64;
  logic [63:0]          t_abs;
  int                   lsb;
  logic [31:0]          d_dut, d_ref;

  assign t     = sum_i + carry_i;
  assign t64   = t;                                     // int64_t t (sign-extended)
  assign t_abs = t64[63] ? -t64 : t64;                 // t < 0 ? -t : t
  assign lsb   = $signed(max_e_i) - 35;                 // lsb = max_e - c.frac_bits

  bs_k64_sum #(.ScaleFmt(ScaleFmt)) u_dut (.sum_i(sum_i), .carry_i(carry_i), .max_e_i(max_e_i),
    .d_o(d_dut));
  ref_round_to_fp32 u_ref (.neg(t[TW-1]), .mag(t_abs), .e0(lsb), .sticky(1'b0), .rn(1'b0),
    .bits_o(d_ref));
  assign ok_o = (d_dut == d_ref);  // from_trunc_sum: t == 0 gives 0, as round_to_fp32 with rn false
endmodule

// fp4_dot16 == golden's group sum s4 = sum over the 16 lanes of (2 a_i) * (2 b_i) (bw_grouped_step's
// s4[g]; ref_e2m1_x2 is golden's decode of each code times 2, from gen_decode_ref), its all-zero flag
// (every product 0) and all-negative flag (every product's sign a.neg ^ b.neg, the sign bit of the
// E2M1 code, as golden's ExactDot tracks all_neg_zero). For all 2^128 inputs. No assumption.
module chk_fp4_dot16 #(
  parameter bit CheckSum = 1  // 0: the two flags only (their proof is quick; the sum's is open)
) (
  input  logic [63:0] a_i,
  input  logic [63:0] b_i,
  output logic        ok_o
);
  logic [12:0]    s_dut, s_ref;
  logic           z_dut, n_dut, z_ref, n_ref;
  logic [16*6-1:0] va, vb;
  logic signed [12:0] p;

  for (genvar i = 0; i < 16; i++) begin : g_lane
    ref_e2m1_x2 u_a (.code_i(a_i[i*4 +: 4]), .val_o(va[i*6 +: 6]));
    ref_e2m1_x2 u_b (.code_i(b_i[i*4 +: 4]), .val_o(vb[i*6 +: 6]));
  end
  always_comb begin
    s_ref = '0;
    z_ref = 1'b1;
    n_ref = 1'b1;
    for (int i = 0; i < 16; i++) begin
      p     = 13'($signed(va[i*6 +: 6])) * 13'($signed(vb[i*6 +: 6]));
      s_ref = s_ref + p;
      z_ref = z_ref & (p == 13'd0);
      n_ref = n_ref & (a_i[i*4+3] ^ b_i[i*4+3]);
    end
  end
  fp4_dot16 u_dut (.a_i(a_i), .b_i(b_i), .sum_o(s_dut), .all_zero_o(z_dut), .all_neg_o(n_dut));
  assign ok_o = (!CheckSum || s_dut == s_ref) && (z_dut == z_ref) && (n_dut == n_ref);
endmodule

// fp4sim_fix_add_rne == golden add_rn(c, term) (ref_fp32_add_rn) with the term's exponent fixed at
// TermLsb, for every c and term (nvfp4_pe64: TermW 49, TermLsb -20). Assumption: c_i finite
// (nvfp4_pe64 routes NaN / Inf C to its special outcome).
module chk_fix_add_rne #(
  parameter int unsigned TermW   = 49,
  parameter integer      TermLsb = -20
) (
  input  logic [31:0]      c_i,
  input  logic             t_neg_i,
  input  logic [TermW-1:0] t_mag_i,
  output logic             ok_o
);
  localparam int TermWI = TermW;
  localparam int Lo     = TermLsb < -149 ? TermLsb : -149;
  localparam int Hi     = (TermLsb + TermWI) > 128 ? (TermLsb + TermWI) : 128;
  logic [31:0] d_dut, d_ref;

  always_comb assume (c_i[30:23] != 8'hFF);

  fp4sim_fix_add_rne #(.TermW(TermW), .TermLsb(TermLsb)) u_dut (
    .c_i(c_i), .t_neg_i(t_neg_i), .t_mag_i(t_mag_i), .d_o(d_dut));
  ref_fp32_add_rn #(.TermW(TermW), .ExpW(12), .Lo(Lo), .NW(Hi - Lo + 2)) u_ref (
    .c_i(c_i), .t_neg_i(t_neg_i), .t_mag_i(t_mag_i), .t_exp_i(12'(TermLsb)), .d_o(d_ref));
  assign ok_o = (d_dut == d_ref);
endmodule

// The FP32 adder as each PE sets it up (yosys' chparam takes no negative values).
module chk_fp32_add_hif4 (
  input  logic [31:0] c_i,
  input  logic        t_neg_i,
  input  logic [21:0] t_mag_i,
  input  logic [9:0]  t_exp_i,
  output logic        ok_o
);
  chk_fp32_add #(.TermW(22), .ExpW(10), .TLo(-104), .THi(22)) u (.*);
endmodule

module chk_fp32_add_nvfp4 (
  input  logic [31:0] c_i,
  input  logic        t_neg_i,
  input  logic [48:0] t_mag_i,
  input  logic [7:0]  t_exp_i,
  output logic        ok_o
);
  chk_fp32_add #(.TermW(49), .ExpW(8), .TLo(-128), .THi(127)) u (.*);
endmodule
