// Blackwell K=32 slice (kind mxf8f6f4), front end: element decode by format, 32 significand
// products, product exponents (UE8M0 scales only add exponents), the largest exponent (a tree), each
// product's alignment shift, and the special-value outcome decided from the operands first
// (MMA-Sim forms the float64 sum of all products and C before anything else). Combinational.
//
// Per lane and operand, bs_k32_dec decodes only the fields a lane needs (sign, exponent, significand,
// zero / NaN / Inf) from the code's fields, each format's bias and a small table of its all-ones
// binade (fp4sim_pkg::dec_k32_*, generated from golden's format table), then selects by format;
// scripts/formal.sh proves it equal to golden's decode. (One 256-entry table per format and lane
// took yosys > 20 min: it expands each wide constant read to a barrel shifter first.)
// Lane exponents stay 9 bits wide up to the max tree: the scale exponents are the same for every
// lane, so they are added once after the tree.
module bs_k32_front (
  input  logic [255:0]     a_i,      // 32 element codes, element k in bits 8k+7:8k
  input  logic [255:0]     b_i,
  input  logic [2:0]       fmt_a_i,  // fp4sim_pkg::fmt_e (A and B independent)
  input  logic [2:0]       fmt_b_i,
  input  logic [7:0]       sfa_i,    // UE8M0
  input  logic [7:0]       sfb_i,
  input  logic [31:0]      c_i,
  output logic [32*8-1:0]  p_mag_o,  // |sig(a) * sig(b)| per lane
  output logic [31:0]      p_neg_o,
  output logic [32*6-1:0]  p_sh_o,   // lane term = (p_mag << 23) >> p_sh (truncating)
  output logic [23:0]      c_mag_o,
  output logic             c_neg_o,
  output logic [5:0]       c_sh_o,   // C term = (c_mag << 2) >> c_sh
  output logic [11:0]      max_e_o,  // signed
  output logic [1:0]       special_o // fp4sim_dp_pkg::special_e
);

  localparam int unsigned EW = 12;  // instruction-level exponents (scales and C included)
  localparam int unsigned LW = 9;   // lane exponent e(a) + e(b): -252 (two zeros) .. 30

  /* verilator lint_off UNUSEDSIGNAL */
  fp4sim_pkg::dec_t     tsa, tsb;  // UE8M0 scales: only nan and exp are read
  /* verilator lint_on UNUSEDSIGNAL */
  logic [1:0]           mba, mbb;
  logic [3:0]           off;       // mbits(A) + mbits(B): product LSB is 2^(e - off)
  logic signed [EW-1:0] es, c_e, max_e;
  logic [32*LW-1:0]     pe;        // per lane e(a) + e(b), scales not included
  logic                 lane_nan, pinf, ninf;

  assign tsa = fp4sim_pkg::dec_ue8m0(sfa_i);
  assign tsb = fp4sim_pkg::dec_ue8m0(sfb_i);
  assign es  = EW'($signed(tsa.exp)) + EW'($signed(tsb.exp));
  assign mba = fp4sim_pkg::FmtMbits[{fmt_a_i, 1'b0} +: 2];
  assign mbb = fp4sim_pkg::FmtMbits[{fmt_b_i, 1'b0} +: 2];
  assign off = 4'(mba) + 4'(mbb);

  // Lanes: decode (bs_k32_dec per operand), significand product, exponent sum, special flags.
  localparam int unsigned DW = fp4sim_pkg::K32DecW;
  logic [32*DW-1:0] dec_a, dec_b;
  for (genvar k = 0; k < 32; k++) begin : g_dec
    bs_k32_dec u_dec_a (
      .fmt_i  (fmt_a_i),
      .code_i (a_i[k*8 +: 8]),
      .dec_o  (dec_a[k*DW +: DW])
    );
    bs_k32_dec u_dec_b (
      .fmt_i  (fmt_b_i),
      .code_i (b_i[k*8 +: 8]),
      .dec_o  (dec_b[k*DW +: DW])
    );
  end

  // C as m * 2^(e - 23), subnormals and zero at -126.
  assign c_neg_o = c_i[31];
  assign c_mag_o = {c_i[30:23] != 8'd0, c_i[22:0]};
  assign c_e     = (c_i[30:23] == 8'd0) ? EW'(-126) : EW'($signed({1'b0, c_i[30:23]})) - EW'(127);

  // Scalars accumulated over the lanes (not per-lane vectors: Verilator keeps them in registers).
  fp4sim_pkg::k32_dec_t da, db;
  logic signed [LW-1:0] ea, eb;
  always_comb begin
    lane_nan = 1'b0;
    pinf     = 1'b0;
    ninf     = 1'b0;
    for (int k = 0; k < 32; k++) begin
      da                = dec_a[k*DW +: DW];
      db                = dec_b[k*DW +: DW];
      // A zero has MMA-Sim's exponent -126: it still takes part in the largest exponent.
      ea                = da.zero ? LW'(-126) : LW'($signed(da.exp));
      eb                = db.zero ? LW'(-126) : LW'($signed(db.exp));
      pe[k*LW +: LW]    = ea + eb;
      p_mag_o[k*8 +: 8] = 8'(da.sig) * 8'(db.sig);
      p_neg_o[k]        = da.neg ^ db.neg;
      // IEEE outcome on the operands: NaN in, Inf * 0, or infinite terms of both signs.
      lane_nan          = lane_nan | da.nan | db.nan | (da.inf & db.zero) | (db.inf & da.zero);
      pinf              = pinf | ((da.inf | db.inf) & ~p_neg_o[k]);
      ninf              = ninf | ((da.inf | db.inf) & p_neg_o[k]);
    end
  end

  // The largest exponent: a balanced tree of pairwise maxima over the 32 lane exponents (5
  // comparator levels of 9 bits), then the scales' exponent once, then C's.
  logic signed [LW-1:0] mx [1:63];  // heap order: node n has children 2n, 2n+1; leaves 32..63
  always_comb begin
    for (int k = 0; k < 32; k++) mx[32 + k] = $signed(pe[k*LW +: LW]);
    for (int n = 31; n >= 1; n--) mx[n] = (mx[2*n] > mx[2*n+1]) ? mx[2*n] : mx[2*n+1];
    max_e = ((EW'(mx[1]) + es) > c_e) ? EW'(mx[1]) + es : c_e;
  end

  assign max_e_o = max_e;

  // Alignment shifts to the grid 2^(max_e - 25): lane k's distance is
  // max_e - (pe_k + es) + off - 2 = base - pe_k (>= 0); beyond the term widths clamp to 63.
  logic [EW-1:0] base, dk, dc;
  always_comb begin
    base = EW'(max_e - es) + EW'(off) - EW'(2);
    for (int k = 0; k < 32; k++) begin
      dk               = base - EW'($signed(pe[k*LW +: LW]));
      p_sh_o[k*6 +: 6] = (dk > EW'(63)) ? 6'd63 : dk[5:0];
    end
    dc     = EW'(max_e - c_e);
    c_sh_o = (dc > EW'(63)) ? 6'd63 : dc[5:0];
  end

  fp4sim_special u_special (
    .c_i       (c_i),
    .nan_i     (tsa.nan | tsb.nan | lane_nan),
    .pinf_i    (pinf),
    .ninf_i    (ninf),
    .special_o (special_o)
  );

endmodule

// One element of bs_dot_k32 decoded by its run-time format: the format's decode function on its code
// bits (bits above a format's width ignored), selected by format; unused format codes 5..7 decode
// as E4M3. Its own module so that scripts/formal.sh can prove it equal to golden's decode for every
// format code and element code. Only bs_k32_front uses it, hence this file.
/* verilator lint_off DECLFILENAME */
module bs_k32_dec (
  input  logic [2:0]                     fmt_i,  // fp4sim_pkg::fmt_e
  input  logic [7:0]                     code_i,
  output logic [fp4sim_pkg::K32DecW-1:0] dec_o   // a fp4sim_pkg::k32_dec_t
);

  always_comb begin
    unique case (fmt_i)
      fp4sim_pkg::FmtE5m2: dec_o = fp4sim_pkg::dec_k32_e5m2(code_i);
      fp4sim_pkg::FmtE2m3: dec_o = fp4sim_pkg::dec_k32_e2m3(code_i[5:0]);
      fp4sim_pkg::FmtE3m2: dec_o = fp4sim_pkg::dec_k32_e3m2(code_i[5:0]);
      fp4sim_pkg::FmtE2m1: dec_o = fp4sim_pkg::dec_k32_e2m1(code_i[3:0]);
      default:             dec_o = fp4sim_pkg::dec_k32_e4m3(code_i);  // FmtE4m3, codes 5..7
    endcase
  end

endmodule
/* verilator lint_on DECLFILENAME */
