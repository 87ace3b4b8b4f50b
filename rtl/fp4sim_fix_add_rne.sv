// d = RN-even( c + (-1)^t_neg * t_mag * 2^TermLsb ) for a finite FP32 c and an exact fixed-point
// term with T != 0 or c handled below: the alternative NVFP4 back end with ONE normalization. C is
// shifted into the term's fixed-point frame (no leading-zero count or normalizing shift of either
// operand first), the two's complement sum formed in a wide window, and only the sum normalized
// and rounded. Compare fp4sim_fp32_add_prep + _round, which normalize both operands, align, add
// and normalize again (docs/area.md, "NVFP4 back ends").
//
// Window: bit 0 has exponent Bot = TermLsb - 27. Why it is exact:
//   - C's LSB exponent above TTop + 2 (TTop = the term's top-bit exponent): |T| < 2^(TTop+1) is
//     below a quarter of C's ulp, i.e. under half the ulp on either side of C: the result is C.
//   - C below the window (LSB exponent < Bot) with T != 0: |C| < 2^(Bot + 24) <= 2^(TermLsb - 3),
//     so |C + T| >= 2^(TermLsb - 1), whose round bit has exponent >= TermLsb - 25 > Bot + 1: the
//     bits of C below Bot only decide the sticky, which is jammed into bit 0.
//   - T = 0: the result is C (c + -0 = c; two zeros follow IEEE's sign rule).
//   With T != 0 the result is at least 2^(TermLsb - 1): never subnormal for TermLsb > -100, and
//   |C + T| < 2^(TTop + 27): no overflow for TTop < 100.
module fp4sim_fix_add_rne #(
  parameter int unsigned TermW   = 49,  // bits of t_mag_i
  parameter integer      TermLsb = -20  // exponent of t_mag_i's LSB
) (
  input  logic [31:0]      c_i,
  input  logic             t_neg_i,  // sign of the term, also when t_mag_i == 0
  input  logic [TermW-1:0] t_mag_i,
  output logic [31:0]      d_o
);

  localparam integer      G    = 27;                    // window bits below the term's LSB
  localparam integer      Bot  = TermLsb - G;           // exponent of window bit 0
  localparam integer      TTop = TermLsb + TermW - 1;   // exponent of the term's top bit
  localparam integer      CMax = TTop + 2;              // C's largest LSB exponent in the window
  localparam int unsigned MW   = CMax + 23 + 2 - Bot;   // magnitude bits: C's top + carry
  localparam int unsigned EW   = 14;

  logic                 c_neg, c_zero, t_zero, c_big;
  logic [23:0]          c_mag;
  logic signed [EW-1:0] c_lsb;

  assign c_neg  = c_i[31];
  assign c_mag  = {c_i[30:23] != 8'd0, c_i[22:0]};
  assign c_lsb  = (c_i[30:23] == 8'd0) ? EW'(-149) : EW'($signed({1'b0, c_i[30:23]})) - EW'(150);
  assign c_zero = (c_mag == 24'd0);
  assign t_zero = (t_mag_i == '0);
  assign c_big  = ~c_zero & (c_lsb > EW'(CMax));

  // ---- C into the window: left by c_lsb - Bot, or right with the lost bits jammed
  logic signed [EW-1:0] c_off;
  logic [MW-1:0]        c_fix;
  logic [47:0]          c_rs;  // {kept, lost}
  logic [7:0]           c_dr;

  // A right shift of 24 already moves all of C into the lost half: saturate there.
  assign c_off = c_lsb - EW'(Bot);
  assign c_dr  = (c_off < EW'(-24)) ? 8'd24 : 8'(-c_off);
  assign c_rs  = {c_mag, 24'd0} >> c_dr;
  assign c_fix = (c_off >= 0) ? (MW'(c_mag) << c_off[7:0])
                              : MW'({c_rs[47:25], c_rs[24] | (|c_rs[23:0])});

  // ---- one two's complement add, then the magnitude
  logic signed [MW:0] s;
  logic [MW-1:0]      s_mag;

  assign s     = ((MW+1)'({t_mag_i, {G{1'b0}}}) ^ {(MW+1){t_neg_i}}) + (MW+1)'(t_neg_i)
               + (((MW+1)'(c_fix) ^ {(MW+1){c_neg}}) + (MW+1)'(c_neg));
  assign s_mag = s[MW] ? MW'(-s) : MW'(s);

  // ---- the one normalization and the rounding
  logic [7:0]           lz;
  logic [MW-1:0]        norm;
  logic signed [EW-1:0] e_lead;
  logic [24:0]          m_rnd;
  logic                 rbit, sticky, inc;
  /* verilator lint_off UNUSEDSIGNAL */
  logic [EW+23:0]       bits;  // bits 30:0 are the result (no overflow, see above)
  /* verilator lint_on UNUSEDSIGNAL */

  fp4sim_lzc #(.Width(MW)) u_lzc (.x_i(s_mag), .lz_o(lz));
  assign norm   = s_mag << lz;
  assign e_lead = EW'(Bot) + EW'(MW - 1) - EW'(lz);
  assign rbit   = norm[MW-25];
  assign sticky = |norm[MW-26:0];
  assign inc    = rbit & (sticky | norm[MW-24]);
  assign m_rnd  = 25'(norm[MW-1 -: 24]) + 25'(inc);
  // Biased exponent - 1 plus the significand: the hidden bit and a rounding carry add themselves in.
  assign bits   = ({24'd0, EW'(e_lead + EW'(126))} << 23) + (EW+24)'(m_rnd);

  always_comb begin
    if (t_zero) begin
      d_o = c_zero ? {c_neg & t_neg_i, 31'd0} : c_i;
    end else if (c_big) begin
      d_o = c_i;
    end else if (s_mag == '0) begin
      d_o = 32'd0;  // exact cancellation: +0 under RN
    end else begin
      d_o = {s[MW], bits[30:0]};
    end
  end

endmodule
