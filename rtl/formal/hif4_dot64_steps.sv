// The HiF4 element-array equivalence hif4_dot64 == hif4_dot64_ref (scripts/formal.sh), decomposed.
//
// ref (hif4_dot64_ref): R <- R + T_k for the 64 lanes k, T_k the lane's signed product shifted by
//   its four level bits on its own.
// new (hif4_dot64): per level-2 group h: s8 = 0; per quad q: s4 = 0, s4 <- s4 + v_k for its 4 lanes
//   (v_k the signed unshifted product), s8 <- s8 + (s4 <<< l3); then acc <- acc + (s8 <<< l2).
// Both sum the same 64 values, associated differently: a whole miter, and even one 8-lane group
// against the reference's 8 lanes, did not finish in 5-10 minutes (SAT on reassociated adders). So
// the proof follows the lanes one at a time with an invariant that relates the two states:
//   inv:  R == grp(acc, quad(s8, s4, l3), l2)      (grp, quad: the new design's two shift-adds)
// Proven for all inputs (yosys sat):
//   (1) hif4_dot64_ref == hif4_ref_chain: the reference as 64 hif4_ref_lane steps in lane order
//       (the same adds in the same order: the flattened netlists merge).
//   (2) hif4_dot64 == hif4_new_chain: hif4_dot64 as hif4_new_lane / hif4_new_quad / hif4_new_group
//       steps in its loop order (likewise).
//   (3) hif4_lane_lemma #(J), J = 0..3 (the lane's place in its quad): for every acc, s8, s4 with
//       |s4| <= 49 J, |s8| <= 784 and every lane input and level bits, inv before a lane implies inv
//       after it (R <- ref_lane(R), s4 <- new_lane(s4)), and |new s4| <= 49 (J + 1).
//   (4) hif4_book_lemma: inv holds at a group's start (R = acc, s8 = s4 = 0); it carries over a
//       quad's end (s8 <- quad(s8, s4), s4 <- 0, the next quad's l3); |s4| <= 196 gives |s8| <= 784.
// Composition: in group h, inv holds at the start (4), through quad 0's lanes (3, J = 0..3, s8 = 0),
// across the quad boundary (4), through quad 1's lanes (3, |s8| <= 784 by 4); then R equals
// grp(acc, quad(s8, s4)), which is the new acc of the next group by definition. By induction over the
// 8 groups the final R (ref's sum_o, by 1) equals the final acc (new's sum_o, by 2). The lemmas hold
// for all states, so they apply at every lane whatever the chains wire to it; which bits the chains
// wire where is checked against the real modules by (1) and (2), and both chains take lane k of
// group h, quad q from bits 4k+3:4k and its level bits from lv[h] and lv[8 + 2h + q].

