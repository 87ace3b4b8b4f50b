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

// ---- The FP32 adder pair, stage by stage (docs/rtl.md "The FP32 adder pair"): (P) the prepare
// stage == ref_fp32_add_prep, and its outputs meet what (R) assumes; (R) the round stage ==
// ref_fp32_add_round for every input that meets those assumptions, with the distance it is given
// saturated at W + 3 and the reference given the true one; (C) the two references composed ==
// golden add_rn (ref_fp32_add_rn).

// (P): fp4sim_fp32_add_prep == ref_fp32_add_prep for every finite c, term, and t_exp in [TLo, THi]
// (the callers' ranges; c NaN / Inf is routed around the adder by both PEs). Compared: big, sml,
// the signs and zero flags always; big_lead unless both are zero (then round ignores it); dist =
// min(d, W + 3) when both operands are nonzero (with sml = 0 round ignores it). Also checked, what
// (R) assumes of its inputs: big normalized (top bit set) unless zero, big = sml = 0 when zero,
// sml normalized or 0, dist <= W + 3, big >= sml at dist 0, big_lead and sml's lead in [LeadLo,
// LeadHi].
module chk_fp32_add_prep #(
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
  localparam int unsigned W      = TermW > 24 ? TermW : 24;
  localparam int          AW     = W + 3;
  localparam int          TermWI = TermW;
  localparam int          LeadLo = TLo < -149 ? TLo : -149;
  localparam int          LeadHi = (THi + TermWI - 1) > 127 ? (THi + TermWI - 1) : 127;

  logic [W-1:0]  big, sml, r_big, r_sml;
  logic [13:0]   big_lead;
  logic [7:0]    dist;
  logic          big_neg, eff_sub, zero, zero_neg;
  logic          r_big_neg, r_eff_sub, r_zero, r_zero_neg;
  int            r_big_lead, r_sml_lead, r_d, lead, dist_n;
  logic          same, dom;

  always_comb begin
    assume (c_i[30:23] != 8'hFF);
    assume ($signed(t_exp_i) >= TLo && $signed(t_exp_i) <= THi);
  end

  fp4sim_fp32_add_prep #(.TermW(TermW), .ExpW(ExpW)) u_dut (
    .c_i(c_i), .t_neg_i(t_neg_i), .t_mag_i(t_mag_i), .t_exp_i(t_exp_i), .big_o(big), .sml_o(sml),
    .big_lead_o(big_lead), .dist_o(dist), .big_neg_o(big_neg), .eff_sub_o(eff_sub), .zero_o(zero),
    .zero_neg_o(zero_neg));
  ref_fp32_add_prep #(.TermW(TermW), .ExpW(ExpW)) u_ref (
    .c_i(c_i), .t_neg_i(t_neg_i), .t_mag_i(t_mag_i), .t_exp_i(t_exp_i), .big_o(r_big),
    .sml_o(r_sml), .big_lead_o(r_big_lead), .sml_lead_o(r_sml_lead), .big_neg_o(r_big_neg),
    .eff_sub_o(r_eff_sub), .zero_o(r_zero), .zero_neg_o(r_zero_neg));

  always_comb begin
    lead = $signed(big_lead);
    dist_n = dist;
    r_d  = r_big_lead - r_sml_lead;
    same = big == r_big && sml == r_sml && big_neg == r_big_neg && eff_sub == r_eff_sub &&
           zero == r_zero && zero_neg == r_zero_neg &&
           (zero || lead == r_big_lead) &&
           (sml == '0 || dist_n == ((r_d > AW) ? AW : r_d));
    dom  = (zero ? (big == '0 && sml == '0) : big[W-1]) && (sml == '0 || sml[W-1]) &&
           dist_n <= AW && (dist_n != 0 || big >= sml) &&
           (zero || (lead >= LeadLo && lead <= LeadHi)) &&
           (sml == '0 || (r_d >= 0 && lead - r_d >= LeadLo));
  end
  assign ok_o = same && dom;
endmodule

// (R): fp4sim_fp32_add_round == ref_fp32_add_round for every input (R) may get from (P): big
// normalized unless zero (then big = sml = 0), sml normalized or 0, dist <= W + 3, d_true the true
// distance (= dist below W + 3, >= W + 3 where dist saturated), big >= sml at distance 0, big_lead
// and sml's lead (big_lead - d_true) in [LeadLo, LeadHi]. nvfp4_pts_mul uses this stage alone
// (sml = 0, dist = 51, W = 48): covered by the W = 48 instance.
module chk_fp32_add_round #(
  parameter int unsigned W      = 24,
  parameter int          LeadLo = -149,
  parameter int          LeadHi = 127
) (
  input  logic [W-1:0] big_i,
  input  logic [W-1:0] sml_i,
  input  logic [13:0]  big_lead_i,
  input  logic [7:0]   dist_i,
  input  logic [8:0]   d_true_i,
  input  logic         big_neg_i,
  input  logic         eff_sub_i,
  input  logic         zero_i,
  input  logic         zero_neg_i,
  output logic         pre_o,
  output logic         ok_o
);
  localparam int AW = W + 3;
  logic [31:0] d_dut, d_ref;
  int          lead, dt, dist_n;

  assign lead = $signed(big_lead_i);
  assign dt   = d_true_i;
  assign dist_n = dist_i;
  // pre_o: the assumptions hold (assumed here for yosys sat; the ABC miter reads pre_o).
  always_comb begin
    pre_o = (zero_i ? (big_i == '0 && sml_i == '0) : big_i[W-1]) &&
            (sml_i == '0 || sml_i[W-1]) &&
            dist_n <= AW &&
            ((dist_n < AW) ? (dt == dist_n) : (dt >= AW)) &&
            (dist_i != 8'd0 || big_i >= sml_i) &&
            (zero_i || (lead >= LeadLo && lead <= LeadHi)) &&
            (sml_i == '0 || lead - dt >= LeadLo);
    assume (pre_o);
  end

  fp4sim_fp32_add_round #(.W(W)) u_dut (
    .big_i(big_i), .sml_i(sml_i), .big_lead_i(big_lead_i), .dist_i(dist_i), .big_neg_i(big_neg_i),
    .eff_sub_i(eff_sub_i), .zero_i(zero_i), .zero_neg_i(zero_neg_i), .d_o(d_dut));
  ref_fp32_add_round #(.W(W)) u_ref (
    .big_i(big_i), .sml_i(sml_i), .big_lead_i(lead), .d_i(dt), .big_neg_i(big_neg_i),
    .eff_sub_i(eff_sub_i), .zero_i(zero_i), .zero_neg_i(zero_neg_i), .d_o(d_ref));
  assign ok_o = (d_dut == d_ref);
endmodule

// (C): the two references composed == golden add_rn, for every finite c and term (t_exp in
// [TLo, THi]): ref_fp32_add_round(ref_fp32_add_prep(x)) with the true distance == ref_fp32_add_rn.
module chk_fp32_add_compose #(
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
  localparam int unsigned W      = TermW > 24 ? TermW : 24;
  localparam int          TermWI = TermW;
  localparam int          Lo     = TLo < -149 ? TLo : -149;
  localparam int          Hi     = (THi + TermWI) > 128 ? (THi + TermWI) : 128;
  localparam int unsigned NW     = Hi - Lo + 2;

  logic [W-1:0] big, sml;
  int           big_lead, sml_lead;
  logic         big_neg, eff_sub, zero, zero_neg;
  logic [31:0]  d_stages, d_ref;

  always_comb begin
    assume (c_i[30:23] != 8'hFF);
    assume ($signed(t_exp_i) >= TLo && $signed(t_exp_i) <= THi);
  end

  ref_fp32_add_prep #(.TermW(TermW), .ExpW(ExpW)) u_prep (
    .c_i(c_i), .t_neg_i(t_neg_i), .t_mag_i(t_mag_i), .t_exp_i(t_exp_i), .big_o(big), .sml_o(sml),
    .big_lead_o(big_lead), .sml_lead_o(sml_lead), .big_neg_o(big_neg), .eff_sub_o(eff_sub),
    .zero_o(zero), .zero_neg_o(zero_neg));
  ref_fp32_add_round #(.W(W)) u_round (
    .big_i(big), .sml_i(sml), .big_lead_i(big_lead), .d_i(big_lead - sml_lead),
    .big_neg_i(big_neg), .eff_sub_i(eff_sub), .zero_i(zero), .zero_neg_i(zero_neg), .d_o(d_stages));
  ref_fp32_add_rn #(.TermW(TermW), .ExpW(ExpW), .Lo(Lo), .NW(NW)) u_ref (
    .c_i(c_i), .t_neg_i(t_neg_i), .t_mag_i(t_mag_i), .t_exp_i(t_exp_i), .d_o(d_ref));
  assign ok_o = (d_stages == d_ref);
endmodule

// The stage proofs as each PE sets them up (yosys' chparam takes no negative values).
module chk_fp32_add_prep_hif4 (
  input  logic [31:0] c_i,
  input  logic        t_neg_i,
  input  logic [21:0] t_mag_i,
  input  logic [9:0]  t_exp_i,
  output logic        ok_o
);
  chk_fp32_add_prep #(.TermW(22), .ExpW(10), .TLo(-104), .THi(22)) u (.*);
endmodule

module chk_fp32_add_prep_nvfp4 (
  input  logic [31:0] c_i,
  input  logic        t_neg_i,
  input  logic [48:0] t_mag_i,
  input  logic [7:0]  t_exp_i,
  output logic        ok_o
);
  chk_fp32_add_prep #(.TermW(49), .ExpW(8), .TLo(-128), .THi(127)) u (.*);
endmodule

module chk_fp32_add_round_hif4 (
  input  logic [23:0] big_i, sml_i,
  input  logic [13:0] big_lead_i,
  input  logic [7:0]  dist_i,
  input  logic [8:0]  d_true_i,
  input  logic        big_neg_i, eff_sub_i, zero_i, zero_neg_i,
  output logic        pre_o,
  output logic        ok_o
);
  chk_fp32_add_round #(.W(24), .LeadLo(-149), .LeadHi(127)) u (.*);
endmodule

module chk_fp32_add_round_nvfp4 (
  input  logic [48:0] big_i, sml_i,
  input  logic [13:0] big_lead_i,
  input  logic [7:0]  dist_i,
  input  logic [8:0]  d_true_i,
  input  logic        big_neg_i, eff_sub_i, zero_i, zero_neg_i,
  output logic        pre_o,
  output logic        ok_o
);
  chk_fp32_add_round #(.W(49), .LeadLo(-149), .LeadHi(175)) u (.*);
endmodule

// ---- Scale application leaves. The scale values come from gen_decode_ref's golden decoders
// (OUTDIR/decode_ref.sv; dec_o = {nan, inf, neg, exp[8:0], sig[3:0]}), not from fp4sim_pkg.

// hif4_scale == golden dot_ascend_hif4's group term (mma.cpp `term`): p = s * mA * mB, e = eA + eB
// - 8, as sign, |p| and e; NaN when either E6M2 scale is NaN (the term is then not read). A zero
// s gives +0 (golden: "group terms are +0 when zero"). Assumption: |s| <= 64 * 28 * 28 = 50176
// (hif4_dot64's sum of 64 products of S1P2 values times their levels, golden's own bound).
module chk_hif4_scale (
  input  logic [16:0] sum_i,
  input  logic [7:0]  sea_i,
  input  logic [7:0]  seb_i,
  output logic        ok_o
);
  logic [15:0]        da, db, ca, cb;
  logic               t_neg, nan;
  logic [21:0]        t_mag;
  logic [9:0]         t_exp;
  logic signed [31:0] s, p;
  int                 e;

  ref_dec_e6m2 u_da (.code_i(sea_i), .dec_o(da), .care_o(ca));
  ref_dec_e6m2 u_db (.code_i(seb_i), .dec_o(db), .care_o(cb));
  hif4_scale u_dut (.sum_i(sum_i), .sea_i(sea_i), .seb_i(seb_i), .t_neg_o(t_neg), .t_mag_o(t_mag),
    .t_exp_o(t_exp), .nan_o(nan));

  always_comb begin
    s = $signed(sum_i);
    assume (s >= -50176 && s <= 50176);
    p = s * $signed({28'd0, da[3:0]}) * $signed({28'd0, db[3:0]});  // s * a.sc.m * b.sc.m
    e = $signed(da[12:4]) + $signed(db[12:4]) - 8;                  // a.sc.e + b.sc.e - 8
    ok_o = (nan == (da[15] | db[15])) &&
           (nan || (t_neg == (p < 0) && 32'(t_mag) == ((p < 0) ? -p : p) && $signed(t_exp) == e));
  end
endmodule

// nvfp4_scale == golden's exact sum of the four group terms (dot_exact / ExactDot on kind
// mxf4nvf4, grouped by 16): term g = s4[g] * mA * mB * 2^(eA + eB - 8) (s4 = sum of (2a)(2b), UE4M3
// = m * 2^(e - 3); off = 8), T = the exact sum, as sign and |T| in units of 2^-20; NaN when any
// scale is NaN (the term is then not read). An exact zero T is -0 only when every product is -0
// (ExactDot's all_neg_zero): in every group all signs negative (all_neg_i) and every product zero
// (all_zero_i, or a zero scale). Also checked: every term is a multiple of 2^-20 and |T| < 2^48.
// Assumption: each group sum |s4| <= 2304 (fp4_dot16's range: 16 products of at most 12 * 12).
module chk_nvfp4_scale (
  input  logic [4*13-1:0] sum_i,
  input  logic [3:0]      all_zero_i,
  input  logic [3:0]      all_neg_i,
  input  logic [31:0]     sfa_i,
  input  logic [31:0]     sfb_i,
  output logic            ok_o
);
  logic [4*16-1:0]    da, db;
  logic               t_neg, nan, r_nan, r_nz, fits;
  logic [48:0]        t_mag;
  logic signed [23:0] n;
  logic signed [63:0] x, tot;
  int                 sh;

  ref_dec_scales #(.ScaleFmt(0), .N(4)) u_dec (.sfa_i(sfa_i), .sfb_i(sfb_i), .da_o(da), .db_o(db));
  nvfp4_scale u_dut (.sum_i(sum_i), .all_zero_i(all_zero_i), .all_neg_i(all_neg_i), .sfa_i(sfa_i),
    .sfb_i(sfb_i), .t_neg_o(t_neg), .t_mag_o(t_mag), .nan_o(nan));

  always_comb begin
    tot   = '0;
    r_nan = 1'b0;
    r_nz  = 1'b1;
    fits  = 1'b1;
    for (int g = 0; g < 4; g++) begin
      // fp4_dot16's range: 16 products (2a)(2b) with |2a|, |2b| <= 12
      assume ($signed(sum_i[g*13 +: 13]) >= -2304 && $signed(sum_i[g*13 +: 13]) <= 2304);
      r_nan = r_nan | da[g*16+15] | db[g*16+15];
      n     = $signed(sum_i[g*13 +: 13]) * $signed({1'b0, da[g*16 +: 4]}) *
              $signed({1'b0, db[g*16 +: 4]});                          // s4 * mA * mB
      sh    = $signed(da[g*16+4 +: 9]) + $signed(db[g*16+4 +: 9]) - 8 + 20;  // in units of 2^-20
      if (n != 0) begin
        fits = fits && sh >= 0 && sh <= 28;
        x    = {{40{n[23]}}, n} <<< sh;
      end else begin
        x = '0;
      end
      tot  = tot + x;
      r_nz = r_nz && all_neg_i[g] &&
             (all_zero_i[g] || da[g*16 +: 4] == 4'd0 || db[g*16 +: 4] == 4'd0);
    end
    ok_o = (nan == r_nan) &&
           (nan || (fits && tot < 64'sh1_0000_0000_0000 && tot > -64'sh1_0000_0000_0000 &&
                    t_neg == ((tot == 0) ? r_nz : (tot < 0)) &&
                    64'(t_mag) == ((tot < 0) ? -tot : tot)));
  end
endmodule

// nvfp4_pts_mul's back end: fp4sim_fp32_add_round with W = 48, the exact 48-bit significand
// product as its only operand (sml = 0, dist = 51, zero = (prod == 0)) == ref_fp32_add_round on the
// same (golden round_to_fp32 of prod * 2^(top_exp - 47), RN-even). prod is not normalized here
// (subnormal factors); top_exp = la + lb + 47 in [-251, 255] (two FP32 LSB exponents in [-149,
// 104]). The front end (unpack, multiply, specials) is tested only.
module chk_pts_round (
  input  logic [47:0] prod_i,
  input  logic [13:0] top_exp_i,
  input  logic        neg_i,
  output logic        ok_o
);
  logic [31:0] d_dut, d_ref;
  int          lead;

  assign lead = $signed(top_exp_i);
  always_comb assume (lead >= -251 && lead <= 255);
  fp4sim_fp32_add_round #(.W(48)) u_dut (
    .big_i(prod_i), .sml_i('0), .big_lead_i(top_exp_i), .dist_i(8'd51), .big_neg_i(neg_i),
    .eff_sub_i(1'b0), .zero_i(prod_i == '0), .zero_neg_i(neg_i), .d_o(d_dut));
  ref_fp32_add_round #(.W(48)) u_ref (
    .big_i(prod_i), .sml_i('0), .big_lead_i(lead), .d_i(51), .big_neg_i(neg_i),
    .eff_sub_i(1'b0), .zero_i(prod_i == '0), .zero_neg_i(neg_i), .d_o(d_ref));
  assign ok_o = (d_dut == d_ref);
endmodule

// bs_k64_scale == golden bw_grouped_step up to from_trunc_sum (mma_core.hpp): max_e = the largest
// of ec and every group's eA + eB (zero groups too), t = ref_golden_pkg::shift_trunc(mc, ec - 23 - lsb) + sum over
// g of ref_golden_pkg::shift_trunc(s4[g] * mA * mB, e[g] - off - lsb), lsb = max_e - 35; checked: max_e_o ==
// max_e, sum_o + carry_o == t mod 2^TW and t within TW-bit two's complement (what bs_k64_sum reads),
// nan_o == any scale NaN (then nothing else is read). Assumptions: C finite (bs_dot_k64 routes NaN
// and Inf C to its special outcome before reading this block's sum); |s4| <= 2304 (fp4_dot16).
module chk_bs_k64_scale #(
  parameter int unsigned ScaleFmt = 0,
  parameter int unsigned Block    = 16
) (
  input  logic [4*13-1:0]       sum_i,
  input  logic [64/Block*8-1:0] sfa_i,
  input  logic [64/Block*8-1:0] sfb_i,
  input  logic [31:0]           c_i,
  output logic                  ok_o
);
  localparam int unsigned NumSc = 64 / Block;
  localparam int unsigned TW    = 58 - ((ScaleFmt == 0) ? 8 : 2);
  localparam int          Off   = (ScaleFmt == 0) ? 8 : 2;  // 2 + 2 * mbits(scale)

  logic [NumSc*16-1:0] da, db;
  logic [TW-1:0]       s_o, c_o, tt;
  logic [11:0]         max_e_o;
  logic                nan, r_nan;
  logic [7:0]          ef;
  logic signed [63:0]  mc, t, n, v;
  logic [63:0]         a;
  int                  ec, max_e, lsb, sh, e [4];

  ref_dec_scales #(.ScaleFmt(ScaleFmt), .N(NumSc)) u_dec (.sfa_i(sfa_i), .sfb_i(sfb_i), .da_o(da), .db_o(db));
  bs_k64_scale #(.ScaleFmt(ScaleFmt), .Block(Block)) u_dut (.sum_i(sum_i), .sfa_i(sfa_i),
    .sfb_i(sfb_i), .c_i(c_i), .sum_o(s_o), .carry_o(c_o), .max_e_o(max_e_o), .nan_o(nan));

  always_comb begin
    assume (c_i[30:23] != 8'hFF);
    // fp4_dot16's range: 16 products (2a)(2b) with |2a|, |2b| <= 12
    for (int g = 0; g < 4; g++)
      assume ($signed(sum_i[g*13 +: 13]) >= -2304 && $signed(sum_i[g*13 +: 13]) <= 2304);
  end


  always_comb begin
    r_nan = 1'b0;
    for (int j = 0; j < NumSc; j++) r_nan = r_nan | da[j*16+15] | db[j*16+15];
    ef    = c_i[30:23];                                            // split_c
    mc    = $signed({40'd0, ef != 8'd0, c_i[22:0]});
    if (c_i[31]) mc = -mc;
    ec    = (ef == 8'd0) ? -126 : $signed({24'd0, ef}) - 127;
    max_e = ec;
    for (int g = 0; g < 4; g++) begin
      e[g] = $signed(da[(g*16/Block)*16+4 +: 9]) + $signed(db[(g*16/Block)*16+4 +: 9]);
      if (e[g] > max_e) max_e = e[g];
    end
    lsb = max_e - 35;
    t   = ref_golden_pkg::shift_trunc(mc, ec - 23 - lsb);
    for (int g = 0; g < 4; g++) begin
      n = $signed({{51{sum_i[g*13+12]}}, sum_i[g*13 +: 13]}) *
          $signed({60'd0, da[(g*16/Block)*16 +: 4]}) * $signed({60'd0, db[(g*16/Block)*16 +: 4]});
      t = t + ref_golden_pkg::shift_trunc(n, e[g] - Off - lsb);
    end
    tt   = TW'(t);
    ok_o = (nan == r_nan) &&
           (nan || ($signed(max_e_o) == max_e && TW'(s_o + c_o) == tt &&
                    $signed({{(64-TW){tt[TW-1]}}, tt}) == t));
  end
endmodule

module chk_bs_k64_scale_ue4m3 (
  input  logic [51:0] sum_i,
  input  logic [31:0] sfa_i, sfb_i, c_i,
  output logic        ok_o
);
  chk_bs_k64_scale #(.ScaleFmt(0), .Block(16)) u (.*);
endmodule

module chk_bs_k64_scale_ue8m0 (
  input  logic [51:0] sum_i,
  input  logic [15:0] sfa_i, sfb_i,
  input  logic [31:0] c_i,
  output logic        ok_o
);
  chk_bs_k64_scale #(.ScaleFmt(1), .Block(32)) u (.*);
endmodule

// bs_k64_scale, leaf by leaf (its whole check above is open): bs_k64_align, bs_k64_term and
// bs_k64_csa each against the piece of golden bw_grouped_step it computes; docs/rtl.md composes
// them. shift_trunc is golden's (mma_core.hpp), as in chk_bs_k64_scale.

// bs_k64_term == ref_golden_pkg::shift_trunc(s4 * mA * mB, e_g - off - lsb) for the distance d = max_e - e_g that
// sh_i holds (e_g - off - lsb = Lsh - d, lsb = max_e - 35): t_o + neg == the truncated term mod
// 2^TW, and |term| < 2^(20 + Lsh) (so five of them and ncnt fit TW bits). sh_i = 63 stands for every
// d >= 63: the reference is 0 there for any such d (|N| < 2^20 and Lsh - 63 <= -20).
// Assumption: |s4| <= 2304 (fp4_dot16). Every significand 0..15 is allowed.
module chk_k64_term #(
  parameter int unsigned Lsh = 27,
  parameter int unsigned TW  = 50
) (
  input  logic [12:0] sum_i,
  input  logic [3:0]  sig_a_i,
  input  logic [3:0]  sig_b_i,
  input  logic [5:0]  sh_i,
  output logic        ok_o
);
  logic [TW-1:0]      t;
  logic signed [63:0] n, v, m;

  bs_k64_term #(.Lsh(Lsh), .TW(TW)) u_dut (.sum_i(sum_i), .sig_a_i(sig_a_i), .sig_b_i(sig_b_i),
    .sh_i(sh_i), .t_o(t));

  always_comb assume ($signed(sum_i) >= -2304 && $signed(sum_i) <= 2304);


  // N = s4 * mA * mB as golden computes it, its magnitude formed as |s4| * (mA * mB) (the same
  // integer; shift_trunc works on the magnitude): multiplier equivalence across association orders
  // is what SAT solvers cannot do, and nothing about the datapath is assumed by it.
  logic [11:0] s_abs;
  logic [7:0]  p;
  always_comb begin
    s_abs = sum_i[12] ? 12'(-sum_i) : sum_i[11:0];
    p     = 8'(sig_a_i) * 8'(sig_b_i);
    n     = $signed(64'(20'(s_abs) * 20'(p)));
    if (sum_i[12]) n = -n;
    v    = ref_golden_pkg::shift_trunc(n, $signed(Lsh) - $signed({26'd0, sh_i}));
    m    = v[63] ? -v : v;
    ok_o = (TW'(t + TW'(sum_i[12])) == TW'(v)) && (m < (64'sd1 <<< (20 + Lsh)));
  end
endmodule

module chk_k64_term_ue4m3 (
  input  logic [12:0] sum_i,
  input  logic [3:0]  sig_a_i, sig_b_i,
  input  logic [5:0]  sh_i,
  output logic        ok_o
);
  chk_k64_term #(.Lsh(27), .TW(50)) u (.*);
endmodule

module chk_k64_term_ue8m0 (
  input  logic [12:0] sum_i,
  input  logic [3:0]  sig_a_i, sig_b_i,
  input  logic [5:0]  sh_i,
  output logic        ok_o
);
  chk_k64_term #(.Lsh(33), .TW(56)) u (.*);
endmodule

// bs_k64_csa: sum_o + carry_o == t0 + t1 + t2 + t3 + t4 + ncnt mod 2^TW, for all inputs.
module chk_k64_csa #(
  parameter int unsigned TW = 50
) (
  input  logic [5*TW-1:0] t_i,
  input  logic [2:0]      ncnt_i,
  output logic            ok_o
);
  logic [TW-1:0] s, c, want;
  bs_k64_csa #(.TW(TW)) u_dut (.t_i(t_i), .ncnt_i(ncnt_i), .sum_o(s), .carry_o(c));
  always_comb begin
    want = TW'(ncnt_i);
    for (int i = 0; i < 5; i++) want = want + t_i[i*TW +: TW];
    ok_o = (TW'(s + c) == want);
  end
endmodule

module chk_k64_csa_ue4m3 (
  input  logic [249:0] t_i,
  input  logic [2:0]   ncnt_i,
  output logic         ok_o
);
  chk_k64_csa #(.TW(50)) u (.*);
endmodule

module chk_k64_csa_ue8m0 (
  input  logic [279:0] t_i,
  input  logic [2:0]   ncnt_i,
  output logic         ok_o
);
  chk_k64_csa #(.TW(56)) u (.*);
endmodule

// bs_k64_align == bw_grouped_step's exponents and C term: e[g] = sa.e + sb.e (zero groups too),
// max_e = max(ec, e[g]), per group the distance max_e - e[g] (63 for 63 or more) and the scale
// significands sa.m, sb.m (golden decoders, gen_decode_ref), C's term t_c + sign(C) ==
// ref_golden_pkg::shift_trunc(mc, ec - 23 - lsb) mod 2^TW with lsb = max_e - 35, ncnt == the negative group sums
// and C, NaN == a scale decodes to NaN (then nothing else is read). Assumption: C finite.
module chk_k64_align #(
  parameter int unsigned ScaleFmt = 0,
  parameter int unsigned Block    = 16
) (
  input  logic [3:0]            neg_i,
  input  logic [64/Block*8-1:0] sfa_i,
  input  logic [64/Block*8-1:0] sfb_i,
  input  logic [31:0]           c_i,
  output logic                  ok_o
);
  localparam int unsigned NumSc = 64 / Block;
  localparam int unsigned TW    = 58 - ((ScaleFmt == 0) ? 8 : 2);

  /* verilator lint_off UNUSEDSIGNAL */
  logic [NumSc*16-1:0] da, db;
  /* verilator lint_on UNUSEDSIGNAL */
  logic [15:0]         sig_a, sig_b;
  logic [23:0]         sh;
  logic [TW-1:0]       t_c;
  logic [2:0]          ncnt;
  logic [11:0]         max_e_o;
  logic                nan, r_nan, good;
  logic [7:0]          ef;
  logic signed [63:0]  mc, tc;
  int                  ec, max_e, lsb, si, d, e [4];

  ref_dec_scales #(.ScaleFmt(ScaleFmt), .N(NumSc)) u_dec (.sfa_i(sfa_i), .sfb_i(sfb_i), .da_o(da), .db_o(db));
  bs_k64_align #(.ScaleFmt(ScaleFmt), .Block(Block)) u_dut (.neg_i(neg_i), .sfa_i(sfa_i),
    .sfb_i(sfb_i), .c_i(c_i), .sig_a_o(sig_a), .sig_b_o(sig_b), .sh_o(sh), .t_c_o(t_c),
    .ncnt_o(ncnt), .max_e_o(max_e_o), .nan_o(nan));

  always_comb assume (c_i[30:23] != 8'hFF);


  always_comb begin
    r_nan = 1'b0;
    for (int j = 0; j < NumSc; j++) r_nan = r_nan | da[j*16+15] | db[j*16+15];
    ef    = c_i[30:23];                                            // split_c
    mc    = $signed({40'd0, ef != 8'd0, c_i[22:0]});
    if (c_i[31]) mc = -mc;
    ec    = (ef == 8'd0) ? -126 : $signed({24'd0, ef}) - 127;
    max_e = ec;
    for (int g = 0; g < 4; g++) begin
      si   = g * 16 / Block;                                       // si = g * group / block
      e[g] = $signed(da[si*16+4 +: 9]) + $signed(db[si*16+4 +: 9]);
      if (e[g] > max_e) max_e = e[g];
    end
    lsb  = max_e - 35;
    tc   = ref_golden_pkg::shift_trunc(mc, ec - 23 - lsb);
    good = ($signed(max_e_o) == max_e) && (TW'(t_c + TW'(c_i[31])) == TW'(tc)) &&
           (ncnt == 3'(neg_i[0]) + 3'(neg_i[1]) + 3'(neg_i[2]) + 3'(neg_i[3]) + 3'(c_i[31]));
    for (int g = 0; g < 4; g++) begin
      si = g * 16 / Block;
      d  = max_e - e[g];
      good = good && (sh[g*6 +: 6] == ((d >= 63) ? 6'd63 : 6'(d))) &&
             (sig_a[g*4 +: 4] == da[si*16 +: 4]) && (sig_b[g*4 +: 4] == db[si*16 +: 4]);
    end
    ok_o = (nan == r_nan) && (nan || good);
  end
endmodule

module chk_k64_align_ue4m3 (
  input  logic [3:0]  neg_i,
  input  logic [31:0] sfa_i, sfb_i, c_i,
  output logic        ok_o
);
  chk_k64_align #(.ScaleFmt(0), .Block(16)) u (.*);
endmodule

module chk_k64_align_ue8m0 (
  input  logic [3:0]  neg_i,
  input  logic [15:0] sfa_i, sfb_i,
  input  logic [31:0] c_i,
  output logic        ok_o
);
  chk_k64_align #(.ScaleFmt(1), .Block(32)) u (.*);
endmodule

// bs_k32_front against golden bw_fused_step (mma_core.hpp) for a finite outcome (the special
// outcome is proof special_k32): its per-lane products, alignment distances, C's term and the
// largest exponent. bs_k32_combine is proven by its steps (k32_combine_steps.sv); docs/rtl.md
// composes them.

// bs_k32_front == bw_fused_step's exponents: es = sa.e + sb.e (golden's UE8M0 decoder), per lane
// ek = ea.e + eb.e + es (a zero at -126), max_e = max(ec, ek), lsb = max_e - 25; each lane's term
// ref_golden_pkg::shift_trunc(ea.m * eb.m, ek - off - lsb) is (p_mag << 23) >> p_sh with p_mag = |ea.m * eb.m|,
// p_neg its sign, so p_sh == 23 - (ek - off - lsb) (63 for 63 or more: every bit out); C's term
// ref_golden_pkg::shift_trunc(mc, ec - 23 - lsb) is (c_mag << 2) >> c_sh. The lanes are decoded by bs_k32_dec on
// both sides: the decoder proof shows it equal to golden's decode on every field a finite lane
// reads (the special outcome is NaN or Inf whenever a lane is not finite).
module chk_k32_front #(
  parameter bit MaxOnly = 0,  // 1: max_e_o only; 0: the rest, lsb from max_e_o (proven by MaxOnly)
  parameter int Lane    = -1  // 0..31: that lane's term only (and C's); -1: every lane
) (
  input  logic [255:0] a_i,
  input  logic [255:0] b_i,
  input  logic [2:0]   fmt_a_i,
  input  logic [2:0]   fmt_b_i,
  input  logic [7:0]   sfa_i,
  input  logic [7:0]   sfb_i,
  input  logic [31:0]  c_i,
  output logic         ok_o
);
  logic [32*8-1:0]  p_mag;
  logic [31:0]      p_neg;
  logic [32*6-1:0]  p_sh;
  logic [23:0]      c_mag;
  logic             c_neg;
  logic [5:0]       c_sh;
  logic [11:0]      max_e_o;
  logic [1:0]       sp;
  logic [32*13-1:0] ra, rb;
  /* verilator lint_off UNUSEDSIGNAL */
  logic [15:0]      rsa, rsb, csa, csb;
  logic [12:0]      ea, eb;
  /* verilator lint_on UNUSEDSIGNAL */
  logic             good, bound, member;
  int               ec, es, lsb, off, d, mba, mbb, ek_a, ek_b;
  int               pe [32];

  bs_k32_front u_dut (.a_i(a_i), .b_i(b_i), .fmt_a_i(fmt_a_i), .fmt_b_i(fmt_b_i), .sfa_i(sfa_i),
    .sfb_i(sfb_i), .c_i(c_i), .p_mag_o(p_mag), .p_neg_o(p_neg), .p_sh_o(p_sh), .c_mag_o(c_mag),
    .c_neg_o(c_neg), .c_sh_o(c_sh), .max_e_o(max_e_o), .special_o(sp));
  for (genvar k = 0; k < 32; k++) begin : g_dec
    bs_k32_dec u_ra (.fmt_i(fmt_a_i), .code_i(a_i[k*8 +: 8]), .dec_o(ra[k*13 +: 13]));
    bs_k32_dec u_rb (.fmt_i(fmt_b_i), .code_i(b_i[k*8 +: 8]), .dec_o(rb[k*13 +: 13]));
  end
  ref_dec_ue8m0 u_rsa (.code_i(sfa_i), .dec_o(rsa), .care_o(csa));
  ref_dec_ue8m0 u_rsb (.code_i(sfb_i), .dec_o(rsb), .care_o(csb));

  function automatic int mbits(input logic [2:0] fmt);  // golden's format table: E4M3 for 5..7
    unique case (fmt)
      3'd1:    mbits = 2;  // E5M2
      3'd2:    mbits = 3;  // E2M3
      3'd3:    mbits = 2;  // E3M2
      3'd4:    mbits = 1;  // E2M1
      default: mbits = 3;  // E4M3
    endcase
  endfunction

  always_comb begin
    ec    = (c_i[30:23] == 8'd0) ? -126 : $signed({24'd0, c_i[30:23]}) - 127;  // split_c
    es    = $signed(rsa[12:4]) + $signed(rsb[12:4]);                 // sa.e + sb.e
    for (int k = 0; k < 32; k++) begin
      ea    = ra[k*13 +: 13];
      eb    = rb[k*13 +: 13];
      ek_a  = ea[10] ? -126 : $signed(ea[8:4]);                     // a zero's e is -126
      ek_b  = eb[10] ? -126 : $signed(eb[8:4]);
      pe[k] = ek_a + ek_b;
    end
    // The lanes' terms read lsb = max_e - 25 (c.frac_bits = 25) with max_e from the DUT's max_e_o:
    // MaxOnly = 1 proves it golden's (separately: the slow part for the solver).
    lsb  = $signed(max_e_o) - 25;
    mba  = mbits(fmt_a_i);
    mbb  = mbits(fmt_b_i);
    off  = mba + mbb;
    d    = 2 - (ec - 23 - lsb);                                      // c: (c_mag << 2) >> c_sh
    good = (c_mag == {c_i[30:23] != 8'd0, c_i[22:0]}) && (c_neg == c_i[31]) &&
           (ec > $signed(max_e_o) || c_sh == ((d >= 63) ? 6'd63 : 6'(d)));
    for (int k = 0; k < 32; k++) begin
      ea   = ra[k*13 +: 13];
      eb   = rb[k*13 +: 13];
      d    = 23 - (pe[k] + es - off - lsb);
      // Given that max_e_o bounds the lane's exponent (it is the maximum: MaxOnly), so the
      // distance is not negative.
      if (Lane < 0 || Lane == k)
        good = good && (p_mag[k*8 +: 8] == 8'(ea[3:0]) * 8'(eb[3:0])) && (p_neg[k] == (ea[9] ^ eb[9])) &&
               (pe[k] + es > $signed(max_e_o) || p_sh[k*6 +: 6] == ((d >= 63) ? 6'd63 : 6'(d)));
    end
    // golden's linear scan returns the maximum of {ec, ek}: the one member of the set that bounds
    // every member. Stated that way (a bound, and a member) instead of as the scan itself, the
    // solver follows the DUT's tree path by path; against the 33-step scan it had no answer in 15
    // minutes.
    bound  = ($signed(max_e_o) >= ec);
    member = ($signed(max_e_o) == ec);
    for (int k = 0; k < 32; k++) begin
      bound  = bound && ($signed(max_e_o) >= pe[k] + es);
      member = member || ($signed(max_e_o) == pe[k] + es);
    end
    if (MaxOnly) ok_o = (sp != fp4sim_dp_pkg::SpFinite) || (bound && member);
    else ok_o = (sp != fp4sim_dp_pkg::SpFinite) || good;
  end
endmodule

module chk_k32_front_max (
  input  logic [255:0] a_i,
  input  logic [255:0] b_i,
  input  logic [2:0]   fmt_a_i,
  input  logic [2:0]   fmt_b_i,
  input  logic [7:0]   sfa_i,
  input  logic [7:0]   sfb_i,
  input  logic [31:0]  c_i,
  output logic         ok_o
);
  chk_k32_front #(.MaxOnly(1)) u (.*);
endmodule

module chk_fp32_add_compose_hif4 (
  input  logic [31:0] c_i,
  input  logic        t_neg_i,
  input  logic [21:0] t_mag_i,
  input  logic [9:0]  t_exp_i,
  output logic        ok_o
);
  chk_fp32_add_compose #(.TermW(22), .ExpW(10), .TLo(-104), .THi(22)) u (.*);
endmodule

module chk_fp32_add_compose_nvfp4 (
  input  logic [31:0] c_i,
  input  logic        t_neg_i,
  input  logic [48:0] t_mag_i,
  input  logic [7:0]  t_exp_i,
  output logic        ok_o
);
  chk_fp32_add_compose #(.TermW(49), .ExpW(8), .TLo(-128), .THi(127)) u (.*);
endmodule

// fp4sim_csa_3to2: x + y + z == sum_o + carry_o mod 2^W, for all inputs (bs_k64_csa's rows).
module chk_csa_3to2 #(
  parameter int unsigned W = 50
) (
  input  logic [W-1:0] x_i,
  input  logic [W-1:0] y_i,
  input  logic [W-1:0] z_i,
  output logic         ok_o
);
  logic [W-1:0] s, c;
  fp4sim_csa_3to2 #(.W(W)) u_dut (.x_i(x_i), .y_i(y_i), .z_i(z_i), .sum_o(s), .carry_o(c));
  assign ok_o = (W'(s + c) == W'(x_i + y_i + z_i));
endmodule
