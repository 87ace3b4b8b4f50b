// Blackwell K=32 slice (kind mxf8f6f4), front end: element decode by format, 32 significand
// products, product exponents (UE8M0 scales only add exponents), the largest exponent (a tree), each
// product's alignment shift, and the special-value outcome decided from the operands first
// (MMA-Sim forms the float64 sum of all products and C before anything else). Combinational.
module bs_k32_front (
  input  logic [255:0]     a_i,      // 32 element codes, element k in bits 8k+7:8k
  input  logic [255:0]     b_i,
  input  logic [2:0]       fmt_a_i,  // fp4sim_pkg::Fmt* (A and B independent)
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
  output logic [1:0]       special_o // 0 finite, 1 NaN, 2 +Inf, 3 -Inf
);

  localparam int unsigned EW = 12;

  logic [32*16-1:0] ta, tb;
  /* verilator lint_off UNUSEDSIGNAL */
  logic [15:0]      tsa, tsb;  // UE8M0 entries: only nan and exp are read
  /* verilator lint_on UNUSEDSIGNAL */
  logic [1:0]       mba, mbb;
  logic [3:0]       off;   // mbits(A) + mbits(B): product LSB is 2^(e - off)
  logic signed [EW-1:0] es, c_e, max_e;
  logic [32*EW-1:0] pe;
  logic             lane_nan, pinf, ninf, c_nan, c_inf;
  logic             za, zb;

  assign tsa = fp4sim_pkg::DecUe8m0[{sfa_i, 4'd0} +: 16];
  assign tsb = fp4sim_pkg::DecUe8m0[{sfb_i, 4'd0} +: 16];
  assign es  = EW'($signed(tsa[12:4])) + EW'($signed(tsb[12:4]));
  assign mba = fp4sim_pkg::FmtMbits[{fmt_a_i, 1'b0} +: 2];
  assign mbb = fp4sim_pkg::FmtMbits[{fmt_b_i, 1'b0} +: 2];
  assign off = 4'(mba) + 4'(mbb);

  // Element decode: one lookup table per format (bits above a format's width are ignored).
  always_comb begin
    for (int k = 0; k < 32; k++) begin
      case (fmt_a_i)
        fp4sim_pkg::FmtE5m2: ta[k*16 +: 16] = fp4sim_pkg::DecE5m2[{a_i[k*8 +: 8], 4'd0} +: 16];
        fp4sim_pkg::FmtE2m3: ta[k*16 +: 16] = fp4sim_pkg::DecE2m3[{a_i[k*8 +: 6], 4'd0} +: 16];
        fp4sim_pkg::FmtE3m2: ta[k*16 +: 16] = fp4sim_pkg::DecE3m2[{a_i[k*8 +: 6], 4'd0} +: 16];
        fp4sim_pkg::FmtE2m1: ta[k*16 +: 16] = fp4sim_pkg::DecE2m1[{a_i[k*8 +: 4], 4'd0} +: 16];
        default:             ta[k*16 +: 16] = fp4sim_pkg::DecE4m3[{a_i[k*8 +: 8], 4'd0} +: 16];
      endcase
      case (fmt_b_i)
        fp4sim_pkg::FmtE5m2: tb[k*16 +: 16] = fp4sim_pkg::DecE5m2[{b_i[k*8 +: 8], 4'd0} +: 16];
        fp4sim_pkg::FmtE2m3: tb[k*16 +: 16] = fp4sim_pkg::DecE2m3[{b_i[k*8 +: 6], 4'd0} +: 16];
        fp4sim_pkg::FmtE3m2: tb[k*16 +: 16] = fp4sim_pkg::DecE3m2[{b_i[k*8 +: 6], 4'd0} +: 16];
        fp4sim_pkg::FmtE2m1: tb[k*16 +: 16] = fp4sim_pkg::DecE2m1[{b_i[k*8 +: 4], 4'd0} +: 16];
        default:             tb[k*16 +: 16] = fp4sim_pkg::DecE4m3[{b_i[k*8 +: 8], 4'd0} +: 16];
      endcase
    end
  end

  // C as m * 2^(e - 23), subnormals and zero at -126.
  assign c_nan   = (c_i[30:23] == 8'hFF) & (c_i[22:0] != 23'd0);
  assign c_inf   = (c_i[30:23] == 8'hFF) & (c_i[22:0] == 23'd0);
  assign c_neg_o = c_i[31];
  assign c_mag_o = {c_i[30:23] != 8'd0, c_i[22:0]};
  assign c_e     = (c_i[30:23] == 8'd0) ? EW'(-126) : EW'($signed({1'b0, c_i[30:23]})) - EW'(127);

  // Products, exponents, specials (IEEE outcome on the operands: NaN, Inf * 0, +Inf + -Inf).
  always_comb begin
    lane_nan = 1'b0;
    pinf     = c_inf & ~c_i[31];
    ninf     = c_inf & c_i[31];
    for (int k = 0; k < 32; k++) begin
      za                = ~ta[k*16+15] & ~ta[k*16+14] & (ta[k*16 +: 4] == 4'd0);
      zb                = ~tb[k*16+15] & ~tb[k*16+14] & (tb[k*16 +: 4] == 4'd0);
      p_mag_o[k*8 +: 8] = 8'(ta[k*16 +: 4]) * 8'(tb[k*16 +: 4]);
      p_neg_o[k]        = ta[k*16+13] ^ tb[k*16+13];
      pe[k*EW +: EW]    = EW'($signed(ta[k*16+4 +: 9])) + EW'($signed(tb[k*16+4 +: 9])) + es;
      lane_nan          = lane_nan | ta[k*16+15] | tb[k*16+15] | (ta[k*16+14] & zb) | (tb[k*16+14] & za);
      if (ta[k*16+14] | tb[k*16+14]) begin
        pinf = pinf | ~p_neg_o[k];
        ninf = ninf | p_neg_o[k];
      end
    end
  end

  // The largest exponent: a balanced tree of pairwise maxima over the 32 product exponents (5
  // comparator levels, not a 33-step chain), then C's.
  logic signed [EW-1:0] mx [1:63];  // heap order: node n has children 2n, 2n+1; leaves 32..63
  always_comb begin
    for (int k = 0; k < 32; k++) mx[32 + k] = $signed(pe[k*EW +: EW]);
    for (int n = 31; n >= 1; n--) mx[n] = (mx[2*n] > mx[2*n+1]) ? mx[2*n] : mx[2*n+1];
    max_e = (mx[1] > c_e) ? mx[1] : c_e;
  end

  assign max_e_o = max_e;

  // Alignment shifts to the grid 2^(max_e - 25); distances beyond the term widths clamp to 63.
  logic [EW-1:0] dk, dc;
  always_comb begin
    for (int k = 0; k < 32; k++) begin
      dk                = EW'(max_e - $signed(pe[k*EW +: EW])) + EW'(off) - EW'(2);
      p_sh_o[k*6 +: 6]  = (dk > EW'(63)) ? 6'd63 : dk[5:0];
    end
    dc     = EW'(max_e - c_e);
    c_sh_o = (dc > EW'(63)) ? 6'd63 : dc[5:0];
  end

  always_comb begin
    if (tsa[15] | tsb[15] | c_nan | lane_nan | (pinf & ninf)) begin
      special_o = 2'd1;
    end else if (pinf) begin
      special_o = 2'd2;
    end else if (ninf) begin
      special_o = 2'd3;
    end else begin
      special_o = 2'd0;
    end
  end

endmodule
