// Behavioural references for the arithmetic proofs (scripts/formal.sh, part "arith"), each written
// from golden's C++ line by line; the comment beside a line names the golden line it mirrors.
// They are references only: no synthesis, no speed concerns, C's int is `int` (32-bit signed) here.

// golden/include/fp4sim/mma_core.hpp helpers of the Blackwell steps, shared by the checks.
package ref_golden_pkg;
  // shift_trunc(v, s): trunc(v * 2^s), an exact shift left or a shift right toward zero (callers
  // keep |v| * 2^s < 2^62).
  function automatic logic signed [63:0] shift_trunc(input logic signed [63:0] v, input int s);
    logic [63:0] m;
    m = v[63] ? 64'(-v) : 64'(v);                             // a = |v|
    m = m >> (-s);                                            // a >> -s
    if (s >= 0) shift_trunc = v <<< s;                        // v * (1 << s)
    else if (s <= -63) shift_trunc = '0;                      // if (s <= -63) return 0
    else shift_trunc = v[63] ? -$signed(m) : $signed(m);      // v < 0 ? -t : t
  endfunction
endpackage

// N scale pairs decoded by gen_decode_ref's golden decoders (UE4M3 or UE8M0), each a dec_t
// {nan, inf, neg, exp[8:0], sig[3:0]} (care masks unused: every field the checks read is cared for
// the codes they read it for).
module ref_dec_scales #(
  parameter int unsigned ScaleFmt = 0,  // 0: UE4M3, 1: UE8M0
  parameter int unsigned N        = 4
) (
  input  logic [N*8-1:0]  sfa_i,
  input  logic [N*8-1:0]  sfb_i,
  output logic [N*16-1:0] da_o,
  output logic [N*16-1:0] db_o
);
  /* verilator lint_off UNUSEDSIGNAL */
  logic [N*16-1:0] ca, cb;
  /* verilator lint_on UNUSEDSIGNAL */
  for (genvar j = 0; j < N; j++) begin : g_dec
    if (ScaleFmt == 0) begin : g_ue4m3
      ref_dec_ue4m3 u_da (.code_i(sfa_i[j*8 +: 8]), .dec_o(da_o[j*16 +: 16]), .care_o(ca[j*16 +: 16]));
      ref_dec_ue4m3 u_db (.code_i(sfb_i[j*8 +: 8]), .dec_o(db_o[j*16 +: 16]), .care_o(cb[j*16 +: 16]));
    end else begin : g_ue8m0
      ref_dec_ue8m0 u_da (.code_i(sfa_i[j*8 +: 8]), .dec_o(da_o[j*16 +: 16]), .care_o(ca[j*16 +: 16]));
      ref_dec_ue8m0 u_db (.code_i(sfb_i[j*8 +: 8]), .dec_o(db_o[j*16 +: 16]), .care_o(cb[j*16 +: 16]));
    end
  end
endmodule

