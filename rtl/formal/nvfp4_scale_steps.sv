// nvfp4_scale == golden's exact sum of its four group terms (scripts/formal.sh, ARITH ids
// nvfp4_scale_*), decomposed group by group.
//
// The whole check (chk_nvfp4_scale in arith_checks.sv) gets no answer from yosys sat or ABC in 10
// minutes: golden multiplies s4 * mA * mB signed, the RTL |s4| * (mA * mB) and negates the shifted
// term, and the four terms are summed with the negation's +1 carried separately, so no internal node
// of the two sides is equal for SAT sweeping to merge. The proof follows the RTL's loop instead:
//   (1) nvfp4_scale == nvfp4_scale_chain: the RTL as four nvfp4_scale_grp steps (its loop body, the
//       same expressions in the same order: the flattened netlists merge) and nvfp4_scale_fin (its
//       final sign / magnitude). All inputs.
//   (2) chk_nvfp4_scale_grp: one step against golden's term, for every running total: with
//       |s4| <= 2304, total_o == total_i + T_g mod 2^50 where T_g = s4 * mA * mB * 2^(eA + eB - 8)
//       in units of 2^-20 (golden decoders), T_g an integer (eA + eB + 12 >= 0 when T_g != 0) and
//       |T_g| < 2^47; nan_o = nan_i | a NaN scale; neg_zero_o = neg_zero_i & the group's products
//       are all -0 (ExactDot's all_neg_zero).
//   (3) chk_nvfp4_scale_fin: for every 50-bit total (as a signed value) and zero flag, the outputs
//       are the sign and magnitude of that value, and the flag's sign at 0.
// Composition: the chain starts at total 0, neg_zero 1, nan 0. By (2) four times, the final total
// is T = T_0 + .. + T_3 mod 2^50 and |T| < 4 * 2^47 = 2^49, so the 50-bit total is T exactly; by
// (3) the outputs are T's sign (the all-(-0) rule when T = 0) and |T|; by (1) those are
// nvfp4_scale's. (2) and (3) hold for every total, so they apply at every step whatever came
// before; which input bits each step reads is checked against the real module by (1).