// Reference, one lane: hif4_dot64_ref's loop body (acc_o = acc_i + T).
module hif4_ref_lane (
  input  logic [16:0] acc_i,
  input  logic [3:0]  a_i,    // S1P2 codes
  input  logic [3:0]  b_i,
  input  logic        l2a_i,  // level-2 (E1_8) and level-3 (E1_16) bits of the lane, A and B
  input  logic        l3a_i,
  input  logic        l2b_i,
  input  logic        l3b_i,
  output logic [16:0] acc_o
);
  logic [9:0] pmag;
  logic       pneg;
  always_comb begin
    pmag  = 10'(6'(fp4sim_pkg::S1p2Mag[{a_i[2:0], 2'd0} +: 3]) *
                6'(fp4sim_pkg::S1p2Mag[{b_i[2:0], 2'd0} +: 3]))
            << (3'(l2a_i) + 3'(l3a_i) + 3'(l2b_i) + 3'(l3b_i));
    pneg  = a_i[3] ^ b_i[3];
    acc_o = acc_i + (17'(pmag) ^ {17{pneg}}) + 17'(pneg);
  end
endmodule

// New, one lane into its quad's sum: hif4_dot64's innermost loop body.
module hif4_new_lane (
  input  logic [9:0] s4_i,
  input  logic [3:0] a_i,
  input  logic [3:0] b_i,
  output logic [9:0] s4_o
);
  logic signed [7:0] prod;
  logic              neg;
  always_comb begin
    prod = 8'(6'(fp4sim_pkg::S1p2Mag[{a_i[2:0], 2'd0} +: 3]) *
              6'(fp4sim_pkg::S1p2Mag[{b_i[2:0], 2'd0} +: 3]));
    neg  = a_i[3] ^ b_i[3];
    s4_o = s4_i + (10'(prod) ^ {10{neg}}) + 10'(neg);
  end
endmodule

// New, a quad's sum shifted by its level-3 bits into the group's sum.
module hif4_new_quad (
  input  logic [12:0] s8_i,
  input  logic [9:0]  s4_i,
  input  logic        l3a_i,
  input  logic        l3b_i,
  output logic [12:0] s8_o
);
  logic signed [12:0] sum8;
  always_comb begin
    sum8 = s8_i;
    s8_o = sum8 + (13'($signed(s4_i)) <<< (2'(l3a_i) + 2'(l3b_i)));
  end
endmodule

// New, a group's sum shifted by its level-2 bits into the total.
module hif4_new_group (
  input  logic [16:0] acc_i,
  input  logic [12:0] s8_i,
  input  logic        l2a_i,
  input  logic        l2b_i,
  output logic [16:0] acc_o
);
  logic signed [16:0] acc;
  always_comb begin
    acc   = acc_i;
    acc_o = acc + (17'($signed(s8_i)) <<< (2'(l2a_i) + 2'(l2b_i)));
  end
endmodule

// hif4_dot64_ref as 64 lane steps.
module hif4_ref_chain (
  input  logic [255:0] a_i,
  input  logic [255:0] b_i,
  input  logic [23:0]  lva_i,
  input  logic [23:0]  lvb_i,
  output logic [16:0]  sum_o
);
  logic [65*17-1:0] r;
  assign r[0 +: 17] = '0;
  for (genvar k = 0; k < 64; k++) begin : g_lane
    hif4_ref_lane u_lane (
      .acc_i (r[k*17 +: 17]),
      .a_i   (a_i[k*4 +: 4]),
      .b_i   (b_i[k*4 +: 4]),
      .l2a_i (lva_i[k/8]),
      .l3a_i (lva_i[8 + k/4]),
      .l2b_i (lvb_i[k/8]),
      .l3b_i (lvb_i[8 + k/4]),
      .acc_o (r[(k+1)*17 +: 17])
    );
  end
  assign sum_o = r[64*17 +: 17];
endmodule

// hif4_dot64 as lane, quad and group steps.
module hif4_new_chain (
  input  logic [255:0] a_i,
  input  logic [255:0] b_i,
  input  logic [23:0]  lva_i,
  input  logic [23:0]  lvb_i,
  output logic [16:0]  sum_o
);
  logic [9*17-1:0] acc;
  assign acc[0 +: 17] = '0;
  for (genvar h = 0; h < 8; h++) begin : g_grp
    logic [3*13-1:0] s8;
    assign s8[0 +: 13] = '0;
    for (genvar q = 0; q < 2; q++) begin : g_quad
      logic [5*10-1:0] s4;
      assign s4[0 +: 10] = '0;
      for (genvar l = 0; l < 4; l++) begin : g_lane
        hif4_new_lane u_lane (
          .s4_i (s4[l*10 +: 10]),
          .a_i  (a_i[(h*8 + q*4 + l)*4 +: 4]),
          .b_i  (b_i[(h*8 + q*4 + l)*4 +: 4]),
          .s4_o (s4[(l+1)*10 +: 10])
        );
      end
      hif4_new_quad u_quad (
        .s8_i  (s8[q*13 +: 13]),
        .s4_i  (s4[4*10 +: 10]),
        .l3a_i (lva_i[8 + h*2 + q]),
        .l3b_i (lvb_i[8 + h*2 + q]),
        .s8_o  (s8[(q+1)*13 +: 13])
      );
    end
    hif4_new_group u_group (
      .acc_i (acc[h*17 +: 17]),
      .s8_i  (s8[2*13 +: 13]),
      .l2a_i (lva_i[h]),
      .l2b_i (lvb_i[h]),
      .acc_o (acc[(h+1)*17 +: 17])
    );
  end
  assign sum_o = acc[8*17 +: 17];
endmodule

// inv(R, acc, s8, s4) is R == hif4_inv's r_o (grp(acc, quad(s8, s4, l3), l2)).
module hif4_inv (
  input  logic [16:0] acc_i,
  input  logic [12:0] s8_i,
  input  logic [9:0]  s4_i,
  input  logic        l2a_i,
  input  logic        l2b_i,
  input  logic        l3a_i,
  input  logic        l3b_i,
  output logic [16:0] r_o
);
  logic [12:0] s8;
  hif4_new_quad u_quad (
    .s8_i  (s8_i),
    .s4_i  (s4_i),
    .l3a_i (l3a_i),
    .l3b_i (l3b_i),
    .s8_o  (s8)
  );
  hif4_new_group u_group (
    .acc_i (acc_i),
    .s8_i  (s8),
    .l2a_i (l2a_i),
    .l2b_i (l2b_i),
    .acc_o (r_o)
  );
endmodule

// (3): one lane keeps inv, for lane J (0..3) of its quad. R is taken as the value inv gives it.
module hif4_lane_lemma #(
  parameter int J = 0  // signed, so that the bounds below compare signed
) (
  input  logic [16:0] acc_i,
  input  logic [12:0] s8_i,
  input  logic [9:0]  s4_i,
  input  logic [3:0]  a_i,
  input  logic [3:0]  b_i,
  input  logic        l2a_i,
  input  logic        l2b_i,
  input  logic        l3a_i,
  input  logic        l3b_i,
  output logic        ok_o,
  output logic        pre_o  // the assumption holds (for the non-vacuity check)
);
  logic [16:0] r, r_ref, r_new;
  logic [9:0]  s4_new;
  logic        pre, post;
  hif4_inv u_before (
    .acc_i, .s8_i, .s4_i, .l2a_i, .l2b_i, .l3a_i, .l3b_i,
    .r_o (r)
  );
  hif4_ref_lane u_ref (
    .acc_i (r),
    .a_i, .b_i, .l2a_i, .l3a_i, .l2b_i, .l3b_i,
    .acc_o (r_ref)
  );
  hif4_new_lane u_new (
    .s4_i, .a_i, .b_i,
    .s4_o (s4_new)
  );
  hif4_inv u_after (
    .acc_i, .s8_i,
    .s4_i  (s4_new),
    .l2a_i, .l2b_i, .l3a_i, .l3b_i,
    .r_o   (r_new)
  );
  // Signed bounds: an unsigned one makes the comparisons unsigned and the lemma vacuous (seen;
  // scripts/formal.sh also checks that pre_o can hold).
  localparam int Pre  = 49 * J;
  localparam int Post = 49 * (J + 1);
  assign pre   = ($signed(s4_i) <= Pre) & ($signed(s4_i) >= -Pre) &
                 ($signed(s8_i) <= 784) & ($signed(s8_i) >= -784);
  assign post  = (r_ref == r_new) & ($signed(s4_new) <= Post) & ($signed(s4_new) >= -Post);
  assign ok_o  = ~pre | post;
  assign pre_o = pre;
`ifdef FORMAL
  // For yosys-smtbmc (z3 proves this lemma in seconds; yosys' own SAT needs about a minute).
  always_comb assert (ok_o);
`endif
endmodule

// (4): inv at a group's start, across a quad's end, and the bound on the first quad's sum.
module hif4_book_lemma (
  input  logic [16:0] acc_i,
  input  logic [12:0] s8_i,
  input  logic [9:0]  s4_i,
  input  logic        l2a_i,
  input  logic        l2b_i,
  input  logic [1:0]  l3a_i,  // level-3 bits of the quad that ends ([0]) and of the next ([1])
  input  logic [1:0]  l3b_i,
  output logic        ok_o,
  output logic        pre_o  // the bound's assumption holds (for the non-vacuity check)
);
  logic [16:0] r_start, r_end, r_next;
  logic [12:0] s8_end, s8_first;
  hif4_inv u_start (
    .acc_i, .s8_i ('0), .s4_i ('0), .l2a_i, .l2b_i,
    .l3a_i (l3a_i[0]),
    .l3b_i (l3b_i[0]),
    .r_o   (r_start)
  );
  // Quad end: R = inv(acc, s8, s4) with this quad's bits equals inv(acc, quad(s8, s4), 0) with
  // the next quad's bits.
  hif4_inv u_end (
    .acc_i, .s8_i, .s4_i, .l2a_i, .l2b_i,
    .l3a_i (l3a_i[0]),
    .l3b_i (l3b_i[0]),
    .r_o   (r_end)
  );
  hif4_new_quad u_close (
    .s8_i, .s4_i,
    .l3a_i (l3a_i[0]),
    .l3b_i (l3b_i[0]),
    .s8_o  (s8_end)
  );
  hif4_inv u_next (
    .acc_i,
    .s8_i  (s8_end),
    .s4_i  ('0),
    .l2a_i, .l2b_i,
    .l3a_i (l3a_i[1]),
    .l3b_i (l3b_i[1]),
    .r_o   (r_next)
  );
  // The first quad's end: s8 = quad(0, s4) with |s4| <= 196.
  hif4_new_quad u_first (
    .s8_i  ('0),
    .s4_i,
    .l3a_i (l3a_i[0]),
    .l3b_i (l3b_i[0]),
    .s8_o  (s8_first)
  );
  assign pre_o = ($signed(s4_i) <= 196) & ($signed(s4_i) >= -196);
  assign ok_o  = (r_start == acc_i) & (r_end == r_next) &
                 (~pre_o | (($signed(s8_first) <= 784) & ($signed(s8_first) >= -784)));
endmodule