// golden/include/fp4sim/exact.hpp round_to_fp32(neg, mag, e0, sticky, rn): (-1)^neg * mag * 2^e0
// (+ a nonzero tail below bit 0 when sticky) to FP32 bits, RN-even (rn) or toward zero.
module ref_round_to_fp32 (
  input  logic        neg,
  input  logic [63:0] mag,
  input  int          e0,
  input  logic        sticky,
  input  logic        rn,
  output logic [31:0] bits_o
);
  logic [31:0] sign, bits;
  int          p, e, ec, sh;
  logic [63:0] m;
  logic        rbit, st;

  always_comb begin
    sign = neg ? 32'h8000_0000 : 32'd0;                       // const uint32_t sign = ...
    p = 0;                                                    // p = 63 - clz64(mag)
    for (int i = 0; i < 64; i++) if (mag[i]) p = i;
    e  = p + e0;                                              // exponent of the leading bit
    ec = (e > -126) ? e : -126;                               // ec = e > -126 ? e : -126
    sh = (ec - 23) - e0;                                      // bits below the last place
    m = 64'd0;
    rbit = 1'b0;
    st = sticky;
    if (sh <= 0) begin
      m = mag << (-sh);                                       // m = mag << -sh
    end else if (sh > 64) begin
      m = 64'd0;
      st = 1'b1;
    end else if (sh == 64) begin
      m = 64'd0;
      rbit = mag[63];
      st = st | ((mag << 1) != 64'd0);
    end else begin
      m = mag >> sh;
      rbit = mag[sh - 1];                                     // (mag >> (sh - 1)) & 1
      st = st | ((sh > 1) && ((mag & ((64'd1 << (sh - 1)) - 64'd1)) != 64'd0));
    end
    if (rn && rbit && (st || m[0])) m = m + 64'd1;            // if (rn && rbit && ...) ++m
    bits = (32'(ec + 126) << 23) + m[31:0];                   // (uint32)(ec + 126) << 23 + m
    if (bits >= 32'h7F80_0000) bits = 32'h7F80_0000;
    // The early returns, in golden's order.
    if (mag == 64'd0) bits_o = rn ? sign : 32'd0;             // if (mag == 0) return rn ? sign : 0
    else if (e >= 128) bits_o = sign | 32'h7F80_0000;         // if (e >= 128) return +-Inf
    else if (m == 64'd0) bits_o = rn ? sign : 32'd0;          // if (m == 0) return rn ? sign : 0
    else bits_o = sign | bits;
  end
endmodule

// golden/src/mma_numerics.cpp to_fp32(neg, mag, e, rn) for a wide magnitude: bitlen <= 64 goes
// to round_to_fp32 as it is; a longer one keeps its top 64 bits, the rest becomes the sticky.
module ref_to_fp32 #(
  parameter int unsigned MW = 128  // width of mag
) (
  input  logic          neg,
  input  logic [MW-1:0] mag,
  input  int            e,
  input  logic          rn,
  output logic [31:0]   bits_o
);
  int          bl, s;
  logic [63:0] top;
  logic        sticky;
  int          e_top;

  always_comb begin
    s  = 0;
    bl = 0;                                                   // bl = bitlen(mag)
    for (int i = 0; i < MW; i++) if (mag[i]) bl = i + 1;
    if (bl <= 64) begin                                       // round_to_fp32(neg, mag, e, false, rn)
      top    = 64'(mag);
      e_top  = e;
      sticky = 1'b0;
    end else begin
      s      = bl - 64;                                       // s = bl - 64
      sticky = (mag & ~({MW{1'b1}} << s)) != '0;              // mag & ((1 << s) - 1)
      top    = 64'(mag >> s);                                 // mag >> s
      e_top  = e + s;                                         // e + s
    end
  end

  ref_round_to_fp32 u_round (
    .neg(neg), .mag(top), .e0(e_top), .sticky(sticky), .rn(rn), .bits_o(bits_o));
endmodule

// golden/src/mma_numerics.cpp add_rn(acc, t, 1) for a finite C and one exact term
// (-1)^t_neg * t_mag * 2^t_exp: the exact sum (ExactDotSum: add_exact of C, of_fp32's split, and
// of the term), an exact zero is -0 only when C is -0 and the term a -0 (all_neg_zero, zero_of),
// else round_fp32(true). The exact sum is held in an NW-bit two's complement window with bit 0 at
// 2^Lo (the caller sizes it to hold both operands: no bit is lost, as in golden's accumulator).
module ref_fp32_add_rn #(
  parameter int unsigned TermW = 24,
  parameter int unsigned ExpW  = 12,
  parameter int          Lo    = -149,
  parameter int unsigned NW    = 300
) (
  input  logic [31:0]      c_i,
  input  logic             t_neg_i,
  input  logic [TermW-1:0] t_mag_i,
  input  logic [ExpW-1:0]  t_exp_i,  // signed
  output logic [31:0]      d_o
);
  logic [7:0]           ef;
  logic [23:0]          c_mag;
  int                   c_e, t_e;
  logic signed [NW-1:0] cs, ts, s;
  logic                 neg;
  logic [NW-1:0]        mag;
  logic [31:0]          r;

  always_comb begin
    ef    = c_i[30:23];                                       // of_fp32: ef = (u >> 23) & 0xFF
    c_mag = (ef == 8'd0) ? {1'b0, c_i[22:0]} : {1'b1, c_i[22:0]};
    c_e   = (ef == 8'd0) ? -149 : ($signed({24'd0, ef}) - 150);  // (ef ? ef - 127 : -126) - 23
    t_e   = $signed(t_exp_i);
    cs    = NW'(c_mag) << (c_e - Lo);                          // add_exact(s, of_fp32(acc))
    ts    = NW'(t_mag_i) << (t_e - Lo);                        // add_exact(s, t.v)
    s     = (c_i[31] ? -cs : cs) + (t_neg_i ? -ts : ts);
    neg   = s[NW-1];                                           // s.sign()
    mag   = neg ? NW'(-s) : NW'(s);
  end

  ref_to_fp32 #(.MW(NW)) u_to (.neg(neg), .mag(mag), .e(Lo), .rn(1'b1), .bits_o(r));

  // if (s.sign() == 0) return zero_of(n, all_neg_zero)
  assign d_o = (s == '0) ? ((c_i == 32'h8000_0000 && t_mag_i == '0 && t_neg_i) ? 32'h8000_0000 : 32'd0)
                         : r;
endmodule

// ---- The FP32 adder pair, one stage at a time (fp4sim_fp32_add_prep, fp4sim_fp32_add_round).
// The interface between the stages is the two operands as exact normalized values:
// value(x) = x_norm * 2^(x_lead - (W - 1)) with x_norm's top bit set (or x_norm = 0), the larger
// first, and the distance d = big_lead - sml_lead between their leading ones.

// Stage 1 reference: golden of_fp32 (mma_numerics.cpp) for C, (t_mag, t_exp) for the term, each
// normalized by a plain leading-one search; the larger magnitude is "big" (normalized values
// compare by leading exponent, then significand; at equal magnitudes the term is taken: with
// equal magnitudes either order gives the same sum). d_o is the distance, not saturated.
module ref_fp32_add_prep #(
  parameter int unsigned TermW = 24,
  parameter int unsigned ExpW  = 12
) (
  input  logic [31:0]                            c_i,
  input  logic                                   t_neg_i,
  input  logic [TermW-1:0]                       t_mag_i,
  input  logic [ExpW-1:0]                        t_exp_i,
  output logic [((TermW > 24) ? TermW : 24)-1:0] big_o,
  output logic [((TermW > 24) ? TermW : 24)-1:0] sml_o,
  output int                                     big_lead_o,
  output int                                     sml_lead_o,
  output logic                                   big_neg_o,
  output logic                                   eff_sub_o,
  output logic                                   zero_o,
  output logic                                   zero_neg_o
);
  localparam int unsigned W = TermW > 24 ? TermW : 24;
  logic [7:0]   ef;
  logic [23:0]  c_mag;
  int           c_e, c_p, t_p, c_lead, t_lead;
  logic [W-1:0] c_norm, t_norm;
  logic         c_zero, t_zero, t_big;

  always_comb begin
    ef     = c_i[30:23];                                            // of_fp32
    c_mag  = (ef == 8'd0) ? {1'b0, c_i[22:0]} : {1'b1, c_i[22:0]};
    c_e    = (ef == 8'd0) ? -149 : ($signed({24'd0, ef}) - 150);
    c_zero = (c_mag == 24'd0);
    t_zero = (t_mag_i == '0);
    c_p = 0;
    for (int i = 0; i < 24; i++) if (c_mag[i]) c_p = i;
    t_p = 0;
    for (int i = 0; i < TermW; i++) if (t_mag_i[i]) t_p = i;
    c_lead = c_e + c_p;
    t_lead = $signed(t_exp_i) + t_p;
    c_norm = W'(c_mag) << (W - 1 - c_p);
    t_norm = W'(t_mag_i) << (W - 1 - t_p);
    t_big  = c_zero || (!t_zero && (t_lead > c_lead || (t_lead == c_lead && t_norm >= c_norm)));
    big_o      = t_big ? t_norm : c_norm;
    sml_o      = t_big ? c_norm : t_norm;
    big_lead_o = t_big ? t_lead : c_lead;
    sml_lead_o = t_big ? c_lead : t_lead;
    big_neg_o  = t_big ? t_neg_i : c_i[31];
    eff_sub_o  = t_neg_i ^ c_i[31];
    zero_o     = c_zero && t_zero;
    zero_neg_o = c_i[31] && t_neg_i;                                // zero_of: -0 + -0 = -0
  end
endmodule

// Stage 2 reference: RN-even of big +- sml * 2^-d, the exact sum handed to golden's round_to_fp32
// as (mag, e0, sticky): with DM bits below big's last place, mag = big * 2^DM + floor(sml * 2^(DM -
// d)) for an addition, big * 2^DM - ceil(sml * 2^(DM - d)) for a subtraction, and sticky = the part
// of sml below 2^0 is not zero, the tail (0 < tail < 1 unit of mag's last place) that
// round_to_fp32's sticky stands for (golden's to_fp32 hands over the same kind of tail). Exact for
// every distance d (one beyond W + DM shifts everything into the sticky). Zero: -0 only for -0 + -0
// (zero_i, zero_neg_i), an exact cancellation +0 (golden zero_of).
module ref_fp32_add_round #(
  parameter int unsigned W  = 24,
  parameter int unsigned DM = 2
) (
  input  logic [W-1:0] big_i,
  input  logic [W-1:0] sml_i,
  input  int           big_lead_i,
  input  int           d_i,  // >= 0
  input  logic         big_neg_i,
  input  logic         eff_sub_i,
  input  logic         zero_i,
  input  logic         zero_neg_i,
  output logic [31:0]  d_o
);
  localparam int unsigned PW = W + DM;
  logic [PW-1:0] p, sf, q, lostm;
  logic          lost;
  logic [PW:0]   mag;
  logic [31:0]   r;
  int            e0, dd;

  always_comb begin
    dd    = (d_i > PW) ? PW : d_i;                  // >= PW: every bit of sml below 2^0
    p     = {big_i, DM'(0)};
    sf    = {sml_i, DM'(0)};
    q     = sf >> dd;                               // floor(sml * 2^(DM - d))
    lostm = ~({PW{1'b1}} << dd);
    lost  = (sf & lostm) != '0;
    mag   = eff_sub_i ? ((PW+1)'(p) - (PW+1)'(q) - (PW+1)'(lost)) : ((PW+1)'(p) + (PW+1)'(q));
    e0    = big_lead_i - (W - 1) - DM;
  end

  ref_round_to_fp32 u_round (
    .neg(big_neg_i), .mag(64'(mag)), .e0(e0), .sticky(lost), .rn(1'b1), .bits_o(r));

  assign d_o = zero_i ? {zero_neg_i, 31'd0} : ((mag == '0 && !lost) ? 32'd0 : r);
endmodule