// One group: nvfp4_scale's loop body, group g's slices as ports.
module nvfp4_scale_grp (
  input  logic [49:0] total_i,
  input  logic        neg_zero_i,
  input  logic        nan_i,
  input  logic [12:0] sum_i,
  input  logic        all_zero_i,
  input  logic        all_neg_i,
  input  logic [7:0]  sfa_i,
  input  logic [7:0]  sfb_i,
  output logic [49:0] total_o,
  output logic        neg_zero_o,
  output logic        nan_o
);
  /* verilator lint_off UNUSEDSIGNAL */
  fp4sim_pkg::dec_t ta, tb;
  /* verilator lint_on UNUSEDSIGNAL */
  logic [11:0] s_mag;
  logic [7:0]  sprod;
  logic [19:0] n_mag;
  logic [4:0]  sh;
  logic [47:0] x_mag;
  always_comb begin
    ta         = fp4sim_pkg::DecUe4m3[{sfa_i[6:0], 4'd0} +: 16];
    tb         = fp4sim_pkg::DecUe4m3[{sfb_i[6:0], 4'd0} +: 16];
    nan_o      = nan_i | ta.nan | tb.nan;
    s_mag      = sum_i[12] ? 12'(-sum_i) : sum_i[11:0];
    sprod      = 8'(ta.sig) * 8'(tb.sig);
    n_mag      = 20'(s_mag) * 20'(sprod);
    sh         = (sprod == 8'd0) ? 5'd0 : 5'(ta.exp + tb.exp + 9'd12);
    x_mag      = 48'(n_mag) << sh;
    total_o    = total_i + (50'(x_mag) ^ {50{sum_i[12]}}) + 50'(sum_i[12]);
    neg_zero_o = neg_zero_i & all_neg_i & (all_zero_i | (sprod == 8'd0));
  end
endmodule

// nvfp4_scale's outputs from the final total.
module nvfp4_scale_fin (
  input  logic [49:0] total_i,
  input  logic        neg_zero_i,
  output logic        t_neg_o,
  output logic [48:0] t_mag_o
);
  assign t_neg_o = (total_i == '0) ? neg_zero_i : total_i[49];
  assign t_mag_o = total_i[49] ? 49'(-total_i) : 49'(total_i);
endmodule

module nvfp4_scale_chain (
  input  logic [4*13-1:0] sum_i,
  input  logic [3:0]      all_zero_i,
  input  logic [3:0]      all_neg_i,
  input  logic [31:0]     sfa_i,
  input  logic [31:0]     sfb_i,
  output logic            t_neg_o,
  output logic [48:0]     t_mag_o,
  output logic            nan_o
);
  logic [5*50-1:0] tot;
  logic [4:0]      nz, nan;
  assign tot[49:0] = '0;
  assign nz[0]     = 1'b1;
  assign nan[0]    = 1'b0;
  for (genvar g = 0; g < 4; g++) begin : g_grp
    nvfp4_scale_grp u_grp (.total_i(tot[g*50 +: 50]), .neg_zero_i(nz[g]), .nan_i(nan[g]),
      .sum_i(sum_i[g*13 +: 13]), .all_zero_i(all_zero_i[g]), .all_neg_i(all_neg_i[g]),
      .sfa_i(sfa_i[g*8 +: 8]), .sfb_i(sfb_i[g*8 +: 8]), .total_o(tot[(g+1)*50 +: 50]),
      .neg_zero_o(nz[g+1]), .nan_o(nan[g+1]));
  end
  nvfp4_scale_fin u_fin (.total_i(tot[4*50 +: 50]), .neg_zero_i(nz[4]), .t_neg_o(t_neg_o),
    .t_mag_o(t_mag_o));
  assign nan_o = nan[4];
endmodule

// (1) the module equals its steps, every input.
module chk_nvfp4_scale_chain (
  input  logic [4*13-1:0] sum_i,
  input  logic [3:0]      all_zero_i,
  input  logic [3:0]      all_neg_i,
  input  logic [31:0]     sfa_i,
  input  logic [31:0]     sfb_i,
  output logic            ok_o
);
  logic        n0, n1, v0, v1;
  logic [48:0] m0, m1;
  nvfp4_scale u_dut (.sum_i, .all_zero_i, .all_neg_i, .sfa_i, .sfb_i, .t_neg_o(n0), .t_mag_o(m0),
    .nan_o(v0));
  nvfp4_scale_chain u_chain (.sum_i, .all_zero_i, .all_neg_i, .sfa_i, .sfb_i, .t_neg_o(n1),
    .t_mag_o(m1), .nan_o(v1));
  assign ok_o = (n0 == n1) && (m0 == m1) && (v0 == v1);
endmodule

// (2) one step == running total plus golden's group term (golden decoders from gen_decode_ref).
// Checked in two parts (the whole lemma at once: no answer from yosys sat in 5 minutes):
// (2a) chk_nvfp4_scale_grp with the running total 0: the step's output is golden's term T_g;
// (2b) chk_nvfp4_scale_add: for every total_i, step(total_i) == total_i + step(0) mod 2^50 (the
//      same step twice: the products merge, only the adds' association differs).
module chk_nvfp4_scale_add (
  input  logic [49:0] total_i,
  input  logic [12:0] sum_i,
  input  logic [7:0]  sfa_i,
  input  logic [7:0]  sfb_i,
  output logic        ok_o
);
  logic [49:0] t1, t0;
  logic        u0, u1, u2, u3;
  nvfp4_scale_grp u_any (.total_i, .neg_zero_i(1'b0), .nan_i(1'b0), .sum_i, .all_zero_i(1'b0),
    .all_neg_i(1'b0), .sfa_i, .sfb_i, .total_o(t1), .neg_zero_o(u0), .nan_o(u1));
  nvfp4_scale_grp u_zero (.total_i(50'd0), .neg_zero_i(1'b0), .nan_i(1'b0), .sum_i,
    .all_zero_i(1'b0), .all_neg_i(1'b0), .sfa_i, .sfb_i, .total_o(t0), .neg_zero_o(u2),
    .nan_o(u3));
  assign ok_o = (t1 == total_i + t0);
endmodule

module chk_nvfp4_scale_grp (
  input  logic [49:0] total_i,
  input  logic        neg_zero_i,
  input  logic        nan_i,
  input  logic [12:0] sum_i,
  input  logic        all_zero_i,
  input  logic        all_neg_i,
  input  logic [7:0]  sfa_i,
  input  logic [7:0]  sfb_i,
  output logic        ok_o
);
  logic [15:0]        da, db, ca, cb;
  logic [49:0]        tot, r_tot;
  logic               nz, nan, r_nan, r_nz, fits;
  logic signed [23:0] n;
  logic signed [63:0] x;
  int                 sh;
  logic [11:0]        s_abs;
  logic [7:0]         p;
  /* verilator lint_off UNUSEDSIGNAL */
  fp4sim_pkg::dec_t   pa, pb;
  /* verilator lint_on UNUSEDSIGNAL */

  ref_dec_ue4m3 u_da (.code_i(sfa_i), .dec_o(da), .care_o(ca));
  ref_dec_ue4m3 u_db (.code_i(sfb_i), .dec_o(db), .care_o(cb));
  nvfp4_scale_grp u_dut (.total_i, .neg_zero_i, .nan_i, .sum_i, .all_zero_i, .all_neg_i, .sfa_i,
    .sfb_i, .total_o(tot), .neg_zero_o(nz), .nan_o(nan));

  always_comb begin
    // fp4_dot16's range: 16 products (2a)(2b) with |2a|, |2b| <= 12
    assume ($signed(sum_i) >= -2304 && $signed(sum_i) <= 2304);
    assume (total_i == '0);  // (2a); (2b) adds any running total
    r_nan = nan_i | da[15] | db[15];
    // s4 * mA * mB, its magnitude formed as |s4| * (mA * mB) (the same integer; SAT solvers cannot
    // equate multipliers across association orders), the significands read through fp4sim_pkg's
    // DecUe4m3, which the decoder proof (ue4m3) shows equal to golden's on every finite code.
    s_abs = sum_i[12] ? 12'(-sum_i) : sum_i[11:0];
    pa    = fp4sim_pkg::DecUe4m3[{sfa_i[6:0], 4'd0} +: 16];
    pb    = fp4sim_pkg::DecUe4m3[{sfb_i[6:0], 4'd0} +: 16];
    p     = 8'(pa.sig) * 8'(pb.sig);
    n     = $signed({4'd0, 20'(s_abs) * 20'(p)});
    if (sum_i[12]) n = -n;
    sh    = $signed(da[12:4]) + $signed(db[12:4]) - 8 + 20;                       // units of 2^-20
    fits  = 1'b1;
    x     = '0;
    if (n != 0) begin
      fits = sh >= 0 && sh <= 28;
      x    = {{40{n[23]}}, n} <<< sh;
    end
    r_tot = total_i + x[49:0];  // mod 2^50
    r_nz  = neg_zero_i && all_neg_i && (all_zero_i || p == 8'd0);
    ok_o  = (nan == r_nan) && (nz == r_nz) &&
            // a NaN group's term is never read (nan_o is sticky along the chain)
            (r_nan || (fits && x < 64'sh8000_0000_0000 && x > -64'sh8000_0000_0000 &&
                       tot == r_tot));
  end
endmodule

// (3) the final sign and magnitude of the 50-bit total.
module chk_nvfp4_scale_fin (
  input  logic [49:0] total_i,
  input  logic        neg_zero_i,
  output logic        ok_o
);
  logic               t_neg;
  logic [48:0]        t_mag;
  logic signed [63:0] t;
  nvfp4_scale_fin u_dut (.total_i, .neg_zero_i, .t_neg_o(t_neg), .t_mag_o(t_mag));
  always_comb begin
    t    = {{14{total_i[49]}}, total_i};
    assume (t > -64'sh2_0000_0000_0000);  // |T| < 2^49 (composition), so |t| fits 49 bits
    ok_o = t_neg == ((t == 0) ? neg_zero_i : (t < 0)) && 64'(t_mag) == ((t < 0) ? -t : t);
  end
endmodule
